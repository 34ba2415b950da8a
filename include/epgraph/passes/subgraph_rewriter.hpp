// Find-and-replace of a pattern graph: replace_pattern and ReplacedPatterns, torch.fx's
// subgraph rewriter (torch/fx/subgraph_rewriter.py) for graphs built in C++.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "../error.hpp"
#include "../ir/argument.hpp"
#include "../ir/graph.hpp"
#include "../ir/names.hpp"
#include "../ir/node.hpp"
#include "infer_meta.hpp"
#include "subgraph_matcher.hpp"

namespace epgraph {

/// One replacement made by replace_pattern (torch.fx.subgraph_rewriter.ReplacedPatterns).
struct ReplacedPatterns {
  /// The pattern's first anchor (a node of the pattern, as torch reports it).
  const Node* anchor = nullptr;
  /// Each pattern placeholder with the value it matched, in match order: a node of the graph
  /// (the replacement of an earlier match when that match produced it, as torch updates it) or
  /// a literal.
  std::vector<std::pair<const Node*, Argument>> nodes_map;
  /// Each other pattern node with the name of the graph node it matched. Those nodes are erased,
  /// so epgraph reports names where torch keeps the erased Node objects (a C++ pointer to an
  /// erased node would dangle).
  std::vector<std::pair<const Node*, std::string>> erased;
  /// The metadata of each erased node, in the order of `erased` (erased_meta[i] belonged to the
  /// node named erased[i].second), copied before the node was erased: what a pass carries to
  /// `replacements`, as a Python pass reads `meta` off the erased nodes torch keeps. For
  /// instance `r->meta().other = rp.erased_meta.back().other` gives a copy the matched node's
  /// stack_trace, nn_module_stack and custom entries (copy `serialized` only between nodes of
  /// the same operator: it records one call's argument layout).
  std::vector<NodeMeta> erased_meta;
  /// The nodes copied from the replacement into the graph, in order.
  std::vector<Node*> replacements;
};

/// A predicate on a match (torch's `match_filters`): the match, the graph searched, the pattern.
using MatchFilter = std::function<bool(const InternalMatch&, const Graph&, const Graph&)>;

namespace detail {

// What replace_pattern needs of Graph's internals: copies whose names can be given back.
struct rewrite_access {
  static Node* copy(Graph& g, const Node& n, const std::function<Argument(const Node*)>& transform,
                    Namespace::Proposal* taken) {
    return g.node_copy_impl(n, transform, taken);
  }
  static void uncreate(Graph& g, Node* n, Namespace::Proposal& taken) noexcept {
    g.uncreate(n, taken);
  }
  static bool anchors_insertion_point(const Graph& g, const Node* n) noexcept {
    return g.anchors_insertion_point(n);
  }
};

// One call of replace_pattern: checks everything it can before the first change, then copies
// the replacements (undone by giving the copies and their names back), rewires the uses
// (undone by rewiring back) and erases the matched nodes in one strong step.
class PatternRewrite {
 public:
  PatternRewrite(Graph& graph, const Graph& pattern, const Graph& replacement, bool ignore_literals)
      : graph_(graph),
        pattern_(pattern),
        replacement_(replacement),
        matcher_(pattern, false, false, true, ignore_literals) {
    if (&replacement == &graph) throw value_error("Cannot replace a pattern by the graph itself");
    check_replacement();
  }

  std::vector<ReplacedPatterns> run(const std::vector<MatchFilter>& filters) {
    std::vector<InternalMatch> matches;
    for (InternalMatch& m : matcher_.match(graph_)) {
      bool keep = true;
      for (const MatchFilter& f : filters) keep = keep && f(m, graph_, pattern_);
      if (keep) matches.push_back(std::move(m));
    }
    if (matches.empty()) return {};
    check_erasable(matches);
    std::unordered_map<const Node*, std::size_t> position;
    position.reserve(graph_.size());
    std::size_t i = 0;
    for (const Node* n = graph_.first_node(); n != nullptr; n = n->next()) position.emplace(n, i++);
    created_.reserve(matches.size() * copies_per_match_);
    places_.reserve(matches.size());
    proposals_.reserve(matches.size() * copies_per_match_);
    std::vector<ReplacedPatterns> out;
    out.reserve(matches.size());
    rewired_.reserve(matches.size() * matcher_.pattern_returning_nodes().size());
    bool erased = false;
    try {
      for (InternalMatch& m : matches) out.push_back(copy_replacement(m, position));
      check_copies_follow_inputs(matches);
      for (std::size_t k = 0; k < matches.size(); ++k) rewire(matches[k], returned_[k]);
      erased = erase_dead_matched(matches);
    } catch (...) {
      undo();
      throw;
    }
    if (!erased) erase_one_by_one(matches);
    return out;
  }

 private:
  void check_replacement() {
    const Node* out = replacement_.last_node();
    if (out == nullptr || out->op() != OpCode::output) {
      throw value_error("Replacement graph has no output node");
    }
    std::size_t placeholders = 0;
    for (const Node& n : replacement_.nodes()) {
      if (n.op() == OpCode::placeholder) {
        ++placeholders;
      } else if (n.op() != OpCode::output) {
        ++copies_per_match_;
      }
    }
    const std::size_t wanted = matcher_.pattern_placeholder_nodes().size();
    if (placeholders != wanted) {
      throw value_error("Placeholder count mismatch: the pattern has " + std::to_string(wanted) +
                        " placeholders, the replacement " + std::to_string(placeholders));
    }
    const std::size_t returns = returned_values(*out).size();
    const std::size_t pattern_returns = matcher_.pattern_returning_nodes().size();
    if (returns != pattern_returns) {
      throw value_error("Returning nodes count mismatch: the pattern returns " +
                        std::to_string(pattern_returns) + " nodes, the replacement " +
                        std::to_string(returns) + " values");
    }
    for (const Node* r : matcher_.pattern_returning_nodes()) {
      if (r->op() == OpCode::placeholder) {
        throw value_error("Cannot replace a pattern that returns its placeholder '" +
                          std::string(r->name()) + "'");
      }
    }
  }

  // The values an output node returns, nested lists flattened in order: `output({a, b})` and
  // `output({ArgumentList{a, b}})` both return a and b, as the pattern's returning nodes (FX's
  // all_input_nodes) count them. Before, the second form counted as one value and
  // replace_pattern refused it ("the pattern returns 2 nodes, the replacement 1 values").
  static std::vector<Argument> returned_values(const Node& out) {
    std::vector<Argument> values;
    const std::function<void(const Argument&)> add = [&](const Argument& a) {
      if (const ArgumentList* l = a.list()) {
        for (const Argument& e : *l) add(e);
      } else {
        values.push_back(a);
      }
    };
    for (const Argument& a : out.args()) add(a);
    return values;
  }

  void check_erasable(const std::vector<InternalMatch>& matches) const {
    for (const InternalMatch& m : matches) {
      for (const auto& kv : m.nodes_map) {
        if (kv.first->op() == OpCode::placeholder) continue;
        const Node* gn = kv.second.node();
        if (rewrite_access::anchors_insertion_point(graph_, gn)) {
          throw runtime_error("Cannot erase node '" + std::string(gn->name()) +
                              "' while it anchors an insertion point");
        }
      }
    }
  }

  // Where torch inserts a match's replacement: before the first user (in graph order) of the
  // matched returning nodes, or, when they have none, before the node after the last of them.
  Node* insertion_anchor(const InternalMatch& m,
                         const std::unordered_map<const Node*, std::size_t>& position,
                         bool& before) const {
    std::unordered_set<const Node*> users;
    Node* earliest = nullptr;
    Node* latest = nullptr;
    for (Node* r : m.returning_nodes) {
      for (const Node* u : r->users()) users.insert(u);
      if (earliest == nullptr || position.at(r) < position.at(earliest)) earliest = r;
      if (latest == nullptr || position.at(r) > position.at(latest)) latest = r;
    }
    before = true;
    if (users.empty()) {
      if (latest->next() != nullptr) return latest->next();
      before = false;
      return latest;
    }
    for (Node* n = earliest->next(); n != nullptr; n = n->next()) {
      if (users.count(n) != 0) return n;
    }
    throw runtime_error("replace_pattern: the users of node '" + std::string(earliest->name()) +
                        "' are not after it");  // unreachable in a linted graph
  }

  ReplacedPatterns copy_replacement(InternalMatch& m,
                                    const std::unordered_map<const Node*, std::size_t>& position) {
    ReplacedPatterns result;
    result.anchor = m.anchors.empty() ? nullptr : m.anchors.front();
    std::unordered_map<const Node*, Argument> value;  // replacement node -> value in graph_
    std::size_t p = 0;
    for (const Node& rn : replacement_.nodes()) {
      if (rn.op() != OpCode::placeholder) continue;
      Argument& v = m.placeholder_nodes[p++];
      if (const Node* gn = v.node()) {
        auto it = changed_.find(gn);
        if (it != changed_.end()) v = Argument(it->second);
      }
      value.emplace(&rn, v);
    }
    for (auto& kv : m.nodes_map) {
      if (kv.first->op() == OpCode::placeholder) {
        if (const Node* gn = kv.second.node()) {
          auto it = changed_.find(gn);
          if (it != changed_.end()) kv.second = Argument(it->second);
        }
        result.nodes_map.emplace_back(kv.first, kv.second);
      } else {
        result.erased.emplace_back(kv.first, std::string(kv.second.node()->name()));
        result.erased_meta.push_back(kv.second.node()->read_meta());
      }
    }
    bool before = true;
    Node* anchor = insertion_anchor(m, position, before);
    places_.push_back({anchor, before});  // reserved: does not throw
    {
      InsertingGuard guard =
          before ? graph_.inserting_before(anchor) : graph_.inserting_after(anchor);
      for (const Node& rn : replacement_.nodes()) {
        if (rn.op() == OpCode::placeholder || rn.op() == OpCode::output) continue;
        const std::function<Argument(const Node*)> transform = [&](const Node* x) -> Argument {
          auto it = value.find(x);
          if (it == value.end()) {
            throw runtime_error("Cannot copy replacement node '" + std::string(rn.name()) +
                                "': its input '" + std::string(x->name()) + "' has no copy");
          }
          return it->second;
        };
        proposals_.emplace_back();
        Node* c = nullptr;
        try {
          c = rewrite_access::copy(graph_, rn, transform, &proposals_.back());
        } catch (...) {
          proposals_.pop_back();  // proposals_[k] goes with created_[k]
          throw;
        }
        created_.push_back(c);  // reserved: does not throw
        value.emplace(&rn, Argument(c));
        result.replacements.push_back(c);
        infer_where_known(*c);
      }
    }
    returned_.push_back(map_returned(m, value));
    return result;
  }

  // Refuses (value_error, then run() undoes everything) when a copy reads a node that comes
  // after it. A match returning several nodes has its replacement put before the first user of
  // any of them, as torch does; when an input of the replacement is computed after that user
  // (pattern `(relu(x), sigmoid(y))` with `y` after relu's first user), no place is after all
  // the inputs and before all the uses. torch.fx commits that graph ("Node 'sigmoid_1' uses node
  // 'cos' that is defined after it", pytorch/pytorch #148751); epgraph did too.
  // O(graph nodes + copies' inputs).
  void check_copies_follow_inputs(const std::vector<InternalMatch>& matches) const {
    std::unordered_map<const Node*, std::size_t> position;
    position.reserve(graph_.size());
    std::size_t i = 0;
    for (const Node* n = graph_.first_node(); n != nullptr; n = n->next()) position.emplace(n, i++);
    for (std::size_t k = 0; k < created_.size(); ++k) {
      const Node* c = created_[k];
      for (const Node* in : c->all_input_nodes()) {
        if (position.at(in) < position.at(c)) continue;
        const std::size_t match = copies_per_match_ == 0 ? 0 : k / copies_per_match_;
        std::string returned;
        for (const Node* r : matches[match].returning_nodes) {
          returned += (returned.empty() ? "'" : ", '") + std::string(r->name()) + "'";
        }
        const Place& at = places_[match];
        throw value_error(
            "Cannot replace the match returning " + returned + ": its replacement must go " +
            (at.before ? "before '" : "after '") + std::string(at.anchor->name()) +
            (at.before ? "', the first user of a returned node," : "',") + " but reads '" +
            std::string(in->name()) + "', which comes after that; nothing was changed");
      }
    }
  }

  std::vector<Node*> map_returned(const InternalMatch& m,
                                  const std::unordered_map<const Node*, Argument>& value) {
    std::vector<Node*> ret;
    for (const Argument& r : returned_values(*replacement_.last_node())) {
      const auto it = r.node() != nullptr ? value.find(r.node()) : value.end();
      Node* n = it != value.end() ? graph_.writable(it->second.node()) : nullptr;
      if (n == nullptr) {
        throw value_error("Cannot replace node '" +
                          std::string(m.returning_nodes[ret.size()]->name()) +
                          "': the replacement returns a value that is not a node");
      }
      ret.push_back(n);
    }
    for (std::size_t j = 0; j < ret.size(); ++j) changed_[m.returning_nodes[j]] = ret[j];
    return ret;
  }

  // Gives a copy the val torch would compute when epgraph has a rule and the copy has none.
  static void infer_where_known(Node& c) {
    const Node& read = c;
    if (c.op() != OpCode::call_function || read.meta().val.has_value()) return;
    NodeValue v;
    try {
      v = infer_meta(c);
    } catch (const value_error&) {
      return;  // no rule, or inputs without vals: the val stays unset
    }
    c.mutable_meta().val = std::move(v);
  }

  void rewire(const InternalMatch& m, const std::vector<Node*>& ret) {
    for (std::size_t j = 0; j < ret.size(); ++j) {
      Node* gn = m.returning_nodes[j];
      std::vector<Node*> users = gn->replace_all_uses_with(ret[j]);
      rewired_.push_back({gn, ret[j], std::move(users)});
    }
  }

  // Erases the matched nodes in one strong step (eliminate_dead_code restricted to them) and
  // returns true, or returns false when one is impure (dead-code elimination would keep it).
  bool erase_dead_matched(const std::vector<InternalMatch>& matches) {
    std::unordered_set<const Node*> doomed;
    bool impure = false;
    for (const InternalMatch& m : matches) {
      for (const auto& kv : m.nodes_map) {
        if (kv.first->op() == OpCode::placeholder) continue;
        doomed.insert(kv.second.node());
        impure = impure || kv.second.node()->is_impure();
      }
    }
    if (impure) return false;
    (void)graph_.eliminate_dead_code([&](const Node& n) { return doomed.count(&n) == 0; });
    return true;
  }

  // Erases the matched nodes one by one, as torch does (reverse pattern order), for patterns
  // with impure nodes. Checked before the first change, so only std::bad_alloc (taking a name
  // out of use) can stop it; the graph then stays valid with some matched nodes left unused.
  void erase_one_by_one(const std::vector<InternalMatch>& matches) {
    std::vector<const Node*> order;
    for (const Node& pn : pattern_.nodes()) {
      if (pn.op() != OpCode::placeholder && pn.op() != OpCode::output) order.push_back(&pn);
    }
    for (const InternalMatch& m : matches) {
      for (auto it = order.rbegin(); it != order.rend(); ++it) graph_.erase_node(m.node_of(*it));
    }
  }

  void undo() noexcept {
    try {
      for (std::size_t k = rewired_.size(); k-- > 0;) {
        Rewired& r = rewired_[k];
        std::unordered_set<Node*> users(r.users.begin(), r.users.end());
        (void)r.replacement->replace_all_uses_with(r.original,
                                                   [&](Node* u) { return users.count(u) != 0; });
      }
    } catch (...) {
      return;  // out of memory while undoing: the graph stays valid, the copies stay
    }
    for (std::size_t k = created_.size(); k-- > 0;) {
      rewrite_access::uncreate(graph_, created_[k], proposals_[k]);
    }
  }

  struct Rewired {
    Node* original;
    Node* replacement;
    std::vector<Node*> users;
  };

  Graph& graph_;
  const Graph& pattern_;
  const Graph& replacement_;
  SubgraphMatcher matcher_;
  std::size_t copies_per_match_ = 0;
  std::vector<Node*> created_;
  // Per match: where its copies went (before or after `anchor`).
  struct Place {
    const Node* anchor;
    bool before;
  };
  std::vector<Place> places_;
  std::vector<Namespace::Proposal> proposals_;  // reserved: addresses stay put
  std::vector<std::vector<Node*>> returned_;    // per match: the copies returned
  std::unordered_map<const Node*, Node*> changed_;
  std::vector<Rewired> rewired_;
};

}  // namespace detail

/// Replaces every match of `pattern` in `graph` by a copy of `replacement` (torch.fx's
/// `subgraph_rewriter.replace_pattern_with_filters`; `replace_pattern` is the same without
/// filters). Matches are found by SubgraphMatcher(pattern, ignore_literals = ignore_literals)
/// and kept when every filter accepts them; each is then replaced in graph order as torch does:
/// the replacement's placeholders stand for what the pattern's placeholders matched (a node, or
/// a literal, which is substituted into the copied arguments; a node an earlier match replaced
/// stands for its replacement), the replacement's nodes are copied before the first user of the
/// matched returning nodes (before the node after them when they have no users) with their
/// names de-duplicated by the graph's namespace (`clamp_min` taken -> `clamp_min_1`), every use
/// of a matched returning node moves to the corresponding returned value, and the matched nodes
/// are erased (their names stay taken). Copies are checked calls (Graph::check_call) and get
/// `meta().val` from infer_meta where epgraph has a rule and the replacement node has no val.
/// On a program's graph, output specs follow the returning nodes' replacements.
///
/// Arguments: `graph`, edited; `pattern` and `replacement`, graphs built in C++ (placeholders
/// are the inputs, the output node returns one value or a list of values), both distinct from
/// `graph`, unchanged and only read during the call; `match_filters`, predicates on a match;
/// `ignore_literals`, see SubgraphMatcher.
/// Returns one ReplacedPatterns per replaced match, in order.
/// Errors (nothing changes then): what SubgraphMatcher's constructor throws; value_error "Cannot
/// replace a pattern by the graph itself"; value_error "Replacement graph has no output node";
/// value_error "Placeholder count mismatch: the pattern has 2 placeholders, the replacement 1";
/// value_error "Returning nodes count mismatch: the pattern returns 1 nodes, the replacement 2
/// values"; value_error "Cannot replace a pattern that returns its placeholder 'x'";
/// value_error "Cannot replace node 'relu': the replacement returns a value that is not a node";
/// runtime_error "Cannot erase node 'relu' while it anchors an insertion point"; value_error
/// from a copy whose arguments do not bind to its operator's schema (Graph::create_node's
/// message, naming the copy); runtime_error "Cannot copy replacement node 'add': its input 'x'
/// has no copy" for a replacement node used before it is defined; value_error "Cannot replace
/// the match returning 'relu', 'sigmoid': its replacement must go before 'mul', the first user
/// of a returned node, but reads 'cos', which comes after that; nothing was changed" when no
/// place is after every input of a match's replacement and before every use of what it returns
/// (torch.fx commits that graph, pytorch/pytorch #148751); what a filter throws;
/// std::bad_alloc. Strong guarantee, short of running out of memory while undoing a failed
/// call or while erasing the matches of a pattern with impure nodes (the graph then stays
/// valid, with some nodes left unused).
/// Complexity: the matcher's, plus O(R) per match for R replacement nodes, plus the walk from a
/// match's returning nodes to their first user, plus O(N + E) to check the copies' order and
/// erase the matched nodes.
/// Mirrors: torch.fx.subgraph_rewriter.replace_pattern_with_filters /
/// _replace_pattern (torch/fx/subgraph_rewriter.py).
inline std::vector<ReplacedPatterns> replace_pattern(
    Graph& graph, const Graph& pattern, const Graph& replacement,
    const std::vector<MatchFilter>& match_filters = {}, bool ignore_literals = false) {
  return detail::PatternRewrite(graph, pattern, replacement, ignore_literals).run(match_filters);
}

}  // namespace epgraph
