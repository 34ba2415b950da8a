# ctest fixture "epgraph_installed": install the current epgraph build into a fresh prefix.
# Usage: cmake -DBUILD_DIR=... -DPREFIX=... [-DCONFIG=...] -DEPGRAPH_INSTALL_CMAKEDIR=...
#              -DEPGRAPH_INSTALL_INCLUDEDIR=... [-DEXPECT_COMPILED=ON]
#              [-DSOURCE_DIR=... -DGENERATOR=... -DCXX_COMPILER=... -DBUILD_TYPE=...]
#              -P install.cmake
# With SOURCE_DIR, BUILD_DIR is first configured from it in compiled mode (-DEPGRAPH_COMPILED=ON,
# no tests or examples) and built: the installed epgraph::compiled of the find_package test.
# SPDX-License-Identifier: BSD-3-Clause
cmake_minimum_required(VERSION 3.16)

foreach(_var BUILD_DIR PREFIX EPGRAPH_INSTALL_CMAKEDIR EPGRAPH_INSTALL_INCLUDEDIR)
  if(NOT DEFINED ${_var} OR "${${_var}}" STREQUAL "")
    message(FATAL_ERROR "install.cmake: ${_var} not set")
  endif()
endforeach()

if(SOURCE_DIR)
  file(REMOVE_RECURSE "${BUILD_DIR}")
  set(_configure "${CMAKE_COMMAND}" -S "${SOURCE_DIR}" -B "${BUILD_DIR}" -G "${GENERATOR}"
      "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}" -DEPGRAPH_COMPILED=ON -DEPGRAPH_BUILD_TESTS=OFF
      -DEPGRAPH_BUILD_EXAMPLES=OFF -DEPGRAPH_INSTALL=ON
      "-DEPGRAPH_INSTALL_CMAKEDIR=${EPGRAPH_INSTALL_CMAKEDIR}")
  if(MAKE_PROGRAM)
    list(APPEND _configure "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
  endif()
  if(BUILD_TYPE)
    list(APPEND _configure "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}")
  endif()
  foreach(_step configure build)
    if(_step STREQUAL "configure")
      execute_process(COMMAND ${_configure} RESULT_VARIABLE _rc)
    else()
      set(_b "${CMAKE_COMMAND}" --build "${BUILD_DIR}")
      if(CONFIG)
        list(APPEND _b --config "${CONFIG}")
      endif()
      execute_process(COMMAND ${_b} RESULT_VARIABLE _rc)
    endif()
    if(NOT _rc EQUAL 0)
      message(FATAL_ERROR "install.cmake: ${_step} of the compiled-mode build failed (${_rc})")
    endif()
  endforeach()
endif()

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

# Only headers and CMake package files belong in the install tree (no tests, no binaries), and
# in compiled mode (EXPECT_COMPILED) the static library epgraph::compiled.
file(GLOB_RECURSE _installed RELATIVE "${PREFIX}" "${PREFIX}/*")
set(_library_seen FALSE)
foreach(_file IN LISTS _installed)
  string(FIND "${_file}" "${EPGRAPH_INSTALL_INCLUDEDIR}/epgraph/" _in_include)
  string(FIND "${_file}" "${EPGRAPH_INSTALL_CMAKEDIR}/" _in_cmake)
  if(EXPECT_COMPILED AND _file MATCHES "^lib[^/]*/(lib)?epgraph_compiled\\.(a|lib)$")
    set(_library_seen TRUE)
  elseif(NOT _in_include EQUAL 0 AND NOT _in_cmake EQUAL 0)
    message(FATAL_ERROR "install.cmake: unexpected installed file ${_file}")
  endif()
endforeach()
if(EXPECT_COMPILED AND NOT _library_seen)
  message(FATAL_ERROR "install.cmake: the epgraph::compiled library was not installed")
endif()
list(LENGTH _installed _n)
message(STATUS "install.cmake: ${_n} files installed into ${PREFIX}")
