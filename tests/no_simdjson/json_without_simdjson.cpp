// epgraph::json without simdjson (CMake option EPGRAPH_SIMDJSON=OFF, or simdjson not found): the
// nlohmann-only reader must compile. It did not: read_arguments.hpp named simdjson's
// `needs_tree` outside its `#if EPGRAPH_JSON_HAS_SIMDJSON` branch. The loader is instantiated
// here so that every template of the reader is compiled (compile-only: epgraph_json_tests runs
// the same code with simdjson on).
// SPDX-License-Identifier: BSD-3-Clause
#undef EPGRAPH_JSON_HAS_SIMDJSON
#define EPGRAPH_JSON_HAS_SIMDJSON 0
#include <epgraph/json/json.hpp>

template epgraph::ExportedProgram<epgraph::HostTensor>
    epgraph::json::load_exported_program_from_string<epgraph::HostTensor>(std::string_view);
template std::size_t epgraph::json::materialize_nested_graphs<epgraph::HostTensor>(
    epgraph::ExportedProgram<epgraph::HostTensor>&);
