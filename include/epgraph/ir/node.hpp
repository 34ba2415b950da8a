// Node: one operation of a Graph, with torch.fx's op, target, args, kwargs, users and meta.
// SPDX-License-Identifier: BSD-3-Clause
//
// This header does not include graph.hpp (which includes it): the members that need the complete
// Graph (target(), set_args, replace_all_uses_with, is_impure, prepend, ...) are declared here and
// defined in graph.hpp. Include <epgraph/ir/graph.hpp> (or <epgraph/epgraph.hpp>) to call them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../detail/compact_string.hpp"
#include "../error.hpp"
#include "argument.hpp"
#include "tensor.hpp"
#include "value.hpp"

namespace epgraph {

class Graph;

/// What a node does; torch.fx's `Node.op`.
enum class OpCode : std::uint8_t {
  placeholder,
  get_attr,
  call_function,
  call_method,
  call_module,
  output,
};

/// What Node::is_impure and eliminate_dead_code assume of a `torch.ops.*` operator without a
/// registered schema (a custom op): `impure` (the default) keeps it, `pure` trusts that it has no
/// effect, as torch.fx does for a Python callable.
enum class UnknownOperators : std::uint8_t { impure, pure };

/// FX's spelling of an op code ("placeholder", "call_function", ...). O(1).
[[nodiscard]] inline std::string_view op_name(OpCode op) noexcept {
  switch (op) {
    case OpCode::placeholder: return "placeholder";
    case OpCode::get_attr: return "get_attr";
    case OpCode::call_function: return "call_function";
    case OpCode::call_method: return "call_method";
    case OpCode::call_module: return "call_module";
    case OpCode::output: return "output";
  }
  return "";
}

/// What FX keeps in `Node.meta` that epgraph models. Metadata is not graph structure: changing it
/// never affects users, names or order.
struct NodeMeta {
  /// `meta["val"]`: one tensor's metadata (a fake tensor in Python), a tuple of them, a SymInt,
  /// None, ... (see NodeValue); unset when the node has none.
  NodeValue val;
  /// `meta["requested_name"]`: the name a graph-edit helper was asked to use before the graph's
  /// namespace de-duplicated it (set by create_mutable_buffer / create_constant_placeholder).
  std::string requested_name;
  /// Every other metadata entry, verbatim and in order (`stack_trace`, `nn_module_stack`, ...).
  std::vector<std::pair<std::string, std::string>> other;
  /// How torch.export's serializer wrote this node, as a JSON object text kept by epgraph::json
  /// (argument names and union kinds, the output layout, optional fields present): what the graph
  /// does not model but a faithful save needs. Empty for nodes not loaded from a file. The core
  /// never reads it.
  std::string serialized;
};

namespace detail {

// Makes room for `extra` more elements with geometric growth, so that a run of single
// insertions stays amortized O(1) (reserve(size() + 1) would reallocate every time).
template <class Vector>
void reserve_more(Vector& v, std::size_t extra) {
  const std::size_t need = v.size() + extra;
  if (need > v.capacity()) v.reserve(std::max(need, v.capacity() * 2));
}

// The same for a hash container: afterwards `extra` insertions do not rehash.
template <class HashMap>
void reserve_more_hashed(HashMap& m, std::size_t extra) {
  const std::size_t need = m.size() + extra;
  if (static_cast<double>(need) > static_cast<double>(m.bucket_count()) * m.max_load_factor()) {
    m.reserve(std::max(need, m.size() * 2));
  }
}

// Declared only: tests define it to reach internals and break invariants on purpose.
struct test_access;
class NodeArena;        // detail/node_arena.hpp: constructs and destroys nodes in their slots
class EdgeUpdate;       // detail/edges.hpp: the one way args <-> users edges change
struct rewrite_access;  // subgraph_rewriter.hpp: builds and undoes replacements

// The key to a node's users list: Node's functions that write it take one, and only EdgeUpdate
// (and the tests that break invariants on purpose) can make one. So the users lists change in
// one place, even for Graph, which is Node's friend for everything else.
class users_key {
  friend class EdgeUpdate;
  friend struct test_access;
  users_key() noexcept {}  // user-provided: `users_key{}` is not an aggregate initialization
};

// Keeps the first occurrence of each pointer, in order. Small inputs are deduplicated by a
// quadratic scan, larger ones by sorting (pointer, position) pairs: O(n log n) with two
// allocations, no hashing.
inline void keep_first_occurrences(std::vector<const Node*>& v) {
  if (v.size() <= 16) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      bool seen = false;
      for (std::size_t j = 0; j < kept && !seen; ++j) seen = v[j] == v[i];
      if (!seen) v[kept++] = v[i];
    }
    v.resize(kept);
    return;
  }
  std::vector<std::pair<const Node*, std::size_t>> order(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) order[i] = {v[i], i};
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return std::less<const Node*>()(a.first, b.first) ||
           (a.first == b.first && a.second < b.second);
  });
  std::vector<bool> duplicate(v.size(), false);
  for (std::size_t i = 1; i < order.size(); ++i) {
    if (order[i].first == order[i - 1].first) duplicate[order[i].second] = true;
  }
  std::size_t kept = 0;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!duplicate[i]) v[kept++] = v[i];
  }
  v.resize(kept);
}

// Unique nodes referenced by args then kwargs, in first-occurrence order (FX's _input_nodes).
inline std::vector<const Node*> collect_input_nodes(ArgumentView args, const Kwargs& kwargs) {
  std::vector<const Node*> out;
  auto add = [&](const Node* n) { out.push_back(n); };
  for (const Argument& a : args) for_each_node(a, add);
  for (const auto& kv : kwargs) for_each_node(kv.second, add);
  keep_first_occurrences(out);
  return out;
}

}  // namespace detail

/// The users of a node, read-only (see ConstSpan).
using NodeSpan = ConstSpan<Node*>;
/// The users of a node reached through a const Node: read-only neighbours.
using ConstNodeSpan = ConstSpan<const Node*>;

namespace detail {
// Nodes live in chunks of `node_chunk_slots` slots that the graph's arena allocates (see
// detail/node_arena.hpp); a node finds its chunk, and so its graph, from its slot number. Saves a
// graph pointer per node and the allocator's per-allocation overhead.
inline constexpr std::size_t node_chunk_slots = 256;
struct NodeChunkHeader {
  Graph* graph;
  std::uint32_t index;  // position in the graph's chunk list
};
}  // namespace detail

/// A node of a Graph: torch.fx's `Node`. Nodes are created and owned by their Graph; a `Node*`
/// stays valid until the node is erased (Graph::erase_node) or its graph is destroyed. Nodes are
/// neither copyable nor movable.
///
/// Edges are kept in both directions: `args()`/`kwargs()` name the nodes this node reads, and
/// `users()` lists the nodes that read this one, in first-use order, each once. Only the setters
/// below change arguments, and they update `users()` of every affected node.
///
/// A node is compact (96 bytes on 64-bit targets, no separate allocation when it has at most two
/// positional arguments, at most one user, a name of at most 15 characters and no kwargs or
/// metadata), because exported LLMs have hundreds of thousands of them.
class Node {
 public:
  /// Only a Graph can make one: nodes are created through Graph::create_node and friends.
  class create_key {
    friend class Graph;
    friend class detail::NodeArena;
    create_key() noexcept {}
  };
  /// Used by Graph; not for direct use (a create_key cannot be made outside Graph).
  Node(create_key, OpCode op, std::uint32_t target, std::uint8_t slot) noexcept
      : target_(target), op_(op), slot_(slot) {}
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
  ~Node() {
    destroy_args();
    if (user_state_ == users_heap) std::unique_ptr<std::vector<Node*>> owned(users_.many);
  }

  /// The graph that owns this node. O(1).
  [[nodiscard]] Graph& graph() noexcept;
  /// The graph that owns this node, read-only (a const node leads to a const graph). O(1).
  [[nodiscard]] const Graph& graph() const noexcept;
  /// The unique name in its graph (FX `node.name`). Valid until the node is renamed or erased.
  [[nodiscard]] std::string_view name() const noexcept { return name_.view(); }
  /// FX `node.op`.
  [[nodiscard]] OpCode op() const noexcept { return op_; }
  /// FX `node.target`: the operator's qualified name for call_function
  /// (`torch.ops.aten.add.Tensor`), the placeholder's own name, the attribute path of get_attr...
  /// Valid while the graph lives (targets are interned by the graph). O(1).
  [[nodiscard]] std::string_view target() const noexcept;
  /// Positional arguments (FX `node.args`), as a view valid until they change. O(1).
  [[nodiscard]] ArgumentView args() const noexcept { return {args_data(), args_size_}; }
  /// Keyword arguments in order (FX `node.kwargs`).
  [[nodiscard]] const Kwargs& kwargs() const noexcept {
    return extra_ ? extra_->kwargs : empty_kwargs();
  }
  /// Nodes that use this node's value, in first-use order, each once (FX `node.users`), as a view
  /// valid until the users change. O(1).
  [[nodiscard]] NodeSpan users() noexcept {
    if (user_state_ == users_heap) return {users_.many->data(), users_.many->size()};
    return {&users_.one, user_state_};
  }
  /// The users, read-only: a const node (and so a `const Graph&`) hands out const neighbours
  /// only. O(1).
  [[nodiscard]] ConstNodeSpan users() const noexcept {
    if (user_state_ == users_heap) return {users_.many->data(), users_.many->size()};
    return {&users_.one, user_state_};
  }
  /// The previous node in graph order, or nullptr for the first (FX `node.prev`, minus the root).
  /// O(1).
  [[nodiscard]] Node* prev() noexcept { return prev_; }
  /// The previous node, read-only (a const node hands out const neighbours). O(1).
  [[nodiscard]] const Node* prev() const noexcept { return prev_; }
  /// The next node in graph order, or nullptr for the last (FX `node.next`, minus the root).
  /// O(1).
  [[nodiscard]] Node* next() noexcept { return next_; }
  /// The next node, read-only (a const node hands out const neighbours). O(1).
  [[nodiscard]] const Node* next() const noexcept { return next_; }
  /// Metadata, read-only (FX `node.meta`); an empty NodeMeta when never set. Never allocates,
  /// through a const or a non-const node alike: there is no writable overload, so reading cannot
  /// create storage by accident; write with mutable_meta(). O(1).
  [[nodiscard]] const NodeMeta& meta() const noexcept {
    return extra_ ? extra_->meta : empty_meta();
  }
  /// The same as meta() (kept from when meta() had a writable overload). O(1).
  [[nodiscard]] const NodeMeta& read_meta() const noexcept { return meta(); }
  /// Metadata, writable (FX `node.meta[...] = ...`). Creates the node's out-of-line storage on
  /// first use: may throw std::bad_alloc (nothing changes then). On a placeholder it also
  /// changes Graph::version() (the edits of edit.hpp index placeholders by
  /// `meta().requested_name`). O(1).
  [[nodiscard]] NodeMeta& mutable_meta() {
    NodeMeta& m = ensure_extra().meta;
    if (op_ == OpCode::placeholder) touch_graph();
    return m;
  }

  /// The unique nodes this node reads, args first then kwargs, in order of first appearance
  /// (FX `node.all_input_nodes`). Throws std::bad_alloc. O(size of args + kwargs).
  [[nodiscard]] std::vector<Node*> all_input_nodes() {
    std::vector<Node*> out;
    for (const Node* n : detail::collect_input_nodes(args(), kwargs())) {
      out.push_back(detail::writable_node(n));  // a writable node's graph is writable
    }
    return out;
  }
  /// all_input_nodes, read-only (a const node hands out const neighbours). Same contract.
  [[nodiscard]] std::vector<const Node*> all_input_nodes() const {
    return detail::collect_input_nodes(args(), kwargs());
  }

  /// Replaces the positional arguments (FX `node.args = ...`) and updates `users()` of nodes
  /// that stop or start being read. On the output node the arguments are the graph's results.
  /// Throws value_error when an argument node is null ("Null argument node given to node 'add'")
  /// or belongs to another graph ("Argument node 'x' of node 'add' belongs to another graph"),
  /// and, on a call_function node whose operator schema is registered, when the arguments do
  /// not bind to it (Graph::check_call: "Cannot set the arguments of node 'add' (...): ...").
  /// Strong guarantee. O(size of old and new arguments).
  /// Defined in graph.hpp, as are the other members that need the graph.
  void set_args(ArgumentList args);

  /// Replaces the keyword arguments (FX `node.kwargs = ...`); see set_args. Strong guarantee.
  /// O(size of old and new arguments).
  void set_kwargs(Kwargs kwargs);

  /// Replaces positional argument `index` (FX `node.update_arg`). Throws value_error
  /// "Argument index 3 out of range for node 'add' with 2 arguments". Strong guarantee.
  void update_arg(std::size_t index, Argument arg) {
    if (index >= args_size_) {
      throw value_error("Argument index " + std::to_string(index) + " out of range for node '" +
                        name_.str() + "' with " + std::to_string(args_size_) + " arguments");
    }
    ArgumentList copy = args().to_vector();
    copy[index] = std::move(arg);
    set_args(std::move(copy));
  }

  /// Sets keyword argument `key`, appending it when absent (FX `node.update_kwarg`). Strong
  /// guarantee.
  void update_kwarg(std::string_view key, Argument arg) {
    Kwargs copy = kwargs();
    bool found = false;
    for (auto& kv : copy) {
      if (kv.first == key) {
        kv.second = std::move(arg);
        found = true;
        break;
      }
    }
    if (!found) copy.emplace_back(std::string(key), std::move(arg));
    set_kwargs(std::move(copy));
  }

  /// Replaces every use of `old_input` in this node's arguments with `new_input` (FX
  /// `node.replace_input_with`), updates users, and tells the owning program (when this node is
  /// the output node, output specs naming `old_input` follow). Throws value_error when
  /// `new_input` is null or of another graph. Strong guarantee. O(size of arguments).
  void replace_input_with(const Node* old_input, Node* new_input);

  /// Replaces every use of this node by `replacement` in all users for which `delete_user_cb`
  /// returns true (all users when it is empty) and returns the users changed, in users() order
  /// (FX `node.replace_all_uses_with`). `add(x, x)` becomes `add(y, y)`. When the output node is
  /// among them, the owning program's output specs that named this node name `replacement`
  /// (torch's replace hook). Throws value_error when `replacement` is null or of another graph,
  /// or when `replacement` itself uses this node and would be changed ("Cannot replace uses of
  /// 'x' with 'relu': 'relu' uses 'x' itself; pass a delete_user_cb that skips it"). Strong
  /// guarantee. O(U * size of a user's arguments) for U users changed.
  std::vector<Node*> replace_all_uses_with(Node* replacement,
                                           const std::function<bool(Node*)>& delete_user_cb = {});

  /// Whether dead-code elimination must keep this node although nothing uses its value (FX
  /// `Node.is_impure()` with `impure_random=True`, torch/fx/node.py, which asks
  /// `torch._library.utils.is_impure`). True for:
  /// - placeholders and the output node;
  /// - a call_function whose target is one of FX's side-effectful functions
  ///   (`torch.fx.node._side_effectful_functions`: `operator.setitem`, `torch._assert`,
  ///   `torch.ops.aten._assert_scalar.default`, `torch.ops.aten.sym_constrain_range.default`,
  ///   `torch.ops.higher_order.call_torchbind`, profiler and autocast calls, ...), a random
  ///   operator (tag `nondeterministic_seeded`: `torch.ops.aten.rand.default`,
  ///   `torch.ops.aten.dropout.default`, ..., and `torch.rand`-style functions), or an operator
  ///   whose schema, looked up in global_registry(), is mutable (`Tensor(a!)`,
  ///   FunctionSchema::is_mutable);
  /// - `torch.ops.higher_order.auto_functionalized` / `auto_functionalized_v2` when the operator it
  ///   wraps (its first argument) is side-effectful, as in FX;
  /// - beyond FX (conservative: these nodes exist for their effect): any
  ///   `torch.ops.aten._assert*` and `torch.ops.aten.sym_constrain_range*` target (FX misses
  ///   `_assert_async.default`), `torch.ops.higher_order.with_effects`, and an operator whose
  ///   registered schema returns nothing (`-> ()`, e.g. `aten::_print`).
  ///
  /// - with `unknown` == UnknownOperators::impure (the default), an operator target
  ///   `torch.ops.<ns>.<op>.<overload>` (not `torch.ops.higher_order.*`) without a schema in
  ///   global_registry(). A .pt2 never carries the schemas of custom operators, and one declared
  ///   with `mutates_args`, or an out-variant, exists for its effect. torch.fx keeps these because
  ///   it has the live schema; assuming them pure, as epgraph did, erased such a node and left the
  ///   buffer it writes unchanged (pytorch/pytorch PR #105875, #145697). Register the op's schema
  ///   (global_registry().add) to have it judged by its schema, or pass UnknownOperators::pure.
  ///
  /// Everything else is pure: get_attr, call_method, call_module (FX asks the submodule's
  /// `_is_impure` attribute; epgraph has no modules), a call_function whose registered schema is
  /// neither mutable nor returns nothing, and Python callables not listed above (`operator.add`,
  /// `operator.getitem`, `torch.sym_max`: FX treats unknown Python callables as pure too).
  /// global_registry() holds the aten/prims schemas of torch 2.13 whatever the program includes.
  /// Throws value_error when a lazily registered schema text does not parse.
  /// O(log registry + length of target).
  [[nodiscard]] bool is_impure(UnknownOperators unknown = UnknownOperators::impure) const;

  /// Moves node `x` (of the same graph) right before this node (FX `node.prepend(x)`,
  /// torch/fx/node.py). Does nothing when `x` is this node or already right before it. Unlike FX,
  /// refuses a move that would break the graph, with value_error "Cannot move node 'x' before
  /// 'add': <reason>", where the reason is one of
  /// - "'x' belongs to another graph";
  /// - "the output node must stay last" (x is the output node);
  /// - "placeholder 'x' would come after non-placeholder node 'relu'" /
  ///   "call_function node 'x' would come before placeholder 'y' (placeholders come first)";
  /// - "'x' would come before its input 'relu'" / "'x' would come after its user 'sub'";
  /// - beyond data edges, memory (epgraph::memory_order_conflict, ir/alias.hpp): x would pass a
  ///   node that writes in place a tensor x reads (directly or through a view or alias chain),
  ///   or reads or writes one x writes: "'add_' writes 'clone' in place and 'mul' reads it
  ///   through 'view'" (a reader moved across a write would see another value). Writes are the
  ///   known ones (schema `(a!)` annotations, `operator.setitem`, in-place names `op_`): an
  ///   operator without a schema and without an in-place name is not taken to write here
  ///   (register its schema to have its writes respected);
  /// and value_error "Cannot move a null node before 'add'". Nothing moves then. Anchors of
  /// insertion points stay what they are: an insertion point relative to `x` moves with `x`.
  /// Strong guarantee. O(inputs of x + users of x + d), d the number of nodes between the old
  /// and the new position of `x` (FX keeps no positions: the order checks walk that distance),
  /// plus a registry lookup per node passed, plus O(nodes + edges) to build the graph's alias
  /// sets when x or a node it passes writes something.
  void prepend(Node* x);

  /// Moves node `x` (of the same graph) right after this node (FX `node.append(x)`, the same as
  /// `node.next.prepend(x)`, torch/fx/node.py). Does nothing when `x` is this node or already
  /// right after it. Refuses the moves prepend refuses, with "Cannot move node 'x' after 'add':
  /// <reason>", and also any move after the output node ("nothing may follow the output node").
  /// Strong guarantee. O(inputs of x + users of x + d) as for prepend.
  void append(Node* x);

 private:
  friend class Graph;
  friend class detail::NodeArena;
  friend class detail::EdgeUpdate;
  friend struct detail::test_access;  // lets tests corrupt a graph to exercise lint()

  struct Extra {
    Kwargs kwargs;
    NodeMeta meta;
  };
  using ArgumentBox = std::unique_ptr<std::vector<Argument>>;

  static constexpr std::uint32_t inline_args = 2;
  static constexpr std::uint8_t users_heap = 2;  // user_state_: 0 or 1 inline users, or heap

  static const Kwargs& empty_kwargs() noexcept {
    static const Kwargs empty;
    return empty;
  }
  static const NodeMeta& empty_meta() noexcept {
    static const NodeMeta empty;
    return empty;
  }
  Extra& ensure_extra() {
    if (!extra_) extra_ = std::make_unique<Extra>();
    return *extra_;
  }

  // --- positional argument storage: inline when there are at most two, else a boxed vector.
  [[nodiscard]] const Argument* args_data() const noexcept {
    return args_size_ <= inline_args ? args_.inline_ : args_.heap->data();
  }
  [[nodiscard]] Argument* args_data() noexcept {
    return args_size_ <= inline_args ? args_.inline_ : args_.heap->data();
  }
  void destroy_args() noexcept {
    if (args_size_ <= inline_args) {
      std::destroy_n(args_.inline_, args_size_);
    } else {
      ArgumentBox owned(args_.heap);
    }
    args_size_ = 0;
  }
  // Phase 1 of storing `count` arguments: the box they need, if any. May throw std::bad_alloc.
  [[nodiscard]] ArgumentBox prepare_args(std::size_t count) const {
    if (count > UINT32_MAX) throw value_error("Too many arguments for node '" + name_.str() + "'");
    if (count > inline_args && args_size_ <= inline_args) {
      return std::make_unique<std::vector<Argument>>();
    }
    return nullptr;
  }
  // Phase 2: stores `args` (a box from prepare_args for the same count); the graph's version is
  // the caller's business (detail::EdgeUpdate::commit). No-throw.
  void commit_args(ArgumentList&& args, ArgumentBox box) noexcept {
    const std::size_t count = args.size();
    if (count <= inline_args) {
      destroy_args();
      std::uninitialized_move(args.begin(), args.end(), args_.inline_);
    } else if (args_size_ > inline_args) {
      *args_.heap = std::move(args);
    } else {
      destroy_args();
      *box = std::move(args);
      args_.heap = box.release();
    }
    args_size_ = static_cast<std::uint32_t>(count);
  }

  // --- users storage: one inline user, or a boxed vector once a second user came.
  // Makes room for `extra` more users; the representation may change but users() does not.
  // May throw std::bad_alloc; changes nothing observable. The users-list writers below take a
  // detail::users_key: only detail::EdgeUpdate writes users lists.
  void reserve_users(std::size_t extra, detail::users_key) {
    if (user_state_ == users_heap) {
      detail::reserve_more(*users_.many, extra);
    } else if (user_state_ + extra > 1) {
      auto box = std::make_unique<std::vector<Node*>>();
      box->reserve(std::max<std::size_t>(user_state_ + extra, 4));
      if (user_state_ == 1) box->push_back(users_.one);
      users_.many = box.release();
      user_state_ = users_heap;
    }
  }
  // Appends a user; room must have been reserved by reserve_users. No-throw.
  void push_user(Node* user, detail::users_key) noexcept {
    if (user_state_ == users_heap) {
      users_.many->push_back(user);  // within capacity: does not allocate
    } else {
      users_.one = user;  // reserve_users made a second user go to the heap
      user_state_ = 1;
    }
  }
  void remove_user(const Node* user, detail::users_key) noexcept {
    if (user_state_ == users_heap) {
      auto& v = *users_.many;
      auto it = std::find(v.begin(), v.end(), user);
      if (it != v.end()) v.erase(it);
    } else if (user_state_ == 1 && users_.one == user) {
      users_.one = nullptr;
      user_state_ = 0;
    }
  }

  // Removes every user for which `pred(user)` holds, keeping the order of the others. No-throw
  // when `pred` is.
  template <class Pred>
  void remove_users_if(Pred&& pred, detail::users_key) noexcept {
    if (user_state_ == users_heap) {
      auto& v = *users_.many;
      v.erase(std::remove_if(v.begin(), v.end(), pred), v.end());
    } else if (user_state_ == 1 && pred(users_.one)) {
      users_.one = nullptr;
      user_state_ = 0;
    }
  }

  // The header of the chunk this node lives in. Defined below the class.
  [[nodiscard]] const detail::NodeChunkHeader& chunk_header() const noexcept;

  void check_argument_nodes(ArgumentView args, const Kwargs& kwargs) const {
    const Graph* own = &graph();
    auto check = [&](const Node* n) {
      if (n == nullptr) {
        throw value_error("Null argument node given to node '" + name_.str() + "'");
      }
      reject_erased(n);
      if (&n->graph() != own) {
        throw value_error("Argument node '" + n->name_.str() + "' of node '" + name_.str() +
                          "' belongs to another graph");
      }
    };
    for (const Argument& a : args) for_each_node(a, check);
    for (const auto& kv : kwargs) for_each_node(kv.second, check);
  }

  // With EPGRAPH_STALE_NODE_CHECKS, throws value_error when argument node `n` is an erased node
  // of this graph (see detail/stale_nodes.hpp). Defined in graph.hpp.
  void reject_erased(const Node* n) const;

  // Refuses arguments that do not bind to this call_function node's schema when the graph checks
  // schemas (Graph::check_call); `verb` is the message's ("create", "set the arguments of").
  // Defined in graph.hpp.
  void check_schema(ArgumentView args, const Kwargs& kwargs, const char* verb);

  // Tells the owning graph's observer (the ExportedProgram), if any, that uses of `old_value`
  // move to `replacement` (`output_uses`: the output node is among the users that change). May
  // throw; defined in graph.hpp.
  void notify_replace(const Node& old_value, const Node& replacement, bool output_uses) const;

  // A fresh mark epoch of the graph (a multiple of 16, never 0). Defined in graph.hpp.
  std::uint32_t next_mark_epoch() noexcept;

  // Changes the owning graph's version() (see Graph::version). Defined in graph.hpp.
  void touch_graph() noexcept;

  // 96 bytes on LP64: 3 pointers, 32 bytes of inline arguments, 8 of users, 16 of name, 16 more.
  Node* prev_ = nullptr;
  Node* next_ = nullptr;
  std::unique_ptr<Extra> extra_;  // kwargs and metadata; null when both are empty
  union ArgStorage {
    ArgStorage() noexcept : heap(nullptr) {}
    ~ArgStorage() {}
    std::vector<Argument>* heap;  // owned; when args_size_ > inline_args
    Argument inline_[inline_args];
  } args_;
  union UserStorage {
    Node* one;
    std::vector<Node*>* many;  // owned; when user_state_ == users_heap
  } users_{nullptr};
  detail::CompactString name_;
  std::uint32_t args_size_ = 0;
  std::uint32_t target_;    // index into the graph's interned targets
  std::uint32_t mark_ = 0;  // scratch for EdgeUpdate and Graph (epoch | flags); not observable
  OpCode op_;
  std::uint8_t slot_;  // position in its chunk (see detail::NodeChunkHeader)
  std::uint8_t user_state_ = 0;
};

namespace detail {
// Where a chunk's slots start, after its header (detail::NodeChunk checks it).
inline constexpr std::size_t node_chunk_storage_offset =
    (sizeof(NodeChunkHeader) + alignof(Node) - 1) / alignof(Node) * alignof(Node);
}  // namespace detail

inline const detail::NodeChunkHeader& Node::chunk_header() const noexcept {
  const unsigned char* base = reinterpret_cast<const unsigned char*>(this) -
                              std::size_t(slot_) * sizeof(Node) - detail::node_chunk_storage_offset;
  return *reinterpret_cast<const detail::NodeChunkHeader*>(base);
}

inline Graph& Node::graph() noexcept { return *chunk_header().graph; }
inline const Graph& Node::graph() const noexcept { return *chunk_header().graph; }

}  // namespace epgraph
