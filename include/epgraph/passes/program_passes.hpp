// Whole-graph passes of torch.fx: dead-code elimination that respects a program's signature,
// and stable topological sorting.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <functional>
#include <string_view>
#include <unordered_set>

#include "../ir/graph.hpp"
#include "../program/exported_program.hpp"
#include "../program/graph_signature.hpp"
#include "topological_sort.hpp"

namespace epgraph {

/// Graph::eliminate_dead_code on the program's graph that also keeps every node the signature
/// names: each input spec's placeholder (kept anyway) and each output spec's node (normally used
/// by the output node, so kept anyway; this protects a program whose output node and specs
/// disagree). `is_impure` adds nodes to keep and `unknown` says what an operator without a schema
/// is, as in Graph::eliminate_dead_code (default: kept). Returns whether
/// anything was removed. Mirrors torch's `ep.graph.eliminate_dead_code()` as run by
/// `torch.export` passes (torch/fx/graph.py). Throws what Graph::eliminate_dead_code throws.
/// Strong guarantee. O(nodes + edges + specs).
template <class Tensor>
bool eliminate_dead_code(ExportedProgram<Tensor>& program,
                         const std::function<bool(const Node&)>& is_impure = {},
                         UnknownOperators unknown = UnknownOperators::impure) {
  std::unordered_set<std::string_view> named;
  const ExportGraphSignature& sig = program.graph_signature();
  for (const InputSpec& s : sig.input_specs) {
    if (names_graph_value(s.arg())) named.insert(s.name());
  }
  for (const OutputSpec& s : sig.output_specs) {
    if (names_graph_value(s.arg())) named.insert(s.name());
  }
  return program.graph().eliminate_dead_code(
      [&](const Node& n) { return named.count(n.name()) != 0 || (is_impure && is_impure(n)); },
      unknown);
}

}  // namespace epgraph
