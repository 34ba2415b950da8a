// Graph: owns the nodes of one torch.fx-style graph and every edit of their order and edges.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "../detail/flat_table.hpp"
#include "../error.hpp"
#include "../ops/detail/impure_targets.hpp"
#include "../ops/registry.hpp"
#include "argument.hpp"
#include "detail/call_check.hpp"
#include "detail/edges.hpp"
#include "detail/graph_lint.hpp"
#include "detail/name_index.hpp"
#include "detail/node_arena.hpp"
#include "detail/stale_nodes.hpp"
#include "names.hpp"
#include "node.hpp"

namespace epgraph {

namespace detail {

// What a call_function target says about the node's purity (Node::is_impure).
inline constexpr int pure_target = 0;
inline constexpr int impure_target = 1;
inline constexpr int impure_if_wrapped_op_is = 2;  // auto_functionalized: ask its first argument
inline constexpr int unknown_operator = 3;  // torch.ops.<ns>.<op>.<overload> without a schema

inline bool starts_with(std::string_view s, std::string_view prefix) noexcept {
  return s.substr(0, prefix.size()) == prefix;
}

// One of torch.fx.node._side_effectful_functions (as FX targets). O(log table).
inline bool is_side_effectful_target(std::string_view target) noexcept {
  return std::binary_search(std::begin(side_effectful_targets), std::end(side_effectful_targets),
                            target);
}

// The purity of call_function target `target` (see Node::is_impure). May throw value_error when
// a lazily registered schema does not parse. O(log registry + length).
inline int target_impurity(std::string_view target) {
  if (is_side_effectful_target(target)) return impure_target;
  if (std::binary_search(std::begin(random_targets), std::end(random_targets), target)) {
    return impure_target;
  }
  if (starts_with(target, "torch.ops.aten._assert") ||
      starts_with(target, "torch.ops.aten.sym_constrain_range") ||
      target == "torch.ops.higher_order.with_effects") {
    return impure_target;
  }
  if (target == "torch.ops.higher_order.auto_functionalized" ||
      target == "torch.ops.higher_order.auto_functionalized_v2") {
    return impure_if_wrapped_op_is;
  }
  if (const FunctionSchema* s = global_registry().find_target(target)) {
    if (s->is_mutable() || (s->returns.empty() && !s->is_varret)) return impure_target;
    return pure_target;
  }
  // An operator nobody registered (a custom op: a .pt2 never carries its schema) may mutate its
  // arguments or return nothing; higher-order operators are judged by their own rules above.
  if (starts_with(target, "torch.ops.") && !starts_with(target, "torch.ops.higher_order.")) {
    return unknown_operator;
  }
  return pure_target;
}

// Whether a node of purity `kind` is impure under `unknown`.
inline bool impure_kind(int kind, UnknownOperators unknown) noexcept {
  return kind == impure_target || (kind == unknown_operator && unknown == UnknownOperators::impure);
}

// auto_functionalized(op, ...): FX calls it impure when `op` is side-effectful.
inline bool wrapped_op_is_impure(ArgumentView args) {
  if (args.size() == 0) return false;
  const std::string* op = args[0].is<std::string>() ? &args[0].as<std::string>() : nullptr;
  return op != nullptr && is_side_effectful_target(*op);
}

struct edit_access;  // edit.hpp: the edits' early prefetch of the graph's tables

}  // namespace detail

/// Listens to graph changes that a program built on the graph must follow (torch's replace hooks
/// on `GraphModule`). Both calls come after every allocation of the change and before anything
/// changes; an observer that throws cancels the change, leaving the graph as it was.
class GraphObserver {
 public:
  virtual ~GraphObserver() = default;
  /// Uses of `old_value` are about to move to `replacement`; `output_uses` tells whether the
  /// output node is among the users that change.
  virtual void before_replace_uses(const Node& old_value, const Node& replacement,
                                   bool output_uses) = 0;
  /// `node` is about to be renamed to `new_name` (its current name is still `node.name()`).
  virtual void before_rename(const Node& node, std::string_view new_name) = 0;

 protected:
  GraphObserver() = default;
  GraphObserver(const GraphObserver&) = default;
  GraphObserver& operator=(const GraphObserver&) = default;
};

/// Targets for the nested graphs a copy brings (Graph::node_copy / graph_copy): the target of a
/// get_attr node in the graph copied from -> the target its copy gets, e.g.
/// `{{"true_graph_0", "then_graph"}, {"false_graph_0", "else_graph"}}`. A nested graph (the
/// branch of a cond, the body of a map, an invoke_subgraph) is a get_attr node whose target names
/// it and whose record (NodeMeta::serialized, the JSON text the loader keeps) carries it; two
/// get_attr nodes carry the same nested graph when their records are the same text.
using NestedGraphTargets = std::map<std::string, std::string, std::less<>>;

class Graph;

// Defined in passes/program_passes.hpp; a friend of Graph.
inline void stable_topological_sort(Graph& graph);

/// Restores a graph's previous insertion point when destroyed (TorchScript's `WithInsertPoint`,
/// FX's `with graph.inserting_before(n):`). Returned by Graph::inserting_before/after; keep it in
/// a named variable for the scope in which nodes should go there.
class [[nodiscard]] InsertingGuard {
 public:
  InsertingGuard(const InsertingGuard&) = delete;
  InsertingGuard& operator=(const InsertingGuard&) = delete;
  InsertingGuard(InsertingGuard&&) = delete;
  InsertingGuard& operator=(InsertingGuard&&) = delete;
  ~InsertingGuard();

 private:
  friend class Graph;
  explicit InsertingGuard(Graph* graph) noexcept : graph_(graph) {}
  Graph* graph_;
};

/// A torch.fx `Graph` for exported programs: an ordered list of nodes that the graph owns.
///
/// - Order is a doubly linked list: insert and erase are O(1); a `Node*` stays valid until its
///   node is erased.
/// - Names are unique and follow FX's `_Namespace` (see Namespace); `find_node` is O(1).
/// - Placeholders always form a prefix of the node list and the output node, once created, is
///   always last; nodes are inserted at the insertion point, by default right before the output
///   node (FX appends after it by default, which breaks the graph).
///
/// A Graph is neither copyable nor movable, so back pointers from nodes never dangle; use
/// `clone()` for a deep copy. Const member functions may run concurrently; anything else needs
/// exclusive access.
class Graph {
 public:
  /// An empty graph (no nodes, no output node yet).
  Graph() noexcept : arena_(this) { namespace_.attach(this, &holds_name, &count_names); }
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  Graph(Graph&&) = delete;
  Graph& operator=(Graph&&) = delete;
  /// Destroys every node. O(nodes).
  ~Graph() {
    std::allocator<Node> alloc;
    for (Node* n = head_; n != nullptr;) {
      Node* next = n->next_;
      std::allocator_traits<std::allocator<Node>>::destroy(alloc, n);
      n = next;
    }
  }

  /// Forward iterator over the nodes in order, yielding `Node&`. Erasing the node an iterator
  /// points at invalidates it (take `next()` first).
  template <class N>
  class basic_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Node;
    using difference_type = std::ptrdiff_t;
    using pointer = N*;
    using reference = N&;
    basic_iterator() = default;
    explicit basic_iterator(N* n, bool placeholders_only = false) noexcept
        : node_(n), placeholders_only_(placeholders_only) {
      skip();
    }
    reference operator*() const noexcept { return *node_; }
    pointer operator->() const noexcept { return node_; }
    basic_iterator& operator++() noexcept {
      node_ = node_->next();
      skip();
      return *this;
    }
    basic_iterator operator++(int) noexcept {
      auto old = *this;
      ++*this;
      return old;
    }
    friend bool operator==(const basic_iterator& a, const basic_iterator& b) noexcept {
      return a.node_ == b.node_;
    }
    friend bool operator!=(const basic_iterator& a, const basic_iterator& b) noexcept {
      return a.node_ != b.node_;
    }

   private:
    void skip() noexcept {
      if (placeholders_only_ && node_ != nullptr && node_->op() != OpCode::placeholder) {
        node_ = nullptr;
      }
    }
    N* node_ = nullptr;
    bool placeholders_only_ = false;
  };
  using iterator = basic_iterator<Node>;
  using const_iterator = basic_iterator<const Node>;

  /// A range of nodes for range-for loops.
  template <class It>
  struct range {
    It first;
    It last;
    It begin() const noexcept { return first; }
    It end() const noexcept { return last; }
  };

  /// All nodes in order (FX `graph.nodes`). O(1) to obtain.
  [[nodiscard]] range<iterator> nodes() noexcept { return {iterator(head_), iterator()}; }
  /// All nodes in order (FX `graph.nodes`). O(1) to obtain.
  [[nodiscard]] range<const_iterator> nodes() const noexcept {
    return {const_iterator(head_), const_iterator()};
  }
  /// The placeholder nodes, which form a prefix of the graph, in order. O(1) to obtain.
  [[nodiscard]] range<iterator> placeholders() noexcept {
    return {iterator(head_, true), iterator()};
  }
  /// The placeholder nodes, in order. O(1) to obtain.
  [[nodiscard]] range<const_iterator> placeholders() const noexcept {
    return {const_iterator(head_, true), const_iterator()};
  }
  /// Number of placeholder nodes. O(1).
  [[nodiscard]] std::size_t num_placeholders() const noexcept { return num_placeholders_; }
  /// Number of nodes. O(1).
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  // The node accessors come in pairs, as in PyTorch NativeRT's Graph.h
  // (torch/nativert/graph/Graph.h): a const Graph hands out `const Node*`, so code that only
  // reads cannot pick a node's writable (allocating) overloads such as the non-const meta().
  /// First node or nullptr. O(1).
  [[nodiscard]] Node* first_node() noexcept { return head_; }
  /// First node or nullptr, read-only. O(1).
  [[nodiscard]] const Node* first_node() const noexcept { return head_; }
  /// Last node or nullptr. O(1).
  [[nodiscard]] Node* last_node() noexcept { return tail_; }
  /// Last node or nullptr, read-only. O(1).
  [[nodiscard]] const Node* last_node() const noexcept { return tail_; }
  /// The output node, or nullptr before `output()` is called. O(1).
  [[nodiscard]] Node* output_node() noexcept { return output_; }
  /// The output node, read-only, or nullptr before `output()` is called. O(1).
  [[nodiscard]] const Node* output_node() const noexcept { return output_; }
  /// The node named `name`, or nullptr. Throws nothing; does not allocate. O(length of name) on
  /// average. Mirrors FX's lookup of a node by name (`Graph.find_nodes` / `_graph_namespace`).
  [[nodiscard]] Node* find_node(std::string_view name) noexcept { return find_node_impl(name); }
  /// The node named `name`, read-only, or nullptr. Throws nothing; does not allocate.
  /// O(length of name) on average.
  [[nodiscard]] const Node* find_node(std::string_view name) const noexcept {
    return find_node_impl(name);
  }
  /// Every node with op code `op` and, when `target` is given, that target, in graph order (FX
  /// `graph.find_nodes(op=..., target=...)` with its default `sort=True`, torch/fx/graph.py):
  /// `find_nodes(OpCode::call_function, "torch.ops.aten.relu.default")`,
  /// `find_nodes(OpCode::placeholder)`. The pointers stay valid until their nodes are erased.
  /// Throws std::bad_alloc only. O(nodes); a target the graph never used costs one hash lookup.
  [[nodiscard]] std::vector<Node*> find_nodes(OpCode op,
                                              std::optional<std::string_view> target = {}) {
    return find_nodes_impl(op, target);
  }
  /// find_nodes, read-only. Same contract.
  [[nodiscard]] std::vector<const Node*> find_nodes(
      OpCode op, std::optional<std::string_view> target = {}) const {
    std::vector<Node*> found = find_nodes_impl(op, target);
    return std::vector<const Node*>(found.begin(), found.end());
  }
  /// True when `node` is a live node of this graph. O(1) on average. A pointer kept after its
  /// node was erased (FX: a node with `_erased` set) is never live; but in release builds the
  /// slot is reused at once, so such a pointer may name the next node created, and asking about
  /// it reads the erased node's memory. Builds with EPGRAPH_STALE_NODE_CHECKS (AddressSanitizer,
  /// or no NDEBUG; see detail/stale_nodes.hpp) keep erased slots out of reuse for a while and
  /// answer false for them without reading them (O(log chunks) more).
  [[nodiscard]] bool contains(const Node* node) const {
    if (node == nullptr) return false;
#if EPGRAPH_STALE_NODE_CHECKS
    if (arena_.slot_state(node) != detail::NodeArena::SlotState::live) return false;
#endif
    return &node->graph() == this && find_node(node->name()) == node;
  }
  /// The namespace that assigns node names (read-only).
  [[nodiscard]] const Namespace& names() const noexcept { return namespace_; }

  /// The name FX would give a node whose name is `candidate` if it were created now, without
  /// creating it. O(length).
  [[nodiscard]] std::string propose_name(std::string_view candidate) const {
    return namespace_.propose(candidate).name;
  }

  /// The default name candidate for a node (FX `_target_to_str`, with torch.export's rule for
  /// operator overloads): `torch.ops.aten.add.Tensor` -> `add`, `operator.getitem` -> `getitem`,
  /// a get_attr/call_module/call_method target is snake-cased (`linear.weight` becomes
  /// `linear_weight` once sanitized), a placeholder's target is its name, output is `output`.
  [[nodiscard]] static std::string default_name(OpCode op, std::string_view target) {
    if (op == OpCode::output) return "output";
    if (op == OpCode::placeholder) return std::string(target);
    if (op == OpCode::call_function) {
      constexpr std::string_view ops_prefix = "torch.ops.";
      if (target.substr(0, ops_prefix.size()) == ops_prefix) {
        std::string_view rest = target.substr(ops_prefix.size());  // ns.op.overload
        const auto ns_end = rest.find('.');
        if (ns_end != std::string_view::npos) rest = rest.substr(ns_end + 1);
        return std::string(rest.substr(0, rest.find('.')));
      }
      const auto dot = target.rfind('.');
      return std::string(dot == std::string_view::npos ? target : target.substr(dot + 1));
    }
    std::string out;  // FX _snake_case: an upper-case letter after a lower-case one gets a '_'
    for (std::size_t i = 0; i < target.size(); ++i) {
      const char c = target[i];
      const bool upper = c >= 'A' && c <= 'Z';
      if (upper && i > 0 && target[i - 1] >= 'a' && target[i - 1] <= 'z') out.push_back('_');
      out.push_back(upper ? static_cast<char>(c - 'A' + 'a') : c);
    }
    if (out.size() > 4 && out.compare(0, 2, "__") == 0 && out.compare(out.size() - 2, 2, "__") == 0)
      out = out.substr(2, out.size() - 4);
    return out;
  }

  /// Creates a node (FX `graph.create_node`) at the insertion point and returns it.
  /// `name` is the requested name; when empty, `default_name(op, target)` is used; either way the
  /// graph's namespace makes it unique (`x` taken -> `x_1`), and `node->name()` tells the result.
  /// A placeholder goes at the insertion point when that lies inside the placeholder prefix, and
  /// right after the last placeholder when the insertion point is the default. An output node is
  /// appended at the end. Throws:
  /// - value_error when an argument node is null or of another graph;
  /// - value_error "Cannot insert call_function node 'add' before placeholder 'x': placeholders
  ///   must come first" / "... after the output node" / "Cannot insert placeholder 'x' after
  ///   non-placeholder node 'add'" when the insertion point does not allow this op there;
  /// - runtime_error "Graph already has an output node 'output'" for a second output node;
  /// - runtime_error "Graph cannot hold more than 67108608 nodes" (2^26 - 256, the name index's
  ///   id space) when the graph is full.
  /// Strong guarantee. O(length of name + size of arguments).
  Node* create_node(OpCode op, std::string_view target, ArgumentList args = {}, Kwargs kwargs = {},
                    std::string_view name = {}) {
    return create_node_impl(op, target, std::move(args), std::move(kwargs), name, nullptr);
  }

  /// Same as create_node, plus a last step that cannot leave a trace: `prepare(node)` runs on the
  /// new node once its name is taken and every other step that can fail is done, just before the
  /// node is linked into the graph. If `prepare` throws, the node is destroyed, its name is given
  /// back to the namespace (counters included, as if it had never been taken) and the exception
  /// propagates: the graph is exactly as before. Use it to finish a node with the strong
  /// guarantee: set its metadata, make existing nodes (e.g. the output node) use it through
  /// set_args, record it elsewhere. `prepare` must itself have the strong guarantee, may read the
  /// graph and change arguments of existing nodes, and must not create, erase or rename nodes nor
  /// change the insertion point; while it runs, `node` is named and found by find_node but is not
  /// in the node list. An empty `prepare` does nothing. Throws what create_node throws and what
  /// `prepare` throws. Strong guarantee. O(create_node + prepare).
  Node* create_node(OpCode op, std::string_view target, ArgumentList args, Kwargs kwargs,
                    std::string_view name, const std::function<void(Node&)>& prepare) {
    return create_node_impl(op, target, std::move(args), std::move(kwargs), name,
                            prepare ? &prepare : nullptr);
  }

  /// A placeholder whose target is `name` (FX `graph.placeholder`). See create_node.
  Node* placeholder(std::string_view name) { return create_node(OpCode::placeholder, name); }
  /// A get_attr node reading `qualified_name` (FX `graph.get_attr`). See create_node.
  Node* get_attr(std::string_view qualified_name, std::string_view name = {}) {
    return create_node(OpCode::get_attr, qualified_name, {}, {}, name);
  }
  /// A call_function node (FX `graph.call_function`); `target` is the operator's qualified name
  /// such as `torch.ops.aten.add.Tensor`. See create_node.
  Node* call_function(std::string_view target, ArgumentList args = {}, Kwargs kwargs = {},
                      std::string_view name = {}) {
    return create_node(OpCode::call_function, target, std::move(args), std::move(kwargs), name);
  }
  /// A call_method node (FX `graph.call_method`). See create_node.
  Node* call_method(std::string_view method, ArgumentList args = {}, Kwargs kwargs = {},
                    std::string_view name = {}) {
    return create_node(OpCode::call_method, method, std::move(args), std::move(kwargs), name);
  }
  /// A call_module node (FX `graph.call_module`). See create_node.
  Node* call_module(std::string_view module, ArgumentList args = {}, Kwargs kwargs = {},
                    std::string_view name = {}) {
    return create_node(OpCode::call_module, module, std::move(args), std::move(kwargs), name);
  }
  /// The output node returning `results` (FX `graph.output((a, b))`): its `args()[0]` is the list
  /// of results, printed as `return (a, b)`. Always appended at the end. See create_node.
  Node* output(ArgumentList results) {
    return create_node(OpCode::output, "output", {Argument(std::move(results))});
  }

  /// Erases `node` (FX `graph.erase_node`). Its name stays taken. Throws value_error "Node 'x'
  /// does not belong to this graph"; runtime_error "Tried to erase Node add but it still had 2
  /// users in the graph: {mul: None, sub: None}!" (FX's message) when it has users; runtime_error
  /// "Cannot erase node 'x' while it anchors an insertion point" while a guard points at it.
  /// Afterwards `node` dangles (FX sets `node._erased`): in release builds its slot goes to the
  /// next node created; with EPGRAPH_STALE_NODE_CHECKS (AddressSanitizer, or no NDEBUG) the slot
  /// is kept out of reuse for a while, `contains(node)` is false, the graph's checks refuse it
  /// ("Cannot erase an erased node (a Node* kept after Graph::erase_node)") and under
  /// AddressSanitizer any access through it is reported (see detail/stale_nodes.hpp).
  /// Strong guarantee. O(size of its arguments).
  void erase_node(Node* node) {
    check_member(node, "erase");
    const NodeSpan node_users = node->users();
    if (!node_users.empty()) {
      std::string users = "{";
      for (std::size_t i = 0; i < node_users.size(); ++i) {
        users += (i ? ", " : "") + node_users[i]->name_ + ": None";
      }
      users += "}";
      throw runtime_error("Tried to erase Node " + node->name_ + " but it still had " +
                          std::to_string(node_users.size()) + " users in the graph: " + users +
                          "!");
    }
    if (anchors_insertion_point(node)) {
      throw runtime_error("Cannot erase node '" + node->name_ +
                          "' while it anchors an insertion point");
    }
    detail::EdgeUpdate edges;
    edges.stage_erase(node);
    edges.finish_stage();
    (void)namespace_.retire(node->name_);  // the name stays taken
    // No-throw from here on.
    edges.commit();
    if (node == last_placeholder_) last_placeholder_ = node->prev_;  // a placeholder or null
    unlink(node);
    if (node == output_) output_ = nullptr;
    if (node->op_ == OpCode::placeholder) --num_placeholders_;
    index_.erase(id_of(node), node->name(), name_of());
    arena_.destroy(node);
  }

  /// Renames `node` to the name the namespace assigns `candidate` and returns it (FX
  /// `node._rename`); the old name stays taken. A placeholder whose target was its name keeps
  /// target == name. The program owning the graph updates the specs that named the node. Returns
  /// the current name when `candidate` equals it. Throws value_error when the node is not in this
  /// graph. Strong guarantee. O(length).
  std::string_view rename_node(Node* node, std::string_view candidate) {
    check_member(node, "rename");
    if (candidate == node->name_) return node->name_;
    Namespace::Proposal proposal = namespace_.propose(candidate);
    detail::CompactString new_name(proposal.name);
    std::uint32_t new_target = node->target_;
    if (node->op_ == OpCode::placeholder && node->target() == node->name()) {
      new_target = intern(proposal.name);
    }
    index_.reserve_more(1, name_of(), each_indexed());
    const bool retired = namespace_.retire(node->name_);  // the old name stays taken
    try {
      namespace_.commit(proposal);
    } catch (...) {
      if (retired) namespace_.unretire(node->name());
      throw;
    }
    if (observer_ != nullptr) {
      try {
        observer_->before_rename(*node, proposal.name);
      } catch (...) {
        namespace_.uncommit(proposal);
        if (retired) namespace_.unretire(node->name());
        throw;
      }
    }
    // No-throw from here on: the index has room, the new name is built.
    index_.erase(id_of(node), node->name(), name_of());
    ++version_;
    node->name_.swap(new_name);
    node->target_ = new_target;
    index_.insert(id_of(node), node->name());
    return node->name();
  }

  /// Makes new nodes go right before `node` until the returned guard is destroyed (FX
  /// `graph.inserting_before`). Throws value_error when `node` is not in this graph. O(1).
  [[nodiscard]] InsertingGuard inserting_before(Node* node) {
    check_member(node, "insert before");
    push_insert_point({node, true});
    return InsertingGuard(this);
  }
  /// Makes new nodes go right after `node` (each new node after the previous new one) until the
  /// returned guard is destroyed (FX `graph.inserting_after`, torch/fx/graph.py). Unlike FX,
  /// several new nodes keep their creation order: FX puts each one right after `node`
  /// (`node.append`), so `a` then `b` come out `node, b, a`, which places a user before its
  /// input when `b` reads `a`; epgraph gives `node, a, b`. Throws value_error when `node` is not
  /// in this graph. O(1).
  [[nodiscard]] InsertingGuard inserting_after(Node* node) {
    check_member(node, "insert after");
    push_insert_point({node, false});
    return InsertingGuard(this);
  }

  /// Where the next node goes: `before` or after `anchor`; a null anchor is the default (before the
  /// output node, or at the end while there is none).
  struct InsertPoint {
    Node* anchor = nullptr;
    bool before = true;
  };
  /// The current insertion point. O(1).
  [[nodiscard]] InsertPoint insertion_point() const noexcept { return insert_; }

  /// Checks every invariant and throws lint_error listing each violation with its offender:
  /// the node list is consistently linked; every node is indexed under its name and the index
  /// holds nothing else; each argument node belongs to this graph and comes before its user; users
  /// and arguments agree both ways, each user listed once; placeholders form a prefix; there is
  /// exactly one output node, it is last and has no users. Read-only. O(nodes + edges log edges).
  /// Mirrors `torch.fx.Graph.lint` (torch/fx/graph.py), with stricter placement rules.
  void lint() const {
    std::vector<std::string> problems;
    const LintWalk walk = lint_node_list(problems);
    lint_links_and_outputs(walk, problems);
    auto position_of = [&](const Node* m) {
      return &m->graph() == this ? walk.position_by_id[id_of(m)] : lint_unseen;
    };
    detail::lint_edges(head_, position_of, lint_unseen, problems);
    if (!problems.empty()) throw lint_error(std::move(problems));
  }

  /// A deep copy: same nodes, names, order, arguments (re-linked to the copies), users in the same
  /// order, metadata, and the same namespace state (erased names stay taken). The insertion point
  /// is the default and no observer is attached. Throws runtime_error when a node uses a node
  /// that comes after it (run lint() to see why). O(nodes + edges).
  [[nodiscard]] std::unique_ptr<Graph> clone() const {
    auto copy = std::make_unique<Graph>();
    copy->namespace_.assign_names(namespace_);
    CloneMap map{this, std::vector<Node*>(arena_.slot_count(), nullptr)};
    auto remap = [&](const Node* user) {
      return [&map, user](const Argument& arg) { return remap_argument(arg, map, user); };
    };
    detail::EdgeUpdate edges;  // one node's arguments at a time, then every users list
    for (const Node* n = head_; n != nullptr; n = n->next_) {
      // Everything that can throw comes before the node is linked.
      detail::CompactString name(n->name_);
      const std::uint32_t target = copy->intern(n->target());
      auto fn = remap(n);
      ArgumentList args;
      args.reserve(n->args_size_);
      for (const Argument& a : n->args()) args.push_back(fn(a));
      Kwargs kwargs;
      std::unique_ptr<Node::Extra> extra;
      if (n->extra_) {
        extra = std::make_unique<Node::Extra>();
        extra->meta = n->extra_->meta;
        for (const auto& kv : n->extra_->kwargs) kwargs.emplace_back(kv.first, fn(kv.second));
      }
      copy->arena_.reserve_slot();
      copy->index_.reserve_more(1, copy->name_of(), copy->each_indexed());
      Node* raw = copy->arena_.construct(n->op_, target);
      raw->name_.swap(name);
      raw->extra_ = std::move(extra);
      try {
        edges.clear();
        // The users lists are copied verbatim below (in the source's order), not derived.
        edges.stage_arguments(raw, std::move(args), std::move(kwargs), nullptr, false);
        edges.finish_stage();
      } catch (...) {
        copy->arena_.destroy(raw);
        throw;
      }
      // No-throw from here on for this node.
      edges.commit();
      copy->index_.insert(copy->id_of(raw), raw->name());
      copy->link_before(raw, nullptr);
      if (raw->op_ == OpCode::placeholder) {
        ++copy->num_placeholders_;
        copy->last_placeholder_ = raw;
      }
      if (n == output_) copy->output_ = raw;
      map.by_id[id_of(n)] = raw;
    }
    edges.clear();
    for (const Node* n = head_; n != nullptr; n = n->next_) {
      edges.stage_users(map.find(n), n->users(), [&](const Node* u) {
        Node* cu = map.find(u);
        if (cu == nullptr) {
          throw runtime_error("Cannot clone graph: node '" + n->name_ + "' lists user '" +
                              u->name_ + "' that is not in this graph");
        }
        return cu;
      });
    }
    edges.finish_stage();
    edges.commit();
    return copy;
  }

  /// Removes every node whose value nobody uses and that has no side effect, and returns whether
  /// anything was removed (FX `graph.eliminate_dead_code(is_impure_node)`, torch/fx/graph.py).
  /// Walks the nodes in reverse, so a chain of unused nodes goes at once. Kept: placeholders, the
  /// output node, nodes for which Node::is_impure(unknown) holds (mutating, random, assertion and
  /// other side-effectful operators, and by default every `torch.ops.*` operator without a
  /// registered schema: pass UnknownOperators::pure to trust that those have no effect), nodes for
  /// which `is_impure(node)` returns true, and every node a kept node uses. Unlike FX, the
  /// caller's predicate adds to Node::is_impure() instead of replacing it (so placeholders and
  /// mutating ops are never removed), and the graph is not linted first: a node used by a node
  /// that comes before it is kept. The names of removed nodes stay taken, as with erase_node.
  /// Writes stay with what they write: an in-place or out= call is kept although its result is
  /// unused (its schema is mutable), and so is every view it writes through (the call uses it);
  /// a view nobody uses is erased even when its base is written later (erasing it changes no
  /// value anybody reads).
  /// Nested graphs are not visited (epgraph holds no submodules). On an ExportedProgram's graph
  /// use epgraph::eliminate_dead_code(program) (passes/program_passes.hpp), which also keeps every
  /// node the signature names. Throws runtime_error "Cannot erase node 'x' while it anchors an
  /// insertion point" when a dead node anchors an insertion point, value_error when a lazily
  /// registered schema does not parse, and what `is_impure` throws; nothing is removed then. Strong
  /// guarantee (the dead set is computed first, then erased with no-throw steps). O(nodes + edges)
  /// plus one registry lookup per distinct target.
  bool eliminate_dead_code(const std::function<bool(const Node&)>& is_impure = {},
                           UnknownOperators unknown = UnknownOperators::impure) {
    const std::size_t slots = arena_.slot_count();
    std::vector<bool> dead(slots, false);     // by node id
    std::vector<bool> touched(slots, false);  // inputs of dead nodes, by node id
    std::vector<signed char> impurity(target_table_.size(), -1);  // by interned target
    std::vector<Node*> doomed;
    std::vector<Node*> losing_users;  // inputs of dead nodes (some dead themselves), each once
    std::size_t name_bytes = 0;       // of the dead nodes' names
    // Upper bounds: pages never written are never touched, and no growth copies 8 MB at 1M nodes.
    doomed.reserve(size_);
    losing_users.reserve(size_);
    auto note = [&](Node* input) {
      const std::uint32_t id = id_of(input);
      if (!touched[id]) {
        touched[id] = true;
        losing_users.push_back(input);
      }
    };
    // One pass over the nodes, from the last: a node is dead when all its users are.
    for (Node* n = tail_; n != nullptr; n = n->prev_) {
      if (n->op_ == OpCode::placeholder || n->op_ == OpCode::output) continue;
      bool unused = true;
      for (const Node* u : n->users()) {
        if (!dead[id_of(u)]) {
          unused = false;
          break;
        }
      }
      if (!unused) continue;
      if (n->op_ == OpCode::call_function) {
        signed char& known = impurity[n->target_];
        if (known < 0) known = static_cast<signed char>(detail::target_impurity(n->target()));
        if (detail::impure_kind(known, unknown)) continue;
        if (known == detail::impure_if_wrapped_op_is && detail::wrapped_op_is_impure(n->args())) {
          continue;
        }
      }
      if (is_impure && is_impure(*n)) continue;
      if (anchors_insertion_point(n)) {
        throw runtime_error("Cannot erase node '" + n->name_ +
                            "' while it anchors an insertion point");
      }
      dead[id_of(n)] = true;
      doomed.push_back(n);
      name_bytes += n->name().size();
      for (const Argument& a : n->args()) for_each_node(a, note);
      for (const auto& kv : n->kwargs()) for_each_node(kv.second, note);
    }
    if (doomed.empty()) return false;
    // The names stay taken: room for them in the namespace's set of given-up names, then they
    // are recorded there without allocating.
    namespace_.reserve_retired(doomed.size(), name_bytes);
    // No-throw from here on.
    namespace_.retire_reserved(doomed.begin(), doomed.end(),
                               [](const Node* n) noexcept { return n->name(); });
    for (Node* input : losing_users) {
      if (!dead[id_of(input)])
        input->remove_users_if([&](const Node* u) { return dead[id_of(u)]; });
    }
    for (Node* n : doomed) {  // users before the nodes they use
      unlink(n);
      index_.erase(id_of(n), n->name(), name_of());
      arena_.destroy(n);
    }
    return true;
  }

  /// Copies `node` (of any graph) into this graph at the insertion point and returns the copy
  /// (FX `graph.node_copy(node, arg_transform)`, torch/fx/graph.py): same op and target, the
  /// arguments with every node `n` in them (inside lists too) replaced by `arg_transform(n)`
  /// (the identity when empty, which suits a node of this graph), `node.name()` as the requested
  /// name, de-duplicated by this graph's namespace as FX does (`add` taken -> `add_1`), and a copy
  /// of the metadata (FX `copy.copy(node.meta)`). Placement follows create_node (a placeholder
  /// goes after the last placeholder by default).
  ///
  /// A get_attr node carrying a nested graph (see NestedGraphTargets) keeps its target unless a
  /// get_attr node of this graph carries a different nested graph under it; then the copy gets
  /// the first target `<prefix>_0`, `<prefix>_1`, ... (`<prefix>` is the target without a
  /// trailing `_<digits>`: `true_graph_0` -> `true_graph_1`) that no get_attr node of this graph
  /// uses for anything but the same nested graph, as torch names a new branch graph
  /// (`unique_graph_name_with_root`, torch/_higher_order_ops/utils.py) and that is free as a node
  /// name (never taken in this graph's namespace, so the copy can be named after it), or
  /// whose get_attr nodes all carry this same graph (then shared); the copy then requests its new
  /// target as its name, as torch's loader names a get_attr node (`deserialize_input`),
  /// de-duplicated as usual. The same nested graph under the same target is shared. FX keeps the
  /// target, so its copy calls the destination's graph of that name (and torch's loader registers
  /// one submodule per name: the last read wins); epgraph's loader refuses such a file. A get_attr
  /// node without a record keeps its target, as in FX.
  ///
  /// Throws what `arg_transform` throws and what create_node throws: value_error when a
  /// transformed argument node is null or of another graph or the arguments do not bind to the
  /// operator's schema, value_error/runtime_error when the insertion point does not allow the
  /// node or it is a second output node. Strong guarantee. O(length of name + size of arguments +
  /// size of metadata), plus O(nodes) for a get_attr node whose target this graph uses.
  Node* node_copy(const Node& node, const std::function<Argument(Node*)>& arg_transform = {}) {
    return node_copy_impl(node, arg_transform, nullptr);
  }

  /// node_copy, where a get_attr node whose target is a key of `nested_targets` gets the mapped
  /// target instead of node_copy's choice (the caller names the copied nested graph; FX's user
  /// sets `copy.target` and registers the submodule under it) and requests it as its name.
  /// Throws, besides what node_copy
  /// throws, value_error "Cannot give the copy of get_attr node 'true_graph_0' the target
  /// 'a.b': a nested graph's target must be a Python identifier (torch registers it as a
  /// submodule)" and value_error "Cannot give the copy of get_attr node 'true_graph_0' the target
  /// 'then_graph': get_attr node 'then_graph' of this graph names a different nested graph under
  /// it" (the copied node, the target, then this graph's node). Strong guarantee. O(node_copy +
  /// log size of nested_targets + nodes).
  Node* node_copy(const Node& node, const std::function<Argument(Node*)>& arg_transform,
                  const NestedGraphTargets& nested_targets) {
    return node_copy_impl(node, arg_transform, nullptr, &nested_targets);
  }

  /// Copies every node of `g` except its output node into this graph, in order, at the insertion
  /// point, and returns the copy of `g`'s result: the first argument of `g`'s output node with
  /// each node replaced by its copy (FX `graph.graph_copy(g, val_map)`, torch/fx/graph.py), or
  /// None when `g` has no output node. `value_remap` maps nodes of `g` to nodes of this graph: a
  /// node already in it is not copied (pass a placeholder's stand-in this way), and every copy
  /// is added to it. Names are de-duplicated by this graph's namespace, node by node, exactly as
  /// FX's node_copy does. Nested graphs get their targets by node_copy's rule, node by node, the
  /// copies made so far included: when `g`'s cond branches `true_graph_0`/`false_graph_0` differ
  /// from this graph's, they become `true_graph_1`/`false_graph_1` (FX keeps the names, and the
  /// copied cond calls this graph's branches). Throws value_error "Cannot copy a graph into
  /// itself"; runtime_error "Cannot copy node 'add': its input 'x' has no copy" when a node uses
  /// one that comes after it in `g` (FX raises KeyError); and what node_copy throws. Strong
  /// guarantee: on failure the copies made so far are removed (their names given back to the
  /// namespace), the insertion point and `value_remap` are as before. O(nodes + edges of g),
  /// plus O(nodes) for each get_attr node of `g` whose target this graph uses.
  Argument graph_copy(const Graph& g, std::unordered_map<const Node*, Node*>& value_remap) {
    return graph_copy_impl(g, value_remap, nullptr);
  }

  /// graph_copy, where each get_attr node of `g` whose target is a key of `nested_targets` gets
  /// the mapped target (see the node_copy overload taking it; the other get_attr nodes follow
  /// node_copy's rule), e.g. `{{"true_graph_0", "then_graph"}, {"false_graph_0",
  /// "else_graph"}}`. Throws what graph_copy and that node_copy overload throw, the latter also
  /// when two different nested graphs of `g` are mapped to one target ("Cannot give the copy of
  /// get_attr node 'false_graph_0' the target 'branch': get_attr node 'branch' of this graph
  /// names a different nested graph under it"). Strong guarantee, as graph_copy. O(graph_copy +
  /// get_attr nodes of g * (log size of nested_targets + nodes)).
  Argument graph_copy(const Graph& g, std::unordered_map<const Node*, Node*>& value_remap,
                      const NestedGraphTargets& nested_targets) {
    return graph_copy_impl(g, value_remap, &nested_targets);
  }

  /// Attaches the observer that hears of replacements and renames (the ExportedProgram owning
  /// this graph does this itself); nullptr detaches. The observer must outlive the graph or be
  /// detached first. O(1).
  void set_observer(GraphObserver* observer) noexcept { observer_ = observer; }
  /// The attached observer, or nullptr.
  [[nodiscard]] GraphObserver* observer() const noexcept { return observer_; }

  /// Turns the schema checks of call_function nodes on (the default) or off. While on,
  /// create_node/call_function and Node::set_args/set_kwargs/update_arg/update_kwarg bind the
  /// arguments of a `torch.ops.<ns>.<op>.<overload>` target whose schema global_registry() knows
  /// and refuse a call that does not bind (see check_call). Loaders turn them off while they
  /// build a program from a file (torch's deserializer does not check either; `verify` reports
  /// such nodes). O(1).
  void set_schema_checks(bool on) noexcept { schema_checks_ = on; }
  /// Whether call_function nodes are checked against their schemas. O(1).
  [[nodiscard]] bool schema_checks() const noexcept { return schema_checks_; }

  /// A counter that changes whenever the graph may have changed in a way that
  /// validate_graph_signature can see: a node created, erased, moved or renamed, the arguments of
  /// a node replaced, the nodes reordered, or a placeholder's metadata handed out for writing
  /// (Node::mutable_meta, whose `requested_name` the edits of edit.hpp look up). Equal versions
  /// mean none of these happened in between (it may also change when nothing visible did).
  /// Programs use it to skip re-validating an unchanged graph before an edit. O(1).
  [[nodiscard]] std::uint64_t version() const noexcept { return version_; }

  /// Inserts `value` into the output node's results (its `args()[0]` list) at `position`, as FX's
  /// `output.args = (results[:position] + [value] + results[position:],)` would, without
  /// rebuilding the list: the results from `position` on shift by one and `value` gains the output
  /// node as a user when it was not one yet. The owning program is not told (its output specs
  /// are the caller's business: see create_mutable_buffer). Throws, changing nothing:
  /// - value_error "Cannot return a null node" / "Node 'x' does not belong to this graph (cannot
  ///   return it)" (and, with EPGRAPH_STALE_NODE_CHECKS, "Cannot return an erased node ...");
  /// - runtime_error "Graph has no output node" / "Output node 'output' does not return a list of
  ///   results";
  /// - value_error "The output node cannot be its own result";
  /// - value_error "Result position 5 out of range for output node 'output' with 3 results";
  /// - std::bad_alloc.
  /// Strong guarantee. O(results after `position` + users of `value`), amortized: no copy of the
  /// other results. epgraph addition (FX only assigns whole argument tuples).
  void insert_result(std::size_t position, Node* value) {
    check_member(value, "return");
    Node* out = output_;
    if (out == nullptr) throw runtime_error("Graph has no output node");
    const ArgumentList* list = out->args_size_ == 0 ? nullptr : out->args()[0].list();
    if (list == nullptr) {
      throw runtime_error("Output node '" + out->name_.str() +
                          "' does not return a list of results");
    }
    if (value == out) throw value_error("The output node cannot be its own result");
    if (position > list->size()) {
      throw value_error("Result position " + std::to_string(position) +
                        " out of range for output node '" + out->name_.str() + "' with " +
                        std::to_string(list->size()) + " results");
    }
    // The list is boxed by the output node's own argument and was created non-const (Boxed
    // makes it with make_unique<ArgumentList>), so changing it in place is well defined; the
    // node owns the only copy.
    auto& results = const_cast<ArgumentList&>(*list);
    const NodeSpan users = value->users();
    const bool new_input = std::find(users.begin(), users.end(), out) == users.end();
    detail::reserve_more(results, 1);        // may throw; changes nothing observable
    if (new_input) value->reserve_users(1);  // likewise
    // No-throw from here on: the room is reserved and Arguments move without throwing.
    static_assert(std::is_nothrow_move_constructible_v<Argument> &&
                  std::is_nothrow_move_assignable_v<Argument>);
    results.insert(results.begin() + static_cast<std::ptrdiff_t>(position), Argument(value));
    if (new_input) value->push_user(out);
    ++version_;
  }

  /// Checks that `args`/`kwargs` bind to the schema of call_function `target` as torch binds a
  /// call of an OpOverload: at most as many positional arguments as the schema has non-keyword-
  /// only ones (unless it has `...`), every keyword names a schema argument and is not also given
  /// by position, every argument without a default is given, and each value fits its type (a
  /// node or a Python number where a Tensor is expected, as torch wraps numbers, and not a node
  /// where an int, float, bool, dtype, ... is;
  /// a list of the element type for `int[]`, `Tensor[]`, `Tensor?[]`). A node whose
  /// `meta().val` is a tensor does not fit SymInt/Scalar, one whose val is a SymInt does not fit
  /// Tensor; a node without val fits any tensor or symbolic slot. Targets of another form
  /// (`operator.getitem`, higher-order ops) and operators the registry lacks are not checked.
  /// `node_name` names the node in the message. Throws value_error "Cannot create node 'add'
  /// (torch.ops.aten.add.Tensor): argument 'other' expects Tensor, got str 'x'; schema:
  /// aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"; the reasons are
  /// "N positional arguments given, but it takes [at most] M", "unknown keyword argument 'k'",
  /// "argument 'k' given both by position and by keyword", "keyword argument 'k' given twice",
  /// "missing required argument 'k'" and "argument 'k' expects T, got V". Argument nodes must be
  /// non-null. Changes nothing. O(log registry + schema arguments * kwargs + size of values).
  void check_call(std::string_view target, ArgumentView args, const Kwargs& kwargs,
                  std::string_view node_name, const char* verb = "create") const {
    const FunctionSchema* s = global_registry().find_target(target);
    if (s != nullptr) check_bound(*s, target, args, kwargs, node_name, verb);
  }

 private:
  friend class Node;
  friend class InsertingGuard;
  friend void stable_topological_sort(Graph& graph);
  friend struct detail::test_access;
  friend struct detail::rewrite_access;
  friend struct detail::edit_access;

  // Source node -> copy, by node id (filled in list order while cloning).
  struct CloneMap {
    const Graph* source;
    std::vector<Node*> by_id;
    [[nodiscard]] Node* find(const Node* n) const noexcept {
      return &n->graph() == source ? by_id[source->id_of(n)] : nullptr;
    }
  };

  static Argument remap_argument(const Argument& arg, const CloneMap& map, const Node* user) {
    if (const Node* n = arg.node()) {
      Node* copy = map.find(n);
      if (copy == nullptr) {
        throw runtime_error("Cannot clone graph: node '" + user->name_ + "' uses node '" +
                            n->name_ + "' that does not come before it");
      }
      return Argument(copy);
    }
    if (const ArgumentList* l = arg.list()) {
      ArgumentList out;
      out.reserve(l->size());
      for (const Argument& a : *l) out.push_back(remap_argument(a, map, user));
      return Argument(std::move(out));
    }
    return arg;
  }

  // `arg` with every node `n` in it (inside lists too) replaced by `f(n)`; the identity when `f`
  // is empty.
  template <class F>
  static Argument map_nodes(const Argument& arg, const F& f) {
    if (Node* n = arg.node()) return f(n);
    if (const ArgumentList* l = arg.list()) {
      ArgumentList out;
      out.reserve(l->size());
      for (const Argument& a : *l) out.push_back(map_nodes(a, f));
      return Argument(std::move(out));
    }
    return arg;
  }

  // graph_copy, with `given` the caller's targets for nested graphs (or nullptr). Strong.
  Argument graph_copy_impl(const Graph& g, std::unordered_map<const Node*, Node*>& value_remap,
                           const NestedGraphTargets* given) {
    if (&g == this) throw value_error("Cannot copy a graph into itself");
    std::vector<Node*> created;
    std::vector<Namespace::Proposal> proposals;
    std::vector<const Node*> keys;
    created.reserve(g.size());
    proposals.reserve(g.size());
    keys.reserve(g.size());
    const InsertPoint saved = insert_;
    const Node* current = nullptr;
    auto lookup = [&](Node* input) -> Argument {
      auto it = value_remap.find(input);
      if (it == value_remap.end()) {
        throw runtime_error("Cannot copy node '" + current->name_ + "': its input '" +
                            input->name_ + "' has no copy");
      }
      return Argument(it->second);
    };
    try {
      for (const Node* n = g.head_; n != nullptr; n = n->next_) {
        if (value_remap.find(n) != value_remap.end()) continue;
        current = n;
        if (n->op_ == OpCode::output) {
          return n->args_size_ == 0 ? Argument() : map_nodes(n->args()[0], lookup);
        }
        proposals.emplace_back();
        Node* copy = node_copy_impl(*n, lookup, &proposals.back(), given);
        created.push_back(copy);
        value_remap.emplace(n, copy);
        keys.push_back(n);
      }
    } catch (...) {
      for (const Node* k : keys) value_remap.erase(k);
      for (std::size_t i = created.size(); i-- > 0;) uncreate(created[i], proposals[i]);
      insert_ = saved;
      throw;
    }
    return Argument();
  }

  // The nested graph get_attr node `n` carries: its record, or empty (none, or not get_attr).
  static std::string_view nested_record(const Node& n) noexcept {
    if (n.op_ != OpCode::get_attr) return {};
    return n.meta().serialized;
  }

  // The first get_attr node of this graph with target `target` that carries a nested graph other
  // than `record` (which is not empty); with `strict`, also one that carries none. O(nodes) when
  // the target is used, one hash lookup otherwise.
  const Node* nested_clash(std::string_view target, std::string_view record, bool strict) const {
    for (const Node* n : find_nodes_impl(OpCode::get_attr, target)) {
      const std::string_view other = nested_record(*n);
      if (other != record && (strict || !other.empty())) return n;
    }
    return nullptr;
  }

  // Whether `s` is a Python identifier (ASCII): what a submodule's name must be.
  static bool is_identifier(std::string_view s) noexcept {
    if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
      return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    });
  }

  // The target the copy of `node` gets here (see node_copy): its own, the caller's (`given`),
  // or a fresh one for a nested graph this graph holds another graph under. Strong (reads only).
  std::string copy_target(const Node& node, const NestedGraphTargets* given) const {
    const std::string_view target = node.target();
    if (node.op_ != OpCode::get_attr) return std::string(target);
    const std::string_view record = nested_record(node);
    if (given != nullptr) {
      if (const auto it = given->find(target); it != given->end()) {
        const std::string& chosen = it->second;
        const std::string who = "Cannot give the copy of get_attr node '" + node.name_ +
                                "' the target '" + chosen + "': ";
        if (!is_identifier(chosen)) {
          throw value_error(who +
                            "a nested graph's target must be a Python identifier (torch "
                            "registers it as a submodule)");
        }
        if (!record.empty()) {
          if (const Node* other = nested_clash(chosen, record, false)) {
            throw value_error(who + "get_attr node '" + other->name_ +
                              "' of this graph names a different nested graph under it");
          }
        }
        return chosen;
      }
    }
    if (record.empty() || nested_clash(target, record, false) == nullptr) {
      return std::string(target);
    }
    // torch's unique_graph_name_with_root: `<prefix>_<i>` for the first free i from 0.
    std::string_view prefix = target;
    std::size_t digits = 0;
    while (digits < prefix.size() && prefix[prefix.size() - 1 - digits] >= '0' &&
           prefix[prefix.size() - 1 - digits] <= '9') {
      ++digits;
    }
    if (digits > 0 && digits < prefix.size() && prefix[prefix.size() - 1 - digits] == '_') {
      prefix.remove_suffix(digits + 1);
    }
    // The candidates are identifiers (FX's rule: other characters become '_', a leading digit
    // gets a '_'), so the namespace keeps one verbatim once it is free: a target such as
    // `sub.branch_0` or `0` made every candidate look taken and the loop never ended.
    std::string base(prefix);
    for (char& c : base) {
      if (!detail::is_ident_char(c)) c = '_';
    }
    if (base.empty() || detail::is_ascii_digit(base.front())) base.insert(base.begin(), '_');
    for (std::size_t i = 0;; ++i) {
      std::string candidate = base + "_" + std::to_string(i);
      if (candidate == target) continue;
      // Free: no get_attr node reads it and the namespace would give it as a node name (the
      // copy is named after its target); or every get_attr node reading it carries this same
      // graph (shared).
      const bool free = find_nodes_impl(OpCode::get_attr, candidate).empty()
                            ? namespace_.propose(candidate).name == candidate
                            : nested_clash(candidate, record, true) == nullptr;
      if (free) return candidate;
    }
  }

  // node_copy; when `taken` is set, it receives the namespace step (for uncreate); `given`: the
  // caller's targets for nested graphs, or nullptr. Strong.
  template <class Transform>
  Node* node_copy_impl(const Node& node, const Transform& transform, Namespace::Proposal* taken,
                       const NestedGraphTargets* given = nullptr) {
    auto map = [&](const Argument& a) -> Argument {
      if constexpr (std::is_same_v<Transform, std::function<Argument(Node*)>>) {
        if (!transform) return a;
      }
      return map_nodes(a, transform);
    };
    ArgumentList args;
    args.reserve(node.args_size_);
    for (const Argument& a : node.args()) args.push_back(map(a));
    Kwargs kwargs;
    kwargs.reserve(node.kwargs().size());
    for (const auto& kv : node.kwargs()) kwargs.emplace_back(kv.first, map(kv.second));
    const std::string target = copy_target(node, given);
    // A get_attr node given a new target is named after it, as torch's loader names one.
    const std::string name(target != node.target() ? std::string_view(target) : node.name());
    std::function<void(Node&)> copy_meta;
    if (node.extra_ != nullptr) copy_meta = [&node](Node& n) { n.mutable_meta() = node.meta(); };
    return create_node_impl(node.op_, target, std::move(args), std::move(kwargs), name,
                            copy_meta ? &copy_meta : nullptr, taken);
  }

  // Undoes the creation of `node` (no users, not the output node) whose name was taken by
  // `taken`, the last namespace step not yet undone: the name is given back. No-throw.
  void uncreate(Node* node, Namespace::Proposal& taken) noexcept {
    drop_from_inputs(node);
    if (node->op_ == OpCode::placeholder) {
      if (node == last_placeholder_) last_placeholder_ = node->prev_;
      --num_placeholders_;
    }
    unlink(node);
    index_.erase(id_of(node), node->name(), name_of());
    arena_.destroy(node);
    namespace_.uncommit(taken);
  }

  // Removes `node` from the users of every node it reads (undoing the commit of its creation:
  // it was appended last, so the others keep their order). No-throw.
  static void drop_from_inputs(Node* node) noexcept {
    auto drop = [node](Node* input) { input->remove_user(node); };
    for (const Argument& a : node->args()) for_each_node(a, drop);
    for (const auto& kv : node->kwargs()) for_each_node(kv.second, drop);
  }

  // Node::prepend (before == true) and Node::append: moves `x` next to `anchor`. Strong.
  void move_node(Node* x, Node* anchor, bool before) {
    const std::string where = before ? "before" : "after";
    if (x == nullptr) {
      throw value_error("Cannot move a null node " + where + " '" + anchor->name_ + "'");
    }
    check_not_erased(x, "move");
    auto fail = [&](const std::string& why) {
      throw value_error("Cannot move node '" + x->name_ + "' " + where + " '" + anchor->name_ +
                        "': " + why);
    };
    if (&x->graph() != this) fail("'" + x->name_ + "' belongs to another graph");
    if (x == anchor) return;
    Node* const prev = before ? anchor->prev_ : anchor;
    Node* const next = before ? anchor : anchor->next_;
    if (x == prev || x == next) return;  // already in place
    if (x->op_ == OpCode::output) fail("the output node must stay last");
    if (prev != nullptr && prev->op_ == OpCode::output) fail("nothing may follow the output node");
    if (x->op_ == OpCode::placeholder) {
      if (prev != nullptr && prev->op_ != OpCode::placeholder) {
        fail("placeholder '" + x->name_ + "' would come after non-placeholder node '" +
             prev->name_ + "'");
      }
    } else if (next != nullptr && next->op_ == OpCode::placeholder) {
      fail(std::string(op_name(x->op_)) + " node '" + x->name_ +
           "' would come before placeholder '" + next->name_ + "' (placeholders come first)");
    }
    // Which way does x move? Walk both ways from x at once: O(distance).
    bool earlier = false;
    for (Node *b = x->prev_, *f = x->next_;;) {
      if (b != nullptr) {
        if (b == next) {
          earlier = true;
          break;
        }
        b = b->prev_;
      }
      if (f != nullptr) {
        if (f == prev) break;
        f = f->next_;
      }
    }
    // Nodes x passes over must not be its inputs (moving earlier) or its users (moving later).
    const std::uint32_t epoch = next_mark_epoch();
    if (earlier) {
      auto mark = [epoch](Node* n) { n->mark_ = epoch | 1u; };
      for (const Argument& a : x->args()) for_each_node(a, mark);
      for (const auto& kv : x->kwargs()) for_each_node(kv.second, mark);
      for (Node* n = next; n != x; n = n->next_) {
        if (n->mark_ == (epoch | 1u))
          fail("'" + x->name_ + "' would come before its input '" + n->name_ + "'");
      }
    } else {
      for (Node* u : x->users()) u->mark_ = epoch | 2u;
      for (Node* n = x->next_; n != next; n = n->next_) {
        if (n->mark_ == (epoch | 2u))
          fail("'" + x->name_ + "' would come after its user '" + n->name_ + "'");
      }
    }
    // Nor may x pass over a node it must stay on one side of because of a write in place.
    const std::string memory = earlier ? memory_order_conflict_over(x, next, x)
                                       : memory_order_conflict_over(x, x->next_, next);
    if (!memory.empty()) fail(memory);
    // No-throw from here on.
    Node* last = last_placeholder_;
    if (x == last) last = x->prev_;
    unlink(x);
    link_before(x, next);
    if (x->op_ == OpCode::placeholder &&
        (x->next_ == nullptr || x->next_->op_ != OpCode::placeholder)) {
      last = x;
    }
    last_placeholder_ = last;
  }

  // Why `x` may not pass over the nodes [from, to) (alias.hpp's memory_order_conflict), or
  // empty. Looks up what the nodes write first; builds the graph's alias sets only when x or
  // one of them writes something. Defined in alias.hpp (included at the end of this header).
  std::string memory_order_conflict_over(const Node* x, const Node* from, const Node* to) const;

  // Why the reordering `order` (every node once) may not be applied because two nodes that must
  // keep their relative order because of a write in place would swap, or empty. Defined in
  // alias.hpp.
  std::string memory_order_conflict_in(const std::vector<Node*>& order) const;

  // stable_topological_sort (passes/program_passes.hpp): the order torch._inductor's
  // stable_topological_sort produces, computed first, then applied by relinking. Strong. O(nodes +
  // edges): the nodes are read in one pass (in list order) and written in one (in the new order);
  // the rest works on flat arrays by position.
  void stable_topological_sort_impl() {
    const std::size_t n = size_;
    if (n == 0) return;
    constexpr std::uint32_t no_wait = UINT32_MAX;
    // One pass over the nodes: each node by position, the position of each slot, and every
    // node's input occurrences (args then kwargs, repeats kept: torch's _args) as slot ids,
    // turned into positions afterwards (an input may come later in the list).
    std::vector<Node*> by_pos;
    by_pos.reserve(n);
    std::vector<std::uint32_t> pos_by_id(arena_.slot_count());
    struct Wait {
      std::uint32_t begin;  // first input occurrence of this position
      std::uint32_t scan;   // occurrences from here to the next position's begin are ready
      std::uint32_t head;   // positions waiting on this one, latest first
      std::uint32_t next;   // the next position waiting on the same one
    };
    std::vector<Wait> wait;
    wait.reserve(n + 1);
    std::vector<std::uint32_t> occurrences;
    occurrences.reserve(2 * n);
    for (Node* m = head_; m != nullptr; m = m->next_) {
      const auto p = static_cast<std::uint32_t>(by_pos.size());
      pos_by_id[id_of(m)] = p;
      by_pos.push_back(m);
      wait.push_back(Wait{static_cast<std::uint32_t>(occurrences.size()), 0, no_wait, no_wait});
      auto add = [&](Node* input) { occurrences.push_back(id_of(input)); };
      for (const Argument& a : m->args()) for_each_node(a, add);
      for (const auto& kv : m->kwargs()) for_each_node(kv.second, add);
    }
    wait.push_back(Wait{static_cast<std::uint32_t>(occurrences.size()), 0, no_wait, no_wait});
    for (std::uint32_t& o : occurrences) o = pos_by_id[o];
    // scan: occurrences of p before it may be unready; those from it on are ready (readiness
    // only grows, so the last unready input is found in O(inputs) over the whole run).
    for (std::size_t p = 0; p < n; ++p) wait[p].scan = wait[p + 1].begin;
    std::vector<char> ready(n, 0);
    std::vector<std::uint32_t> pending;
    pending.reserve(n);
    for (std::size_t p = n; p-- > 0;) pending.push_back(static_cast<std::uint32_t>(p));
    std::vector<Node*> order;
    order.reserve(n);
    bool sorted = true;
    while (!pending.empty()) {
      const std::uint32_t p = pending.back();
      pending.pop_back();
      Wait& w = wait[p];
      std::uint32_t j = w.scan;
      while (j > w.begin && ready[occurrences[j - 1]]) --j;
      w.scan = j;
      if (j > w.begin) {  // wait for the last input not ready yet
        Wait& dep = wait[occurrences[j - 1]];
        w.next = dep.head;
        dep.head = p;
        continue;
      }
      ready[p] = 1;
      sorted = sorted && order.size() == p;
      order.push_back(by_pos[p]);
      // torch: pending.extend(reversed(waiting.pop(node))): the latest waiter is pushed first.
      for (std::uint32_t q = w.head; q != no_wait; q = wait[q].next) pending.push_back(q);
      w.head = no_wait;
    }
    if (order.size() != n) {
      // Follow "waits on" links (the input before each unready node's scan point): they stay
      // among unready nodes, so they loop.
      std::uint32_t p = 0;
      while (ready[p]) ++p;
      std::vector<char> seen(n, 0);
      while (!seen[p]) {
        seen[p] = 1;
        p = occurrences[wait[p].scan - 1];
      }
      throw runtime_error("Graph has a cycle through node '" + by_pos[p]->name_ + "'");
    }
    if (sorted) return;
    const std::string memory = memory_order_conflict_in(order);
    if (!memory.empty()) {
      throw runtime_error("Cannot sort the graph topologically: " + memory +
                          ", and sorting would swap them");
    }
    relink_in_order(order);
  }

  // Relinks the node list in `order` (every node of the graph, once) and bumps version().
  // No-throw. O(nodes).
  void relink_in_order(const std::vector<Node*>& order) noexcept {
    ++version_;
    Node* prev = nullptr;
    Node* last = nullptr;
    for (Node* m : order) {
      m->prev_ = prev;
      (prev ? prev->next_ : head_) = m;
      if (m->op_ == OpCode::placeholder && (prev == nullptr || prev == last)) last = m;
      prev = m;
    }
    prev->next_ = nullptr;
    tail_ = prev;
    last_placeholder_ = last;
  }

  void check_member(const Node* node, const char* what) const {
    if (node == nullptr) throw value_error(std::string("Cannot ") + what + " a null node");
    check_not_erased(node, what);
    if (!contains(node)) {
      throw value_error("Node '" + node->name_ + "' does not belong to this graph (cannot " + what +
                        " it)");
    }
  }

  // With EPGRAPH_STALE_NODE_CHECKS: throws value_error "Cannot <what> an erased node (a Node*
  // kept after Graph::erase_node)" when `node` points at an erased slot of this graph, without
  // reading it. Otherwise does nothing.
  void check_not_erased(const Node* node, const char* what) const {
#if EPGRAPH_STALE_NODE_CHECKS
    if (node != nullptr && arena_.slot_state(node) == detail::NodeArena::SlotState::erased) {
      throw value_error(std::string("Cannot ") + what +
                        " an erased node (a Node* kept after Graph::erase_node)");
    }
#else
    (void)node;
    (void)what;
#endif
  }

  // The index of interned target `s`, interning it first when new. Interned targets are not
  // observable, so a failure after this leaves nothing visible behind. May throw.
  static void check_bound(const FunctionSchema& s, std::string_view target, ArgumentView args,
                          const Kwargs& kwargs, std::string_view node_name, const char* verb) {
    const std::string why = detail::bind_call<Node>(s, args, kwargs, nullptr);
    if (!why.empty()) {
      throw value_error("Cannot " + std::string(verb) + " node '" + std::string(node_name) + "' (" +
                        std::string(target) + "): " + why + "; schema: " + s.str());
    }
  }

  // check_call for an interned target, with the schema looked up once per target and graph
  // (schemas are never removed from the registry; an unregistered operator is looked up again
  // each time, so a schema registered later is seen). Growing the cache is not observable.
  void check_call_interned(std::uint32_t t, ArgumentView args, const Kwargs& kwargs,
                           std::string_view node_name, const char* verb) {
    const FunctionSchema* s = t < schema_cache_.size() ? schema_cache_[t] : nullptr;
    if (s == nullptr) {
      s = global_registry().find_target(*target_table_[t]);
      if (s == nullptr) return;
      if (schema_cache_.size() <= t) schema_cache_.resize(target_table_.size(), nullptr);
      schema_cache_[t] = s;
    }
    check_bound(*s, *target_table_[t], args, kwargs, node_name, verb);
  }

  std::uint32_t intern(std::string_view s) { return intern(s, target_hash(s)); }
  static std::size_t target_hash(std::string_view s) noexcept {
    return std::hash<std::string_view>()(s);
  }
  // Starts loading what creating a placeholder named `name` (whose target is its name) looks
  // up in big tables: its slot in the name index and in the interned targets. A hint for
  // edit.hpp, which has other lookups to overlap with these cache misses. No-throw; changes
  // nothing.
  void prefetch_placeholder_lookups(std::string_view name) const noexcept {
    index_.prefetch_slot(name);
    targets_.prefetch(target_hash(name));
  }
  // intern() with the target's hash (target_hash) known.
  std::uint32_t intern(std::string_view s, std::size_t h) {
    const auto text = [this](std::uint32_t id) { return std::string_view(*target_table_[id]); };
    if (const std::uint32_t found = targets_.find(s, h, text); found != detail::IdTable::none) {
      return found;
    }
    if (target_table_.size() >= UINT32_MAX) throw runtime_error("Graph holds too many targets");
    detail::reserve_more(target_table_, 1);
    targets_.reserve_more(1);
    auto owned = std::make_unique<const std::string>(s);
    const auto index = static_cast<std::uint32_t>(target_table_.size());
    target_table_.push_back(std::move(owned));  // room reserved: does not throw
    targets_.insert_reserved(index, h);         // room reserved: does not throw
    return index;
  }

  // Node ids (see detail::NodeArena::id_of): tables by id have arena_.slot_count() entries.
  [[nodiscard]] static std::uint32_t id_of(const Node* node) noexcept {
    return detail::NodeArena::id_of(node);
  }
  [[nodiscard]] Node* node_by_id(std::uint32_t id) const noexcept { return arena_.node_by_id(id); }
  // lint, step by step (the edge checks live in detail/graph_lint.hpp).
  static constexpr std::size_t lint_unseen = SIZE_MAX;
  // What lint's walk over the node list found.
  struct LintWalk {
    // Position in the node list by node id, or lint_unseen (a vector, not a hash map: the list
    // is mostly in memory order, so this stays cache friendly on big graphs).
    std::vector<std::size_t> position_by_id;
    std::size_t count = 0;       // nodes walked
    const Node* last = nullptr;  // the last node walked
    std::vector<const Node*> outputs;
  };
  // Walks the node list once: links, graph back pointers, name index, repeats, placement of
  // placeholders; collects the output nodes. Appends a message per violation. O(nodes).
  LintWalk lint_node_list(std::vector<std::string>& problems) const {
    LintWalk walk;
    walk.position_by_id.assign(arena_.slot_count(), lint_unseen);
    const Node* first_non_placeholder = nullptr;
    for (const Node* n = head_; n != nullptr; n = n->next_) {
      if (n->prev_ != walk.last) {
        problems.push_back("Node '" + n->name_ + "' has a broken prev link");
      }
      if (&n->graph() != this) problems.push_back("Node '" + n->name_ + "' names another graph");
      if (find_node(n->name_) != n) {
        problems.push_back("Node '" + n->name_ + "' is not indexed under its name");
      }
      if (&n->graph() == this) {
        std::size_t& pos = walk.position_by_id[id_of(n)];
        if (pos != lint_unseen) {
          problems.push_back("Node '" + n->name_ + "' appears twice in the node list");
          break;
        }
        pos = walk.count;
      }
      if (n->op_ == OpCode::placeholder && first_non_placeholder != nullptr) {
        problems.push_back("Placeholder '" + n->name_ + "' comes after non-placeholder node '" +
                           first_non_placeholder->name_ + "'");
      }
      if (n->op_ != OpCode::placeholder && first_non_placeholder == nullptr) {
        first_non_placeholder = n;
      }
      if (n->op_ == OpCode::output) walk.outputs.push_back(n);
      walk.last = n;
      ++walk.count;
    }
    return walk;
  }
  // Checks the graph's own links and counts against the walk, and that there is exactly one
  // output node, last and without users. Appends a message per violation. O(outputs + users).
  void lint_links_and_outputs(const LintWalk& walk, std::vector<std::string>& problems) const {
    if (walk.last != tail_) problems.push_back("The graph's last-node link is broken");
    if (last_placeholder_by_walk() != last_placeholder_) {
      problems.push_back("The graph's last-placeholder link is broken");
    }
    if (walk.count != size_ || index_.size() != size_) {
      problems.push_back("Graph counts " + std::to_string(size_) + " nodes, its list holds " +
                         std::to_string(walk.count) + " and its name index " +
                         std::to_string(index_.size()));
    }
    const std::vector<const Node*>& outputs = walk.outputs;
    if (outputs.empty()) {
      problems.push_back("Graph has no output node");
      return;
    }
    if (outputs.size() > 1) {
      std::string names;
      for (const Node* o : outputs) names += (names.empty() ? "'" : ", '") + o->name_ + "'";
      problems.push_back("Graph has " + std::to_string(outputs.size()) + " output nodes: " + names);
    }
    if (outputs.back() != tail_) {
      problems.push_back("Output node '" + outputs.back()->name_ +
                         "' is not the last node (followed by '" + outputs.back()->next_->name_ +
                         "')");
    }
    if (output_ != outputs.front()) {
      problems.push_back("Graph's output node link does not name '" + outputs.front()->name_ + "'");
    }
    for (const Node* o : outputs) {
      if (!o->users().empty()) problems.push_back("Output node '" + o->name_ + "' has users");
    }
  }

  // find_nodes for both constnesses: targets compare by their interned ids.
  [[nodiscard]] std::vector<Node*> find_nodes_impl(OpCode op,
                                                   std::optional<std::string_view> target) const {
    std::vector<Node*> out;
    std::uint32_t id = detail::IdTable::none;
    if (target) {
      const auto text = [this](std::uint32_t i) { return std::string_view(*target_table_[i]); };
      id = targets_.find(*target, target_hash(*target), text);
      if (id == detail::IdTable::none) return out;
    }
    for (Node* n = head_; n != nullptr; n = n->next_) {
      if (n->op_ == op && (!target || n->target_ == id)) out.push_back(n);
    }
    return out;
  }

  // find_node for both constnesses: the node named `name`, or nullptr.
  [[nodiscard]] Node* find_node_impl(std::string_view name) const noexcept {
    const std::uint32_t id = index_.find(name, name_of());
    return id == detail::NameIndex::no_id ? nullptr : node_by_id(id);
  }
  // The index's way from an id to a name.
  struct NameOf {
    const Graph* graph;
    std::string_view operator()(std::uint32_t id) const noexcept {
      return graph->node_by_id(id)->name();
    }
  };
  [[nodiscard]] NameOf name_of() const noexcept { return NameOf{this}; }
  // The index's way to re-read its entries when it grows: the node list, in order (every indexed
  // node is linked whenever the index grows).
  struct EachIndexed {
    const Graph* graph;
    template <class Visit>
    std::size_t operator()(Visit&& visit) const noexcept {
      std::size_t count = 0;
      for (const Node* n = graph->head_; n != nullptr; n = n->next_, ++count) {
        visit(graph->id_of(n), n->name());
      }
      return count;
    }
  };
  [[nodiscard]] EachIndexed each_indexed() const noexcept { return EachIndexed{this}; }

  // A fresh epoch for the nodes' scratch marks (detail::EdgeUpdate, move_node): a multiple of 16,
  // never 0. When the counter wraps (after 2^28 edits) every mark is cleared first, so no stale
  // mark can match.
  std::uint32_t next_mark_epoch() noexcept {
    mark_epoch_ += 16;
    if (mark_epoch_ == 0) {
      for (Node* n = head_; n != nullptr; n = n->next_) n->mark_ = 0;
      mark_epoch_ = 16;
    }
    return mark_epoch_;
  }

  // The namespace's view of live node names: the name index.
  static bool holds_name(const void* graph, std::string_view name) {
    return static_cast<const Graph*>(graph)->find_node(name) != nullptr;
  }
  static std::size_t count_names(const void* graph) noexcept {
    return static_cast<const Graph*>(graph)->index_.size();
  }

  bool anchors_insertion_point(const Node* node) const noexcept {
    if (insert_.anchor == node) return true;
    for (const InsertPoint& p : saved_points_) {
      if (p.anchor == node) return true;
    }
    return false;
  }

  void push_insert_point(InsertPoint point) {
    saved_points_.push_back(insert_);
    insert_ = point;
  }
  void pop_insert_point() noexcept {
    if (saved_points_.empty()) return;
    insert_ = saved_points_.back();
    saved_points_.pop_back();
  }

  // Links `node` before `next` (at the end when next is null). No-throw.
  void link_before(Node* node, Node* next) noexcept {
    ++version_;
    Node* prev = next ? next->prev_ : tail_;
    node->prev_ = prev;
    node->next_ = next;
    (prev ? prev->next_ : head_) = node;
    (next ? next->prev_ : tail_) = node;
    ++size_;
  }
  void unlink(Node* node) noexcept {
    ++version_;
    (node->prev_ ? node->prev_->next_ : head_) = node->next_;
    (node->next_ ? node->next_->prev_ : tail_) = node->prev_;
    node->prev_ = node->next_ = nullptr;
    --size_;
  }

  // The node a new node of kind `op` goes before (nullptr: at the end). Throws when the
  // insertion point does not allow it.
  Node* resolve_position(OpCode op, std::string_view name) const {
    if (op == OpCode::output) {
      if (output_ != nullptr) {
        throw runtime_error("Graph already has an output node '" + output_->name_ + "'");
      }
      return nullptr;
    }
    Node* next = nullptr;
    bool explicit_point = insert_.anchor != nullptr;
    if (!explicit_point) {
      if (op == OpCode::placeholder) {
        Node* last = last_placeholder();
        next = last ? last->next_ : head_;
      } else {
        next = output_;
      }
    } else {
      next = insert_.before ? insert_.anchor : insert_.anchor->next_;
    }
    Node* prev = next ? next->prev_ : tail_;
    if (op == OpCode::placeholder) {
      if (prev != nullptr && prev->op_ != OpCode::placeholder) {
        throw value_error("Cannot insert placeholder '" + std::string(name) +
                          "' after non-placeholder node '" + prev->name_ + "'");
      }
    } else {
      if (next != nullptr && next->op_ == OpCode::placeholder) {
        throw value_error("Cannot insert " + std::string(op_name(op)) + " node '" +
                          std::string(name) + "' before placeholder '" + next->name_ +
                          "': placeholders must come first");
      }
      if (prev != nullptr && prev->op_ == OpCode::output) {
        throw value_error("Cannot insert " + std::string(op_name(op)) + " node '" +
                          std::string(name) + "' after the output node");
      }
    }
    return next;
  }

  Node* last_placeholder() const noexcept { return last_placeholder_; }
  Node* last_placeholder_by_walk() const noexcept {  // for lint
    if (num_placeholders_ == 0) return nullptr;
    Node* n = head_;
    for (std::size_t i = 1; i < num_placeholders_; ++i) n = n->next_;
    return n;
  }

  Node* create_node_impl(OpCode op, std::string_view target, ArgumentList args, Kwargs kwargs,
                         std::string_view requested, const std::function<void(Node&)>* prepare,
                         Namespace::Proposal* taken = nullptr) {
    // Start loading the target's slot in the interned targets (a cache miss on a big graph where
    // the target is new, as a placeholder's is) while the name is chosen.
    const std::size_t hash = target_hash(target);
    targets_.prefetch(hash);
    const std::string candidate =
        requested.empty() ? default_name(op, target) : std::string(requested);
    Namespace::Proposal proposal = namespace_.propose(candidate);
    Node* next = resolve_position(op, proposal.name);
    detail::CompactString name(proposal.name);
    const std::uint32_t interned = intern(target, hash);
    arena_.reserve_slot();
    index_.reserve_more(1, name_of(), each_indexed());
    Node* raw = arena_.construct(op, interned);
    detail::EdgeUpdate edges;
    try {
      raw->name_.swap(name);
      edges.stage_arguments(raw, std::move(args), std::move(kwargs), "create");
      edges.finish_stage();
      namespace_.commit(proposal);
    } catch (...) {
      arena_.destroy(raw);
      throw;
    }
    // No-throw until prepare: store the arguments and the users of its inputs, index the name.
    edges.commit();
    index_.insert(id_of(raw), raw->name());
    if (prepare != nullptr) {
      try {
        (*prepare)(*raw);
      } catch (...) {
        drop_from_inputs(raw);
        index_.erase(id_of(raw), raw->name(), name_of());
        arena_.destroy(raw);
        namespace_.uncommit(proposal);
        throw;
      }
    }
    // No-throw from here on.
    link_before(raw, next);
    if (op == OpCode::output) output_ = raw;
    if (op == OpCode::placeholder) {
      ++num_placeholders_;
      // Placeholders form a prefix: the new one is the last when it follows the last one.
      if (raw->prev_ == last_placeholder_) last_placeholder_ = raw;
    }
    if (insert_.anchor != nullptr && !insert_.before) insert_.anchor = raw;
    if (taken != nullptr) *taken = std::move(proposal);
    return raw;
  }

  Node* head_ = nullptr;
  Node* tail_ = nullptr;
  std::size_t size_ = 0;
  std::size_t num_placeholders_ = 0;
  Node* last_placeholder_ = nullptr;  // where default placeholder insertion goes after; O(1)
  Node* output_ = nullptr;
  detail::NodeArena arena_;  // the nodes' storage
  detail::NameIndex index_;  // live nodes by name
  Namespace namespace_;
  // Interned targets: their text by index, and the index by text (looked up without allocating).
  std::vector<std::unique_ptr<const std::string>> target_table_;
  std::vector<const FunctionSchema*> schema_cache_;  // by interned target; see check_call_interned
  detail::IdTable targets_;  // their indexes by text (flat: see detail/flat_table.hpp)
  InsertPoint insert_;
  std::vector<InsertPoint> saved_points_;
  GraphObserver* observer_ = nullptr;
  bool schema_checks_ = true;
  std::uint32_t mark_epoch_ = 0;  // see next_mark_epoch
  std::uint64_t version_ = 0;     // see version()
};

inline InsertingGuard::~InsertingGuard() { graph_->pop_insert_point(); }

inline std::uint32_t Node::next_mark_epoch() noexcept { return graph().next_mark_epoch(); }

inline void Node::touch_graph() noexcept { ++graph().version_; }

inline std::string_view Node::target() const noexcept { return *graph().target_table_[target_]; }

inline void Node::check_schema(ArgumentView args, const Kwargs& kwargs, const char* verb) {
  Graph& g = graph();
  if (op_ == OpCode::call_function && g.schema_checks()) {
    g.check_call_interned(target_, args, kwargs, name(), verb);
  }
}

inline void Node::notify_replace(const Node& old_value, const Node& replacement,
                                 bool output_uses) const {
  if (GraphObserver* o = graph().observer()) {
    o->before_replace_uses(old_value, replacement, output_uses);
  }
}

inline void Node::reject_erased(const Node* n) const {
#if EPGRAPH_STALE_NODE_CHECKS
  if (graph().arena_.slot_state(n) == detail::NodeArena::SlotState::erased) {
    throw value_error("Argument node of node '" + name_ +
                      "' is an erased node (a Node* kept after Graph::erase_node)");
  }
#else
  (void)n;
#endif
}

inline void Node::set_args(ArgumentList args) {
  detail::EdgeUpdate edges;
  edges.stage_arguments(this, std::move(args), kwargs(), "set the arguments of");
  edges.finish_stage();
  edges.commit();
}

inline void Node::set_kwargs(Kwargs kwargs) {
  detail::EdgeUpdate edges;
  edges.stage_arguments(this, args().to_vector(), std::move(kwargs), "set the arguments of");
  edges.finish_stage();
  edges.commit();
}

inline void Node::replace_input_with(Node* old_input, Node* new_input) {
  if (new_input == nullptr) {
    throw value_error("Cannot replace an input of node '" + name_ + "' with a null node");
  }
  graph().check_not_erased(new_input, "use");
  if (&new_input->graph() != &graph()) {
    throw value_error("Replacement node '" + new_input->name_ + "' for an input of node '" + name_ +
                      "' belongs to another graph");
  }
  if (old_input == new_input) return;
  bool uses_old = false;
  auto find_old = [&](const Node* n) { uses_old = uses_old || n == old_input; };
  for (const Argument& a : args()) for_each_node(a, find_old);
  for (const auto& kv : kwargs()) for_each_node(kv.second, find_old);
  if (!uses_old) return;  // nothing to replace
  ArgumentList new_args;
  new_args.reserve(args_size_);
  for (const Argument& a : args()) new_args.push_back(replace_node_in(a, old_input, new_input));
  Kwargs new_kwargs;
  for (const auto& kv : kwargs()) {
    new_kwargs.emplace_back(kv.first, replace_node_in(kv.second, old_input, new_input));
  }
  detail::EdgeUpdate edges;
  edges.stage_replacement(this, std::move(new_args), std::move(new_kwargs), old_input, new_input);
  edges.finish_stage();
  edges.announce_replace(*old_input, *new_input);
  edges.commit();
}

inline std::vector<Node*> Node::replace_all_uses_with(
    Node* replacement, const std::function<bool(Node*)>& delete_user_cb) {
  if (replacement == nullptr) {
    throw value_error("Cannot replace uses of node '" + name_ + "' with a null node");
  }
  graph().check_not_erased(replacement, "use");
  if (&replacement->graph() != &graph()) {
    throw value_error("Replacement node '" + replacement->name_ + "' for node '" + name_ +
                      "' belongs to another graph");
  }
  if (replacement == this) return {};
  std::vector<Node*> changed;
  for (Node* user : users()) {
    if (!delete_user_cb || delete_user_cb(user)) changed.push_back(user);
  }
  for (Node* user : changed) {
    if (user == replacement) {
      throw value_error("Cannot replace uses of '" + name_ + "' with '" + replacement->name_ +
                        "': '" + replacement->name_ + "' uses '" + name_ +
                        "' itself; pass a delete_user_cb that skips it");
    }
  }
  detail::EdgeUpdate edges;
  edges.reserve(changed.size());
  for (Node* user : changed) {
    ArgumentList args;
    args.reserve(user->args_size_);
    for (const Argument& a : user->args()) args.push_back(replace_node_in(a, this, replacement));
    Kwargs kwargs;
    for (const auto& kv : user->kwargs()) {
      kwargs.emplace_back(kv.first, replace_node_in(kv.second, this, replacement));
    }
    edges.stage_replacement(user, std::move(args), std::move(kwargs), this, replacement);
  }
  edges.finish_stage();
  edges.announce_replace(*this, *replacement);
  edges.commit();
  return changed;
}

inline bool Node::is_impure(UnknownOperators unknown) const {
  switch (op_) {
    case OpCode::placeholder:
    case OpCode::output: return true;
    case OpCode::call_function: break;
    default: return false;
  }
  const int kind = detail::target_impurity(target());
  return detail::impure_kind(kind, unknown) ||
         (kind == detail::impure_if_wrapped_op_is && detail::wrapped_op_is_impure(args()));
}

inline void Node::prepend(Node* x) { graph().move_node(x, this, true); }

inline void Node::append(Node* x) { graph().move_node(x, this, false); }

/// Two get_attr nodes of one graph that name one target for different nested graphs (see
/// nested_graph_clashes): a graph torch cannot run as written, since its loader registers one
/// submodule per target and every node then calls the last one read.
struct NestedGraphClash {
  /// The first get_attr node carrying a nested graph under the target.
  const Node* first = nullptr;
  /// A later get_attr node carrying a different nested graph under the same target.
  const Node* second = nullptr;

  /// "get_attr nodes 'true_graph_0' and 'true_graph_0_1' both name target 'true_graph_0' for
  /// different nested graphs" (first, second, then the target). Throws std::bad_alloc only.
  /// O(length of the names).
  [[nodiscard]] std::string message() const {
    return "get_attr nodes '" + std::string(first->name()) + "' and '" +
           std::string(second->name()) + "' both name target '" + std::string(first->target()) +
           "' for different nested graphs";
  }
};

/// Every get_attr node of `graph` that carries a nested graph (its record, NodeMeta::serialized,
/// is not empty; see NestedGraphTargets) other than the one the first such get_attr node of the
/// same target carries, paired with that first node, in graph order; empty when every target
/// names one nested graph. get_attr nodes without a record are not compared (they read whatever
/// their target names, as in FX). torch.fx checks nothing of the kind: `GraphModule` holds one
/// submodule per name, and torch's loader (`register_module` in
/// torch/_export/serde/serialize.py, `deserialize_input` of `as_graph`) replaces an earlier graph
/// of the name by a later one, so such a program calls the wrong graph. epgraph::verify and the
/// JSON saver refuse it; Graph::node_copy / graph_copy never make it. Read-only. Throws
/// std::bad_alloc only. O(nodes + size of the records compared).
[[nodiscard]] inline std::vector<NestedGraphClash> nested_graph_clashes(const Graph& graph) {
  std::vector<NestedGraphClash> out;
  std::unordered_map<std::string_view, const Node*> first;  // target -> first get_attr node
  for (const Node& n : graph.nodes()) {
    if (n.op() != OpCode::get_attr || n.meta().serialized.empty()) continue;
    const auto it = first.emplace(n.target(), &n).first;
    if (it->second->meta().serialized != n.meta().serialized) out.push_back({it->second, &n});
  }
  return out;
}

}  // namespace epgraph

// Mutation and aliasing (written_inputs, AliasSets), which moves and sorts consult; it also
// defines Graph::memory_order_conflict_over/_in.
#include "alias.hpp"
