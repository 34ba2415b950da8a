// Building small nlohmann::ordered_json trees that never destroy a non-empty container.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// Internal to epgraph::json (the writers: serialize.hpp, the archive's payload configs).
//
// nlohmann::json 3.11.2 allocates in its noexcept destructor for a non-empty array or object (see
// dispose.hpp), so a writer that destroys one can end in std::terminate when memory runs out. Three
// ordinary ways of building a tree do exactly that:
//  - an initializer list: `ojson{{"as_int", 1}}` builds each member as a two-element array
//    [key, value], moves key and value out and destroys the (still two-element) array;
//  - growing an object: ordered_map is a std::vector of pair<const std::string, ojson>, whose
//    move may throw (the const key is copied), so growing it COPIES every member and destroys the
//    old, non-empty ones;
//  - a tree that is written out and then goes out of scope.
// object_of / array_of build a tree at its exact size from moved values, and a tree whose life
// ends in the writer is dismantled first (JsonDisposer, write_tree). No function here allocates in
// a destructor.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "dispose.hpp"

namespace epgraph::json::detail {

using ojson = nlohmann::ordered_json;

// Dismantles `value` when it is a JSON tree the caller handed over (an rvalue): an argument of
// object_of / array_of that was not moved in yet when building failed.
template <class V>
void dismantle_handed_over(V& value) noexcept {
  if constexpr (!std::is_reference_v<V> && std::is_same_v<std::decay_t<V>, ojson>) {
    dismantle(value);
  }
}

inline void add_members(ojson::object_t&) {}

template <class V, class... Rest>
void add_members(ojson::object_t& members, std::string key, V&& value, Rest&&... rest) {
  members.emplace_back(std::move(key), ojson(std::forward<V>(value)));
  add_members(members, std::forward<Rest>(rest)...);
}

/// An object of the members given as key, value, key, value, ... (keys distinct, in this order),
/// allocated once at its size; values are moved in when passed as rvalues. Throws std::bad_alloc
/// (the partly built object and the trees handed over as rvalues are dismantled first, so that
/// nothing non-empty is destroyed). O(number of members).
template <class... KeysAndValues>
[[nodiscard]] ojson object_of(KeysAndValues&&... kv) {
  static_assert(sizeof...(KeysAndValues) % 2 == 0, "object_of takes key, value pairs");
  ojson j;
  try {
    j = ojson::object();
    JsonDisposer guard(j);
    auto& members = j.get_ref<ojson::object_t&>();
    members.reserve(sizeof...(KeysAndValues) / 2);
    add_members(members, std::forward<KeysAndValues>(kv)...);
    guard.release();
  } catch (...) {
    (dismantle_handed_over<KeysAndValues>(kv), ...);
    throw;
  }
  return j;
}

/// An array of the given values, allocated once at its size. Throws std::bad_alloc (the partly
/// built array is dismantled first). O(number of values).
template <class... Values>
[[nodiscard]] ojson array_of(Values&&... values) {
  ojson j;
  try {
    j = ojson::array();
    JsonDisposer guard(j);
    auto& elements = j.get_ref<ojson::array_t&>();
    elements.reserve(sizeof...(Values));
    (elements.emplace_back(std::forward<Values>(values)), ...);
    guard.release();
  } catch (...) {
    (dismantle_handed_over<Values>(values), ...);
    throw;
  }
  return j;
}

/// A tree under construction that is dismantled when its scope ends (normal end or exception)
/// unless take() handed it on: for a function that fills a local tree and returns it.
class Tree {
 public:
  explicit Tree(ojson j) noexcept : j_(std::move(j)) {}
  Tree(const Tree&) = delete;
  Tree& operator=(const Tree&) = delete;
  ~Tree() { dismantle(j_); }
  ojson& operator*() noexcept { return j_; }
  ojson* operator->() noexcept { return &j_; }
  /// The tree (this one is left null). Never throws.
  [[nodiscard]] ojson take() noexcept { return std::move(j_); }

 private:
  ojson j_;
};

/// An empty object with room for `members` members, to be filled with operator[] or emplace_back
/// without growing: growing an ordered_json object copies its members' values (a pair with a const
/// key cannot be moved without risking an exception) and destroys the old, non-empty ones (a
/// document object that grew after receiving the graph copied the whole graph). Throws
/// std::bad_alloc. O(1).
[[nodiscard]] inline ojson object_with_room(std::size_t members) {
  ojson j = ojson::object();
  j.get_ref<ojson::object_t&>().reserve(members);
  return j;
}

/// Members collected one by one (std::vector of pairs with a non-const key moves its elements when
/// it grows, unlike ordered_map) and made into an object once, at its size, by take(). Keys are
/// not checked for repeats: the caller adds each once. Dismantles what it holds when destroyed.
class MemberList {
 public:
  MemberList() = default;
  MemberList(const MemberList&) = delete;
  MemberList& operator=(const MemberList&) = delete;
  ~MemberList() {
    for (auto& m : members_) dismantle(m.second);
  }

  /// Appends `key: value`. Throws std::bad_alloc. Amortized O(1).
  void add(std::string key, ojson value) {
    members_.emplace_back(std::move(key), std::move(value));
  }
  /// members[key] = value as ordered_json's operator[] would do it: a key already there keeps its
  /// place and takes `value` (the old value is dismantled). Throws std::bad_alloc (then nothing
  /// changed). O(number of members).
  void set(const std::string& key, ojson value) {
    if (ojson* old = find(key)) {
      dismantle(*old);
      *old = std::move(value);
    } else {
      add(key, std::move(value));
    }
  }
  /// The value at `key`, or nullptr. O(number of members).
  [[nodiscard]] ojson* find(const std::string& key) noexcept {
    for (auto& m : members_) {
      if (m.first == key) return &m.second;
    }
    return nullptr;
  }
  [[nodiscard]] bool empty() const noexcept { return members_.empty(); }
  [[nodiscard]] const std::vector<std::pair<std::string, ojson>>& members() const noexcept {
    return members_;
  }
  /// The members as one object (this list is left empty). Throws std::bad_alloc (then nothing
  /// was taken). O(number of members).
  [[nodiscard]] ojson take() {
    ojson j = ojson::object();
    auto& members = j.get_ref<ojson::object_t&>();
    members.reserve(members_.size());
    // Moving an ojson and a key into reserved room does not throw.
    for (auto& m : members_) members.emplace_back(std::move(m.first), std::move(m.second));
    members_.clear();
    return j;
  }

 private:
  std::vector<std::pair<std::string, ojson>> members_;
};

}  // namespace epgraph::json::detail
