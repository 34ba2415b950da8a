// Mutation and aliasing: which inputs a node writes in place, which inputs its result shares
// storage with, and the alias sets of a graph (the values that may share one storage).
// SPDX-License-Identifier: BSD-3-Clause
//
// Included at the end of graph.hpp (Graph's moves and topological sort check memory order with
// it); include <epgraph/ir/alias.hpp> or <epgraph/ir/graph.hpp>.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../ops/registry.hpp"
#include "../ops/schema.hpp"
#include "argument.hpp"
#include "graph.hpp"
#include "node.hpp"

namespace epgraph {

namespace detail {

// The alias set names of an annotation (`a!` -> {a}, `a -> *` -> {a}, `b|a` -> {b, a}): the
// names before `->`, without `!`. Empty for no annotation.
inline std::vector<std::string> alias_names(std::string_view alias) {
  std::vector<std::string> names;
  const std::string_view before = alias.substr(0, alias.find("->"));
  std::string cur;
  auto flush = [&] {
    if (!cur.empty()) names.push_back(cur);
    cur.clear();
  };
  for (const char c : before) {
    if (c == '|') {
      flush();
    } else if (c != '!' && c != ' ') {
      cur.push_back(c);
    }
  }
  flush();
  return names;
}

// Every alias set name of `type`, its element types included (`Tensor(a)[]`, `Tensor(a!)?`).
inline void collect_alias_names(const SchemaType& type, std::vector<std::string>& out) {
  for (std::string& n : alias_names(type.alias)) out.push_back(std::move(n));
  for (const SchemaType& e : type.elements) collect_alias_names(e, out);
}

// The value `node` passes for schema argument `i`: by keyword, else by position (not keyword-only);
// nullptr when it is left to its default.
inline const Argument* bound_argument(const FunctionSchema& schema, const Node& node,
                                      std::size_t i) {
  const SchemaArgument& sa = schema.arguments[i];
  for (const auto& kv : node.kwargs()) {
    if (kv.first == sa.name) return &kv.second;
  }
  const ArgumentView args = node.args();
  if (!sa.kwarg_only && i < args.size()) return &args[i];
  return nullptr;
}

// The op name of an operator target `torch.ops.<ns>.<op>.<overload>` (`add_`), or empty.
inline std::string_view operator_name_of_target(std::string_view target) noexcept {
  constexpr std::string_view prefix = "torch.ops.";
  if (target.substr(0, prefix.size()) != prefix) return {};
  std::string_view rest = target.substr(prefix.size());
  const auto ns = rest.find('.');
  if (ns == std::string_view::npos) return {};
  rest = rest.substr(ns + 1);
  return rest.substr(0, rest.find('.'));
}

// An in-place name by torch's convention (`add_`, `copy_`), not a dunder (`__and__`).
inline bool is_inplace_name(std::string_view name) noexcept {
  return name.size() > 1 && name.back() == '_' && name.substr(0, 2) != "__";
}

inline void push_nodes(const Argument& a, std::vector<const Node*>& out) {
  for_each_node(a, [&](const Node* n) {
    for (const Node* m : out) {
      if (m == n) return;
    }
    out.push_back(n);
  });
}

}  // namespace detail

namespace detail {
// True when some call of `node`'s op and target may write an input in place, as written_inputs
// decides with UnknownOperators::pure, whatever its arguments: the answer depends on the op code
// and target only. written_inputs(node, pure) is empty whenever this is false.
inline bool may_write_in_place(const Node& node) {
  const std::string_view target = node.target();
  if (node.op() == OpCode::call_method) return is_inplace_name(target);
  if (node.op() != OpCode::call_function) return false;
  if (target == "operator.setitem" || target == "_operator.setitem") return true;
  if (const FunctionSchema* schema = global_registry().find_target(target)) {
    for (const auto& a : schema->arguments) {
      if (a.type.is_write()) return true;
    }
    return false;
  }
  const std::string_view op = operator_name_of_target(target);
  if (op.empty() || target.substr(0, 23) == "torch.ops.higher_order.") return false;
  return is_inplace_name(op);
}
}  // namespace detail

/// The input nodes `node` may write in place, each once, in argument order:
/// - a call_function whose schema global_registry() knows: the values of the arguments whose
///   alias annotation is a write (`Tensor(a!) self`, `Tensor(a!) out`, `Tensor(a!)[] self`; see
///   SchemaType::is_write), as the schema says (`add_.Tensor` writes `self`, `add.out` writes
///   `out`, `copy_` writes `self` and not `src`);
/// - `operator.setitem(x, index, value)`: `x`;
/// - a call_function `torch.ops.<ns>.<op>_.<overload>` without a schema, and a call_method
///   named `<op>_` (an in-place name by torch's convention): its first argument;
/// - another `torch.ops.<ns>.*` operator without a schema (a custom op: a .pt2 never carries
///   its schema, and one declared with `mutates_args` or as an out-variant writes its inputs):
///   with `unknown` == UnknownOperators::impure (the default) every node among its arguments,
///   with UnknownOperators::pure none (as Node::is_impure and eliminate_dead_code treat such an
///   operator); `torch.ops.higher_order.*` operators write nothing (torch.export gives them
///   functional bodies);
/// - everything else (placeholder, get_attr, output, call_module, other Python callables such
///   as `operator.getitem`): nothing.
/// Arguments: `node`, a node of a graph; `unknown`, see above.
/// Returns the written nodes; empty when the node writes nothing.
/// Errors: value_error when a lazily registered schema does not parse; std::bad_alloc.
/// Complexity: O(arguments * keywords + log registry + length of target).
/// Mirrors: the alias analysis torch runs on the schema's annotations
/// (`torch._library.utils.mutable_args` / `FunctionSchema.arguments[i].alias_info.is_write`,
/// torch/_library/utils.py).
[[nodiscard]] inline std::vector<const Node*> written_inputs(
    const Node& node, UnknownOperators unknown = UnknownOperators::impure) {
  std::vector<const Node*> out;
  const std::string_view target =
      node.op() == OpCode::call_function || node.op() == OpCode::call_method ? node.target()
                                                                             : std::string_view{};
  if (target.empty()) return out;
  const ArgumentView args = node.args();
  if (node.op() == OpCode::call_method) {
    if (detail::is_inplace_name(target) && args.size() > 0) detail::push_nodes(args[0], out);
    return out;
  }
  if (target == "operator.setitem" || target == "_operator.setitem") {
    if (args.size() > 0) detail::push_nodes(args[0], out);
    return out;
  }
  if (const FunctionSchema* schema = global_registry().find_target(target)) {
    for (std::size_t i = 0; i < schema->arguments.size(); ++i) {
      if (!schema->arguments[i].type.is_write()) continue;
      if (const Argument* a = detail::bound_argument(*schema, node, i)) detail::push_nodes(*a, out);
    }
    return out;
  }
  const std::string_view op = detail::operator_name_of_target(target);
  if (op.empty() || target.substr(0, 23) == "torch.ops.higher_order.") return out;
  if (detail::is_inplace_name(op)) {
    if (args.size() > 0) detail::push_nodes(args[0], out);
    return out;
  }
  if (unknown == UnknownOperators::impure) {
    for (const Argument& a : args) detail::push_nodes(a, out);
    for (const auto& kv : node.kwargs()) detail::push_nodes(kv.second, out);
  }
  return out;
}

/// The input nodes whose storage `node`'s result may share (the result is a view or an alias of
/// them), each once, in argument order:
/// - a call_function whose schema global_registry() knows: the values of the arguments whose
///   alias set is also a return's (`view(Tensor(a) self) -> Tensor(a)`, `split(Tensor(a -> *)
///   self) -> Tensor(a)[]`, `add_(Tensor(a!) self) -> Tensor(a!)`, `add.out(..., Tensor(a!) out)
///   -> Tensor(a!)`); ops that may alias or copy (`reshape`, `contiguous`) count as aliasing;
/// - `operator.getitem(x, i)`: `x` (an element of a multi-output result shares what the result
///   shares);
/// - a call_method named `<op>_` (in place): its first argument;
/// - everything else, operators without a schema included (torch.library custom ops may not
///   return an alias of an input): nothing.
/// Arguments: `node`, a node of a graph.
/// Returns the aliased nodes; empty when the result is a fresh tensor (or not a tensor).
/// Errors: value_error when a lazily registered schema does not parse; std::bad_alloc.
/// Complexity: O(arguments * (keywords + returns) + log registry + length of target).
/// Mirrors: the schema alias annotations torch's alias analysis reads (`SchemaInfo.may_alias`,
/// torch/csrc/utils/schema_info.cpp; the returns' `alias_info` in torch/_library/utils.py).
[[nodiscard]] inline std::vector<const Node*> aliased_inputs(const Node& node) {
  std::vector<const Node*> out;
  if (node.op() != OpCode::call_function && node.op() != OpCode::call_method) return out;
  const std::string_view target = node.target();
  const ArgumentView args = node.args();
  if (node.op() == OpCode::call_method) {
    if (detail::is_inplace_name(target) && args.size() > 0) detail::push_nodes(args[0], out);
    return out;
  }
  if (target == "operator.getitem" || target == "_operator.getitem") {
    if (args.size() > 0) detail::push_nodes(args[0], out);
    return out;
  }
  const FunctionSchema* schema = global_registry().find_target(target);
  if (schema == nullptr) return out;
  std::vector<std::string> returned;
  for (const SchemaArgument& r : schema->returns) detail::collect_alias_names(r.type, returned);
  if (returned.empty()) return out;
  for (std::size_t i = 0; i < schema->arguments.size(); ++i) {
    std::vector<std::string> names;
    detail::collect_alias_names(schema->arguments[i].type, names);
    bool shared = false;
    for (const std::string& n : names) {
      for (const std::string& r : returned) shared = shared || n == r;
    }
    if (!shared) continue;
    if (const Argument* a = detail::bound_argument(*schema, node, i)) detail::push_nodes(*a, out);
  }
  return out;
}

/// The alias sets of a graph: its nodes grouped so that two values that may share storage are
/// in one set (a tensor, every view of it, what it is a view of, the views of that, and the
/// results of in-place and out= calls on any of them), with what each node writes. Built from
/// written_inputs and aliased_inputs (the schemas' alias annotations), and get_attr nodes of one
/// target, joined transitively: the
/// set of a written tensor is the storage a write changes, so a node that reads any member reads
/// what the write changed. A set escapes when it holds a placeholder or a get_attr node (its
/// storage belongs to the caller, who sees writes after the graph ends). A snapshot: it does not
/// follow later edits of the graph (build a new one after editing).
class AliasSets {
 public:
  /// Computes the sets of `graph` (which must outlive this object; see written_inputs for
  /// `unknown`).
  /// Errors: value_error when a lazily registered schema does not parse; std::bad_alloc.
  /// Complexity: O(nodes + edges) plus one registry lookup per call node.
  /// Mirrors: no one torch function; torch tells storages apart by FakeTensor
  /// `untyped_storage()` identity (e.g. torch/_inductor/fx_passes/reinplace.py), epgraph by the
  /// schemas' alias annotations, which a .pt2 keeps when it drops the fake tensors' storages.
  explicit AliasSets(const Graph& graph, UnknownOperators unknown = UnknownOperators::impure) {
    index_.reserve(graph.size());
    for (const Node& n : graph.nodes()) {
      index_.emplace(&n, nodes_.size());
      nodes_.push_back(&n);
      parent_.push_back(nodes_.size() - 1);
    }
    writes_.resize(nodes_.size());
    // get_attr nodes of one target read one attribute: one storage.
    std::unordered_map<std::string_view, std::size_t> attribute;
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      if (nodes_[i]->op() != OpCode::get_attr) continue;
      const auto [it, fresh] = attribute.emplace(nodes_[i]->target(), i);
      if (!fresh) join(i, it->second);
    }
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      const Node& n = *nodes_[i];
      for (const Node* a : aliased_inputs(n)) join(i, at(a));
      for (const Node* w : written_inputs(n, unknown)) writes_[i].push_back(at(w));
    }
    escapes_.assign(nodes_.size(), false);
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      const OpCode op = nodes_[i]->op();
      if (op == OpCode::placeholder || op == OpCode::get_attr) escapes_[find(i)] = true;
    }
    written_.assign(nodes_.size(), false);
    for (std::vector<std::size_t>& w : writes_) {
      for (std::size_t& s : w) {
        s = find(s);
        written_[s] = true;
      }
    }
    members_.resize(nodes_.size());
    for (std::size_t i = 0; i < nodes_.size(); ++i) members_[find(i)].push_back(nodes_[i]);
  }

  /// True when `node` is a node of the graph the sets were built from. O(1).
  [[nodiscard]] bool contains(const Node& node) const noexcept {
    return index_.find(&node) != index_.end();
  }
  /// The set of `node` (a number shared by exactly the nodes of its set). Errors: value_error
  /// "Node 'x' is not in the graph the alias sets were built from". O(log nodes) amortized.
  [[nodiscard]] std::size_t set_of(const Node& node) const { return find(at(&node)); }
  /// True when `a` and `b` may share storage (one set). Errors: as set_of. O(1) amortized.
  [[nodiscard]] bool may_alias(const Node& a, const Node& b) const {
    return set_of(a) == set_of(b);
  }
  /// The sets `node` writes in place (one per written input, repeats possible). Errors: as
  /// set_of. O(1).
  [[nodiscard]] const std::vector<std::size_t>& written_sets(const Node& node) const {
    return writes_[at(&node)];
  }
  /// True when `node` writes anything in place. Errors: as set_of. O(1).
  [[nodiscard]] bool writes(const Node& node) const { return !written_sets(node).empty(); }
  /// True when `node` writes set `set`. Errors: as set_of. O(written inputs).
  [[nodiscard]] bool writes(const Node& node, std::size_t set) const {
    for (std::size_t s : written_sets(node)) {
      if (s == set) return true;
    }
    return false;
  }
  /// The input of `node` (args then kwargs) that is a member of `set`, or nullptr when `node`
  /// reads nothing of it. A node that writes a set reads it too. O(size of the arguments).
  [[nodiscard]] const Node* read_member(const Node& node, std::size_t set) const {
    const Node* found = nullptr;
    auto look = [&](const Node* in) {
      const auto it = index_.find(in);
      if (found == nullptr && it != index_.end() && find(it->second) == set) found = in;
    };
    for (const Argument& a : node.args()) for_each_node(a, look);
    for (const auto& kv : node.kwargs()) for_each_node(kv.second, look);
    return found;
  }
  /// True when set `set` holds a placeholder or a get_attr node: the caller owns its storage and
  /// sees what is written to it. O(1).
  [[nodiscard]] bool escapes(std::size_t set) const noexcept {
    return set < escapes_.size() && escapes_[set];
  }
  /// True when some node of the graph writes set `set` in place. O(1).
  [[nodiscard]] bool is_written(std::size_t set) const noexcept {
    return set < written_.size() && written_[set];
  }
  /// The members of set `set`, in graph order (empty for a number that names no set). O(1).
  [[nodiscard]] const std::vector<const Node*>& members(std::size_t set) const noexcept {
    static const std::vector<const Node*> no_members;
    return set < members_.size() ? members_[set] : no_members;
  }

 private:
  std::size_t at(const Node* n) const {
    const auto it = index_.find(n);
    if (it == index_.end()) {
      throw value_error("Node '" + std::string(n->name()) +
                        "' is not in the graph the alias sets were built from");
    }
    return it->second;
  }
  std::size_t find(std::size_t i) const noexcept {
    while (parent_[i] != i) {
      parent_[i] = parent_[parent_[i]];
      i = parent_[i];
    }
    return i;
  }
  void join(std::size_t a, std::size_t b) noexcept {
    a = find(a);
    b = find(b);
    if (a != b) parent_[a > b ? a : b] = a > b ? b : a;  // the earliest node names the set
  }

  std::vector<const Node*> nodes_;  // in graph order
  std::unordered_map<const Node*, std::size_t> index_;
  mutable std::vector<std::size_t> parent_;  // union-find, compressed on lookup
  std::vector<std::vector<std::size_t>> writes_;
  std::vector<bool> escapes_;
  std::vector<bool> written_;                      // by set: some node writes it
  std::vector<std::vector<const Node*>> members_;  // by set, in graph order
};

/// Why `a` and `b` (nodes of the graph `sets` was built from) must keep their relative order
/// because of memory, or an empty string when they may be swapped as far as writes go: one of
/// them writes a set the other reads (or writes) — a read moved across a write sees another
/// value, two writes swapped leave another one. The reason reads "'add_' writes 'y' in place
/// and 'mul' reads it through 'view'" (or "... and 'mul' reads it" when `mul` reads `y` itself,
/// "... and 'copy_' writes it too" for two writers).
/// Errors: value_error as AliasSets::set_of; std::bad_alloc.
/// Complexity: O(size of both nodes' arguments * written inputs).
/// Mirrors: nothing in torch.fx (its moves and sorts look at data edges only; torch._inductor's
/// reordering passes keep mutations in place by their own rules).
[[nodiscard]] inline std::string memory_order_conflict(const AliasSets& sets, const Node& a,
                                                       const Node& b) {
  auto reason = [&](const Node& writer, const Node& other) -> std::string {
    for (std::size_t s : sets.written_sets(writer)) {
      const Node* member = sets.read_member(other, s);
      if (member == nullptr) continue;
      const Node* written = sets.read_member(writer, s);
      std::string why = "'" + std::string(writer.name()) + "' writes '" +
                        std::string(written != nullptr ? written->name() : member->name()) +
                        "' in place and '" + std::string(other.name()) + "' ";
      if (sets.writes(other, s)) return why + "writes it too";
      why += "reads it";
      if (member != written) why += " through '" + std::string(member->name()) + "'";
      return why;
    }
    return {};
  };
  std::string why = reason(a, b);
  if (why.empty()) why = reason(b, a);
  return why;
}

// Graph's memory checks for moves and sorts (declared in graph.hpp).
inline std::string Graph::memory_order_conflict_over(const Node* x, const Node* from,
                                                     const Node* to) const {
  // Known writes only (schemas, in-place names): see Node::prepend.
  constexpr UnknownOperators known = UnknownOperators::pure;
  bool writes = !written_inputs(*x, known).empty();
  for (const Node* n = from; n != to && !writes; n = n->next()) {
    writes = !written_inputs(*n, known).empty();
  }
  if (!writes) return {};
  const AliasSets sets(*this, known);
  for (const Node* n = from; n != to; n = n->next()) {
    std::string why = memory_order_conflict(sets, *x, *n);
    if (!why.empty()) return why;
  }
  return {};
}

inline std::string Graph::memory_order_conflict_in(const std::vector<Node*>& order) const {
  // Most graphs write nothing in place: find that out first, asking once per (op, target) whether
  // its calls can write at all (detail::may_write_in_place, which reads no argument) and
  // building nothing else. A sort of 1M nodes spent 4/5 of its time here when written_inputs ran
  // on every node.
  bool writes = false;
  std::unordered_map<const void*, bool> can_write[2];  // by op, then interned target
  for (const Node* n : order) {
    if (n->op() != OpCode::call_function && n->op() != OpCode::call_method) continue;
    auto& memo = can_write[n->op() == OpCode::call_method ? 1 : 0];
    auto known = memo.find(n->target().data());
    if (known == memo.end()) {
      known = memo.emplace(n->target().data(), detail::may_write_in_place(*n)).first;
    }
    if (known->second && !written_inputs(*n, UnknownOperators::pure).empty()) {
      writes = true;
      break;
    }
  }
  if (!writes) return {};
  std::unordered_map<const Node*, std::size_t> new_position;
  new_position.reserve(order.size());
  for (const Node* n : order) new_position.emplace(n, new_position.size());
  const AliasSets sets(*this, UnknownOperators::pure);  // known writes only: see the sort's docs
  // Per set that something writes: the nodes touching it (reading or writing), in the current
  // order. A writer must stay after every earlier one and before every later one.
  std::unordered_map<std::size_t, std::vector<const Node*>> touching;
  for (const Node& n : nodes()) {
    for (std::size_t s : sets.written_sets(n)) touching.emplace(s, std::vector<const Node*>{});
  }
  for (const Node& n : nodes()) {
    for (auto& kv : touching) {
      if (sets.read_member(n, kv.first) != nullptr) kv.second.push_back(&n);
    }
  }
  for (const auto& kv : touching) {
    const std::vector<const Node*>& t = kv.second;
    for (std::size_t i = 0; i < t.size(); ++i) {
      if (!sets.writes(*t[i], kv.first)) continue;
      for (std::size_t j = 0; j < t.size(); ++j) {
        if (j == i) continue;
        const bool before_now = j < i;
        const bool before_then = new_position.at(t[j]) < new_position.at(t[i]);
        if (before_now != before_then) return memory_order_conflict(sets, *t[i], *t[j]);
      }
    }
  }
  return {};
}

}  // namespace epgraph
