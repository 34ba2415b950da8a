// epgraph::json's loaders: load_exported_program and load_exported_program_from_string, declared
// here and defined in json/deserialize.hpp (header-only) or compiled into epgraph::compiled for
// HostTensor (compiled mode: this header is then all a caller needs).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <filesystem>
#include <string_view>

#include "../ir/tensor.hpp"
#include "../program/exported_program.hpp"
#include "error.hpp"

namespace epgraph::json {

/// Builds the program described by an exported-program JSON record (`models/model.json` of a PT2
/// archive, `serialized_exported_program.json` of older ones) the way `torch.export.load` does
/// (GraphModuleDeserializer in torch/_export/serde/serialize.py): every value keeps the name the
/// file gives it (VerbatimNames), one placeholder per graph input, one call_function node per
/// serialized node and one getitem node per output of a multi-output node, nested graphs as
/// get_attr nodes; what the graph does not model goes to NodeMeta::serialized and
/// ProgramMetadata. docs/json_format.md specifies the mapping part by part.
/// Accepts schema 8.x, 7.x and the legacy form (integer `schema_version`, unions with every member
/// and the unused ones null, buffers without `persistent`, which then reads as true).
///
/// Forward compatibility: a file of a newer minor version (8.21 and up) is read as torch 2.13
/// reads it, but refused when saving it would drop a field (docs/json_format.md says which).
///
/// Throws serialization_error (nothing is returned on error), `what()` = "<path>: <problem>":
/// malformed JSON ("malformed JSON: ..."), "missing required field 'x'", "expected an array, got
/// string", "unknown union member 'as_foo'", "union has no member set", "value 'x' is not
/// produced by any graph input or node", "duplicate value name 'x'", "schema major version 9 is
/// newer than the newest supported (8)", "<path>: field 'x' of schema 8.21 is unknown to epgraph,
/// which implements schema 8.20 and keeps unknown fields only on nodes, at the top level and in
/// graph_module: refusing the file rather than dropping the field" (a newer minor version, see
/// above), "<path>: differs from the nested graph 'g' read before under the same name (torch
/// would call the last one from every node)", "unknown ScalarType 99", "JSON nesting deeper than
/// 512 levels (at byte N)" (see max_json_depth; checked before parsing), and a spec breaking the
/// signature rules (the InputSpec/OutputSpec message at the spec's path). O(size of the text).
///
/// The text is parsed by simdjson when epgraph::json links it (CMake option EPGRAPH_SIMDJSON,
/// on by default, used when simdjson is found; the macro EPGRAPH_JSON_HAS_SIMDJSON is then 1),
/// else by nlohmann's parser: the program and the error messages are the same either way (a text
/// simdjson would read differently, or refuses, is parsed by nlohmann; see simdjson_feed.hpp).
template <class Tensor = HostTensor>
[[nodiscard]] ExportedProgram<Tensor> load_exported_program_from_string(std::string_view json_text);

/// Reads `json_file` (an exported-program JSON record) and builds the program; see
/// load_exported_program_from_string. Throws serialization_error with an empty path
/// ("cannot open 'f.json'") when the file cannot be read ("cannot open 'd': a directory" for a
/// directory), "f.pt2: a zip archive (a .pt2/.ep
/// file), not an exported-program JSON record: read it with epgraph::archive::load_archive" for a
/// zip file, and everything the string overload throws, its message prefixed with the file
/// ("f.json: malformed JSON: ...", "f.json: graph_module.graph.nodes[3]: ..."; `file()` tells
/// it, `path()` is the JSON path). O(file size).
template <class Tensor = HostTensor>
[[nodiscard]] ExportedProgram<Tensor> load_exported_program(const std::filesystem::path& json_file);

#if defined(EPGRAPH_COMPILED_JSON) && EPGRAPH_COMPILED_JSON
// Compiled mode (CMake option EPGRAPH_COMPILED, target epgraph::compiled): the loaders for
// HostTensor are compiled once in the library.
extern template ExportedProgram<HostTensor> load_exported_program_from_string<HostTensor>(
    std::string_view);
extern template ExportedProgram<HostTensor> load_exported_program<HostTensor>(
    const std::filesystem::path&);
#endif

}  // namespace epgraph::json

#if !(defined(EPGRAPH_COMPILED_JSON) && EPGRAPH_COMPILED_JSON)
#include "deserialize.hpp"  // the definitions (header-only)
#endif
