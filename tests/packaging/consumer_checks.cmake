# Shared checks for the consumer projects in tests/packaging/*/ (include after epgraph is
# available).  Defines the consumer executable and its test.
# SPDX-License-Identifier: BSD-3-Clause

if(NOT TARGET epgraph::epgraph)
  message(FATAL_ERROR "consumer: epgraph::epgraph is not defined")
endif()

# epgraph's development targets must stay out of a consumer's project.
foreach(_t epgraph_tests epgraph_json_tests epgraph_odr_test epgraph_catch_main
           epgraph_header_check epgraph_warnings epgraph_sanitize epgraph_dev)
  if(TARGET ${_t})
    message(FATAL_ERROR "consumer: epgraph leaked its development target ${_t}")
  endif()
endforeach()

# The core target carries no compile flags and no dependencies, only headers + C++17.
foreach(_prop INTERFACE_COMPILE_OPTIONS INTERFACE_LINK_LIBRARIES INTERFACE_LINK_OPTIONS
              INTERFACE_COMPILE_DEFINITIONS)
  get_target_property(_value epgraph::epgraph ${_prop})
  if(_value)
    message(FATAL_ERROR "consumer: epgraph::epgraph has ${_prop} = '${_value}'")
  endif()
endforeach()
get_target_property(_features epgraph::epgraph INTERFACE_COMPILE_FEATURES)
if(NOT "cxx_std_17" IN_LIST _features)
  message(FATAL_ERROR "consumer: epgraph::epgraph does not require cxx_std_17 ('${_features}')")
endif()

add_executable(consumer main.cpp)
target_link_libraries(consumer PRIVATE epgraph::epgraph)

# The optional parts must be there exactly when the epgraph build under test had them.
foreach(_part json archive)
  string(TOUPPER "${_part}" _upper)
  if(EPGRAPH_EXPECT_${_upper} AND NOT TARGET epgraph::${_part})
    message(FATAL_ERROR "consumer: epgraph::${_part} expected but not defined")
  endif()
  if(NOT EPGRAPH_EXPECT_${_upper} AND TARGET epgraph::${_part})
    message(FATAL_ERROR "consumer: epgraph::${_part} defined but not expected")
  endif()
  if(TARGET epgraph::${_part})
    # Linking proves that the target's dependencies resolve in the consumer's project.
    target_link_libraries(consumer PRIVATE epgraph::${_part})
  endif()
endforeach()

# The I/O consumer: header-only through epgraph::json/epgraph::archive, or in compiled mode
# through epgraph::compiled, exactly as the epgraph build under test was configured.
if(EPGRAPH_EXPECT_COMPILED AND NOT TARGET epgraph::compiled)
  message(FATAL_ERROR "consumer: epgraph::compiled expected but not defined")
endif()
if(NOT EPGRAPH_EXPECT_COMPILED AND TARGET epgraph::compiled)
  message(FATAL_ERROR "consumer: epgraph::compiled defined but not expected")
endif()
if(TARGET epgraph::json)
  add_executable(consumer_io "${CMAKE_CURRENT_LIST_DIR}/io_main.cpp")
  if(TARGET epgraph::archive)
    target_compile_definitions(consumer_io PRIVATE EPGRAPH_CONSUMER_ARCHIVE=1)
  endif()
  if(EPGRAPH_EXPECT_COMPILED)
    target_link_libraries(consumer_io PRIVATE epgraph::compiled)
    set(_io_expect "compiled mode: round trip ok")
  elseif(TARGET epgraph::archive)
    target_link_libraries(consumer_io PRIVATE epgraph::archive)
    set(_io_expect "header-only: round trip ok")
  else()
    target_link_libraries(consumer_io PRIVATE epgraph::json)
    set(_io_expect "header-only: round trip ok")
  endif()
endif()

enable_testing()
if(TARGET consumer_io)
  add_test(NAME consumer_io COMMAND consumer_io)
  set_tests_properties(consumer_io PROPERTIES PASS_REGULAR_EXPRESSION "${_io_expect}")
endif()
add_test(NAME consumer COMMAND consumer)
set_tests_properties(consumer PROPERTIES
  PASS_REGULAR_EXPRESSION "epgraph ${EPGRAPH_EXPECTED_VERSION} \\(major ")
