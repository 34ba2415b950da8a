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
/// (GraphModuleDeserializer in torch/_export/serde/serialize.py):
/// - every value keeps the name the file gives it, even one FX's namespace would change (`input`,
///   `sum`, `min`: torch's sync_fx_node overwrites FX's `input_1`; see VerbatimNames): graph
///   inputs, single-value nodes and the getitem nodes of named outputs; names the file does not
///   fix (a constant input, whose placeholder torch names by FX's rule from its spec's name, e.g.
///   `list` -> `list_1`; a multi-output node; `as_none` getitems) follow FX's rule, as in torch;
/// - one placeholder per graph input, named after the input (a constant input takes its spec's
///   name), with tensor metadata from `tensor_values` (checked as torch's empty_strided checks
///   it, see tensor_meta_from_json);
/// - floats are JSON numbers or torch 2.13's strings "Infinity", "-Infinity", "NaN"; the bare
///   tokens `Infinity`, `-Infinity`, `NaN` that torch <= 2.6 wrote (and Python's json reads) are
///   read as those strings (an unbounded range constraint written as Infinity reads as
///   unbounded); save writes torch 2.13's strings. Such a file is parsed twice (only files whose
///   first parse fails pay for it); a file that is malformed otherwise gets the parser's message
///   for the text with its bare tokens quoted;
/// - one call_function node per serialized node, its target the serialized target string except
///   that Python's operator module is spelled as torch.fx prints it (`_operator.mul` in the file
///   is `operator.mul`, like the getitem nodes; save writes `_operator.mul` back); a node
///   returning one value is named after that value; a node returning several gets one
///   `operator.getitem` node per output named after it (a list output gets an unnamed getitem and
///   nested getitems; an `as_none` output a getitem named `as_none`); a node returning only None
///   is named `<op>_unused`; otherwise the node takes its serialized `name` or FX's default;
/// - an operator argument (`as_operator`, e.g. the op of with_effects or auto_functionalized) is
///   kept as torch.fx prints the operator, `str(op)`: `torch.ops.aten._print.default` in the file
///   is the string `aten._print.default`, `torch.ops.higher_order.print` is `print`; save writes
///   the file's spelling back (a new or changed string gets `torch.ops.` /
///   `torch.ops.higher_order.` when it has / has no dot);
/// - NamedArgument `kind` 1 makes a positional argument, 2 a keyword argument; without `kind`
///   (schema 7.x and older) arguments are positional (torch consults the operator schema instead,
///   so an explicitly passed defaulted argument of an old file is a keyword argument in torch);
/// - a nested graph (`as_graph`, control flow) becomes a get_attr node named after it, its graph
///   checked and kept verbatim; each use makes its own get_attr node, as in torch, so a graph
///   several calls share (`invoke_subgraph` of one `nested_compile_region`) is read again through
///   `<name>_1`, `<name>_2`, ... (FX's rule), whose target is still `<name>`; complex values become
///   a [real, imag] list and a string-to-argument dict a list of [key, value] lists (both written
///   back in their schema form);
/// - node `metadata` goes to NodeMeta::other in order; what the graph does not model (argument
///   names and union kinds, the output layout, optional fields present) to NodeMeta::serialized;
/// - opset_version, range_constraints, verifiers and torch_version go to ProgramMetadata; every
///   other field (module_call_graph, graph_module.metadata, treespec_namedtuple_fields,
///   guards_code, a legacy `dialect`, unknown fields) is kept verbatim in ProgramMetadata::opaque
///   under its dotted path; optional fields the file omits are listed under `json.absent` so save
///   omits them too.
/// Accepts schema 8.x, 7.x and the legacy form (integer `schema_version`, unions with every member
/// and the unused ones null, buffers without `persistent`, which then reads as true).
///
/// Forward compatibility. torch 2.13 loads any 8.x file, ignoring the fields its schema does not
/// define (serialize.py `_dict_to_dataclass` skips keys "for forward compatibility"), and saves
/// 8.20, so a field a newer minor version added is lost in its round trip. epgraph never drops
/// one silently: fields of a serialized node beyond 8.20's (`target`, `inputs`, `outputs`,
/// `metadata`, `is_hop_single_tensor_return`, `name`) are kept in NodeMeta::serialized and written
/// back after the known ones, for any version (also when the node is edited: epgraph cannot know
/// what they mean); unknown top-level and `graph_module` fields are kept as opaque fields (above).
/// A file of a newer minor version (8.21 and up) keeps its `schema_version` on save (stored in
/// ProgramMetadata::opaque under "json.schema_version", not a document field), and is refused
/// when it has a field anywhere else that saving would drop (a new field of a tensor's metadata,
/// an argument, a spec, a graph). In files of 8.20 and older, unknown fields elsewhere than on
/// nodes, the top level and graph_module are ignored, as torch ignores them (no such field exists
/// in those versions' schemas).
/// state_dict and constants stay empty: a JSON record carries no weights.
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
