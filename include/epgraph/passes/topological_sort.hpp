// stable_topological_sort: torch._inductor's order-keeping topological sort of a Graph.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "../error.hpp"
#include "../ir/graph.hpp"

namespace epgraph {

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
///
/// Implementation: the order is computed first, then applied by relinking. O(nodes + edges): the
/// nodes are read in one pass (in list order) and written in one (in the new order); the rest
/// works on flat arrays by position.
inline void stable_topological_sort(Graph& graph) {
  const std::size_t n = graph.size_;
  if (n == 0) return;
  constexpr std::uint32_t no_wait = UINT32_MAX;
  // One pass over the nodes: each node by position, the position of each slot, and every
  // node's input occurrences (args then kwargs, repeats kept: torch's _args) as slot ids,
  // turned into positions afterwards (an input may come later in the list).
  std::vector<Node*> by_pos;
  by_pos.reserve(n);
  std::vector<std::uint32_t> pos_by_id(graph.arena_.slot_count());
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
  for (Node* m = graph.head_; m != nullptr; m = m->next()) {
    const auto p = static_cast<std::uint32_t>(by_pos.size());
    pos_by_id[Graph::id_of(m)] = p;
    by_pos.push_back(m);
    wait.push_back(Wait{static_cast<std::uint32_t>(occurrences.size()), 0, no_wait, no_wait});
    auto add = [&](const Node* input) { occurrences.push_back(Graph::id_of(input)); };
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
    throw runtime_error("Graph has a cycle through node '" + std::string(by_pos[p]->name()) + "'");
  }
  if (sorted) return;
  const std::string memory = graph.memory_order_conflict_in(order);
  if (!memory.empty()) {
    throw runtime_error("Cannot sort the graph topologically: " + memory +
                        ", and sorting would swap them");
  }
  graph.relink_in_order(order);
}

}  // namespace epgraph
