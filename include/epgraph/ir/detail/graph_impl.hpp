// The bodies of Graph's member functions (declared and documented in ir/graph.hpp) and of the
// Node members that need a complete Graph. Included at the end of ir/graph.hpp; not an API.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include "../../detail/compiled_mode.hpp"
#include "../graph.hpp"

namespace epgraph {

struct Graph::CloneMap {
  const Graph* source;
  std::vector<Node*> by_id;
  [[nodiscard]] Node* find(const Node* n) const noexcept {
    return &n->graph() == source ? by_id[source->id_of(n)] : nullptr;
  }
};

struct Graph::LintWalk {
  // Position in the node list by node id, or lint_unseen (a vector, not a hash map: the list
  // is mostly in memory order, so this stays cache friendly on big graphs).
  std::vector<std::size_t> position_by_id;
  std::size_t count = 0;       // nodes walked
  const Node* last = nullptr;  // the last node walked
  std::vector<const Node*> outputs;
};

struct Graph::NameOf {
  const Graph* graph;
  std::string_view operator()(std::uint32_t id) const noexcept {
    return graph->node_by_id(id)->name();
  }
};

struct Graph::EachIndexed {
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

inline auto Graph::name_of() const noexcept -> NameOf { return NameOf{this}; }

inline auto Graph::each_indexed() const noexcept -> EachIndexed { return EachIndexed{this}; }

template <class F>
inline Argument Graph::map_nodes(const Argument& arg, const F& f) {
  if (const Node* n = arg.node()) return f(n);
  if (const ArgumentList* l = arg.list()) {
    ArgumentList out;
    out.reserve(l->size());
    for (const Argument& a : *l) out.push_back(map_nodes(a, f));
    return Argument(std::move(out));
  }
  return arg;
}

// node_copy; when `taken` is set, it receives the namespace step (for uncreate); `given`: the
// caller's targets for nested graphs, or nullptr. Strong.
template <class Transform>
inline Node* Graph::node_copy_impl(const Node& node, const Transform& transform,
                                   Namespace::Proposal* taken, const NestedGraphTargets* given) {
  auto map = [&](const Argument& a) -> Argument {
    if constexpr (std::is_same_v<Transform, std::function<Argument(const Node*)>>) {
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

inline void Graph::check_member(const Node* node, const char* what) const {
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
inline void Graph::check_not_erased(const Node* node, const char* what) const {
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

// check_call for an interned target, with the schema looked up once per target and graph
// (schemas are never removed from the registry; an unregistered operator is looked up again
// each time, so a schema registered later is seen). Growing the cache is not observable.
inline void Graph::check_call_interned(std::uint32_t t, ArgumentView args, const Kwargs& kwargs,
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

// Starts loading what creating a placeholder named `name` (whose target is its name) looks
// up in big tables: its slot in the name index and in the interned targets. A hint for
// edit.hpp, which has other lookups to overlap with these cache misses. No-throw; changes
// nothing.
inline void Graph::prefetch_placeholder_lookups(std::string_view name) const noexcept {
  index_.prefetch_slot(name);
  targets_.prefetch(target_hash(name));
}

inline std::uint32_t Graph::intern(std::string_view s, std::size_t h) {
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

inline Node* Graph::find_node_impl(std::string_view name) const noexcept {
  const std::uint32_t id = index_.find(name, name_of());
  return id == detail::NameIndex::no_id ? nullptr : node_by_id(id);
}

// A fresh epoch for the nodes' scratch marks (detail::EdgeUpdate, move_node): a multiple of 16,
// never 0. When the counter wraps (after 2^28 edits) every mark is cleared first, so no stale
// mark can match.
inline std::uint32_t Graph::next_mark_epoch() noexcept {
  mark_epoch_ += 16;
  if (mark_epoch_ == 0) {
    for (Node* n = head_; n != nullptr; n = n->next_) n->mark_ = 0;
    mark_epoch_ = 16;
  }
  return mark_epoch_;
}

inline bool Graph::anchors_insertion_point(const Node* node) const noexcept {
  if (insert_.anchor == node) return true;
  for (const InsertPoint& p : saved_points_) {
    if (p.anchor == node) return true;
  }
  return false;
}

inline void Graph::push_insert_point(InsertPoint point) {
  saved_points_.push_back(insert_);
  insert_ = point;
}

inline void Graph::pop_insert_point() noexcept {
  if (saved_points_.empty()) return;
  insert_ = saved_points_.back();
  saved_points_.pop_back();
}

inline void Graph::link_before(Node* node, Node* next) noexcept {
  ++version_;
  Node* prev = next ? next->prev_ : tail_;
  node->prev_ = prev;
  node->next_ = next;
  (prev ? prev->next_ : head_) = node;
  (next ? next->prev_ : tail_) = node;
  ++size_;
}

inline void Graph::unlink(Node* node) noexcept {
  ++version_;
  (node->prev_ ? node->prev_->next_ : head_) = node->next_;
  (node->next_ ? node->next_->prev_ : tail_) = node->prev_;
  node->prev_ = node->next_ = nullptr;
  --size_;
}

inline auto Graph::nodes() const noexcept -> range<const_iterator> {
  return {const_iterator(head_), const_iterator()};
}

inline auto Graph::placeholders() noexcept -> range<iterator> {
  return {iterator(head_, true), iterator()};
}

inline auto Graph::placeholders() const noexcept -> range<const_iterator> {
  return {const_iterator(head_, true), const_iterator()};
}

inline const Node* Graph::find_node(std::string_view name) const noexcept {
  return find_node_impl(name);
}

inline std::vector<Node*> Graph::find_nodes(OpCode op, std::optional<std::string_view> target) {
  return find_nodes_impl(op, target);
}

inline std::string Graph::propose_name(std::string_view candidate) const {
  return namespace_.propose(candidate).name;
}

inline Node* Graph::create_node(OpCode op, std::string_view target, ArgumentList args,
                                Kwargs kwargs, std::string_view name) {
  return create_node_impl(op, target, std::move(args), std::move(kwargs), name, nullptr);
}

inline Node* Graph::get_attr(std::string_view qualified_name, std::string_view name) {
  return create_node(OpCode::get_attr, qualified_name, {}, {}, name);
}

inline Node* Graph::call_function(std::string_view target, ArgumentList args, Kwargs kwargs,
                                  std::string_view name) {
  return create_node(OpCode::call_function, target, std::move(args), std::move(kwargs), name);
}

inline Node* Graph::call_method(std::string_view method, ArgumentList args, Kwargs kwargs,
                                std::string_view name) {
  return create_node(OpCode::call_method, method, std::move(args), std::move(kwargs), name);
}

inline Node* Graph::call_module(std::string_view module, ArgumentList args, Kwargs kwargs,
                                std::string_view name) {
  return create_node(OpCode::call_module, module, std::move(args), std::move(kwargs), name);
}

inline Node* Graph::output(ArgumentList results) {
  return create_node(OpCode::output, "output", {Argument(std::move(results))});
}

inline Node* Graph::node_copy(const Node& node,
                              const std::function<Argument(const Node*)>& arg_transform) {
  return node_copy_impl(node, arg_transform, nullptr);
}

inline Node* Graph::node_copy(const Node& node,
                              const std::function<Argument(const Node*)>& arg_transform,
                              const NestedGraphTargets& nested_targets) {
  return node_copy_impl(node, arg_transform, nullptr, &nested_targets);
}

inline Argument Graph::graph_copy(const Graph& g,
                                  std::unordered_map<const Node*, Node*>& value_remap) {
  return graph_copy_impl(g, value_remap, nullptr);
}

inline Argument Graph::graph_copy(const Graph& g,
                                  std::unordered_map<const Node*, Node*>& value_remap,
                                  const NestedGraphTargets& nested_targets) {
  return graph_copy_impl(g, value_remap, &nested_targets);
}

inline std::size_t Graph::target_hash(std::string_view s) noexcept {
  return std::hash<std::string_view>()(s);
}

inline std::uint32_t Graph::id_of(const Node* node) noexcept {
  return detail::NodeArena::id_of(node);
}

inline bool Graph::holds_name(const void* graph, std::string_view name) {
  return static_cast<const Graph*>(graph)->find_node(name) != nullptr;
}

inline std::size_t Graph::count_names(const void* graph) noexcept {
  return static_cast<const Graph*>(graph)->index_.size();
}

inline InsertingGuard::~InsertingGuard() { graph_->pop_insert_point(); }

inline std::uint32_t Node::next_mark_epoch() noexcept { return graph().next_mark_epoch(); }

inline void Node::touch_graph() noexcept { ++graph().version_; }

inline std::string_view Node::target() const noexcept { return *graph().target_table_[target_]; }

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

inline void Node::prepend(Node* x) { graph().move_node(x, this, true); }

inline void Node::append(Node* x) { graph().move_node(x, this, false); }

// Compiled mode (see detail/compiled_mode.hpp): the larger members are compiled once in the
// library (src/compiled.cpp); header-only they come here, inline.
#if EPGRAPH_DETAIL_CORE_DEFINITIONS

EPGRAPH_DETAIL_CORE_INLINE Graph::~Graph() {
  std::allocator<Node> alloc;
  for (Node* n = head_; n != nullptr;) {
    Node* next = n->next_;
    std::allocator_traits<std::allocator<Node>>::destroy(alloc, n);
    n = next;
  }
}

EPGRAPH_DETAIL_CORE_INLINE std::vector<const Node*> Graph::find_nodes(
    OpCode op, std::optional<std::string_view> target) const {
  std::vector<Node*> found = find_nodes_impl(op, target);
  return std::vector<const Node*>(found.begin(), found.end());
}

EPGRAPH_DETAIL_CORE_INLINE Node* Graph::writable(const Node* node) {
  if (node == nullptr) return nullptr;
  if (&node->graph() != this) {
    throw value_error("Node '" + std::string(node->name()) +
                      "' does not belong to this graph (cannot make it writable)");
  }
  return detail::writable_node(node);
}

EPGRAPH_DETAIL_CORE_INLINE bool Graph::contains(const Node* node) const {
  if (node == nullptr) return false;
#if EPGRAPH_STALE_NODE_CHECKS
  if (arena_.slot_state(node) != detail::NodeArena::SlotState::live) return false;
#endif
  return &node->graph() == this && find_node(node->name()) == node;
}

EPGRAPH_DETAIL_CORE_INLINE std::string Graph::default_name(OpCode op, std::string_view target) {
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

EPGRAPH_DETAIL_CORE_INLINE Node* Graph::create_node(OpCode op, std::string_view target,
                                                    ArgumentList args, Kwargs kwargs,
                                                    std::string_view name,
                                                    const std::function<void(Node&)>& prepare) {
  return create_node_impl(op, target, std::move(args), std::move(kwargs), name,
                          prepare ? &prepare : nullptr);
}

EPGRAPH_DETAIL_CORE_INLINE void Graph::erase_node(Node* node) {
  check_member(node, "erase");
  const NodeSpan node_users = node->users();
  if (!node_users.empty()) {
    std::string users = "{";
    for (std::size_t i = 0; i < node_users.size(); ++i) {
      users += (i ? ", " : "") + node_users[i]->name_ + ": None";
    }
    users += "}";
    throw runtime_error("Tried to erase Node " + node->name_ + " but it still had " +
                        std::to_string(node_users.size()) + " users in the graph: " + users + "!");
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

EPGRAPH_DETAIL_CORE_INLINE std::string_view Graph::rename_node(Node* node,
                                                               std::string_view candidate) {
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

EPGRAPH_DETAIL_CORE_INLINE InsertingGuard Graph::inserting_before(Node* node) {
  check_member(node, "insert before");
  push_insert_point({node, true});
  return InsertingGuard(this);
}

EPGRAPH_DETAIL_CORE_INLINE InsertingGuard Graph::inserting_after(Node* node) {
  check_member(node, "insert after");
  push_insert_point({node, false});
  return InsertingGuard(this);
}

EPGRAPH_DETAIL_CORE_INLINE void Graph::lint() const {
  std::vector<std::string> problems;
  const LintWalk walk = lint_node_list(problems);
  lint_links_and_outputs(walk, problems);
  auto position_of = [&](const Node* m) {
    return &m->graph() == this ? walk.position_by_id[id_of(m)] : lint_unseen;
  };
  detail::lint_edges(head_, position_of, lint_unseen, problems);
  if (!problems.empty()) throw lint_error(std::move(problems));
}

EPGRAPH_DETAIL_CORE_INLINE std::unique_ptr<Graph> Graph::clone() const {
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
        throw runtime_error("Cannot clone graph: node '" + n->name_ + "' lists user '" + u->name_ +
                            "' that is not in this graph");
      }
      return cu;
    });
  }
  edges.finish_stage();
  edges.commit();
  return copy;
}

EPGRAPH_DETAIL_CORE_INLINE bool Graph::eliminate_dead_code(
    const std::function<bool(const Node&)>& is_impure, UnknownOperators unknown) {
  const std::size_t slots = arena_.slot_count();
  std::vector<bool> dead(slots, false);                         // by node id
  std::vector<bool> touched(slots, false);                      // inputs of dead nodes, by node id
  std::vector<signed char> impurity(target_table_.size(), -1);  // by interned target
  std::vector<Node*> doomed;
  std::vector<Node*> losing_users;  // inputs of dead nodes (some dead themselves), each once
  std::size_t name_bytes = 0;       // of the dead nodes' names
  // Upper bounds: pages never written are never touched, and no growth copies 8 MB at 1M nodes.
  doomed.reserve(size_);
  losing_users.reserve(size_);
  auto note = [&](const Node* input) {
    const std::uint32_t id = id_of(input);
    if (!touched[id]) {
      touched[id] = true;
      losing_users.push_back(detail::writable_node(input));
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
    if (!dead[id_of(input)]) {
      detail::EdgeUpdate::drop_dead_users(input, [&](const Node* u) { return dead[id_of(u)]; });
    }
  }
  for (Node* n : doomed) {  // users before the nodes they use
    unlink(n);
    index_.erase(id_of(n), n->name(), name_of());
    arena_.destroy(n);
  }
  return true;
}

EPGRAPH_DETAIL_CORE_INLINE void Graph::insert_result(std::size_t position, Node* value) {
  check_member(value, "return");
  Node* out = output_;
  if (out == nullptr) throw runtime_error("Graph has no output node");
  const ArgumentList* list = out->args_size_ == 0 ? nullptr : out->args()[0].list();
  if (list == nullptr) {
    throw runtime_error("Output node '" + out->name_.str() + "' does not return a list of results");
  }
  if (value == out) throw value_error("The output node cannot be its own result");
  if (position > list->size()) {
    throw value_error("Result position " + std::to_string(position) +
                      " out of range for output node '" + out->name_.str() + "' with " +
                      std::to_string(list->size()) + " results");
  }
  detail::EdgeUpdate::insert_result(out, position, value);  // strong
}

EPGRAPH_DETAIL_CORE_INLINE void Graph::check_call(std::string_view target, ArgumentView args,
                                                  const Kwargs& kwargs, std::string_view node_name,
                                                  const char* verb) const {
  const FunctionSchema* s = global_registry().find_target(target);
  if (s != nullptr) check_bound(*s, target, args, kwargs, node_name, verb);
}

EPGRAPH_DETAIL_CORE_INLINE Argument Graph::remap_argument(const Argument& arg, const CloneMap& map,
                                                          const Node* user) {
  if (const Node* n = arg.node()) {
    Node* copy = map.find(n);
    if (copy == nullptr) {
      throw runtime_error("Cannot clone graph: node '" + user->name_ + "' uses node '" + n->name_ +
                          "' that does not come before it");
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

EPGRAPH_DETAIL_CORE_INLINE Argument
Graph::graph_copy_impl(const Graph& g, std::unordered_map<const Node*, Node*>& value_remap,
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
  auto lookup = [&](const Node* input) -> Argument {
    auto it = value_remap.find(input);
    if (it == value_remap.end()) {
      throw runtime_error("Cannot copy node '" + current->name_ + "': its input '" + input->name_ +
                          "' has no copy");
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

EPGRAPH_DETAIL_CORE_INLINE std::string_view Graph::nested_record(const Node& n) noexcept {
  if (n.op_ != OpCode::get_attr) return {};
  return n.meta().serialized;
}

EPGRAPH_DETAIL_CORE_INLINE const Node* Graph::nested_clash(std::string_view target,
                                                           std::string_view record,
                                                           bool strict) const {
  for (const Node* n : find_nodes_impl(OpCode::get_attr, target)) {
    const std::string_view other = nested_record(*n);
    if (other != record && (strict || !other.empty())) return n;
  }
  return nullptr;
}

EPGRAPH_DETAIL_CORE_INLINE bool Graph::is_identifier(std::string_view s) noexcept {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  });
}

// The target the copy of `node` gets here (see node_copy): its own, the caller's (`given`),
// or a fresh one for a nested graph this graph holds another graph under. Strong (reads only).
EPGRAPH_DETAIL_CORE_INLINE std::string Graph::copy_target(const Node& node,
                                                          const NestedGraphTargets* given) const {
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

// Undoes the creation of `node` (no users, not the output node) whose name was taken by
// `taken`, the last namespace step not yet undone: the name is given back. No-throw.
EPGRAPH_DETAIL_CORE_INLINE void Graph::uncreate(Node* node, Namespace::Proposal& taken) noexcept {
  detail::EdgeUpdate::leave_inputs(node);
  if (node->op_ == OpCode::placeholder) {
    if (node == last_placeholder_) last_placeholder_ = node->prev_;
    --num_placeholders_;
  }
  unlink(node);
  index_.erase(id_of(node), node->name(), name_of());
  arena_.destroy(node);
  namespace_.uncommit(taken);
}

EPGRAPH_DETAIL_CORE_INLINE void Graph::move_node(Node* x, Node* anchor, bool before) {
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
      fail("placeholder '" + x->name_ + "' would come after non-placeholder node '" + prev->name_ +
           "'");
    }
  } else if (next != nullptr && next->op_ == OpCode::placeholder) {
    fail(std::string(op_name(x->op_)) + " node '" + x->name_ + "' would come before placeholder '" +
         next->name_ + "' (placeholders come first)");
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
    auto mark = [epoch](const Node* n) { detail::writable_node(n)->mark_ = epoch | 1u; };
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

// Relinks the node list in `order` (every node of the graph, once) and bumps version().
// No-throw. O(nodes).
EPGRAPH_DETAIL_CORE_INLINE void Graph::relink_in_order(const std::vector<Node*>& order) noexcept {
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

EPGRAPH_DETAIL_CORE_INLINE void Graph::check_bound(const FunctionSchema& s, std::string_view target,
                                                   ArgumentView args, const Kwargs& kwargs,
                                                   std::string_view node_name, const char* verb) {
  const std::string why = detail::bind_call<Node>(s, args, kwargs, nullptr);
  if (!why.empty()) {
    throw value_error("Cannot " + std::string(verb) + " node '" + std::string(node_name) + "' (" +
                      std::string(target) + "): " + why + "; schema: " + s.str());
  }
}

// Walks the node list once: links, graph back pointers, name index, repeats, placement of
// placeholders; collects the output nodes. Appends a message per violation. O(nodes).
EPGRAPH_DETAIL_CORE_INLINE auto Graph::lint_node_list(std::vector<std::string>& problems) const
    -> LintWalk {
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
EPGRAPH_DETAIL_CORE_INLINE void Graph::lint_links_and_outputs(
    const LintWalk& walk, std::vector<std::string>& problems) const {
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

EPGRAPH_DETAIL_CORE_INLINE std::vector<Node*> Graph::find_nodes_impl(
    OpCode op, std::optional<std::string_view> target) const {
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

EPGRAPH_DETAIL_CORE_INLINE Node* Graph::resolve_position(OpCode op, std::string_view name) const {
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

EPGRAPH_DETAIL_CORE_INLINE Node* Graph::last_placeholder_by_walk() const noexcept {  // for lint
  if (num_placeholders_ == 0) return nullptr;
  Node* n = head_;
  for (std::size_t i = 1; i < num_placeholders_; ++i) n = n->next_;
  return n;
}

EPGRAPH_DETAIL_CORE_INLINE Node* Graph::create_node_impl(OpCode op, std::string_view target,
                                                         ArgumentList args, Kwargs kwargs,
                                                         std::string_view requested,
                                                         const std::function<void(Node&)>* prepare,
                                                         Namespace::Proposal* taken) {
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
      detail::EdgeUpdate::leave_inputs(raw);
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

EPGRAPH_DETAIL_CORE_INLINE void Node::check_schema(ArgumentView args, const Kwargs& kwargs,
                                                   const char* verb) {
  Graph& g = graph();
  if (op_ == OpCode::call_function && g.schema_checks()) {
    g.check_call_interned(target_, args, kwargs, name(), verb);
  }
}

EPGRAPH_DETAIL_CORE_INLINE void Node::notify_replace(const Node& old_value, const Node& replacement,
                                                     bool output_uses) const {
  if (GraphObserver* o = graph().observer()) {
    o->before_replace_uses(old_value, replacement, output_uses);
  }
}

EPGRAPH_DETAIL_CORE_INLINE void Node::set_args(ArgumentList args) {
  detail::EdgeUpdate edges;
  edges.stage_arguments(this, std::move(args), kwargs(), "set the arguments of");
  edges.finish_stage();
  edges.commit();
}

EPGRAPH_DETAIL_CORE_INLINE void Node::set_kwargs(Kwargs kwargs) {
  detail::EdgeUpdate edges;
  edges.stage_arguments(this, args().to_vector(), std::move(kwargs), "set the arguments of");
  edges.finish_stage();
  edges.commit();
}

EPGRAPH_DETAIL_CORE_INLINE void Node::replace_input_with(const Node* old_input, Node* new_input) {
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
  edges.stage_replacement(this, std::move(new_args), std::move(new_kwargs),
                          detail::writable_node(old_input), new_input);  // of this graph
  edges.finish_stage();
  edges.announce_replace(*old_input, *new_input);
  edges.commit();
}

EPGRAPH_DETAIL_CORE_INLINE std::vector<Node*> Node::replace_all_uses_with(
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

EPGRAPH_DETAIL_CORE_INLINE bool Node::is_impure(UnknownOperators unknown) const {
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

#endif  // EPGRAPH_DETAIL_CORE_DEFINITIONS

}  // namespace epgraph
