// ordered_dict: an insertion-ordered string-keyed dictionary (state_dict, constants).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../detail/flat_table.hpp"
#include "../error.hpp"

namespace epgraph {

namespace detail {
struct edit_access;  // edit.hpp: the edits' early prefetch of state_dict's index
}  // namespace detail

/// A string-keyed dictionary that keeps insertion order, like Python's dict. Used for
/// `ExportedProgram::state_dict()` and `constants()`, keyed by fully qualified name.
///
/// Lookup, insertion and erasure are O(1) on average; iteration visits entries in insertion
/// order. References to values stay valid until their entry is erased. The entries form a list in
/// insertion order; the index is one flat open-addressing table of 16-byte slots (each key's hash
/// next to its entry), so that looking up a key in a big dictionary costs about one cache miss,
/// plus one for the entry when the key is present, and looking up never allocates.
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
      detail::flat_reserve<Policy>(copy.slots_, other.size());
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
  [[nodiscard]] bool contains(std::string_view key) const noexcept {
    return find_slot(key, hash_of(key)) != npos;
  }

  /// Pointer to the value stored under `key`, or nullptr when absent. O(1) on average.
  [[nodiscard]] Value* find(std::string_view key) noexcept {
    const std::size_t i = find_slot(key, hash_of(key));
    return i == npos ? nullptr : &slots_[i].entry->second;
  }
  /// Pointer to the value stored under `key`, or nullptr when absent. O(1) on average.
  [[nodiscard]] const Value* find(std::string_view key) const noexcept {
    const std::size_t i = find_slot(key, hash_of(key));
    return i == npos ? nullptr : &slots_[i].entry->second;
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
    const std::size_t h = hash_of(key);
    if (find_slot(key, h) != npos) throw value_error("Key '" + key + "' already exists");
    detail::flat_reserve<Policy>(slots_, entries_.size() + 1);  // may throw: nothing added
    std::list<value_type> node;
    node.emplace_back(std::move(key), std::move(value));  // may throw: nothing added
    // No-throw from here on. The free slot is in the run just probed (unless the table grew).
    const auto it = node.begin();
    slots_[detail::flat_free_slot<Policy>(slots_, h)] = Slot{h, it};
    entries_.splice(entries_.end(), node);
    return it->second;
  }

  /// Removes `key` if present; returns whether it was present. O(1) on average. No-throw.
  bool erase(std::string_view key) noexcept {
    const std::size_t i = find_slot(key, hash_of(key));
    if (i == npos) return false;
    const iterator entry = slots_[i].entry;
    detail::flat_erase_at<Policy>(slots_, i);
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
    slots_.swap(other.slots_);
  }

  iterator begin() noexcept { return entries_.begin(); }
  iterator end() noexcept { return entries_.end(); }
  const_iterator begin() const noexcept { return entries_.begin(); }
  const_iterator end() const noexcept { return entries_.end(); }

 private:
  friend struct detail::edit_access;

  static constexpr std::size_t npos = SIZE_MAX;
  // An index slot: the hash of the entry's key (never 0, see hash_of) and the entry; hash 0
  // marks a free slot.
  struct Slot {
    std::size_t hash = 0;
    iterator entry{};
  };
  // How detail/flat_table.hpp reads a slot.
  struct Policy {
    static bool is_free(const Slot& s) noexcept { return s.hash == 0; }
    static std::size_t home_hash(const Slot& s) noexcept { return s.hash; }
  };

  // The key's hash, 0 mapped to 1 (0 marks free slots).
  static std::size_t hash_of(std::string_view key) noexcept {
    const std::size_t h = std::hash<std::string_view>()(key);
    return h == 0 ? 1 : h;
  }
  // Starts loading the slot where `key` is looked up (and would be inserted). No-throw; changes
  // nothing.
  void prefetch(std::string_view key) const noexcept {
    detail::flat_prefetch(slots_, hash_of(key));
  }
  // The slot holding `key` (of hash `h`), or npos. Reads an entry's key only when the stored
  // hash is `h`. No-throw. O(1) on average.
  [[nodiscard]] std::size_t find_slot(std::string_view key, std::size_t h) const noexcept {
    if (slots_.empty()) return npos;
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.hash == 0) return npos;
      if (s.hash == h && s.entry->first == key) return i;
    }
  }

  std::list<value_type> entries_;  // in insertion order
  std::vector<Slot> slots_;        // the index: power-of-two size (or empty), at most 3/4 full
};

}  // namespace epgraph
