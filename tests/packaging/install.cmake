# ctest fixture "epgraph_installed": install the current epgraph build into a fresh prefix.
# Usage: cmake -DBUILD_DIR=... -DPREFIX=... [-DCONFIG=...] -DEPGRAPH_INSTALL_CMAKEDIR=...
#              -DEPGRAPH_INSTALL_INCLUDEDIR=... -P install.cmake
# SPDX-License-Identifier: BSD-3-Clause
cmake_minimum_required(VERSION 3.16)

foreach(_var BUILD_DIR PREFIX EPGRAPH_INSTALL_CMAKEDIR EPGRAPH_INSTALL_INCLUDEDIR)
  if(NOT DEFINED ${_var} OR "${${_var}}" STREQUAL "")
    message(FATAL_ERROR "install.cmake: ${_var} not set")
  endif()
endforeach()

file(REMOVE_RECURSE "${PREFIX}")
set(_cmd "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --prefix "${PREFIX}")
if(CONFIG)
  list(APPEND _cmd --config "${CONFIG}")
endif()
execute_process(COMMAND ${_cmd} RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "install.cmake: '${_cmd}' failed (${_rc})")
endif()

foreach(_file
    "${EPGRAPH_INSTALL_INCLUDEDIR}/epgraph/version.hpp"
    "${EPGRAPH_INSTALL_INCLUDEDIR}/epgraph/epgraph.hpp"
    "${EPGRAPH_INSTALL_CMAKEDIR}/epgraphConfig.cmake"
    "${EPGRAPH_INSTALL_CMAKEDIR}/epgraphConfigVersion.cmake"
    "${EPGRAPH_INSTALL_CMAKEDIR}/epgraphTargets.cmake")
  if(NOT EXISTS "${PREFIX}/${_file}")
    message(FATAL_ERROR "install.cmake: ${PREFIX}/${_file} was not installed")
  endif()
endforeach()

# Only headers and CMake package files belong in the install tree (no tests, no binaries).
file(GLOB_RECURSE _installed RELATIVE "${PREFIX}" "${PREFIX}/*")
foreach(_file IN LISTS _installed)
  string(FIND "${_file}" "${EPGRAPH_INSTALL_INCLUDEDIR}/epgraph/" _in_include)
  string(FIND "${_file}" "${EPGRAPH_INSTALL_CMAKEDIR}/" _in_cmake)
  if(NOT _in_include EQUAL 0 AND NOT _in_cmake EQUAL 0)
    message(FATAL_ERROR "install.cmake: unexpected installed file ${_file}")
  endif()
endforeach()
list(LENGTH _installed _n)
message(STATUS "install.cmake: ${_n} files installed into ${PREFIX}")
