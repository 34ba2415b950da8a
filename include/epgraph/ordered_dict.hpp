// ordered_dict: an insertion-ordered string-keyed dictionary (state_dict, constants).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <functional>
#include <list>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "error.hpp"

namespace epgraph {

/// A string-keyed dictionary that keeps insertion order, like Python's dict. Used for
/// `ExportedProgram::state_dict()` and `constants()`, keyed by fully qualified name.
///
/// Lookup, insertion and erasure are O(1) on average; iteration visits entries in insertion
/// order. References to values stay valid until their entry is erased.
template <class Value>
class ordered_dict {
 public:
  using value_type = std::pair<const std::string, Value>;
  using iterator = typename std::list<value_type>::iterator;
  using const_iterator = typename std::list<value_type>::const_iterator;

  ordered_dict() = default;
  /// Deep copy: O(n).
  ordered_dict(const ordered_dict& other) { *this = other; }
  /// Deep copy with the strong guarantee: O(n).
  ordered_dict& operator=(const ordered_dict& other) {
    if (this != &other) {
      ordered_dict copy;
      for (const auto& [key, value] : other) copy.insert(key, value);
      swap(copy);
    }
    return *this;
  }
  ordered_dict(ordered_dict&&) = default;
  ordered_dict& operator=(ordered_dict&&) = default;

  /// Number of entries. O(1).
  [[nodiscard]] std::size_t size() const noexcept { return entries_.size(); }
  /// True when there is no entry. O(1).
  [[nodiscard]] bool empty() const noexcept { return entries_.empty(); }
  /// True when `key` is present. O(1) on average.
  [[nodiscard]] bool contains(std::string_view key) const { return index_.count(key) != 0; }

  /// Pointer to the value stored under `key`, or nullptr when absent. O(1) on average.
  [[nodiscard]] Value* find(std::string_view key) {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &it->second->second;
  }
  /// Pointer to the value stored under `key`, or nullptr when absent. O(1) on average.
  [[nodiscard]] const Value* find(std::string_view key) const {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : &it->second->second;
  }
  /// The value stored under `key`. Throws value_error "Key '<key>' not found" when absent.
  [[nodiscard]] Value& at(std::string_view key) {
    if (Value* v = find(key)) return *v;
    throw value_error("Key '" + std::string(key) + "' not found");
  }
  /// The value stored under `key`. Throws value_error "Key '<key>' not found" when absent.
  [[nodiscard]] const Value& at(std::string_view key) const {
    if (const Value* v = find(key)) return *v;
    throw value_error("Key '" + std::string(key) + "' not found");
  }

  /// Inserts `key` at the end, or replaces the value of an existing key in place (keeping its
  /// position, like Python's `d[key] = value`). Strong guarantee. O(1) on average.
  /// Returns a reference to the stored value.
  Value& insert_or_assign(std::string key, Value value) {
    if (Value* v = find(key)) {
      *v = std::move(value);
      return *v;
    }
    return insert(std::move(key), std::move(value));
  }

  /// Inserts a new entry at the end. Throws value_error "Key '<key>' already exists" when the key
  /// is present. Strong guarantee. O(1) on average.
  Value& insert(std::string key, Value value) {
    if (contains(key)) throw value_error("Key '" + key + "' already exists");
    std::list<value_type> node;
    node.emplace_back(std::move(key), std::move(value));
    index_.reserve(index_.size() + 1);  // a later emplace cannot rehash
    auto it = node.begin();
    index_.emplace(std::string_view(it->first), it);  // may throw: node not yet linked
    entries_.splice(entries_.end(), node);            // noexcept
    return it->second;
  }

  /// Removes `key` if present; returns whether it was present. O(1) on average. No-throw.
  bool erase(std::string_view key) noexcept {
    auto it = index_.find(key);
    if (it == index_.end()) return false;
    auto entry = it->second;
    index_.erase(it);
    entries_.erase(entry);
    return true;
  }

  /// Position of `key` in insertion order, or size() when absent. O(n).
  [[nodiscard]] std::size_t position(std::string_view key) const {
    std::size_t i = 0;
    for (const auto& entry : entries_) {
      if (entry.first == key) return i;
      ++i;
    }
    return i;
  }

  /// Exchanges contents. No-throw.
  void swap(ordered_dict& other) noexcept {
    entries_.swap(other.entries_);
    index_.swap(other.index_);
  }

  iterator begin() noexcept { return entries_.begin(); }
  iterator end() noexcept { return entries_.end(); }
  const_iterator begin() const noexcept { return entries_.begin(); }
  const_iterator end() const noexcept { return entries_.end(); }

 private:
  std::list<value_type> entries_;
  std::unordered_map<std::string_view, iterator> index_;
};

}  // namespace epgraph
