// Delegation to a backend compiler: a partition extracted as its own exported program, and the
// partition replaced in the original by one call to the backend's custom operator.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

/// What a backend does with a partition of an exported program (see partitioner.hpp for how
/// the partitions are found): extract_partition makes it a complete program of its own (its
/// boundary inputs become user inputs, the parameters, buffers and tensor constants it reads come
/// with their data, its escaping values become user outputs) that a backend compiler can take as
/// a `.pt2`; replace_partition_with_call leaves in the original one call to a custom operator
/// (the backend's runtime op, `my_backend::subgraph_0(Tensor x, Tensor relu) -> (Tensor,
/// Tensor)`) in place of the partition and drops the weights nothing else reads.
///
/// Mirrors torch.fx's `fuse_by_partitions` (torch/fx/passes/utils/fuser_utils.py: a partition
/// becomes one call, inputs and outputs its boundary values, the graph re-sorted) and
/// `split_module` (torch/fx/passes/split_module.py), and ExecuTorch's `to_backend`
/// (exir/backend/backend_api.py: a tagged partition becomes a lowered module called from the
/// program, which owns the weights only it reads).

#include <algorithm>
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
#include "../ops/registry.hpp"
#include "../ops/schema.hpp"
#include "../program/edit.hpp"
#include "../program/exported_program.hpp"
#include "../program/graph_signature.hpp"
#include "../program/lookup.hpp"
#include "../program/verify.hpp"
#include "partitioner.hpp"
#include "topological_sort.hpp"

namespace epgraph {

/// The boundary of a partition of a program: what extract_partition turns into the inputs and
/// outputs of the extracted program, and replace_partition_with_call into the call's arguments
/// and results. The pointers are nodes of the program's graph.
struct PartitionBoundary {
  /// The partition's nodes, in graph order.
  std::vector<const Node*> nodes;
  /// The values produced outside the partition (user-input placeholders and computed nodes)
  /// that it reads, in order of first use: the partition's nodes in graph order, each one's
  /// inputs in `all_input_nodes()` order (args, then kwargs). They become the extracted
  /// program's user inputs and the call's arguments, in this order.
  std::vector<const Node*> user_inputs;
  /// The parameter, buffer and tensor-constant placeholders the partition reads, in the
  /// program's input order. The extracted program gets them with their data.
  std::vector<const Node*> state_inputs;
  /// The partition's nodes whose value is read outside it (by another node or as a graph
  /// output), in graph order. They become the extracted program's user outputs and the call's
  /// results, in this order.
  std::vector<const Node*> outputs;
  /// The get_attr nodes the partition reads (the nested graphs of cond branches, map bodies,
  /// ...), in order of first use. Only outline_partition accepts them (it copies them into its
  /// nested graph); extraction refuses a partition reading one.
  std::vector<const Node*> get_attrs;
};

namespace detail {

inline bool is_python_identifier(std::string_view s) noexcept {
  if (s.empty()) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const bool letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    const bool digit = c >= '0' && c <= '9';
    if (!letter && !(digit && i > 0)) return false;
  }
  return true;
}

// What the boundary is for: extraction (the partition's state is copied into another program,
// so mutated state and mutation outputs are refused) or outlining (the partition stays in the
// program behind an invoke_subgraph call whose operands are read when it runs: both are fine).
enum class BoundaryUse : std::uint8_t { extract, outline };

// The signature's input specs by the graph value they name, and its mutation outputs by target
// and by the value they return.
struct BoundarySpecs {
  std::unordered_map<std::string_view, const InputSpec*> input_of;
  std::unordered_map<std::string_view, const OutputSpec*> mutation_of_target;
  std::unordered_map<std::string_view, const OutputSpec*> mutation_of_value;
};

inline BoundarySpecs boundary_specs(const ExportGraphSignature& sig) {
  BoundarySpecs out;
  for (const InputSpec& s : sig.input_specs) {
    if (names_graph_value(s.arg())) out.input_of.emplace(s.name(), &s);
  }
  for (const OutputSpec& o : sig.output_specs) {
    if (!is_mutation_output(o.kind())) continue;
    if (o.target()) out.mutation_of_target.emplace(*o.target(), &o);
    if (names_graph_value(o.arg())) out.mutation_of_value.emplace(o.name(), &o);
  }
  return out;
}

// The partition's outputs: each node of `b.nodes` (in graph order) used by a node outside it,
// checked by `must_be_tensor`; refuses a partition nothing outside uses.
template <class MustBeTensor>
void collect_boundary_outputs(PartitionBoundary& b, const std::unordered_set<const Node*>& member,
                              const MustBeTensor& must_be_tensor, const std::string& what) {
  for (const Node* n : b.nodes) {
    for (const Node* u : n->users()) {
      if (member.count(u) != 0) continue;
      must_be_tensor(n, "used outside the partition by '" + std::string(u->name()) + "'");
      b.outputs.push_back(n);
      break;
    }
  }
  if (b.outputs.empty()) {
    throw value_error(what + ": no value of the partition is used outside it (nothing to return)");
  }
}

// The partition's boundary, every rule checked (see partition_boundary). `what` prefixes the
// messages.
template <class T>
PartitionBoundary partition_boundary_impl(const ExportedProgram<T>& ep,
                                          const std::vector<const Node*>& nodes,
                                          const std::string& what,
                                          BoundaryUse use = BoundaryUse::extract) {
  const bool extract = use == BoundaryUse::extract;
  if (nodes.empty()) throw value_error(what + ": the partition is empty");
  const Graph& graph = ep.graph();
  validate_partition(graph, nodes);  // membership, duplicates, convexity
  std::unordered_set<const Node*> member(nodes.begin(), nodes.end());
  for (const Node* n : nodes) {
    if (n->op() != OpCode::call_function) {
      throw value_error(what + ": node '" + std::string(n->name()) + "' is a " +
                        std::string(op_name(n->op())) +
                        " node; a partition holds call_function nodes only");
    }
  }
  const ExportGraphSignature& sig = ep.graph_signature();
  const BoundarySpecs specs = boundary_specs(sig);
  const auto& input_of = specs.input_of;
  const auto& mutation_of_target = specs.mutation_of_target;
  const auto& mutation_of_value = specs.mutation_of_value;
  // invoke_subgraph takes and returns SymInts too (its operands: "tensors/ints/SymInts").
  const auto must_be_tensor = [&](const Node* n, const std::string& role) {
    if (n->meta().val.tensor() != nullptr) return;
    if (!extract && n->meta().val.sym_int() != nullptr) return;
    throw value_error(what + ": '" + std::string(n->name()) + "', " + role + ", is not a tensor" +
                      (extract ? "" : " or a SymInt") + " (its value is " +
                      n->meta().val.describe() +
                      "); a value crossing the partition's boundary must be one tensor" +
                      (extract ? "" : " or one SymInt"));
  };
  PartitionBoundary b;
  b.nodes.reserve(nodes.size());
  for (const Node& n : graph.nodes()) {
    if (member.count(&n) != 0) b.nodes.push_back(&n);
  }
  std::unordered_set<const Node*> seen;
  std::vector<std::pair<std::size_t, const Node*>> state;  // (input index, placeholder)
  for (const Node* n : b.nodes) {
    const auto mutated = mutation_of_value.find(n->name());
    if (extract && mutated != mutation_of_value.end()) {
      const OutputSpec& o = *mutated->second;
      throw value_error(what + ": '" + std::string(n->name()) + "' of the partition is written " +
                        "back by output '" + o.name() + "' (" + std::string(kind_name(o.kind())) +
                        (o.target() ? " '" + *o.target() + "'" : std::string()) +
                        "); extracting a partition that computes a mutation is not supported");
    }
    for (const Node* in : n->all_input_nodes()) {
      if (member.count(in) != 0 || !seen.insert(in).second) continue;
      const std::string role = "read by '" + std::string(n->name()) + "' inside the partition";
      if (in->op() == OpCode::get_attr && !extract) {
        b.get_attrs.push_back(in);
        continue;
      }
      if (in->op() == OpCode::get_attr) {
        throw value_error(what + ": '" + std::string(in->name()) + "', " + role +
                          ", is a get_attr node (target '" + std::string(in->target()) +
                          "', a nested graph); a partition calling a nested graph is not "
                          "supported");
      }
      if (in->op() != OpCode::placeholder) {
        must_be_tensor(in, role);
        b.user_inputs.push_back(in);
        continue;
      }
      const auto spec_it = input_of.find(in->name());
      const InputSpec* spec = spec_it == input_of.end() ? nullptr : spec_it->second;
      const InputKind kind = spec != nullptr ? spec->kind() : InputKind::USER_INPUT;
      if (spec == nullptr || kind == InputKind::USER_INPUT) {
        must_be_tensor(in, role);
        b.user_inputs.push_back(in);
      } else if (kind == InputKind::PARAMETER || kind == InputKind::BUFFER ||
                 kind == InputKind::CONSTANT_TENSOR) {
        const auto m = mutation_of_target.find(*spec->target());
        if (extract && kind != InputKind::CONSTANT_TENSOR && m != mutation_of_target.end() &&
            m->second->kind() != OutputKind::USER_INPUT_MUTATION) {
          throw value_error(what + ": the partition reads " + std::string(kind_name(kind)) + " '" +
                            spec->name() + "' (target '" + *spec->target() + "'), which output '" +
                            m->second->name() + "' mutates (" +
                            std::string(kind_name(m->second->kind())) +
                            "); extracting a partition that reads mutated state is not supported");
        }
        state.emplace_back(static_cast<std::size_t>(spec - sig.input_specs.data()), in);
      } else {
        throw value_error(
            what + ": the partition reads '" + spec->name() + "', a " +
            std::string(kind_name(kind)) +
            " input; only user inputs, parameters, buffers and tensor constants "
            "can become " +
            (extract ? "inputs of an extracted program" : "operands of an invoke_subgraph call"));
      }
    }
  }
  std::sort(state.begin(), state.end(),
            [](const auto& x, const auto& y) { return x.first < y.first; });
  for (const auto& s : state) b.state_inputs.push_back(s.second);
  collect_boundary_outputs(b, member, must_be_tensor, what);
  return b;
}

// Where memory order puts the call that replaces a partition: an outside node that writes
// storage a node of the partition reads (or reads or writes storage a node of the partition
// writes) must stay on the same side of the call as it was of that node. `last_before`: the
// latest outside node that must come before the call; `first_after`: the earliest that must come
// after it; each with the reason (memory_order_conflict's words).
struct PartitionMemoryBounds {
  const Node* last_before = nullptr;
  std::string why_before;
  const Node* first_after = nullptr;
  std::string why_after;
  // last_before comes after the partition's first node.
  bool last_before_is_inside = false;
};

// The bounds of the partition `member` of `g` (see PartitionMemoryBounds), with the writes the
// schemas declare (UnknownOperators::pure, as Node::prepend and stable_topological_sort). Throws
// value_error, prefixed by `what`: when a node of the partition writes in place storage from
// outside it (a value it reads from outside, or a view of one; `own_writes_only` says why that
// is refused), and, naming the call as `call` ("one invoke_subgraph call"), when
// an outside node must come both after and before the call (it writes between two nodes of the
// partition that read the storage, or the earliest node that must follow comes before the latest
// that must precede). O(N + E) when nothing writes in place, else O(N + E + sum over written
// storages of partition readers * outside readers).
inline PartitionMemoryBounds partition_memory_bounds(const Graph& g,
                                                     const std::unordered_set<const Node*>& member,
                                                     const std::string& what,
                                                     const std::string& call,
                                                     const std::string& own_writes_only) {
  constexpr UnknownOperators known = UnknownOperators::pure;
  PartitionMemoryBounds out;
  std::vector<std::size_t> written;
  bool any = false;
  for (const Node& n : g.nodes()) any = any || !written_inputs(n, known).empty();
  if (!any) return out;
  const AliasSets sets(g, known);
  std::unordered_map<const Node*, std::size_t> pos;
  for (const Node& n : g.nodes()) {
    pos.emplace(&n, pos.size());
    for (const std::size_t set : sets.written_sets(n)) written.push_back(set);
  }
  std::sort(written.begin(), written.end());
  written.erase(std::unique(written.begin(), written.end()), written.end());
  const auto name = [](const Node* n) { return "'" + std::string(n->name()) + "'"; };
  // A node of the partition writes in place only storage computed inside it.
  for (const Node& n : g.nodes()) {
    if (member.count(&n) == 0) continue;
    for (const std::size_t set : sets.written_sets(n)) {
      const Node* outside = nullptr;  // the first value of the storage from outside
      for (const Node* v : sets.members(set)) {
        if (member.count(v) == 0) {
          outside = v;
          break;
        }
      }
      if (outside == nullptr) continue;
      const Node* w = sets.read_member(n, set);
      throw value_error(what + ": node " + name(&n) + " (" + std::string(n.target()) + ") writes " +
                        name(w) + " in place, which " +
                        (member.count(w) == 0 ? std::string("the partition reads from outside")
                                              : "shares storage with " + name(outside) +
                                                    " from outside the partition") +
                        "; " + own_writes_only);
    }
  }
  for (const std::size_t set : written) {
    // The nodes touching the storage: the users of its values (a writer reads what it writes).
    std::vector<const Node*> inside, outside;
    std::unordered_set<const Node*> seen;
    for (const Node* v : sets.members(set)) {
      for (const Node* u : v->users()) {
        if (seen.insert(u).second) (member.count(u) != 0 ? inside : outside).push_back(u);
      }
    }
    for (const Node* u : outside) {
      const Node* later_member = nullptr;    // u comes before it: u before the call
      const Node* earlier_member = nullptr;  // u comes after it: u after the call
      std::string why_later, why_earlier;
      for (const Node* m : inside) {
        std::string why = memory_order_conflict(sets, *m, *u);
        if (why.empty()) continue;
        if (pos.at(u) < pos.at(m) && later_member == nullptr) {
          later_member = m;
          why_later = std::move(why);
        } else if (pos.at(m) < pos.at(u) && earlier_member == nullptr) {
          earlier_member = m;
          why_earlier = std::move(why);
        }
      }
      if (later_member != nullptr && earlier_member != nullptr) {
        throw value_error(what + ": " + name(u) + ", outside the partition, comes between " +
                          name(earlier_member) + " and " + name(later_member) + " of it (" +
                          why_earlier + "; " + why_later + "): " + call +
                          " cannot come both before and after it");
      }
      if (later_member != nullptr &&
          (out.last_before == nullptr || pos.at(u) > pos.at(out.last_before))) {
        out.last_before = u;
        out.why_before = std::move(why_later);
      }
      if (earlier_member != nullptr &&
          (out.first_after == nullptr || pos.at(u) < pos.at(out.first_after))) {
        out.first_after = u;
        out.why_after = std::move(why_earlier);
      }
    }
  }
  if (out.last_before != nullptr) {
    std::size_t first = pos.size();
    for (const Node* m : member) first = std::min(first, pos.at(m));
    out.last_before_is_inside = pos.at(out.last_before) > first;
  }
  if (out.last_before != nullptr && out.first_after != nullptr &&
      pos.at(out.first_after) < pos.at(out.last_before)) {
    throw value_error(what + ": " + call + " must come after " + name(out.last_before) + " (" +
                      out.why_before + ") and before " + name(out.first_after) + " (" +
                      out.why_after + "), which comes first");
  }
  return out;
}

// A torch pytree TreeSpec in torch's JSON form (treespec_dumps, protocol 1), without the
// leading "[1, ".
inline std::string treespec_leaf() {
  return R"({"type": null, "context": null, "children_spec": []})";
}
inline std::string treespec_tuple(const std::vector<std::string>& children) {
  std::string out = R"({"type": "builtins.tuple", "context": "null", "children_spec": [)";
  for (std::size_t i = 0; i < children.size(); ++i) out += (i ? ", " : "") + children[i];
  return out + "]}";
}

inline std::string json_quoted(std::string_view s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// The module_call_graph torch writes for a program `forward(*user_inputs)` returning one tensor
// (`outputs` == 1) or a tuple of `outputs` tensors: one entry, fqn "", its in_spec/out_spec and
// forward_arg_names (ep.module() builds its calling convention from them).
inline std::string module_call_graph_json(const std::vector<std::string>& user_inputs,
                                          std::size_t outputs) {
  const std::vector<std::string> in_leaves(user_inputs.size(), treespec_leaf());
  const std::string in_spec =
      "[1, " +
      treespec_tuple({treespec_tuple(in_leaves),
                      R"({"type": "builtins.dict", "context": "[]", "children_spec": []})"}) +
      "]";
  const std::string out_spec =
      "[1, " +
      (outputs == 1 ? treespec_leaf()
                    : treespec_tuple(std::vector<std::string>(outputs, treespec_leaf()))) +
      "]";
  std::string names;
  for (std::size_t i = 0; i < user_inputs.size(); ++i) {
    names += (i ? ", " : "") + json_quoted(user_inputs[i]);
  }
  return R"([{"fqn": "", "signature": {"inputs": [], "outputs": [], "in_spec": )" +
         json_quoted(in_spec) + R"(, "out_spec": )" + json_quoted(out_spec) +
         R"(, "forward_arg_names": [)" + names + "]}}]";
}

inline std::vector<const Node*> partition_nodes(const Partition& p) {
  return std::vector<const Node*>(p.nodes.begin(), p.nodes.end());
}

}  // namespace detail

/// The boundary of the partition `nodes` of `ep` (nodes of its graph, any order, each once):
/// see PartitionBoundary for what each list holds and its order. Read-only. Throws value_error,
/// checking in this order:
/// - "extract_partition: the partition is empty";
/// - what validate_partition throws (partitioner.hpp): a node not in the graph, given twice, or
///   a partition that is not convex ("validate_partition: the partition {linear, linear_1} is
///   not convex: the path linear -> relu -> linear_1 leaves it after 'linear' and re-enters it
///   at 'linear_1'");
/// - "extract_partition: node 'x' is a placeholder node; a partition holds call_function nodes
///   only" (also get_attr, output, ...);
/// - "extract_partition: 'index_copy' of the partition is written back by output 'index_copy'
///   (BUFFER_MUTATION 'cache'); extracting a partition that computes a mutation is not
///   supported" (any mutation output: buffer, parameter, user input);
/// - "extract_partition: the partition reads BUFFER 'b_cache' (target 'cache'), which output
///   'index_copy' mutates (BUFFER_MUTATION); extracting a partition that reads mutated state is
///   not supported" (the extracted program would hold a copy of the buffer that the host's
///   writes never reach);
/// - "extract_partition: 'true_graph_0', read by 'cond' inside the partition, is a get_attr node
///   (target 'true_graph_0', a nested graph); a partition calling a nested graph is not
///   supported";
/// - "extract_partition: the partition reads 'obj', a CUSTOM_OBJ input; only user inputs,
///   parameters, buffers and tensor constants can become inputs of an extracted program" (also
///   TOKEN);
/// - "extract_partition: 'split', used outside the partition by 'getitem', is not a tensor (its
///   value is ...); a value crossing the partition's boundary must be one tensor" (and "..., read
///   by 'relu' inside the partition, ..." for an input): keep a multi-output node's getitems
///   with it, and a symbolic size inside;
/// - "extract_partition: no value of the partition is used outside it (nothing to return)".
/// Also std::bad_alloc. O(N + E + specs) for a graph of N nodes and E edges. epgraph addition:
/// the inputs and outputs torch's `fuse_by_partitions` computes (torch/fx/passes/utils/
/// fuser_utils.py, `fuse_as_graphmodule`), with torch.export's input kinds.
template <class T>
[[nodiscard]] PartitionBoundary partition_boundary(const ExportedProgram<T>& ep,
                                                   const std::vector<const Node*>& nodes) {
  return detail::partition_boundary_impl(ep, nodes, "extract_partition");
}

/// The partition `nodes` of `ep` as a program of its own, for a backend compiler. Its graph:
/// first the placeholders of the parameters, buffers and tensor constants the partition reads
/// (PartitionBoundary::state_inputs: names, targets, kinds, persistence and metadata as in
/// `ep`), then one user-input placeholder per boundary input (PartitionBoundary::user_inputs,
/// in order of first use), named after the value it stands for (`relu_1` for a computed node,
/// `x` for a user input) with its `meta().val`; then copies of the partition's nodes in graph
/// order (Graph::node_copy: same names, targets, arguments, metadata); then an output node
/// returning the escaping values (PartitionBoundary::outputs) in graph order, each a
/// USER_OUTPUT. Its state_dict holds the parameters' and persistent buffers' tensors, its
/// constants the non-persistent buffers and tensor constants, copied from `ep` (Tensor's copy
/// constructor: HostTensor shares the bytes); a persistent buffer `ep` keeps in constants stays
/// there, and data `ep` lacks is not invented. Its metadata is `ep`'s (opset, range constraints,
/// verifiers, torch version, the fields epgraph keeps verbatim) except `module_call_graph`,
/// written anew as torch writes it for `forward(<user inputs>)` returning one tensor, or a tuple
/// of them when there are several outputs (what `ep.module()` calls by), and without `ep`'s
/// archive records (saving it writes a fresh archive). `ep` is not changed.
/// Throws what partition_boundary throws (messages start "extract_partition: "), and what
/// Graph::node_copy throws (std::bad_alloc). O(N + E + specs + size of the partition's metadata
/// and of the copied state). Mirrors the submodule torch.fx's `fuse_as_graphmodule`
/// (torch/fx/passes/utils/fuser_utils.py) and `split_module` build, and the program ExecuTorch's
/// `to_backend` gives a backend's `preprocess` (exir/backend/backend_api.py, exir/lowered_
/// backend_module.py `create_exported_program_from_submodule`).
template <class T>
[[nodiscard]] ExportedProgram<T> extract_partition(const ExportedProgram<T>& ep,
                                                   const std::vector<const Node*>& nodes) {
  const PartitionBoundary b = partition_boundary(ep, nodes);
  auto g = std::make_unique<Graph>();
  g->set_schema_checks(false);  // the nodes were accepted by `ep`; copy them as they are
  std::unordered_map<const Node*, Node*> remap;
  ExportGraphSignature sig;
  ordered_dict<T> state_dict;
  ordered_dict<typename ExportedProgram<T>::constant_type> constants;
  for (const Node* p : b.state_inputs) {
    const InputSpec& spec = *input_spec_for(ep, p);
    Node* copy = g->placeholder(p->name());
    copy->mutable_meta() = p->meta();
    remap.emplace(p, copy);
    InputSpec s = spec;
    s.set_name(std::string(copy->name()));
    sig.input_specs.push_back(std::move(s));
    const std::string& target = *spec.target();
    if (const T* t = ep.state_dict().find(target)) {
      if (spec.kind() == InputKind::PARAMETER ||
          (spec.kind() == InputKind::BUFFER && spec.persistent() != false)) {
        if (!state_dict.contains(target)) state_dict.insert(target, *t);  // shared targets once
        continue;
      }
    }
    if (const auto* c = ep.constants().find(target)) {
      if (!constants.contains(target)) constants.insert(target, *c);
    }
  }
  std::vector<std::string> user_names;
  for (const Node* u : b.user_inputs) {
    Node* copy = g->placeholder(u->name());
    if (u->op() == OpCode::placeholder) {
      copy->mutable_meta() = u->meta();
    } else {
      copy->mutable_meta().val = u->meta().val;
    }
    remap.emplace(u, copy);
    user_names.emplace_back(copy->name());
    sig.input_specs.emplace_back(InputKind::USER_INPUT, TensorArgument{user_names.back()});
  }
  const std::function<Argument(const Node*)> to_copy = [&](const Node* n) {
    return Argument(remap.at(n));
  };
  for (const Node* n : b.nodes) remap.emplace(n, g->node_copy(*n, to_copy));
  ArgumentList results;
  for (const Node* o : b.outputs) {
    Node* copy = remap.at(o);
    results.emplace_back(copy);
    sig.output_specs.emplace_back(OutputKind::USER_OUTPUT,
                                  TensorArgument{std::string(copy->name())});
  }
  g->output(std::move(results));
  g->set_schema_checks(true);
  ProgramMetadata md = ep.metadata();
  md.archive.reset();
  const std::string call_graph = detail::module_call_graph_json(user_names, b.outputs.size());
  bool replaced = false;
  for (auto& kv : md.opaque) {
    if (kv.first == "graph_module.module_call_graph") {
      kv.second = call_graph;
      replaced = true;
    }
  }
  if (!replaced) md.opaque.emplace_back("graph_module.module_call_graph", call_graph);
  return ExportedProgram<T>(std::move(g), std::move(sig), std::move(state_dict),
                            std::move(constants), std::move(md));
}

/// extract_partition of a partition the partitioner proposed (its nodes in any order). Same
/// contract.
template <class T>
[[nodiscard]] ExportedProgram<T> extract_partition(const ExportedProgram<T>& ep,
                                                   const Partition& partition) {
  return extract_partition(ep, detail::partition_nodes(partition));
}

/// The schema replace_partition_with_call registers for the partition `boundary` under
/// `op` (`my_backend::subgraph_0`): one `Tensor` argument per boundary input, named after
/// it, and `-> Tensor` for one output, `-> (Tensor, Tensor, ...)` for several:
/// `my_backend::subgraph_0(Tensor x, Tensor relu) -> (Tensor, Tensor)`. Throws std::bad_alloc.
/// O(boundary).
[[nodiscard]] inline std::string partition_call_schema(const PartitionBoundary& boundary,
                                                       std::string_view op) {
  std::string text = std::string(op) + "(";
  for (std::size_t i = 0; i < boundary.user_inputs.size(); ++i) {
    text += (i ? ", Tensor " : "Tensor ") + std::string(boundary.user_inputs[i]->name());
  }
  text += ") -> ";
  if (boundary.outputs.size() == 1) return text + "Tensor";
  text += "(";
  for (std::size_t i = 0; i < boundary.outputs.size(); ++i) text += i ? ", Tensor" : "Tensor";
  return text + ")";
}

/// Replaces the partition `nodes` of `ep` by one call to the custom operator `op`
/// (`my_backend::subgraph_0`, a namespace and a name, each a Python identifier: the backend's
/// runtime op, which runs the program extract_partition makes of the same partition) and
/// returns the call node. Steps: registers the op's schema (partition_call_schema) in
/// global_registry(), or finds the same schema there; inserts the call_function node
/// `torch.ops.my_backend.subgraph_0.default` (named `subgraph_0`, de-duplicated) whose arguments
/// are the boundary inputs (PartitionBoundary::user_inputs, in order) and whose `meta().val` is
/// the escaping value's, or the tuple of them with one `operator.getitem` node per result
/// (`getitem`, `getitem_1`, ... with each result's val) when there are several; makes every use
/// outside the partition of an escaping value use its result instead (output specs follow);
/// erases the partition's nodes; removes the parameter, buffer and tensor-constant placeholders
/// the partition read and nothing else reads any more, with their input specs and data
/// (delete_constant_placeholder: the extracted program owns them); then re-sorts the graph
/// (stable_topological_sort: the call comes where the partition's first node was, or after an
/// outside in-place write that a node of the partition read after, or after its last input when
/// that comes later, and each user of a result after it). User inputs and
/// outputs of `ep` are unchanged, so is its calling convention.
/// The work is done on a copy of `ep` (clone) that then replaces it: node pointers into `ep`'s
/// graph from before the call are invalid afterwards (names stay: look nodes up with
/// Graph::find_node), and a failure leaves `ep` exactly as it was.
/// Throws, changing nothing:
/// - value_error "replace_partition_with_call: op name 'x' is not of the form namespace::name
///   (each a Python identifier)";
/// - value_error "replace_partition_with_call: op name 'aten::subgraph_0': namespace 'aten' is
///   torch's own (its operators are torch's; verify refuses any other): give the backend's
///   namespace" for `aten`, `prim`, `prims` and `higher_order`;
/// - what partition_boundary throws, its messages starting "replace_partition_with_call: "
///   (validate_partition's start "validate_partition: ");
/// - value_error "replace_partition_with_call: the program already calls
///   torch.ops.my_backend.subgraph_0.default (node 'subgraph_0'); give each partition an op of
///   its own" (two partitions behind one op name would run the same extracted program);
/// - value_error "replace_partition_with_call: operator 'my_backend::subgraph_0' is already
///   registered with schema '<old>', not '<new>'" when the name is taken by another schema;
/// - value_error from parse_schema when a boundary name is not a valid schema argument name;
/// - value_error "replace_partition_with_call: node 'copy_' (torch.ops.aten.copy_.default) writes
///   'slice_1' in place, which shares storage with 'b_cache' from outside the partition; the
///   extracted program would write its own copy" (also "... writes 'x' in place, which the
///   partition reads from outside; ...");
/// - value_error "replace_partition_with_call: 'relu_', outside the partition, comes between
///   'mul' and 'sub' of it (...): one call of torch.ops.my_backend.subgraph_0.default cannot come
///   both before and after it": the call runs the whole partition at one point, so an in-place
///   write outside must stay on the side of it where it was of the partition's nodes touching
///   the same storage (the call starts after such a write that a node of the partition read
///   after);
/// - what stable_topological_sort throws (an in-place write the new order would cross);
/// - std::bad_alloc.
/// Strong guarantee. O(program size) (the copy), plus O(N + E) for the edits and the sort (plus,
/// when the graph writes in place, see partition_memory_bounds).
/// Mirrors torch.fx's `fuse_by_partitions` (torch/fx/passes/utils/fuser_utils.py, which calls
/// a fused submodule instead of an operator) and ExecuTorch's `to_backend` (exir/backend/
/// backend_api.py, whose call is `executorch_call_delegate` on a lowered module).
template <class T>
Node* replace_partition_with_call(ExportedProgram<T>& ep, const std::vector<const Node*>& nodes,
                                  std::string_view op) {
  const std::string what = "replace_partition_with_call";
  const std::size_t sep = op.find("::");
  const std::string_view ns = sep == std::string_view::npos ? op : op.substr(0, sep);
  const std::string_view name =
      sep == std::string_view::npos ? std::string_view() : op.substr(sep + 2);
  if (!detail::is_python_identifier(ns) || !detail::is_python_identifier(name)) {
    throw value_error(what + ": op name '" + std::string(op) +
                      "' is not of the form namespace::name (each a Python identifier)");
  }
  if (ns == "aten" || ns == "prim" || ns == "prims" || ns == "higher_order") {
    throw value_error(what + ": op name '" + std::string(op) + "': namespace '" + std::string(ns) +
                      "' is torch's own (its operators are torch's; verify refuses any other): "
                      "give the backend's namespace");
  }
  const PartitionBoundary b = detail::partition_boundary_impl(std::as_const(ep), nodes, what);
  const std::string target = "torch.ops." + std::string(ns) + "." + std::string(name) + ".default";
  const std::vector<const Node*> calls =
      std::as_const(ep).graph().find_nodes(OpCode::call_function, target);
  if (!calls.empty()) {
    throw value_error(what + ": the program already calls " + target + " (node '" +
                      std::string(calls.front()->name()) +
                      "'); give each partition an op of its own");
  }
  const std::string text = partition_call_schema(b, op);
  const FunctionSchema schema = parse_schema(text);
  if (const FunctionSchema* old = global_registry().find(schema.qualified_name())) {
    if (*old != schema) {
      throw value_error(what + ": operator '" + schema.qualified_name() +
                        "' is already registered with schema '" + old->str() + "', not '" +
                        schema.str() + "'");
    }
  }

  const std::unordered_set<const Node*> members(b.nodes.begin(), b.nodes.end());
  const detail::PartitionMemoryBounds bounds = detail::partition_memory_bounds(
      std::as_const(ep).graph(), members, what, "one call of " + target,
      "the extracted program would write its own copy");

  ExportedProgram<T> work = ep.clone();
  Graph& g = work.graph();
  const auto in_copy = [&](const Node* n) { return g.find_node(n->name()); };
  std::unordered_set<const Node*> member;
  for (const Node* n : b.nodes) member.insert(in_copy(n));
  ArgumentList args;
  for (const Node* u : b.user_inputs) args.emplace_back(in_copy(u));
  Node* call = nullptr;
  std::vector<Node*> results;
  {
    // Where the partition's first node was, or after the latest outside node that memory order
    // puts before the call (an in-place write a node of the partition read after).
    auto at = bounds.last_before_is_inside ? g.inserting_after(in_copy(bounds.last_before))
                                           : g.inserting_before(in_copy(b.nodes.front()));
    call = g.call_function(target, std::move(args));
    if (b.outputs.size() == 1) {
      call->mutable_meta().val = b.outputs.front()->meta().val;
      results.push_back(call);
    } else {
      NodeValue::List vals;
      for (std::size_t i = 0; i < b.outputs.size(); ++i) {
        vals.push_back(b.outputs[i]->meta().val);
        Node* item = g.call_function("operator.getitem", {call, static_cast<std::int64_t>(i)});
        item->mutable_meta().val = b.outputs[i]->meta().val;
        results.push_back(item);
      }
      call->mutable_meta().val = NodeValue(std::move(vals));
    }
  }
  for (std::size_t i = 0; i < b.outputs.size(); ++i) {
    in_copy(b.outputs[i])->replace_all_uses_with(results[i], [&](Node* user) {
      return member.count(user) == 0;
    });
  }
  for (auto it = b.nodes.rbegin(); it != b.nodes.rend(); ++it) g.erase_node(in_copy(*it));
  for (const Node* p : b.state_inputs) {
    Node* copy = in_copy(p);
    if (copy->users().empty()) delete_constant_placeholder(work, copy);
  }
  stable_topological_sort(g);
  validate_graph_signature(work);
  global_registry().register_schema(text);  // strong; the same schema when already there
  ep.swap(work);                            // no-throw; `call` stays valid (graphs are owned)
  return call;
}

/// replace_partition_with_call of a partition the partitioner proposed. Same contract.
template <class T>
Node* replace_partition_with_call(ExportedProgram<T>& ep, const Partition& partition,
                                  std::string_view op) {
  return replace_partition_with_call(ep, detail::partition_nodes(partition), op);
}

}  // namespace epgraph
