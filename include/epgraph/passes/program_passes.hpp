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

/// Reorders the nodes so that each comes after all its inputs, keeping the current order
/// wherever it is already valid (torch._inductor.pattern_matcher.stable_topological_sort; what
/// torch.fx.passes.tools_common.legalize_graph is used for). Exactly torch's algorithm: nodes are
/// taken in order; a node whose inputs (args then kwargs) are all placed is placed after the
/// previously placed node, otherwise it waits for its last input not yet placed and is retried
/// right after that input is placed. A sorted graph is left as it is. Placeholders stay first
/// and the output node last. Insertion points keep their anchors. Throws runtime_error "Graph
/// has a cycle through node 'add'" (naming a node on a cycle) when no such order exists (torch
/// fails an assertion), and runtime_error "Cannot sort the graph topologically: 'add_' writes
/// 'clone' in place and 'mul' reads it through 'view', and sorting would swap them" when the new
/// order puts a node that reads (or writes) a tensor on the other side of an in-place write to
/// it, directly or through a view or alias chain (ir/alias.hpp; torch's sort looks at data edges
/// only and makes that swap, so the reader sees another value). Writes are the known ones, as
/// for Node::prepend: an operator without a schema and an in-place name is not taken to write.
/// Nothing moves then. Strong guarantee. O(nodes + edges) when nothing needs to move or nothing
/// writes; otherwise plus O(nodes * S + sum over written sets of k * w) for S written sets, k
/// nodes touching a set and w of them writing it.
inline void stable_topological_sort(Graph& graph) { graph.stable_topological_sort_impl(); }

}  // namespace epgraph
