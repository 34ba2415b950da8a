// Finding a pattern graph in a graph: SubgraphMatcher and InternalMatch, the matcher under
// torch.fx's subgraph rewriter (torch/fx/passes/utils/matcher_utils.py).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../ir/alias.hpp"
#include "../ir/argument.hpp"
#include "../ir/bind.hpp"
#include "../ir/graph.hpp"
#include "../ir/node.hpp"
#include "../ops/registry.hpp"

namespace epgraph {

/// One occurrence of a pattern in a graph (torch.fx.passes.utils.matcher_utils.InternalMatch).
/// Pointers into the searched graph stay valid while those nodes live; pointers into the pattern
/// while the pattern lives.
struct InternalMatch {
  /// The pattern's anchors (its nodes used only by its output node, or the output node with
  /// match_output), as torch stores them: pattern nodes, not graph nodes.
  std::vector<const Node*> anchors;
  /// Each pattern node with what it matched, in the order they were matched (torch's dict
  /// order): a graph node, or for a pattern placeholder a literal of the graph (placeholders are
  /// wildcards that also match literal arguments).
  std::vector<std::pair<const Node*, Argument>> nodes_map;
  /// What each placeholder of the pattern matched, in the pattern's placeholder order.
  std::vector<Argument> placeholder_nodes;
  /// The graph nodes matched to the pattern's returning nodes (the inputs of its output node, in
  /// FX's all_input_nodes order).
  std::vector<Node*> returning_nodes;

  /// What `pattern_node` matched, or nullptr when it is not part of the match. O(pattern size).
  [[nodiscard]] const Argument* find(const Node* pattern_node) const noexcept {
    for (const auto& kv : nodes_map) {
      if (kv.first == pattern_node) return &kv.second;
    }
    return nullptr;
  }
  /// The graph node `pattern_node` matched, or nullptr (not matched, or matched a literal).
  /// O(pattern size).
  [[nodiscard]] Node* node_of(const Node* pattern_node) const noexcept {
    const Argument* a = find(pattern_node);
    // Bound to a node of the non-const graph given to SubgraphMatcher::match.
    return a != nullptr ? detail::writable_node(a->node()) : nullptr;
  }
};

/// Finds every occurrence of a pattern graph in other graphs, as torch.fx's SubgraphMatcher does
/// (torch/fx/passes/utils/matcher_utils.py), node for node:
/// - anchors: the pattern's nodes whose only user is its output node (or the output node itself
///   with `match_output`); candidates are the graph's nodes equal to an anchor, in graph order;
/// - from each candidate the pattern is walked backwards through arguments: a pattern node
///   matches a graph node of the same op and target (get_attr matches any get_attr: epgraph
///   holds no attribute values to compare, torch compares only that both are tensors); a
///   placeholder matches anything, a node or a literal (only a placeholder with
///   `match_placeholder`); two pattern nodes never match one graph node; arguments are compared
///   position by position (args, then kwargs by key order), over the operator's full schema
///   with defaults filled in when the two calls spell their arguments differently; literals
///   must be equal and of the same type (`1` is not `1.0`) unless `ignore_literals`;
/// - a match is kept when its internal nodes (all but placeholders and returning nodes) are
///   used only inside it, it is contained in memory too (below), fusing it would not form a
///   cycle (torch's validate_partition), and, with `remove_overlapping_matches`, it shares no
///   matched node with an earlier match.
/// Memory containment (beyond torch): users are not the only way a node outside a match sees
/// what happens inside it. With the graph's AliasSets (ir/alias.hpp: the schemas' alias
/// annotations group a tensor with its views, what it views and the results of in-place and
/// out= calls on them), and `s` the position of the match's first compute node, a match is
/// refused when
/// - a compute node of it writes in place (`Tensor(a!)`, see written_inputs) a set that a node
///   outside the match after `s` reads (the output node included), or a set that escapes (it
///   holds a placeholder or get_attr: the caller sees the write): a replacement need not make
///   that write, and where it makes it, it may make it at another place. Outside reads before
///   `s` stay before every place a replacement goes, so they do not refuse a match;
/// - a node outside the match after `s` writes the set of a value a pattern placeholder bound,
///   before the match's last compute node or before the first user of its returning nodes
///   (where replace_pattern puts the replacement, which then reads the value after that write),
///   or anywhere after `s` when a returning node aliases that value (its users see the write).
/// torch.fx's SubgraphMatcher._is_contained (torch/fx/passes/utils/matcher_utils.py) looks at
/// users only, and is wrong here: in `y = x.clone(); v = y.view(-1); y.add_(1); return relu(y),
/// v * 1`, pattern `relu(add_(x, 1))` -> `clamp_min(add(x, 1), 0)` is "contained", and the
/// rewrite loses the `+1` that `v` observes (review of pytorch/pytorch PR #82090).
/// Matches come in graph order of their anchors. Where torch fails, epgraph reports: a pattern
/// whose anchor matches nothing yields no match (torch raises KeyError), a pattern with an unused
/// placeholder, or with a node no returned node reaches, is refused up front (torch raises
/// KeyError on the first match).
class SubgraphMatcher {
 public:
  /// Prepares to match `pattern`, which must outlive the matcher and not change meanwhile.
  /// Arguments: the options of torch's constructor (same names and defaults).
  /// Errors: value_error "SubgraphMatcher cannot be initialized with an empty pattern";
  /// value_error "Pattern graph has no output node"; value_error "SubgraphMatcher cannot be
  /// initialized with an pattern with dead code: node 'neg' has no users" (torch's message,
  /// with the node) for a node that is neither impure nor used; value_error "Pattern
  /// placeholder 'y' is unused: it cannot be matched"; value_error "Pattern node 'add_' is
  /// reached from no returned node: a match would leave it out; return it from the pattern" for
  /// a node (impure, as unused pure ones are dead code) that no returned node reaches through
  /// arguments (pytorch/pytorch #104775: torch raises KeyError mid-rewrite); std::bad_alloc.
  /// Complexity: O(pattern nodes + edges).
  /// Mirrors: SubgraphMatcher.__init__ (torch/fx/passes/utils/matcher_utils.py).
  explicit SubgraphMatcher(const Graph& pattern, bool match_output = false,
                           bool match_placeholder = false, bool remove_overlapping_matches = true,
                           bool ignore_literals = false)
      : pattern_(&pattern),
        match_placeholder_(match_placeholder),
        remove_overlapping_(remove_overlapping_matches),
        ignore_literals_(ignore_literals) {
    if (pattern.size() == 0) {
      throw value_error("SubgraphMatcher cannot be initialized with an empty pattern");
    }
    const Node* out = pattern.last_node();
    if (out == nullptr || out->op() != OpCode::output) {
      throw value_error("Pattern graph has no output node");
    }
    for (const Node& n : pattern.nodes()) {
      index_.emplace(&n, nodes_.size());
      nodes_.push_back(&n);
      if (n.op() == OpCode::output) continue;
      if (n.users().empty()) {
        if (n.op() == OpCode::placeholder) {
          throw value_error("Pattern placeholder '" + std::string(n.name()) +
                            "' is unused: it cannot be matched");
        }
        if (!n.is_impure()) {
          throw value_error(
              "SubgraphMatcher cannot be initialized with an pattern with dead code: node '" +
              std::string(n.name()) + "' has no users");
        }
      }
      if (n.op() == OpCode::placeholder) placeholders_.push_back(&n);
    }
    for (const Node* r : out->all_input_nodes()) returning_.push_back(r);
    refuse_unreached_nodes(pattern);
    if (match_output) {
      anchors_.push_back(out);
    } else {
      for (const Node* r : returning_) {
        if (r->users().size() == 1) anchors_.push_back(r);
      }
    }
  }

  /// The pattern's placeholders, in order. O(1).
  [[nodiscard]] const std::vector<const Node*>& pattern_placeholder_nodes() const noexcept {
    return placeholders_;
  }
  /// The pattern's returning nodes (inputs of its output node). O(1).
  [[nodiscard]] const std::vector<const Node*>& pattern_returning_nodes() const noexcept {
    return returning_;
  }
  /// The pattern's anchors. O(1).
  [[nodiscard]] const std::vector<const Node*>& pattern_anchors() const noexcept {
    return anchors_;
  }

  /// Every match of the pattern in `graph` (see the class comment), in graph order of the
  /// anchors.
  /// Arguments: `graph`, any graph but the pattern's own (nodes of the result point into it;
  /// taken as non-const because the result hands out its nodes for editing).
  /// Returns the matches; empty when there is none.
  /// Errors: value_error "Cannot match a pattern against itself"; value_error when a schema
  /// default of a compared call cannot be read; std::bad_alloc. Nothing is changed.
  /// Complexity: O(N + C * P) for N graph nodes, C candidates of the anchors and P pattern
  /// nodes with one anchor (the product of the candidate counts with several anchors, as in
  /// torch); the cycle check walks the users of each match up to its last node.
  /// Mirrors: SubgraphMatcher.match (torch/fx/passes/utils/matcher_utils.py).
  [[nodiscard]] std::vector<InternalMatch> match(Graph& graph) const {
    if (&graph == pattern_) throw value_error("Cannot match a pattern against itself");
    std::vector<std::vector<Node*>> candidates(anchors_.size());
    for (Node* n = graph.first_node(); n != nullptr; n = n->next()) {
      for (std::size_t a = 0; a < anchors_.size(); ++a) {
        if (nodes_are_equal(*anchors_[a], *n)) candidates[a].push_back(n);
      }
    }
    std::vector<InternalMatch> found;
    for (const auto& c : candidates) {
      if (c.empty()) return found;  // torch: KeyError once a match completes
    }
    State state(nodes_.size());
    backtrack(0, candidates, state, found);
    std::unordered_map<const Node*, std::size_t> position;
    position.reserve(graph.size());
    std::size_t i = 0;
    for (const Node* n = graph.first_node(); n != nullptr; n = n->next()) position.emplace(n, i++);
    std::vector<InternalMatch> kept;
    std::unordered_set<const Node*> taken;  // compute nodes of kept matches
    std::unique_ptr<AliasSets> aliases;     // built for the first match that is contained
    for (InternalMatch& m : found) {
      if (!is_contained(m)) continue;
      if (!aliases) aliases = std::make_unique<AliasSets>(graph);
      if (!contained_in_memory(m, graph, *aliases, position) || forms_cycle(m, position)) continue;
      if (remove_overlapping_) {
        bool overlap = false;
        for (const auto& kv : m.nodes_map) {
          if (is_compute(*kv.first) && taken.count(kv.second.node()) != 0) overlap = true;
        }
        if (overlap) continue;
        for (const auto& kv : m.nodes_map) {
          if (is_compute(*kv.first)) taken.insert(kv.second.node());
        }
      }
      kept.push_back(std::move(m));
    }
    return kept;
  }

 private:
  // Refuses a pattern node that no returned node reaches through arguments: the walk back from
  // the anchors never visits it, so it would be left out of every match and the rewrite would
  // erase or keep graph nodes as if it were not there. torch.fx (pytorch/pytorch #104775)
  // raises KeyError after rewiring half the graph; epgraph matched silently without it:
  // `x.add_(1); return relu(x)` matched `relu(x) * 2`, which has no add_. O(nodes + edges).
  void refuse_unreached_nodes(const Graph& pattern) const {
    std::vector<bool> reached(nodes_.size(), false);
    std::vector<const Node*> stack(returning_.begin(), returning_.end());
    while (!stack.empty()) {
      const Node* n = stack.back();
      stack.pop_back();
      const std::size_t i = index_.at(n);
      if (reached[i]) continue;
      reached[i] = true;
      for (const Node* in : n->all_input_nodes()) stack.push_back(in);
    }
    for (const Node& n : pattern.nodes()) {
      if (n.op() == OpCode::output || n.op() == OpCode::placeholder || reached[index_.at(&n)]) {
        continue;
      }
      throw value_error("Pattern node '" + std::string(n.name()) +
                        "' is reached from no returned node: a match would leave it out; "
                        "return it from the pattern");
    }
  }

  // A partial match: what each pattern node (by index) is bound to, and the binding order.
  struct State {
    explicit State(std::size_t n) : bound(n), has(n, false) {}
    std::vector<Argument> bound;
    std::vector<bool> has;
    std::vector<std::size_t> order;
    void bind(std::size_t i, Argument value) {
      bound[i] = std::move(value);
      has[i] = true;
      order.push_back(i);
    }
    [[nodiscard]] bool binds_node(const Node* gn) const noexcept {
      for (std::size_t i : order) {
        if (bound[i].node() == gn) return true;
      }
      return false;
    }
  };

  static bool is_compute(const Node& pn) noexcept {
    return pn.op() != OpCode::placeholder && pn.op() != OpCode::output;
  }

  bool nodes_are_equal(const Node& pn, const Node& gn) const {
    if (!match_placeholder_ && pn.op() == OpCode::placeholder) return true;
    if (pn.op() != gn.op()) return false;
    switch (pn.op()) {
      case OpCode::placeholder:
      case OpCode::output:
      case OpCode::get_attr: return true;
      default: return pn.target() == gn.target();
    }
  }

  void backtrack(std::size_t a, const std::vector<std::vector<Node*>>& candidates,
                 const State& state, std::vector<InternalMatch>& found) const {
    if (a == anchors_.size()) {
      InternalMatch m;
      m.anchors = anchors_;
      for (std::size_t i : state.order) m.nodes_map.emplace_back(nodes_[i], state.bound[i]);
      for (const Node* p : placeholders_) m.placeholder_nodes.push_back(bound(state, p));
      for (const Node* r : returning_) {
        Node* gn = detail::writable_node(bound(state, r).node());  // of match()'s graph
        if (gn == nullptr) return;  // a returned placeholder bound to a literal
        m.returning_nodes.push_back(gn);
      }
      found.push_back(std::move(m));
      return;
    }
    for (Node* candidate : candidates[a]) {
      State next = state;
      if (match_nodes(*anchors_[a], candidate, next)) backtrack(a + 1, candidates, next, found);
    }
  }

  Argument bound(const State& s, const Node* pn) const { return s.bound[index_.at(pn)]; }

  bool match_nodes(const Node& pn, Node* gn, State& s) const {
    const std::size_t i = index_.at(&pn);
    if (s.has[i]) return s.bound[i].node() == gn;
    if (s.binds_node(gn)) return false;
    if (!nodes_are_equal(pn, *gn)) return false;
    s.bind(i, Argument(gn));
    if (pn.op() == OpCode::placeholder) return true;
    std::vector<Argument> pa;
    std::vector<Argument> ga;
    if (!comparable_arguments(pn, *gn, pa, ga)) return false;
    return match_args(pa, ga, s);
  }

  // torch's _match_nodes: the two calls' arguments as lists to compare position by position.
  static bool comparable_arguments(const Node& pn, const Node& gn, std::vector<Argument>& pa,
                                   std::vector<Argument>& ga) {
    const bool same_shape = pn.args().size() == gn.args().size() && same_keys(pn, gn);
    if (!same_shape && pn.op() == OpCode::call_function) {
      if (const FunctionSchema* schema = global_registry().find_target(pn.target())) {
        all_arguments(*schema, pn, pa);
        all_arguments(*schema, gn, ga);
        return true;
      }
    }
    if (!same_shape) return false;
    for (const Argument& a : pn.args()) pa.push_back(a);
    for (const auto& kv : pn.kwargs()) pa.push_back(kv.second);
    for (const Argument& a : gn.args()) ga.push_back(a);
    for (const auto& kv : gn.kwargs()) ga.push_back(kv.second);
    return true;
  }

  static bool same_keys(const Node& a, const Node& b) {
    const Kwargs& ka = a.kwargs();
    const Kwargs& kb = b.kwargs();
    if (ka.size() != kb.size()) return false;
    for (std::size_t i = 0; i < ka.size(); ++i) {
      if (ka[i].first != kb[i].first) return false;
    }
    return true;
  }

  // One value per schema argument: by keyword, else by position (not keyword-only), else the
  // default (None without one) — torch's get_all_arguments.
  static void all_arguments(const FunctionSchema& schema, const Node& n,
                            std::vector<Argument>& out) {
    const ArgumentView args = n.args();
    for (std::size_t i = 0; i < schema.arguments.size(); ++i) {
      const SchemaArgument& sa = schema.arguments[i];
      const Argument* kw = nullptr;
      for (const auto& kv : n.kwargs()) {
        if (kv.first == sa.name) kw = &kv.second;
      }
      if (kw != nullptr) {
        out.push_back(*kw);
      } else if (!sa.kwarg_only && i < args.size()) {
        out.push_back(args[i]);
      } else {
        out.push_back(default_argument(sa));
      }
    }
  }

  bool match_args(const std::vector<Argument>& pa, const std::vector<Argument>& ga,
                  State& s) const {
    if (pa.size() != ga.size()) return false;
    for (std::size_t k = 0; k < pa.size(); ++k) {
      if (!match_arg(pa[k], ga[k], s)) return false;
    }
    return true;
  }

  bool match_arg(const Argument& pa, const Argument& ga, State& s) const {
    if (pa.node() != nullptr && ga.node() != nullptr) {
      return match_nodes(*pa.node(), detail::writable_node(ga.node()), s);  // of match()'s graph
    }
    const ArgumentList* pl = pa.list();
    const ArgumentList* gl = ga.list();
    if (pl != nullptr && gl != nullptr) {
      if (pl->size() != gl->size()) return false;
      for (std::size_t k = 0; k < pl->size(); ++k) {
        if (!match_arg((*pl)[k], (*gl)[k], s)) return false;
      }
      return true;
    }
    return match_literals(pa, ga, s) || ignore_literals_;
  }

  // torch's _match_literals: a pattern placeholder binds a literal; otherwise equal type+value.
  bool match_literals(const Argument& pa, const Argument& ga, State& s) const {
    if (const Node* pn = pa.node()) {
      if (pn->op() != OpCode::placeholder) return false;
      const std::size_t i = index_.at(pn);
      if (s.has[i]) return s.bound[i] == ga;
      s.bind(i, ga);
      return true;
    }
    if (ga.node() != nullptr) return false;
    return pa == ga;
  }

  bool is_contained(const InternalMatch& m) const {
    std::unordered_set<const Node*> inside;
    for (const auto& kv : m.nodes_map) {
      if (kv.first->op() != OpCode::placeholder) inside.insert(kv.second.node());
    }
    for (const auto& kv : m.nodes_map) {
      const Node* pn = kv.first;
      if (pn->op() == OpCode::placeholder) continue;
      if (std::find(returning_.begin(), returning_.end(), pn) != returning_.end()) continue;
      for (const Node* u : kv.second.node()->users()) {
        if (inside.count(u) == 0) return false;
      }
    }
    return true;
  }

  // The memory half of containment (see the class comment): no node outside the match may see
  // a write inside it, and no write outside it may land between the match's reads of its inputs
  // and where its replacement goes. O(P + U) for P pattern nodes and U users of the members of
  // the sets the match writes, and of the written sets its placeholders bound.
  bool contained_in_memory(const InternalMatch& m, const Graph& graph, const AliasSets& aliases,
                           const std::unordered_map<const Node*, std::size_t>& position) const {
    std::unordered_set<const Node*> inside;
    std::vector<std::size_t> written;  // sets written by the match
    std::vector<std::size_t> bound;    // sets of the values pattern placeholders bound
    auto add_once = [](std::vector<std::size_t>& v, std::size_t s) {
      if (std::find(v.begin(), v.end(), s) == v.end()) v.push_back(s);
    };
    std::size_t first = graph.size();
    std::size_t last = 0;
    for (const auto& kv : m.nodes_map) {
      const Node* gn = kv.second.node();
      if (gn == nullptr) continue;
      if (kv.first->op() == OpCode::placeholder) {
        add_once(bound, aliases.set_of(*gn));
        continue;
      }
      inside.insert(gn);
      first = std::min(first, position.at(gn));
      last = std::max(last, position.at(gn));
      for (std::size_t s : aliases.written_sets(*gn)) {
        if (aliases.escapes(s)) return false;
        add_once(written, s);
      }
    }
    if (written.empty() && bound.empty()) return true;
    // Where replace_pattern puts the replacement: before the first user of a returning node, or
    // after the last returning node when they have no users.
    std::size_t placed = graph.size();
    std::vector<std::size_t> returned;
    for (const Node* r : m.returning_nodes) {
      returned.push_back(aliases.set_of(*r));
      for (const Node* u : r->users()) placed = std::min(placed, position.at(u));
    }
    if (placed == graph.size()) placed = last + 1;
    const std::size_t reads_until = std::max(placed, last);
    // Only nodes that read a member of a set can read or write it: the members' users.
    auto outside_after = [&](std::size_t s, auto&& refuses) {
      for (const Node* member : aliases.members(s)) {
        for (const Node* u : member->users()) {
          if (inside.count(u) == 0 && position.at(u) > first && refuses(*u)) return true;
        }
      }
      return false;
    };
    for (std::size_t s : written) {
      if (outside_after(s, [](const Node&) { return true; })) return false;
    }
    for (std::size_t s : bound) {
      if (!aliases.is_written(s)) continue;
      const bool seen_by_return = std::find(returned.begin(), returned.end(), s) != returned.end();
      const auto write_moved_across = [&](const Node& u) {
        return aliases.writes(u, s) && (seen_by_return || position.at(&u) < reads_until);
      };
      if (outside_after(s, write_moved_across)) return false;
    }
    return true;
  }

  // torch's validate_partition: would fusing the matched compute nodes form a cycle, i.e. does
  // a path leave the match and come back? Only nodes before the match's last node can lead
  // back (the graph is in topological order), so the walk stops there.
  bool forms_cycle(const InternalMatch& m,
                   const std::unordered_map<const Node*, std::size_t>& position) const {
    std::unordered_set<const Node*> part;
    std::size_t last = 0;
    for (const auto& kv : m.nodes_map) {
      if (!is_compute(*kv.first)) continue;
      const Node* gn = kv.second.node();
      part.insert(gn);
      last = std::max(last, position.at(gn));
    }
    std::vector<const Node*> queue;
    std::unordered_set<const Node*> seen;
    for (const Node* n : part) {
      for (const Node* u : n->users()) {
        if (part.count(u) == 0 && seen.insert(u).second) queue.push_back(u);
      }
    }
    while (!queue.empty()) {
      const Node* n = queue.back();
      queue.pop_back();
      if (part.count(n) != 0) return true;
      if (position.at(n) > last) continue;
      for (const Node* u : n->users()) {
        if (seen.insert(u).second) queue.push_back(u);
      }
    }
    return false;
  }

  const Graph* pattern_;
  bool match_placeholder_;
  bool remove_overlapping_;
  bool ignore_literals_;
  std::vector<const Node*> nodes_;                      // pattern nodes in order
  std::unordered_map<const Node*, std::size_t> index_;  // pattern node -> position
  std::vector<const Node*> placeholders_;
  std::vector<const Node*> returning_;
  std::vector<const Node*> anchors_;
};

}  // namespace epgraph
