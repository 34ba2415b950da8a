# epgraph's layer check: a header may include only headers of its own layer or a lower one.
# SPDX-License-Identifier: BSD-3-Clause
#
#   cmake -DINCLUDE_ROOT=<dir holding epgraph/> [-DEXPECT=<violation>;...] -P layer_check.cmake
#
# The layers, lowest first (include/epgraph/<folder>/, each with its own detail/):
#   base     error.hpp, version.hpp, detail/      (the standard library only)
#   ops      ops/       operator schemas, the registry, the aten table, impure targets
#   ir       ir/        tensor, argument, value, names, node, graph, print, normalized arguments
#   program  program/   signature, exported program, lookups, verify, edits
#   passes   passes/    DCE, sort, matcher, rewriter, pass manager, metadata inference;
#                       epgraph.hpp, the core's umbrella, is on this layer
#   json     json/      the optional JSON target (nlohmann_json, simdjson)
#   archive  archive/   the optional .pt2 target (libzip)
# A violation is an include of a higher layer, a quoted include that names no file, or a core
# header (base .. passes) that includes a third-party header (nlohmann, simdjson, zip.h).
#
# Without EXPECT the check fails (FATAL_ERROR) on any violation and lists them all. With EXPECT
# ("<header> -> <what>" lines as the check prints them, separated by "|") it passes only when the
# violations found are exactly those: the check's own test runs it that way on a tree with
# planted violations (tests/data/layer_check_bad/), so a check that finds nothing fails.

if(NOT INCLUDE_ROOT)
  message(FATAL_ERROR "layer_check.cmake: pass -DINCLUDE_ROOT=<dir holding epgraph/>")
endif()
get_filename_component(_root "${INCLUDE_ROOT}/epgraph" ABSOLUTE)
if(NOT IS_DIRECTORY "${_root}")
  message(FATAL_ERROR "layer_check.cmake: '${_root}' is not a directory")
endif()

set(_layers base ops ir program passes json archive)
set(_core_top 4)  # index of "passes": layers 0..4 are the dependency-free core

# _layer_of(<path relative to epgraph/> <out var>): the layer's index, or -1 for a file outside
# every layer (which is a violation of its own).
function(_layer_of rel out)
  if(rel MATCHES "^([a-z_]+)/")
    set(_top "${CMAKE_MATCH_1}")
    if(_top STREQUAL "detail")
      set(${out} 0 PARENT_SCOPE)
      return()
    endif()
    list(FIND _layers "${_top}" _i)
    if(_i GREATER 0)
      set(${out} ${_i} PARENT_SCOPE)
      return()
    endif()
    set(${out} -1 PARENT_SCOPE)
    return()
  endif()
  if(rel STREQUAL "error.hpp" OR rel STREQUAL "version.hpp")
    set(${out} 0 PARENT_SCOPE)
  elseif(rel STREQUAL "epgraph.hpp")
    set(${out} 4 PARENT_SCOPE)
  else()
    set(${out} -1 PARENT_SCOPE)
  endif()
endfunction()

file(GLOB_RECURSE _headers RELATIVE "${_root}" "${_root}/*.hpp" "${_root}/*.h")
list(SORT _headers)
set(_violations "")
set(_includes 0)
foreach(_rel IN LISTS _headers)
  _layer_of("${_rel}" _own)
  if(_own LESS 0)
    list(APPEND _violations "${_rel} -> outside every layer")
    continue()
  endif()
  list(GET _layers ${_own} _own_name)
  get_filename_component(_dir "${_root}/${_rel}" DIRECTORY)
  file(STRINGS "${_root}/${_rel}" _lines REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"]")
  foreach(_line IN LISTS _lines)
    if(_line MATCHES "#[ \t]*include[ \t]*\"([^\"]+)\"")
      get_filename_component(_target "${CMAKE_MATCH_1}" ABSOLUTE BASE_DIR "${_dir}")
    elseif(_line MATCHES "#[ \t]*include[ \t]*<(epgraph/[^>]+)>")
      get_filename_component(_target "${INCLUDE_ROOT}/${CMAKE_MATCH_1}" ABSOLUTE)
    elseif(_line MATCHES "#[ \t]*include[ \t]*<(nlohmann/|simdjson|zip\\.h)")
      if(_own LESS_EQUAL _core_top)
        list(APPEND _violations "${_rel} -> third-party header in the core (layer ${_own_name})")
      endif()
      continue()
    else()
      continue()
    endif()
    math(EXPR _includes "${_includes} + 1")
    file(RELATIVE_PATH _trel "${_root}" "${_target}")
    if(NOT EXISTS "${_target}")
      list(APPEND _violations "${_rel} -> ${_trel}: no such header")
      continue()
    endif()
    if(_trel MATCHES "^\\.\\./")
      list(APPEND _violations "${_rel} -> ${_trel}: outside epgraph/")
      continue()
    endif()
    _layer_of("${_trel}" _theirs)
    if(_theirs GREATER _own)
      list(GET _layers ${_theirs} _their_name)
      list(APPEND _violations "${_rel} -> ${_trel}: layer ${_their_name} is above ${_own_name}")
    endif()
  endforeach()
endforeach()

list(LENGTH _headers _nheaders)
list(LENGTH _violations _nviolations)
foreach(_v IN LISTS _violations)
  message("violation: ${_v}")
endforeach()
message("layer check: ${_nheaders} headers, ${_includes} epgraph includes, "
        "${_nviolations} violations")

if(DEFINED EXPECT)
  string(REPLACE "|" ";" _want "${EXPECT}")
  list(SORT _want)
  set(_got "${_violations}")
  list(SORT _got)
  if(NOT _got STREQUAL _want)
    message(FATAL_ERROR "layer check: expected exactly these violations:\n  ${_want}\n"
                        "found:\n  ${_got}")
  endif()
  message("layer check: found exactly the ${_nviolations} expected violations")
elseif(_nviolations GREATER 0)
  message(FATAL_ERROR "layer check: a header includes a higher layer (see the lines above; "
                      "the layers are listed in tests/layer_check.cmake)")
endif()
