// EdgeUpdate: the one way the args <-> users edges of a graph change (stage, then commit).
// SPDX-License-Identifier: BSD-3-Clause
//
// Not part of the public API. Every edit that changes which nodes a node reads goes through an
// EdgeUpdate: Graph::create_node, Node::set_args / set_kwargs (and update_arg / update_kwarg),
// Node::replace_input_with, Node::replace_all_uses_with, Graph::erase_node and Graph::clone;
// and three edits that need no staging go through its static functions: insert_result (the
// output node's results in place), drop_dead_users (eliminate_dead_code) and leave_inputs (undoing
// a creation). Node's users-list writers take a detail::users_key, which only this class can make,
// so no other code (Graph included) can write a users list.
//
// - Staging (stage_arguments, stage_replacement, stage_erase, stage_users, then finish_stage)
//   may throw: it checks the new argument nodes (and the schema when asked), allocates
//   everything the change needs (argument storage, kwargs storage, room in every users list
//   that grows) and works out which nodes start and stop being read. It changes nothing
//   observable.
// - announce_replace tells the graph's observer, once, that uses move to another node; it may
//   throw (the observer cancels the change).
// - commit is noexcept: it swaps the new arguments in, updates every affected users list and
//   changes Graph::version() once.
//
// One de-duplication rule for users, as FX keeps `node.users` (an insertion-ordered dict keyed
// by node): a node is listed once among the users of each node it reads however often it reads
// it; a node that starts reading another is appended to its users, one that stops is removed
// without reordering the others.
//
// The graph-dependent steps (version, observer, schema, mark epochs) are private Node members
// defined in graph.hpp, so this header needs only node.hpp.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "../argument.hpp"
#include "../node.hpp"

namespace epgraph::detail {

// A staged change of a graph's edges; see the top of this file. Neither copyable nor movable.
// Clearing it (clear()) keeps its buffers, so one object can serve a run of changes.
class EdgeUpdate {
 public:
  EdgeUpdate() = default;
  EdgeUpdate(const EdgeUpdate&) = delete;
  EdgeUpdate& operator=(const EdgeUpdate&) = delete;
  EdgeUpdate(EdgeUpdate&&) = delete;
  EdgeUpdate& operator=(EdgeUpdate&&) = delete;

  // Makes room for `changes` more staged changes that each add and remove about one edge (as
  // replace_all_uses_with stages), so staging them does not reallocate. May throw
  // std::bad_alloc. O(changes).
  void reserve(std::size_t changes) {
    changes_.reserve(changes_.size() + changes);
    added_.reserve(added_.size() + changes);
    removed_.reserve(removed_.size() + changes);
  }

  // Stages `user` reading `args` and `kwargs` instead of its current arguments (a node just
  // constructed has none). Throws value_error when an argument node is null, erased or of
  // another graph (Node::check_argument_nodes), when `schema_verb` is set and the arguments do
  // not bind to the user's schema (Node::check_schema), "Too many arguments for node 'x'", or
  // std::bad_alloc. With `derive_users` false, the users lists of the argument nodes are left
  // alone (Graph::clone stages them verbatim with stage_users). Changes nothing observable.
  // O(size of old and new arguments).
  void stage_arguments(Node* user, ArgumentList args, Kwargs kwargs, const char* schema_verb,
                       bool derive_users = true) {
    user->check_argument_nodes(args, kwargs);
    if (schema_verb != nullptr) user->check_schema(args, kwargs, schema_verb);
    reserve_more(changes_, 1);
    Change c;
    c.user = user;
    c.store_args = true;
    if (!kwargs.empty() && !user->extra_) c.extra = std::make_unique<Node::Extra>();
    c.box = user->prepare_args(args.size());
    if (derive_users) diff(c, &args, &kwargs);
    c.args = std::move(args);
    c.kwargs = std::move(kwargs);
    changes_.push_back(std::move(c));  // room reserved: does not throw
  }

  // Stages `user` reading `args` and `kwargs`: its current arguments with every use of
  // `old_input`, which it reads, replaced by `new_input` (another node of its graph, already
  // checked by the caller). So it stops reading `old_input` and starts reading `new_input` unless
  // it already did: found by one scan of its current arguments that reads no argument node
  // (replace_input_with, replace_all_uses_with). May throw std::bad_alloc; changes nothing
  // observable. O(size of its arguments).
  void stage_replacement(Node* user, ArgumentList args, Kwargs kwargs, Node* old_input,
                         Node* new_input) {
    reserve_more(changes_, 1);
    reserve_more(added_, 1);
    reserve_more(removed_, 1);
    Change c;
    c.user = user;
    c.store_args = true;
    if (!kwargs.empty() && !user->extra_) c.extra = std::make_unique<Node::Extra>();
    c.box = user->prepare_args(args.size());
    bool reads_new = false;
    auto find_new = [&reads_new, new_input](const Node* n) {
      reads_new = reads_new || n == new_input;
    };
    for (const Argument& a : user->args()) for_each_node(a, find_new);
    for (const auto& kv : user->kwargs()) for_each_node(kv.second, find_new);
    // Room reserved: none of this throws.
    c.added_begin = added_.size();
    if (!reads_new) added_.push_back(new_input);
    c.added_end = added_.size();
    c.removed_begin = removed_.size();
    removed_.push_back(old_input);
    c.removed_end = removed_.size();
    c.args = std::move(args);
    c.kwargs = std::move(kwargs);
    changes_.push_back(std::move(c));
  }

  // Stages `node` no longer reading anything (it is about to be erased): it leaves the users of
  // every node it reads. Its own arguments stay as they are. May throw std::bad_alloc; changes
  // nothing observable. O(size of its arguments).
  void stage_erase(Node* node) {
    reserve_more(changes_, 1);
    Change c;
    c.user = node;
    c.store_args = false;
    diff(c, nullptr, nullptr);
    changes_.push_back(std::move(c));
  }

  // Stages `map(u)` for each `u` of `users`, in order, as the users of `node`, which has none
  // (Graph::clone copies users lists verbatim, in the source's order). `map` may throw. May
  // throw std::bad_alloc; changes nothing observable. O(size of users).
  template <class Range, class Map>
  void stage_users(Node* node, const Range& users, const Map& map) {
    reserve_more(given_, 1);
    const std::size_t begin = given_users_.size();
    for (const auto* u : users) given_users_.push_back(map(u));
    given_.push_back(GivenUsers{node, begin, given_users_.size()});
  }

  // Last staging step: makes room in every users list that grows and groups the removals of
  // several changes by the node losing users. May throw std::bad_alloc; changes nothing
  // observable. O(changes + edges changed) when the changes add to / remove from one node (as
  // replace_all_uses_with does), O(e log e) for e edges changed otherwise.
  void finish_stage() {
    if (changes_.size() == 1) {
      for (std::size_t i = changes_[0].added_begin; i < changes_[0].added_end; ++i) {
        added_[i]->reserve_users(1, users_key());
      }
    } else if (changes_.size() > 1) {
      reserve_grouped_additions();
      group_removals();
    }
    for (const GivenUsers& g : given_) g.node->reserve_users(g.end - g.begin, users_key());
  }

  // Whether a commit would change the edges or arguments of any node. O(1).
  [[nodiscard]] bool empty() const noexcept { return changes_.empty() && given_.empty(); }

  // Tells the graph's observer, if any, that the staged changes move uses of `old_value` to
  // `replacement` (with whether the output node is among the users changed). Called at most once
  // per edit, after finish_stage and before commit; does nothing when nothing is staged. Throws
  // what the observer throws (the edit is then abandoned). O(changes).
  void announce_replace(const Node& old_value, const Node& replacement) const {
    if (changes_.empty()) return;
    bool output_uses = false;
    for (const Change& c : changes_) output_uses = output_uses || c.user->op_ == OpCode::output;
    old_value.notify_replace(old_value, replacement, output_uses);
  }

  // Applies every staged change: new arguments swapped in, users lists updated (removals first,
  // then additions in staging order, then users given verbatim), the graph's version changed
  // once. Requires finish_stage after the last staging call. No-throw. O(edges changed + size
  // of the users lists that lose users).
  void commit() noexcept {
    if (empty()) return;
    (changes_.empty() ? given_.front().node : changes_.front().user)->touch_graph();
    for (Change& c : changes_) {
      if (!c.store_args) continue;
      Node* user = c.user;
      if (c.extra) user->extra_ = std::move(c.extra);
      user->commit_args(std::move(c.args), std::move(c.box));
      if (user->extra_) user->extra_->kwargs = std::move(c.kwargs);
    }
    commit_removals();
    for (const Change& c : changes_) {
      for (std::size_t i = c.added_begin; i < c.added_end; ++i)
        added_[i]->push_user(c.user, users_key());
    }
    for (const GivenUsers& g : given_) {
      for (std::size_t i = g.begin; i < g.end; ++i) g.node->push_user(given_users_[i], users_key());
    }
  }

  // --- Edits that need no staging: each writes users lists at once, and is the only way its
  // caller does. ---

  // `node` leaves the users of every node it reads; its own arguments stay. Undoes the commit of
  // a creation (Graph::uncreate, a failed prepare step of create_node): the node was appended
  // last to each users list, so the others keep their order. No-throw. O(size of its arguments
  // x users of each input).
  static void leave_inputs(Node* node) noexcept {
    auto leave = [node](const Node* input) {
      writable_node(input)->remove_user(node, users_key());
    };
    for (const Argument& a : node->args()) for_each_node(a, leave);
    for (const auto& kv : node->kwargs()) for_each_node(kv.second, leave);
  }

  // Removes from `input`'s users every user `u` with `dead(u)`, keeping the others' order
  // (Graph::eliminate_dead_code erasing many nodes at once; the dead nodes are erased next).
  // No-throw when `dead` is. O(users of input).
  template <class Dead>
  static void drop_dead_users(Node* input, Dead&& dead) noexcept {
    input->remove_users_if(std::forward<Dead>(dead), users_key());
  }

  // Inserts `value` into the result list of the output node `out` (its `args()[0]`, a list; the
  // caller checked both) at `position` (<= the list's size), in place: the results from
  // `position` on shift by one and `value` gains `out` as a user unless it is one already; the
  // graph's version changes. Strong guarantee (only std::bad_alloc, before anything changes).
  // O(results after position + users of value).
  static void insert_result(Node* out, std::size_t position, Node* value) {
    ArgumentList& results = *out->args_data()[0].list_in_place();
    const NodeSpan users = value->users();
    const bool new_input = std::find(users.begin(), users.end(), out) == users.end();
    reserve_more(results, 1);                             // may throw; changes nothing observable
    if (new_input) value->reserve_users(1, users_key());  // likewise
    // No-throw from here on: the room is reserved and Arguments move without throwing.
    static_assert(std::is_nothrow_move_constructible_v<Argument> &&
                  std::is_nothrow_move_assignable_v<Argument>);
    results.insert(results.begin() + static_cast<std::ptrdiff_t>(position), Argument(value));
    if (new_input) value->push_user(out, users_key());
    out->touch_graph();
  }

  // Forgets everything staged, keeping the buffers. No-throw.
  void clear() noexcept {
    changes_.clear();
    added_.clear();
    removed_.clear();
    removals_.clear();
    given_.clear();
    given_users_.clear();
  }

 private:
  // One node's new arguments, and the nodes that start (added_) and stop (removed_) being read.
  struct Change {
    Node* user = nullptr;
    bool store_args = false;  // false: the node is being erased, its arguments stay
    ArgumentList args;
    Kwargs kwargs;
    Node::ArgumentBox box;               // from Node::prepare_args
    std::unique_ptr<Node::Extra> extra;  // kwargs storage for a node without one
    std::size_t added_begin = 0, added_end = 0;
    std::size_t removed_begin = 0, removed_end = 0;
  };
  // Users given verbatim to `node`: given_users_[begin, end).
  struct GivenUsers {
    Node* node;
    std::size_t begin;
    std::size_t end;
  };

  // Appends to added_ the nodes `c.user` starts reading (in first-occurrence order, args then
  // kwargs) and to removed_ those it stops reading (in old order), each once; null `args` and
  // `kwargs`: it stops reading everything. Uses the nodes' scratch marks under a fresh epoch, so
  // it is O(size of old and new arguments) with no sorting or hashing.
  void diff(Change& c, const ArgumentList* args, const Kwargs* kwargs) {
    Node* const user = c.user;
    const std::uint32_t epoch = user->next_mark_epoch();
    auto flag = [epoch](Node* n, std::uint32_t f) {
      if ((n->mark_ & ~15u) != epoch) n->mark_ = epoch;
      n->mark_ |= f;
    };
    auto has = [epoch](const Node* n, std::uint32_t f) {
      return (n->mark_ & ~15u) == epoch && (n->mark_ & f) != 0;
    };
    constexpr std::uint32_t in_old = 1, in_new = 2, added = 4, removed = 8;
    auto each_old = [&](auto&& f) {
      for (const Argument& a : user->args()) for_each_node(a, f);
      for (const auto& kv : user->kwargs()) for_each_node(kv.second, f);
    };
    auto each_new = [&](auto&& f) {
      if (args != nullptr) {
        for (const Argument& a : *args) for_each_node(a, f);
      }
      if (kwargs != nullptr) {
        for (const auto& kv : *kwargs) for_each_node(kv.second, f);
      }
    };
    each_old([&](const Node* n) { flag(writable_node(n), in_old); });
    each_new([&](const Node* n) { flag(writable_node(n), in_new); });
    c.added_begin = added_.size();
    each_new([&](const Node* read) {
      Node* n = writable_node(read);  // a node of the graph being edited
      if (!has(n, in_old) && !has(n, added)) {
        flag(n, added);
        added_.push_back(n);
      }
    });
    c.added_end = added_.size();
    c.removed_begin = removed_.size();
    each_old([&](const Node* read) {
      Node* n = writable_node(read);  // a node of the graph being edited
      if (!has(n, in_new) && !has(n, removed)) {
        flag(n, removed);
        removed_.push_back(n);
      }
    });
    c.removed_end = removed_.size();
  }

  // Calls `run(first, last)` for each run of equal pointers of `v` sorted by address (`v` is
  // sorted first unless all its entries are equal). O(size) or O(size log size).
  template <class T, class Key, class Run>
  static void for_each_run(std::vector<T>& v, const Key& key, const Run& run) {
    if (v.empty()) return;
    const bool all_equal =
        std::all_of(v.begin(), v.end(), [&](const T& x) { return key(x) == key(v.front()); });
    if (!all_equal) {
      std::stable_sort(v.begin(), v.end(), [&](const T& a, const T& b) {
        return std::less<const Node*>()(key(a), key(b));
      });
    }
    for (std::size_t i = 0; i < v.size();) {
      std::size_t j = i + 1;
      while (j < v.size() && key(v[j]) == key(v[i])) ++j;
      run(i, j);
      i = j;
    }
  }

  // Room for every addition of several changes: each node gains as many users as changes add it.
  void reserve_grouped_additions() {
    if (added_.empty()) return;
    if (std::all_of(added_.begin(), added_.end(), [&](Node* n) { return n == added_.front(); })) {
      added_.front()->reserve_users(added_.size(),
                                    users_key());  // replace_all_uses_with: one node gains
      return;
    }
    std::vector<Node*> targets(added_);
    for_each_run(
        targets, [](Node* n) { return n; },
        [&](std::size_t i, std::size_t j) { targets[i]->reserve_users(j - i, users_key()); });
  }

  // removals_: (node losing a user, the user) for every change, grouped by the first.
  void group_removals() {
    removals_.reserve(removed_.size());
    for (const Change& c : changes_) {
      for (std::size_t i = c.removed_begin; i < c.removed_end; ++i) {
        removals_.emplace_back(removed_[i], c.user);
      }
    }
    for_each_run(
        removals_, [](const std::pair<Node*, Node*>& r) { return r.first; },
        [](std::size_t, std::size_t) {});
  }

  // Drops every staged (input, user) edge from the input's users, keeping the others' order.
  // Several users leaving one node go in one pass over its users (marked with a fresh epoch).
  // No-throw.
  void commit_removals() noexcept {
    if (changes_.size() == 1) {
      const Change& c = changes_[0];
      for (std::size_t i = c.removed_begin; i < c.removed_end; ++i)
        removed_[i]->remove_user(c.user, users_key());
      return;
    }
    for (std::size_t i = 0; i < removals_.size();) {
      Node* input = removals_[i].first;
      std::size_t j = i + 1;
      while (j < removals_.size() && removals_[j].first == input) ++j;
      if (j == i + 1) {
        input->remove_user(removals_[i].second, users_key());
      } else {
        const std::uint32_t leaving = input->next_mark_epoch() | 1u;
        for (std::size_t k = i; k < j; ++k) removals_[k].second->mark_ = leaving;
        input->remove_users_if([leaving](const Node* u) { return u->mark_ == leaving; },
                               users_key());
      }
      i = j;
    }
  }

  std::vector<Change> changes_;
  std::vector<Node*> added_;                       // per change: the nodes it starts reading
  std::vector<Node*> removed_;                     // per change: the nodes it stops reading
  std::vector<std::pair<Node*, Node*>> removals_;  // several changes: (input, user) by input
  std::vector<GivenUsers> given_;
  std::vector<Node*> given_users_;
};

}  // namespace epgraph::detail
