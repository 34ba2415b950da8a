// Outlining: a partition of an exported program moved into a nested graph that the program calls
// through torch.ops.higher_order.invoke_subgraph, the form torch.export gives a
// torch.compiler.nested_compile_region.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

/// outline_partition moves the nodes of a partition (see partitioner.hpp for how partitions are
/// found) into a new nested graph that the program owns (ExportedProgram::nested_graphs) and
/// leaves in their place what torch.export writes for a call of a `nested_compile_region`:
///
///     %repeated_subgraph0 = get_attr[target=repeated_subgraph0]
///     %invoke_subgraph = torch.ops.higher_order.invoke_subgraph(%repeated_subgraph0,
///                                                               'subgraph_0', %x, %p_w)
///     %getitem = operator.getitem(%invoke_subgraph, 0)
///
/// epgraph::json writes the nested graph as the get_attr's `as_graph` argument, so torch 2.13's
/// `torch.export.load` registers it as the submodule `repeated_subgraph0` and `ep.module()` runs
/// it. Unlike replace_partition_with_call (extract_partition.hpp) nothing leaves the program: the
/// parameters, buffers and constants the partition reads are passed as operands, as torch passes
/// them to an invoke_subgraph.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../ir/alias.hpp"
#include "../ir/argument.hpp"
#include "../ir/graph.hpp"
#include "../ir/node.hpp"
#include "../program/exported_program.hpp"
#include "../program/graph_signature.hpp"
#include "../program/verify.hpp"
#include "extract_partition.hpp"
#include "partitioner.hpp"
#include "topological_sort.hpp"

namespace epgraph {

/// The target of the call outline_partition makes (torch's `InvokeSubgraphHOP`,
/// torch/_higher_order_ops/invoke_subgraph.py, as torch.fx prints it).
inline constexpr std::string_view invoke_subgraph_target = "torch.ops.higher_order.invoke_subgraph";

namespace detail {

// The first segment of a fully qualified name ("layer" of "layer.weight"): the attribute of the
// root module the name occupies.
inline std::string_view root_attribute(std::string_view fqn) noexcept {
  return fqn.substr(0, fqn.find('.'));
}

// The first `repeated_subgraph<i>` (i = 0, 1, ...) that is no attribute of the program's module:
// not a nested graph it owns, not the target of a get_attr node, not the root attribute of a
// state_dict / constants key or of an input spec's target. torch's tracer picks the same names
// (`get_fresh_qualname("repeated_subgraph")`, torch/_higher_order_ops/invoke_subgraph.py).
template <class T>
std::string fresh_subgraph_target(const ExportedProgram<T>& ep) {
  std::unordered_set<std::string_view> taken;
  for (const auto& kv : ep.nested_graphs()) taken.insert(kv.first);
  for (const Node& n : ep.graph().nodes()) {
    if (n.op() == OpCode::get_attr) taken.insert(root_attribute(n.target()));
  }
  for (const auto& kv : ep.state_dict()) taken.insert(root_attribute(kv.first));
  for (const auto& kv : ep.constants()) taken.insert(root_attribute(kv.first));
  for (const InputSpec& s : ep.graph_signature().input_specs) {
    if (s.target()) taken.insert(root_attribute(*s.target()));
  }
  for (std::size_t i = 0;; ++i) {
    std::string name = "repeated_subgraph" + std::to_string(i);
    if (taken.count(name) == 0) return name;
  }
}

// The identifiers (argument 1) of the invoke_subgraph calls of `g`, added to `out`.
inline void collect_subgraph_identifiers(const Graph& g, std::unordered_set<std::string>& out) {
  for (const Node* n : g.find_nodes(OpCode::call_function, invoke_subgraph_target)) {
    if (n->args().size() > 1 && n->args()[1].is<std::string>()) {
      out.insert(n->args()[1].as<std::string>());
    }
  }
}

// The first `subgraph_<j>` (j = 0, 1, ...) that no invoke_subgraph call of the program (its graph
// and the nested graphs it owns) uses as its identifier: torch's invoke_subgraph caches traced
// subgraphs by identifier (InvokeSubgraphCache), so two different graphs must not share one.
// Dynamo names the regions it traces the same way (`subgraph_0`, ...).
template <class T>
std::string fresh_subgraph_identifier(const ExportedProgram<T>& ep) {
  std::unordered_set<std::string> used;
  collect_subgraph_identifiers(ep.graph(), used);
  for (const auto& kv : ep.nested_graphs()) collect_subgraph_identifiers(*kv.second, used);
  for (std::size_t j = 0;; ++j) {
    std::string name = "subgraph_" + std::to_string(j);
    if (used.count(name) == 0) return name;
  }
}

}  // namespace detail

/// The operands outline_partition passes for the partition `boundary`: every value produced
/// outside the partition that it reads (PartitionBoundary::user_inputs and ::state_inputs
/// together: user inputs, computed values, parameters, buffers and tensor constants), in order
/// of first use: the partition's nodes in graph order, each one's inputs in `all_input_nodes()`
/// order (args, then kwargs). They are the nested graph's placeholders in the same order.
/// Throws std::bad_alloc. O(partition's nodes and edges). epgraph addition.
[[nodiscard]] inline std::vector<const Node*> outline_operands(const PartitionBoundary& boundary) {
  std::unordered_set<const Node*> outside(boundary.user_inputs.begin(), boundary.user_inputs.end());
  outside.insert(boundary.state_inputs.begin(), boundary.state_inputs.end());
  std::vector<const Node*> out;
  out.reserve(outside.size());
  std::unordered_set<const Node*> seen;
  for (const Node* n : boundary.nodes) {
    for (const Node* in : n->all_input_nodes()) {
      if (outside.count(in) != 0 && seen.insert(in).second) out.push_back(in);
    }
  }
  return out;
}

/// Moves the partition `nodes` of `ep` (nodes of its graph, any order, each once) into a new
/// nested graph that `ep` owns, called from where the partition was by one
/// `torch.ops.higher_order.invoke_subgraph` node, and returns that call node.
///
/// The nested graph, added as ep.nested_graphs()[<target>] (see below for the target): one
/// placeholder per operand (outline_operands: the values from outside the partition that it
/// reads, tensors and SymInts, in order of first use), named after the value it stands for (`x`,
/// `p_w`, `relu`) with its `meta().val`; then a copy of each get_attr node the partition reads (a
/// cond branch, a map body, another invoke_subgraph's graph: PartitionBoundary::get_attrs, in order
/// of first use, the nested graph it names carried with it; the get_attr node leaves `ep`'s graph
/// when nothing else there reads it); then copies of the partition's nodes in graph order
/// (Graph::node_copy: the same names, targets, arguments and metadata, `val`, `stack_trace`,
/// `nn_module_stack`, `custom` and the file's record included); then an output node returning the
/// tuple of the escaping values (PartitionBoundary::outputs: read outside the partition or
/// returned, in graph order), a tuple even of one, as torch's nested graphs return.
///
/// In `ep`'s graph, where the partition's first node was: a get_attr node reading the nested
/// graph (target and name `repeated_subgraph<i>`, the first i that names no attribute of the
/// program: no nested graph, get_attr target or state key), the call
/// `invoke_subgraph(%repeated_subgraph<i>, 'subgraph_<j>', *operands)` (named `invoke_subgraph`,
/// de-duplicated; the identifier is the first `subgraph_<j>` no invoke_subgraph call of the
/// program uses) whose `meta().val` is the tuple of the escaping values' vals, and one
/// `operator.getitem(call, k)` node per escaping value (`getitem`, `getitem_1`, ...) with that
/// value's `val`. The get_attr, call and getitem nodes take the metadata of the partition's first
/// node (NodeMeta::other: stack_trace, nn_module_stack, custom, ...): torch's format records no
/// getitem node, and its loader gives each getitem the metadata of the node it reads, as
/// torch.export gives them for a nested_compile_region. Every use outside
/// the partition of an escaping value (output specs included) becomes a use of its getitem; the
/// partition's nodes are erased from the graph; the graph is re-sorted (stable_topological_sort:
/// the call after its last operand when that comes later than the partition's first node, its
/// get_attr right before it). The call starts after an outside in-place write that a node of
/// the partition read after (relu_(neg) before `sub(add, neg)`), not before the partition's first
/// node, so it reads the written value as that node did.
/// Inputs, outputs, specs, state and metadata of `ep` are otherwise unchanged: nothing is
/// removed, since the call reads the partition's parameters, buffers and constants as operands.
///
/// The work is done on a copy of `ep` (clone) that then replaces it: node pointers into `ep`'s
/// graph from before the call are invalid afterwards (names stay: look nodes up with
/// Graph::find_node); the returned node and `ep.nested_graph(target)` are valid. A failure leaves
/// `ep` exactly as it was. Throws, changing nothing (value_error unless said otherwise):
/// - "outline_partition: the partition is empty";
/// - what validate_partition throws: a node not in the graph or given twice, or a partition
///   that is not convex ("validate_partition: the partition {linear, linear_1} is not convex: the
///   path linear -> relu -> linear_1 leaves it after 'linear' and re-enters it at 'linear_1'");
/// - "outline_partition: node 'x' is a placeholder node; a partition holds call_function nodes
///   only";
/// - "outline_partition: the partition reads 'obj', a CUSTOM_OBJ input; only user inputs,
///   parameters, buffers and tensor constants can become operands of an invoke_subgraph call"
///   (also TOKEN);
/// - "outline_partition: 'split', used outside the partition by 'getitem', is not a tensor or a
///   SymInt (its value is ...); a value crossing the partition's boundary must be one tensor or
///   one SymInt" (and "..., read by 'relu' inside the partition, ..." for an operand): keep a
///   multi-output node's getitems with it; a SymBool (a runtime assert's condition) stays on one
///   side too, as invoke_subgraph takes tensors, ints and SymInts;
/// - "outline_partition: no value of the partition is used outside it (nothing to return)";
/// - "outline_partition: node 'add_' (torch.ops.aten.add_.Tensor) writes 'x' in place, which the
///   partition reads from outside; the nested graph of an invoke_subgraph must not mutate its
///   operands" (torch's functionalization of invoke_subgraph expects functional bodies), also
///   "... writes 'slice_1' in place, which shares storage with 'b_cache' from outside the
///   partition; ..." for a write through a view (the writes the schemas declare, see AliasSets);
/// - "outline_partition: 'relu_', outside the partition, comes between 'mul' and 'sub' of it
///   ('relu_' writes 'relu' in place and 'mul' reads it; 'relu_' writes 'relu' in place and 'sub'
///   reads it): one invoke_subgraph call cannot come both before and after it" (and "the
///   invoke_subgraph call must come after 'a' (...) and before 'b' (...), which comes first"):
///   the call runs the whole partition at one point of the graph, so every in-place write
///   outside must stay on the side of it where it was of the partition's nodes touching the same
///   storage (the writes the schemas declare, as Node::prepend checks them);
/// - runtime_error "outline_partition: the call cannot take the partition's place: Cannot sort
///   the graph topologically: 'relu_' writes 'relu' in place and 'invoke_subgraph' reads it, and
///   sorting would swap them" (stable_topological_sort's message) when the call, placed after its
///   operands, or a user of its results, placed after it, would cross an in-place write. torch's
///   partitioner proposes such partitions (it looks at data edges only): in a decoder whose
///   `copy_` writes the value cache between the value projection and attention, {linear_2,
///   linear_3} (the value projection and the output projection) is one partition;
/// - std::bad_alloc.
/// Strong guarantee. O(program size) (the copy), plus O(N + E) for the checks, the edits and the
/// sort, plus, when the graph writes in place, for each written storage the partition's nodes
/// touching it times the outside nodes touching it. Mirrors what torch.export makes of a
/// `torch.compiler.nested_compile_region` call (torch/_higher_order_ops/invoke_subgraph.py:
/// `InvokeSubgraphHOP`, the `repeated_subgraph` submodule and `subgraph_<n>` identifier), and
/// torch.fx's `fuse_by_partitions` (torch/fx/passes/utils/fuser_utils.py), which calls a fused
/// submodule instead.
template <class T>
Node* outline_partition(ExportedProgram<T>& ep, const std::vector<const Node*>& nodes) {
  const std::string what = "outline_partition";
  const PartitionBoundary b =
      detail::partition_boundary_impl(std::as_const(ep), nodes, what, detail::BoundaryUse::outline);
  const std::unordered_set<const Node*> member(b.nodes.begin(), b.nodes.end());
  const detail::PartitionMemoryBounds bounds = detail::partition_memory_bounds(
      std::as_const(ep).graph(), member, what, "one invoke_subgraph call",
      "the nested graph of an invoke_subgraph must not mutate its operands");
  const std::vector<const Node*> operands = outline_operands(b);
  const std::string target = detail::fresh_subgraph_target(std::as_const(ep));
  const std::string identifier = detail::fresh_subgraph_identifier(std::as_const(ep));

  // The nested graph, built beside `ep` (nothing of `ep` changes here).
  auto sub = std::make_unique<Graph>();
  sub->set_schema_checks(false);  // the nodes were accepted by `ep`; copy them as they are
  std::unordered_map<const Node*, Node*> remap;
  for (const Node* o : operands) {
    Node* p = sub->placeholder(o->name());
    p->mutable_meta().val = o->meta().val;
    remap.emplace(o, p);
  }
  const std::function<Argument(const Node*)> to_copy = [&](const Node* n) {
    return Argument(remap.at(n));
  };
  for (const Node* a : b.get_attrs) remap.emplace(a, sub->node_copy(*a, to_copy));
  for (const Node* n : b.nodes) remap.emplace(n, sub->node_copy(*n, to_copy));
  ArgumentList returned;
  for (const Node* o : b.outputs) returned.emplace_back(remap.at(o));
  sub->output(std::move(returned));
  sub->set_schema_checks(true);

  // The call, on a copy of `ep` that replaces it at the end.
  ExportedProgram<T> work = ep.clone();
  Graph& g = work.graph();
  const auto in_copy = [&](const Node* n) { return g.find_node(n->name()); };
  std::unordered_set<const Node*> member_copy;
  for (const Node* n : b.nodes) member_copy.insert(in_copy(n));
  const NodeMeta& first = b.nodes.front()->meta();
  Node* attr = nullptr;
  Node* call = nullptr;
  std::vector<Node*> items;
  {
    // Where the partition's first node was, or after the latest outside node that memory order
    // puts before the call (an in-place write a node of the partition read after).
    auto at = bounds.last_before_is_inside ? g.inserting_after(in_copy(bounds.last_before))
                                           : g.inserting_before(in_copy(b.nodes.front()));
    attr = g.get_attr(target, target);
    attr->mutable_meta().other = first.other;
    ArgumentList args{Argument(attr), Argument(identifier)};
    for (const Node* o : operands) args.emplace_back(in_copy(o));
    call = g.call_function(invoke_subgraph_target, std::move(args), {}, "invoke_subgraph");
    NodeValue::List vals;
    for (const Node* o : b.outputs) vals.push_back(o->meta().val);
    call->mutable_meta().val = NodeValue(std::move(vals));
    call->mutable_meta().other = first.other;
    for (std::size_t i = 0; i < b.outputs.size(); ++i) {
      Node* item = g.call_function("operator.getitem", {call, static_cast<std::int64_t>(i)});
      item->mutable_meta().val = b.outputs[i]->meta().val;
      item->mutable_meta().other = first.other;  // torch's loader gives getitems the call's
      items.push_back(item);
    }
  }
  for (std::size_t i = 0; i < b.outputs.size(); ++i) {
    in_copy(b.outputs[i])->replace_all_uses_with(items[i], [&](Node* user) {
      return member_copy.count(user) == 0;
    });
  }
  for (auto it = b.nodes.rbegin(); it != b.nodes.rend(); ++it) g.erase_node(in_copy(*it));
  for (const Node* a : b.get_attrs) {  // a nested graph only the partition called moves with it
    Node* copy = in_copy(a);
    if (copy->users().empty()) g.erase_node(copy);
  }
  try {
    stable_topological_sort(g);
  } catch (const runtime_error& e) {
    throw runtime_error(what + ": the call cannot take the partition's place: " + e.what());
  }
  call->prepend(attr);  // right before its call, as torch.export places it
  validate_graph_signature(work);
  (void)work.add_nested_graph(target, std::move(sub));
  ep.swap(work);  // no-throw; `call` stays valid (graphs are owned)
  return call;
}

/// outline_partition of a partition the partitioner proposed (its nodes in any order). Same
/// contract.
template <class T>
Node* outline_partition(ExportedProgram<T>& ep, const Partition& partition) {
  return outline_partition(ep, detail::partition_nodes(partition));
}

}  // namespace epgraph
