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
#include "detail/node_iterator.hpp"
#include "detail/purity.hpp"
#include "detail/stale_nodes.hpp"
#include "names.hpp"
#include "node.hpp"

namespace epgraph {

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

// Defined in passes/topological_sort.hpp; a friend of Graph.
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
  ~Graph();

  /// Forward iterator over the nodes in order, yielding `Node&` (`const Node&` for
  /// const_iterator). Erasing the node an iterator points at invalidates it (take `next()` first).
  template <class N>
  using basic_iterator = detail::NodeIterator<N>;
  using iterator = basic_iterator<Node>;
  using const_iterator = basic_iterator<const Node>;
  /// A range of nodes for range-for loops.
  template <class It>
  using range = detail::NodeRange<It>;

  /// All nodes in order (FX `graph.nodes`). O(1) to obtain.
  [[nodiscard]] range<iterator> nodes() noexcept { return {iterator(head_), iterator()}; }
  /// All nodes in order (FX `graph.nodes`). O(1) to obtain.
  [[nodiscard]] range<const_iterator> nodes() const noexcept;
  /// The placeholder nodes, which form a prefix of the graph, in order. O(1) to obtain.
  [[nodiscard]] range<iterator> placeholders() noexcept;
  /// The placeholder nodes, in order. O(1) to obtain.
  [[nodiscard]] range<const_iterator> placeholders() const noexcept;
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
  [[nodiscard]] const Node* find_node(std::string_view name) const noexcept;
  /// Every node with op code `op` and, when `target` is given, that target, in graph order (FX
  /// `graph.find_nodes(op=..., target=...)` with its default `sort=True`, torch/fx/graph.py):
  /// `find_nodes(OpCode::call_function, "torch.ops.aten.relu.default")`,
  /// `find_nodes(OpCode::placeholder)`. The pointers stay valid until their nodes are erased.
  /// Throws std::bad_alloc only. O(nodes); a target the graph never used costs one hash lookup.
  [[nodiscard]] std::vector<Node*> find_nodes(OpCode op,
                                              std::optional<std::string_view> target = {});
  /// find_nodes, read-only. Same contract.
  [[nodiscard]] std::vector<const Node*> find_nodes(
      OpCode op, std::optional<std::string_view> target = {}) const;
  /// Write access to `node`, a node of this graph reached read-only (an argument's `node()`,
  /// `all_input_nodes()` of a const node, a pattern match's bindings): holding the non-const
  /// graph is what gives write access to its nodes, so `g.writable(n->args()[0].node())` is the
  /// writable input of `n`. Returns nullptr for nullptr. Throws value_error when `node` belongs
  /// to another graph ("Node 'x' does not belong to this graph (cannot make it writable)"). O(1).
  /// torch.fx has no counterpart (Python has no const); it plays the role of NativeRT's paired
  /// const/non-const accessors (torch/nativert/graph/Graph.h) for nodes named by arguments.
  [[nodiscard]] Node* writable(const Node* node);
  /// True when `node` is a live node of this graph. O(1) on average. A pointer kept after its
  /// node was erased (FX: a node with `_erased` set) is never live; but in release builds the
  /// slot is reused at once, so such a pointer may name the next node created, and asking about
  /// it reads the erased node's memory. Builds with EPGRAPH_STALE_NODE_CHECKS (AddressSanitizer,
  /// or no NDEBUG; see detail/stale_nodes.hpp) keep erased slots out of reuse for a while and
  /// answer false for them without reading them (O(log chunks) more).
  [[nodiscard]] bool contains(const Node* node) const;
  /// The namespace that assigns node names (read-only).
  [[nodiscard]] const Namespace& names() const noexcept { return namespace_; }

  /// The name FX would give a node whose name is `candidate` if it were created now, without
  /// creating it. O(length).
  [[nodiscard]] std::string propose_name(std::string_view candidate) const;

  /// The default name candidate for a node (FX `_target_to_str`, with torch.export's rule for
  /// operator overloads): `torch.ops.aten.add.Tensor` -> `add`, `operator.getitem` -> `getitem`,
  /// a get_attr/call_module/call_method target is snake-cased (`linear.weight` becomes
  /// `linear_weight` once sanitized), a placeholder's target is its name, output is `output`.
  [[nodiscard]] static std::string default_name(OpCode op, std::string_view target);

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
                    std::string_view name = {});

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
                    std::string_view name, const std::function<void(Node&)>& prepare);

  /// A placeholder whose target is `name` (FX `graph.placeholder`). See create_node.
  Node* placeholder(std::string_view name) { return create_node(OpCode::placeholder, name); }
  /// A get_attr node reading `qualified_name` (FX `graph.get_attr`). See create_node.
  Node* get_attr(std::string_view qualified_name, std::string_view name = {});
  /// A call_function node (FX `graph.call_function`); `target` is the operator's qualified name
  /// such as `torch.ops.aten.add.Tensor`. See create_node.
  Node* call_function(std::string_view target, ArgumentList args = {}, Kwargs kwargs = {},
                      std::string_view name = {});
  /// A call_method node (FX `graph.call_method`). See create_node.
  Node* call_method(std::string_view method, ArgumentList args = {}, Kwargs kwargs = {},
                    std::string_view name = {});
  /// A call_module node (FX `graph.call_module`). See create_node.
  Node* call_module(std::string_view module, ArgumentList args = {}, Kwargs kwargs = {},
                    std::string_view name = {});
  /// The output node returning `results` (FX `graph.output((a, b))`): its `args()[0]` is the list
  /// of results, printed as `return (a, b)`. Always appended at the end. See create_node.
  Node* output(ArgumentList results);

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
  void erase_node(Node* node);

  /// Renames `node` to the name the namespace assigns `candidate` and returns it (FX
  /// `node._rename`); the old name stays taken. A placeholder whose target was its name keeps
  /// target == name. The program owning the graph updates the specs that named the node. Returns
  /// the current name when `candidate` equals it. Throws value_error when the node is not in this
  /// graph. Strong guarantee. O(length).
  std::string_view rename_node(Node* node, std::string_view candidate);

  /// Makes new nodes go right before `node` until the returned guard is destroyed (FX
  /// `graph.inserting_before`). Throws value_error when `node` is not in this graph. O(1).
  [[nodiscard]] InsertingGuard inserting_before(Node* node);
  /// Makes new nodes go right after `node` (each new node after the previous new one) until the
  /// returned guard is destroyed (FX `graph.inserting_after`, torch/fx/graph.py). Unlike FX,
  /// several new nodes keep their creation order: FX puts each one right after `node`
  /// (`node.append`), so `a` then `b` come out `node, b, a`, which places a user before its
  /// input when `b` reads `a`; epgraph gives `node, a, b`. Throws value_error when `node` is not
  /// in this graph. O(1).
  [[nodiscard]] InsertingGuard inserting_after(Node* node);

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
  void lint() const;

  /// A deep copy: same nodes, names, order, arguments (re-linked to the copies), users in the same
  /// order, metadata, and the same namespace state (erased names stay taken). The insertion point
  /// is the default and no observer is attached. Throws runtime_error when a node uses a node
  /// that comes after it (run lint() to see why). O(nodes + edges).
  [[nodiscard]] std::unique_ptr<Graph> clone() const;

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
  /// Nested graphs are not visited (a Graph holds no submodules; an ExportedProgram's
  /// nested_graphs are graphs of their own). On an ExportedProgram's graph use
  /// epgraph::eliminate_dead_code(program) (passes/program_passes.hpp), which also keeps every
  /// node the signature names. Throws runtime_error "Cannot erase node 'x' while it anchors an
  /// insertion point" when a dead node anchors an insertion point, value_error when a lazily
  /// registered schema does not parse, and what `is_impure` throws; nothing is removed then. Strong
  /// guarantee (the dead set is computed first, then erased with no-throw steps). O(nodes + edges)
  /// plus one registry lookup per distinct target.
  bool eliminate_dead_code(const std::function<bool(const Node&)>& is_impure = {},
                           UnknownOperators unknown = UnknownOperators::impure);

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
  Node* node_copy(const Node& node, const std::function<Argument(const Node*)>& arg_transform = {});

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
  Node* node_copy(const Node& node, const std::function<Argument(const Node*)>& arg_transform,
                  const NestedGraphTargets& nested_targets);

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
  Argument graph_copy(const Graph& g, std::unordered_map<const Node*, Node*>& value_remap);

  /// graph_copy, where each get_attr node of `g` whose target is a key of `nested_targets` gets
  /// the mapped target (see the node_copy overload taking it; the other get_attr nodes follow
  /// node_copy's rule), e.g. `{{"true_graph_0", "then_graph"}, {"false_graph_0",
  /// "else_graph"}}`. Throws what graph_copy and that node_copy overload throw, the latter also
  /// when two different nested graphs of `g` are mapped to one target ("Cannot give the copy of
  /// get_attr node 'false_graph_0' the target 'branch': get_attr node 'branch' of this graph
  /// names a different nested graph under it"). Strong guarantee, as graph_copy. O(graph_copy +
  /// get_attr nodes of g * (log size of nested_targets + nodes)).
  Argument graph_copy(const Graph& g, std::unordered_map<const Node*, Node*>& value_remap,
                      const NestedGraphTargets& nested_targets);

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
  void insert_result(std::size_t position, Node* value);

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
                  std::string_view node_name, const char* verb = "create") const;

 private:
  friend class Node;
  friend class InsertingGuard;
  friend void stable_topological_sort(Graph& graph);
  friend struct detail::test_access;
  friend struct detail::rewrite_access;
  friend struct detail::edit_access;

  // Source node -> copy, by node id (filled in list order while cloning).
  struct CloneMap;

  static Argument remap_argument(const Argument& arg, const CloneMap& map, const Node* user);

  // `arg` with every node `n` in it (inside lists too) replaced by `f(n)`; the identity when `f`
  // is empty.
  template <class F>
  static Argument map_nodes(const Argument& arg, const F& f);

  // graph_copy, with `given` the caller's targets for nested graphs (or nullptr). Strong.
  Argument graph_copy_impl(const Graph& g, std::unordered_map<const Node*, Node*>& value_remap,
                           const NestedGraphTargets* given);

  // The nested graph get_attr node `n` carries: its record, or empty (none, or not get_attr).
  static std::string_view nested_record(const Node& n) noexcept;

  // The first get_attr node of this graph with target `target` that carries a nested graph other
  // than `record` (which is not empty); with `strict`, also one that carries none. O(nodes) when
  // the target is used, one hash lookup otherwise.
  const Node* nested_clash(std::string_view target, std::string_view record, bool strict) const;

  // Whether `s` is a Python identifier (ASCII): what a submodule's name must be.
  static bool is_identifier(std::string_view s) noexcept;

  std::string copy_target(const Node& node, const NestedGraphTargets* given) const;

  template <class Transform>
  Node* node_copy_impl(const Node& node, const Transform& transform, Namespace::Proposal* taken,
                       const NestedGraphTargets* given = nullptr);

  void uncreate(Node* node, Namespace::Proposal& taken) noexcept;

  // Node::prepend (before == true) and Node::append: moves `x` next to `anchor`. Strong.
  void move_node(Node* x, Node* anchor, bool before);

  // Why `x` may not pass over the nodes [from, to) (alias.hpp's memory_order_conflict), or
  // empty. Looks up what the nodes write first; builds the graph's alias sets only when x or
  // one of them writes something. Defined in alias.hpp (included at the end of this header).
  std::string memory_order_conflict_over(const Node* x, const Node* from, const Node* to) const;

  // Why the reordering `order` (every node once) may not be applied because two nodes that must
  // keep their relative order because of a write in place would swap, or empty. Defined in
  // alias.hpp.
  std::string memory_order_conflict_in(const std::vector<Node*>& order) const;

  void relink_in_order(const std::vector<Node*>& order) noexcept;

  void check_member(const Node* node, const char* what) const;

  void check_not_erased(const Node* node, const char* what) const;

  // Throws value_error "Cannot <verb> node '<node_name>' (<target>): <why>; schema: ..." when
  // the call does not bind to schema `s`.
  static void check_bound(const FunctionSchema& s, std::string_view target, ArgumentView args,
                          const Kwargs& kwargs, std::string_view node_name, const char* verb);

  void check_call_interned(std::uint32_t t, ArgumentView args, const Kwargs& kwargs,
                           std::string_view node_name, const char* verb);

  // The index of interned target `s`, interning it first when new. Interned targets are not
  // observable, so a failure after this leaves nothing visible behind. May throw.
  std::uint32_t intern(std::string_view s) { return intern(s, target_hash(s)); }
  static std::size_t target_hash(std::string_view s) noexcept;
  void prefetch_placeholder_lookups(std::string_view name) const noexcept;
  // intern() with the target's hash (target_hash) known.
  std::uint32_t intern(std::string_view s, std::size_t h);

  // Node ids (see detail::NodeArena::id_of): tables by id have arena_.slot_count() entries.
  [[nodiscard]] static std::uint32_t id_of(const Node* node) noexcept;
  [[nodiscard]] Node* node_by_id(std::uint32_t id) const noexcept { return arena_.node_by_id(id); }
  // lint, step by step (the edge checks live in detail/graph_lint.hpp).
  static constexpr std::size_t lint_unseen = SIZE_MAX;
  // What lint's walk over the node list found.
  struct LintWalk;
  LintWalk lint_node_list(std::vector<std::string>& problems) const;
  void lint_links_and_outputs(const LintWalk& walk, std::vector<std::string>& problems) const;

  // find_nodes for both constnesses: targets compare by their interned ids.
  [[nodiscard]] std::vector<Node*> find_nodes_impl(OpCode op,
                                                   std::optional<std::string_view> target) const;

  // find_node for both constnesses: the node named `name`, or nullptr.
  [[nodiscard]] Node* find_node_impl(std::string_view name) const noexcept;
  // The index's way from an id to a name.
  struct NameOf;
  [[nodiscard]] NameOf name_of() const noexcept;
  // The index's way to re-read its entries when it grows: the node list, in order (every indexed
  // node is linked whenever the index grows).
  struct EachIndexed;
  [[nodiscard]] EachIndexed each_indexed() const noexcept;

  std::uint32_t next_mark_epoch() noexcept;

  // The namespace's view of live node names: the name index.
  static bool holds_name(const void* graph, std::string_view name);
  static std::size_t count_names(const void* graph) noexcept;

  bool anchors_insertion_point(const Node* node) const noexcept;

  void push_insert_point(InsertPoint point);
  void pop_insert_point() noexcept;

  // Links `node` before `next` (at the end when next is null). No-throw.
  void link_before(Node* node, Node* next) noexcept;
  void unlink(Node* node) noexcept;

  // The node a new node of kind `op` goes before (nullptr: at the end). Throws when the
  // insertion point does not allow it.
  Node* resolve_position(OpCode op, std::string_view name) const;

  Node* last_placeholder() const noexcept { return last_placeholder_; }
  Node* last_placeholder_by_walk() const noexcept;

  Node* create_node_impl(OpCode op, std::string_view target, ArgumentList args, Kwargs kwargs,
                         std::string_view requested, const std::function<void(Node&)>* prepare,
                         Namespace::Proposal* taken = nullptr);

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

// The bodies of Graph's member functions and of the Node members that need a complete Graph.
#include "detail/graph_impl.hpp"

// Mutation and aliasing (written_inputs, AliasSets), which moves and sorts consult; it also
// defines Graph::memory_order_conflict_over/_in.
#include "alias.hpp"
