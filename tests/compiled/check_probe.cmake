# ctest unit.compiled_mode_leaves_entry_points_to_the_library: in compiled mode, the object of
# tests/compiled/probe.cpp references each HostTensor entry point (nm: U) and defines none of
# them (no T/W), i.e. the headers' `extern template` declarations hold and the code comes from
# epgraph::compiled; the same for ExportedProgram<HostTensor>'s destructor, the graph printer and
# Graph's out-of-line members (detail/compiled_mode.hpp), which compiled mode also keeps out of
# the user's object. Usage: cmake -DNM=... -DOBJECT=... -P check_probe.cmake
# SPDX-License-Identifier: BSD-3-Clause
cmake_minimum_required(VERSION 3.16)
execute_process(COMMAND "${NM}" -C "${OBJECT}" OUTPUT_VARIABLE _syms RESULT_VARIABLE _rc)
if(NOT _rc EQUAL 0)
  message(FATAL_ERROR "check_probe.cmake: '${NM} -C ${OBJECT}' failed (${_rc})")
endif()
string(REPLACE "\n" ";" _lines "${_syms}")
set(_failures "")
foreach(_fn
    "epgraph::archive::load_archive<epgraph::HostTensor>("
    "epgraph::archive::save_archive<epgraph::HostTensor>("
    "epgraph::archive::archive_programs("
    "epgraph::json::save_exported_program_to_string<epgraph::HostTensor>("
    "epgraph::json::load_exported_program_from_string<epgraph::HostTensor>("
    "void epgraph::verify<epgraph::HostTensor>("
    "epgraph::ExportedProgram<epgraph::HostTensor>::~ExportedProgram()"
    "epgraph::operator<<(std::ostream&, epgraph::Graph const&)"
    "epgraph::Graph::lint() const")
  set(_referenced FALSE)
  foreach(_line IN LISTS _lines)
    string(FIND "${_line}" "${_fn}" _at)
    if(_at EQUAL -1)
      continue()
    endif()
    if(_line MATCHES "^ +U ")
      set(_referenced TRUE)
    else()
      list(APPEND _failures "defined in the user's object: ${_line}")
    endif()
  endforeach()
  if(NOT _referenced)
    list(APPEND _failures "not referenced as undefined: ${_fn}")
  endif()
endforeach()
if(_failures)
  string(REPLACE ";" "\n  " _text "${_failures}")
  message(FATAL_ERROR "check_probe.cmake:\n  ${_text}")
endif()
message(STATUS "check_probe.cmake: 9 entry points referenced, none defined")
