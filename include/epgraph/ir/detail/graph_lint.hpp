// Graph::lint's edge checks: arguments and users agree both ways, each user listed once.
// SPDX-License-Identifier: BSD-3-Clause
//
// Not part of the public API. Graph::lint (graph.hpp) walks the node list itself, then hands
// the edges to lint_edges. The code is written against the node type `N` (epgraph::Node) so this
// header needs neither node.hpp nor graph.hpp (graph.hpp includes it before Graph is complete).
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace epgraph::detail {

// The concatenation of `parts` (a lint message; built only when a check fails).
inline std::string lint_message(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (const std::string_view p : parts) out += p;
  return out;
}

// Membership in a node's user list or input list. Lists of up to `short_list` entries are
// searched in place; longer ones through a sorted copy made once per node, so a node with U
// users costs O(U log U) in total, not O(U^2).
template <class N>
class LintEdgeSets {
 public:
  static constexpr std::size_t short_list = 16;

  // `v` (node pointers) sorted by address. O(size log size).
  template <class Range>
  [[nodiscard]] static std::vector<const N*> sorted_copy(const Range& v) {
    std::vector<const N*> s(v.begin(), v.end());
    std::sort(s.begin(), s.end(), std::less<const N*>());
    return s;
  }
  // True when `user` is listed among the users of `node`.
  [[nodiscard]] bool has_user(const N* node, const N* user) {
    const auto u = node->users();
    if (u.size() <= short_list) return std::find(u.begin(), u.end(), user) != u.end();
    auto it = sorted_users_.find(node);
    if (it == sorted_users_.end()) it = sorted_users_.emplace(node, sorted_copy(u)).first;
    return contains(it->second, user);
  }
  // True when `input` is among the input nodes of `user`.
  [[nodiscard]] bool uses(const N* user, const N* input) {
    auto it = sorted_inputs_.find(user);
    if (it == sorted_inputs_.end()) {
      const auto inputs = user->all_input_nodes();
      if (inputs.size() <= short_list) {
        return std::find(inputs.begin(), inputs.end(), input) != inputs.end();
      }
      it = sorted_inputs_.emplace(user, sorted_copy(inputs)).first;
    }
    return contains(it->second, input);
  }

 private:
  static bool contains(const std::vector<const N*>& sorted, const N* x) {
    return std::binary_search(sorted.begin(), sorted.end(), x, std::less<const N*>());
  }
  std::unordered_map<const N*, std::vector<const N*>> sorted_users_;
  std::unordered_map<const N*, std::vector<const N*>> sorted_inputs_;
};

// True when `users[i]` also appears before index i. `sorted` is a sorted copy of `users` when
// it is longer than the short-list limit (and unused otherwise).
template <class N, class Span>
bool listed_earlier(const Span& users, std::size_t i, const std::vector<const N*>& sorted) {
  const N* user = users[i];
  auto in_prefix = [&] {
    const auto end = users.begin() + static_cast<std::ptrdiff_t>(i);
    return std::find(users.begin(), end, user) != end;
  };
  if (users.size() <= LintEdgeSets<N>::short_list) return in_prefix();
  // Long lists: scan the prefix only for a user that occurs more than once (O(log U) otherwise).
  const auto range = std::equal_range(sorted.begin(), sorted.end(), user, std::less<const N*>());
  return range.second - range.first > 1 && in_prefix();
}

// Checks the arguments of `n` (at list position `here`): each is in the graph, comes before
// `n` and lists `n` as a user. Appends one message per violation to `problems`.
template <class N, class PositionOf>
void lint_inputs_of(const N* n, std::size_t here, const PositionOf& position_of, std::size_t unseen,
                    LintEdgeSets<N>& edges, std::vector<std::string>& problems) {
  for (const N* input : n->all_input_nodes()) {
    const std::size_t there = position_of(input);
    if (there == unseen) {
      problems.push_back(lint_message(
          {"Node '", n->name(), "' uses node '", input->name(), "' that is not in this graph"}));
      continue;
    }
    if (there >= here) {
      problems.push_back(lint_message(
          {"Node '", n->name(), "' uses node '", input->name(), "' that is defined after it"}));
    }
    if (!edges.has_user(input, n)) {
      problems.push_back(lint_message(
          {"Node '", n->name(), "' uses '", input->name(), "' but is missing from its users"}));
    }
  }
}

// Checks the users of `n`: each listed once, in the graph, and using `n`. Appends one message
// per violation to `problems`.
template <class N, class PositionOf>
void lint_users_of(const N* n, const PositionOf& position_of, std::size_t unseen,
                   LintEdgeSets<N>& edges, std::vector<std::string>& problems) {
  const auto users = n->users();
  std::vector<const N*> sorted;  // duplicate check for long user lists
  if (users.size() > LintEdgeSets<N>::short_list) sorted = LintEdgeSets<N>::sorted_copy(users);
  for (std::size_t i = 0; i < users.size(); ++i) {
    const N* user = users[i];
    if (listed_earlier<N>(users, i, sorted)) {
      problems.push_back(
          lint_message({"Node '", n->name(), "' lists user '", user->name(), "' twice"}));
      continue;
    }
    if (position_of(user) == unseen) {
      problems.push_back(lint_message(
          {"Node '", n->name(), "' lists user '", user->name(), "' that is not in this graph"}));
      continue;
    }
    if (!edges.uses(user, n)) {
      problems.push_back(lint_message({"Node '", n->name(), "' lists '", user->name(),
                                       "' as a user but '", user->name(), "' does not use it"}));
    }
  }
}

// Checks every edge of the nodes from `head` on, in list order, stopping at the first node
// whose position is `unseen` (a list that loops back or leaves the graph): arguments against
// users and users against arguments. `position_of(node)` is the node's position in the list or
// `unseen`. Appends one message per violation to `problems`. O(nodes + edges log edges).
template <class N, class PositionOf>
void lint_edges(const N* head, const PositionOf& position_of, std::size_t unseen,
                std::vector<std::string>& problems) {
  LintEdgeSets<N> edges;
  for (const N* n = head; n != nullptr && position_of(n) != unseen; n = n->next()) {
    lint_inputs_of(n, position_of(n), position_of, unseen, edges, problems);
    lint_users_of(n, position_of, unseen, edges, problems);
  }
}

}  // namespace epgraph::detail
