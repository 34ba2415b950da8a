# epgraph: helpers for epgraph's own test suite (included by tests/CMakeLists.txt).
# SPDX-License-Identifier: BSD-3-Clause
#
# epgraph_add_test_executable(<name>
#     SOURCES <file>...
#     [LIBRARIES <target>...]        extra link libraries; epgraph::epgraph and epgraph_dev
#                                    (warnings, sanitizers) are always linked
#     [LABELS <label>...]            ctest labels; default "unit"
#     [TEST_PREFIX <prefix>]         prefix of the ctest test names; default "<first label>."
#     [WORKING_DIRECTORY <dir>]      where the tests run; default this build directory
#     [ENVIRONMENT <VAR=value>...]   environment of the tests
#     [TIMEOUT <seconds>]
#     [SKIP_RETURN_CODE <code>]      exit code that ctest reports as "skipped", not failed
#     [EXTRA_ARGS <arg>...]          command-line arguments for every run
#     [NO_CATCH_MAIN]                the sources define main() themselves
#     [NO_DISCOVER])                 one ctest test "<prefix><name>" running the whole
#                                    executable instead of one ctest test per Catch TEST_CASE
#
# By default the Catch main (compiled once, in epgraph_catch_main) is linked and every
# TEST_CASE becomes a ctest test named "<prefix><test case name>", found at build time by
# catch_discover_tests.  Every test executable gets the compile definition
# EPGRAPH_SOURCE_DIR="<epgraph's source root>" (for data files such as examples/data/*).

include_guard(GLOBAL)

function(epgraph_add_test_executable name)
  cmake_parse_arguments(PARSE_ARGV 1 arg
    "NO_CATCH_MAIN;NO_DISCOVER"
    "TEST_PREFIX;WORKING_DIRECTORY;TIMEOUT;SKIP_RETURN_CODE"
    "SOURCES;LIBRARIES;LABELS;ENVIRONMENT;EXTRA_ARGS")
  if(arg_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "epgraph_add_test_executable(${name}): unknown arguments ${arg_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT arg_SOURCES)
    message(FATAL_ERROR "epgraph_add_test_executable(${name}): no SOURCES")
  endif()
  if(NOT arg_LABELS)
    set(arg_LABELS unit)
  endif()
  if(NOT DEFINED arg_TEST_PREFIX)
    list(GET arg_LABELS 0 _first_label)
    set(arg_TEST_PREFIX "${_first_label}.")
  endif()
  if(NOT arg_WORKING_DIRECTORY)
    set(arg_WORKING_DIRECTORY "${CMAKE_CURRENT_BINARY_DIR}")
  endif()
  if(EPGRAPH_SANITIZE)
    list(APPEND arg_ENVIRONMENT "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1")
  endif()

  add_executable(${name} ${arg_SOURCES})
  # Unity build (EPGRAPH_UNITY_TESTS, default ON): the test files of one executable are compiled
  # in batches of EPGRAPH_UNITY_BATCH, so the library's headers are parsed and its templates
  # instantiated once per batch instead of once per file (the suite's build time is mostly that).
  if(EPGRAPH_UNITY_TESTS)
    set_target_properties(${name} PROPERTIES UNITY_BUILD ON
                                             UNITY_BUILD_BATCH_SIZE ${EPGRAPH_UNITY_BATCH})
  endif()
  target_link_libraries(${name} PRIVATE epgraph::epgraph epgraph_dev ${arg_LIBRARIES})
  target_compile_definitions(${name} PRIVATE "EPGRAPH_SOURCE_DIR=\"${PROJECT_SOURCE_DIR}\"")
  if(NOT arg_NO_CATCH_MAIN)
    target_link_libraries(${name} PRIVATE epgraph_catch_main)
  endif()

  if(arg_NO_DISCOVER)
    add_test(NAME "${arg_TEST_PREFIX}${name}" COMMAND ${name} ${arg_EXTRA_ARGS}
             WORKING_DIRECTORY "${arg_WORKING_DIRECTORY}")
    set(_test "${arg_TEST_PREFIX}${name}")
    set_tests_properties("${_test}" PROPERTIES LABELS "${arg_LABELS}")
    if(arg_ENVIRONMENT)
      set_tests_properties("${_test}" PROPERTIES ENVIRONMENT "${arg_ENVIRONMENT}")
    endif()
    if(DEFINED arg_TIMEOUT)
      set_tests_properties("${_test}" PROPERTIES TIMEOUT "${arg_TIMEOUT}")
    endif()
    if(DEFINED arg_SKIP_RETURN_CODE)
      set_tests_properties("${_test}" PROPERTIES SKIP_RETURN_CODE "${arg_SKIP_RETURN_CODE}")
    endif()
    return()
  endif()

  catch_discover_tests(${name}
    TEST_PREFIX "${arg_TEST_PREFIX}"
    WORKING_DIRECTORY "${arg_WORKING_DIRECTORY}"
    # --warn NoTests: a name Catch cannot select (CMake splits a name at ";", so 17 test cases
    # with one never ran and ctest called them passed) fails instead of passing.
    EXTRA_ARGS --warn NoTests ${arg_EXTRA_ARGS})
  # catch_discover_tests' PROPERTIES cannot carry list values (several labels, several
  # environment variables), so set the properties from a ctest include file that runs after
  # Catch's and sees the discovered names in ${name}_TESTS.
  set(_script "if(DEFINED ${name}_TESTS)\n  foreach(_t IN LISTS ${name}_TESTS)\n")
  string(APPEND _script "    set_tests_properties(\"\${_t}\" PROPERTIES\n")
  string(APPEND _script "      LABELS [==[${arg_LABELS}]==]\n")
  if(arg_ENVIRONMENT)
    string(APPEND _script "      ENVIRONMENT [==[${arg_ENVIRONMENT}]==]\n")
  endif()
  if(DEFINED arg_TIMEOUT)
    string(APPEND _script "      TIMEOUT [==[${arg_TIMEOUT}]==]\n")
  endif()
  if(DEFINED arg_SKIP_RETURN_CODE)
    string(APPEND _script "      SKIP_RETURN_CODE [==[${arg_SKIP_RETURN_CODE}]==]\n")
  endif()
  string(APPEND _script "    )\n  endforeach()\nendif()\n")
  set(_file "${CMAKE_CURRENT_BINARY_DIR}/${name}_properties.cmake")
  file(WRITE "${_file}.tmp" "${_script}")
  configure_file("${_file}.tmp" "${_file}" COPYONLY)
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${_file}")
endfunction()

# epgraph_add_header_check(<target> <include_root> HEADERS <header>... LIBRARIES <lib>...)
# Generates, for every header (path relative to <include_root>), a .cpp that includes only that
# header, twice, and compiles all of them into the OBJECT library <target> (part of ALL).
function(epgraph_add_header_check target include_root)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "" "HEADERS;LIBRARIES")
  set(_sources "")
  foreach(_header IN LISTS arg_HEADERS)
    file(RELATIVE_PATH _rel "${include_root}" "${_header}")
    string(MAKE_C_IDENTIFIER "${_rel}" _id)
    set(_cpp "${CMAKE_CURRENT_BINARY_DIR}/header_selfcontained/${_id}.cpp")
    set(_content "// Generated by epgraph's tests/CMakeLists.txt: <${_rel}> must compile on its own\n")
    string(APPEND _content "// and must be safe to include twice.\n")
    string(APPEND _content "#include <${_rel}>\n#include <${_rel}>\n\n")
    string(APPEND _content "int epgraph_header_check_${_id}();\n")
    file(GENERATE OUTPUT "${_cpp}" CONTENT "${_content}")
    list(APPEND _sources "${_cpp}")
  endforeach()
  add_library(${target} OBJECT ${_sources})
  target_link_libraries(${target} PRIVATE ${arg_LIBRARIES} epgraph_dev)
endfunction()
