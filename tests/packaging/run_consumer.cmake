# Configure, build and test one consumer project (tests/packaging/<kind>/) from scratch.
# Usage: cmake -DCONSUMER_SOURCE_DIR=... -DCONSUMER_BINARY_DIR=... -DGENERATOR=...
#              -DCXX_COMPILER=... -DCTEST_COMMAND=... -DEPGRAPH_SOURCE_DIR=... -DEPGRAPH_VERSION=...
#              [-DEPGRAPH_PREFIX=...] [-DCONFIG=...] [-DBUILD_TYPE=...] [-DMAKE_PROGRAM=...]
#              [-DGENERATOR_PLATFORM=...] [-DGENERATOR_TOOLSET=...]
#              [-DEPGRAPH_EXPECT_JSON=ON|OFF] [-DEPGRAPH_EXPECT_ARCHIVE=ON|OFF]
#              [-DEPGRAPH_EXPECT_COMPILED=ON|OFF]
#              -P run_consumer.cmake
# SPDX-License-Identifier: BSD-3-Clause
cmake_minimum_required(VERSION 3.16)

foreach(_var CONSUMER_SOURCE_DIR CONSUMER_BINARY_DIR GENERATOR CXX_COMPILER CTEST_COMMAND
             EPGRAPH_SOURCE_DIR EPGRAPH_VERSION)
  if(NOT DEFINED ${_var} OR "${${_var}}" STREQUAL "")
    message(FATAL_ERROR "run_consumer.cmake: ${_var} not set")
  endif()
endforeach()

function(run_step what)
  string(REPLACE ";" " " _pretty "${ARGN}")
  message(STATUS "run_consumer.cmake: ${what}: ${_pretty}")
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY "${CONSUMER_BINARY_DIR}" RESULT_VARIABLE _rc)
  if(NOT _rc EQUAL 0)
    message(FATAL_ERROR "run_consumer.cmake: ${what} failed (${_rc})")
  endif()
endfunction()

file(REMOVE_RECURSE "${CONSUMER_BINARY_DIR}")
file(MAKE_DIRECTORY "${CONSUMER_BINARY_DIR}")

set(_configure "${CMAKE_COMMAND}" -S "${CONSUMER_SOURCE_DIR}" -B "${CONSUMER_BINARY_DIR}"
    -G "${GENERATOR}"
    "-DCMAKE_CXX_COMPILER=${CXX_COMPILER}"
    "-DEPGRAPH_SOURCE_DIR=${EPGRAPH_SOURCE_DIR}"
    "-DEPGRAPH_EXPECTED_VERSION=${EPGRAPH_VERSION}"
    "-DEPGRAPH_EXPECT_JSON=${EPGRAPH_EXPECT_JSON}"
    "-DEPGRAPH_EXPECT_ARCHIVE=${EPGRAPH_EXPECT_ARCHIVE}"
    "-DEPGRAPH_EXPECT_COMPILED=${EPGRAPH_EXPECT_COMPILED}"
    # The consumers that build epgraph from source (add_subdirectory, FetchContent) build it in
    # the mode under test; find_package ignores it.
    "-DEPGRAPH_COMPILED=${EPGRAPH_EXPECT_COMPILED}"
    # Only what the test passes in may be found: not the user package registry.
    -DCMAKE_FIND_PACKAGE_NO_PACKAGE_REGISTRY=ON
    --no-warn-unused-cli)
if(GENERATOR_PLATFORM)
  list(APPEND _configure -A "${GENERATOR_PLATFORM}")
endif()
if(GENERATOR_TOOLSET)
  list(APPEND _configure -T "${GENERATOR_TOOLSET}")
endif()
if(MAKE_PROGRAM)
  list(APPEND _configure "-DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM}")
endif()
if(BUILD_TYPE)
  list(APPEND _configure "-DCMAKE_BUILD_TYPE=${BUILD_TYPE}")
endif()
if(EPGRAPH_PREFIX)
  list(APPEND _configure "-DCMAKE_PREFIX_PATH=${EPGRAPH_PREFIX}" "-DEPGRAPH_PREFIX=${EPGRAPH_PREFIX}")
endif()

set(_build "${CMAKE_COMMAND}" --build "${CONSUMER_BINARY_DIR}")
set(_test "${CTEST_COMMAND}" --output-on-failure --no-tests=error)
if(CONFIG)
  list(APPEND _build --config "${CONFIG}")
  list(APPEND _test -C "${CONFIG}")
endif()

run_step(configure ${_configure})
run_step(build ${_build})
run_step(test ${_test})
