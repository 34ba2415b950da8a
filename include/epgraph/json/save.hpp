// epgraph::json's savers: save_exported_program and save_exported_program_to_string, declared
// here and defined in json/serialize.hpp (header-only) or compiled into epgraph::compiled for
// HostTensor (compiled mode: this header is then all a caller needs).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <filesystem>
#include <string>

#include "../ir/tensor.hpp"
#include "../program/exported_program.hpp"
#include "error.hpp"

namespace epgraph::json {

/// Writes `ep` as an exported-program JSON record of schema 8.20 (torch 2.13's
/// `torch.export.save` record, `models/model.json`), the inverse of load_exported_program:
/// graph inputs from placeholders; one serialized node per call_function node except getitem
/// nodes, whose names become the outputs of the node they read (an output with no getitem left is
/// named `<node>_unused_<i>`, like torch); `tensor_values` from NodeMeta::val; symbolic and
/// custom-object values, argument names, union kinds and optional fields from NodeMeta::serialized;
/// signature, opset_version, range_constraints, verifiers, torch_version, and the opaque fields.
/// Targets `operator.<f>` are written `_operator.<f>` and operator arguments get back their
/// `torch.ops.` spelling (see load_exported_program), as torch's deserializer needs.
/// state_dict and constants are not written (an archive holds them).
/// A get_attr node without a record of its own (NodeMeta::serialized empty) whose target names a
/// nested graph the program owns (ExportedProgram::nested_graphs, e.g. outline_partition's) is
/// written as its user's `as_graph` argument `{"name": <target>, "graph": <that Graph>}`, the graph
/// written by the same rules with its own `tensor_values` and symbolic tables (torch's
/// deserializer reads a nested graph in a namespace of its own). Loaded back, it is kept with its
/// get_attr node like any nested graph read from a file.
///
/// The normalisations against the file a program was loaded from (load -> save gives equal JSON
/// values for 8.x and 7.x files), the form of nodes made in C++ and the TOKEN / CUSTOM_OBJ values
/// of a program built in C++ are specified in docs/json_format.md ("Saving").
///
/// Throws serialization_error when an opaque field holds malformed JSON text, and
/// "graph_module.graph.tensor_values: node '<n>' produces a tensor but has no tensor metadata
/// (NodeMeta::val); set it before saving" for a tensor-valued node without metadata (torch's
/// loader needs it; nodes created in C++ must be given their `meta().val`), and
/// "graph_module.graph.outputs: graph output '<n>' is a custom object, which torch's format cannot
/// return" (torch's deserialize_graph_output cannot read one back), and tensor metadata torch's
/// loader refuses, with the message loading it would give ("graph_module.graph.tensor_values.x.
/// sizes[1]: Trying to create tensor with negative dimension -3: [2, -3]", "....dtype: unknown
/// ScalarType 0", "....layout: unknown Layout 99", "....device.index: Device index must not be
/// negative", strides of another rank, a negative storage offset; see check_tensor_meta), and
/// node arguments it refuses ("graph_module.graph.nodes: node 'to' (torch.ops.aten.to.dtype)
/// cannot be written: input 'dtype': unknown ScalarType 0"; likewise a Layout or MemoryFormat
/// outside torch's enums and a device of negative index), and "graph_module.graph.nodes: get_attr
/// nodes 'true_graph_0' and 'true_graph_1' both name target 'true_graph_0' for different nested
/// graphs: torch's loader would call the last one read from both" for the first pair
/// nested_graph_clashes finds (torch writes both and its loader registers one submodule per
/// target; Graph::graph_copy gives copied graphs fresh targets); nlohmann::json::type_error 316
/// when a string to write (a node name, target, ...) is not valid UTF-8, as dump() does. The text
/// is dump()'s spelling of the document (no whitespace, UTF-8 kept); the graph's nodes and
/// `tensor_values` are written straight to the text rather than built as a JSON tree. O(program
/// size).
template <class Tensor>
[[nodiscard]] std::string save_exported_program_to_string(const ExportedProgram<Tensor>& ep);

/// Writes save_exported_program_to_string(ep) to `json_file`, all or nothing: the text goes to a
/// temporary file next to it, renamed over `json_file` at the end (detail::write_file_atomically),
/// so `json_file` may be the file the program was loaded from, and a failed write leaves it as it
/// was. Throws serialization_error "cannot write 'f.json'" (empty path), followed by the reason
/// (": a directory", ": directory 'd' does not exist", ": the write failed (disk full or file too
/// large?)", the system's message for a failed rename) when the file cannot be written, and what
/// the string overload throws (before anything is written). O(program size).
template <class Tensor>
void save_exported_program(const ExportedProgram<Tensor>& ep,
                           const std::filesystem::path& json_file);

#if defined(EPGRAPH_COMPILED_JSON) && EPGRAPH_COMPILED_JSON
// Compiled mode (CMake option EPGRAPH_COMPILED, target epgraph::compiled): the savers for
// HostTensor are compiled once in the library.
extern template std::string save_exported_program_to_string<HostTensor>(
    const ExportedProgram<HostTensor>&);
extern template void save_exported_program<HostTensor>(const ExportedProgram<HostTensor>&,
                                                       const std::filesystem::path&);
#endif

}  // namespace epgraph::json

#if !(defined(EPGRAPH_COMPILED_JSON) && EPGRAPH_COMPILED_JSON)
#include "serialize.hpp"  // the definitions (header-only)
#endif
