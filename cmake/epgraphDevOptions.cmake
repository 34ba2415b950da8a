# epgraph: development-only INTERFACE targets for epgraph's own tests, examples and benchmarks.
# SPDX-License-Identifier: BSD-3-Clause
#
# None of these targets is installed or exported, and epgraph::* never links them, so a
# consumer of epgraph never inherits our warning or sanitizer flags.
#
#   epgraph_warnings  -Wall -Wextra -Wpedantic -Wshadow -Wconversion (+ -Werror if EPGRAPH_WERROR)
#   epgraph_sanitize  ASan+UBSan compile and link flags if EPGRAPH_SANITIZE, else empty
#   epgraph_dev       both of the above (and epgraph::compiled when it is built): link this
#                     from every test/example/bench target

include_guard(GLOBAL)

add_library(epgraph_warnings INTERFACE)
target_compile_options(epgraph_warnings INTERFACE
  "$<$<CXX_COMPILER_ID:GNU,Clang,AppleClang>:-Wall;-Wextra;-Wpedantic;-Wshadow;-Wconversion>"
  "$<$<CXX_COMPILER_ID:MSVC>:/W4;/permissive->")
if(EPGRAPH_WERROR)
  target_compile_options(epgraph_warnings INTERFACE
    "$<$<CXX_COMPILER_ID:GNU,Clang,AppleClang>:-Werror>"
    "$<$<CXX_COMPILER_ID:MSVC>:/WX>")
  # g++ 12 at -O2/-O3 reports a std::string inside std::variant<std::int64_t, SymExpr> (a SymInt)
  # as "may be used uninitialized" after the variant is moved (a false positive of its
  # -Wmaybe-uninitialized, first seen in the Release benchmark build of infer_meta.hpp); it
  # stays a warning there so that optimized -Werror builds do not stop on it.
  target_compile_options(epgraph_warnings INTERFACE
    "$<$<CXX_COMPILER_ID:GNU>:-Wno-error=maybe-uninitialized>")
endif()

add_library(epgraph_sanitize INTERFACE)
if(EPGRAPH_SANITIZE)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "^(GNU|Clang|AppleClang)$")
    message(FATAL_ERROR "EPGRAPH_SANITIZE=ON needs GCC or Clang (have ${CMAKE_CXX_COMPILER_ID})")
  endif()
  set(_epgraph_san_flags
      -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all)
  target_compile_options(epgraph_sanitize INTERFACE ${_epgraph_san_flags})
  target_link_options(epgraph_sanitize INTERFACE ${_epgraph_san_flags})
  unset(_epgraph_san_flags)
endif()

add_library(epgraph_dev INTERFACE)
target_link_libraries(epgraph_dev INTERFACE epgraph_warnings epgraph_sanitize)

# With -DEPGRAPH_COMPILED=ON, epgraph's own tests, examples and benchmarks all run in compiled
# mode: the library is built with the same warnings and sanitizers, and epgraph_dev links it.
if(TARGET epgraph_compiled)
  target_link_libraries(epgraph_compiled PRIVATE
                        "$<BUILD_INTERFACE:epgraph_warnings>" "$<BUILD_INTERFACE:epgraph_sanitize>")
  target_link_libraries(epgraph_dev INTERFACE epgraph_compiled)
endif()
