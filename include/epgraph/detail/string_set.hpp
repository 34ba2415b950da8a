// StringSet: a compact open-addressing set of strings (the namespace's given-up names).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "flat_table.hpp"

namespace epgraph::detail {

// The hash of a node name: names that differ only in their last decimal digit (`add_120` ...
// `add_129`, as FX numbers the nodes it creates) get neighbouring values, so the tables that use
// it (NameIndex, StringSet) touch one cache line per ten such names instead of one per name.
inline std::size_t name_hash(std::string_view s) noexcept {
  if (!s.empty() && s.back() >= '0' && s.back() <= '9') {
    return std::hash<std::string_view>()(s.substr(0, s.size() - 1)) +
           static_cast<std::size_t>(s.back() - '0');
  }
  return std::hash<std::string_view>()(s);
}

// A set of strings kept back to back in one character buffer and found through an
// open-addressing table (detail/flat_table.hpp: linear probing, backward-shift deletion, load at
// most 3/4) of 16-byte
// slots that hold each string's position, length and hash. The namespace's set of names given
// up by erased or renamed nodes: an std::unordered_set<std::string> costs a heap node and a
// string per name (about 70 bytes and a cache miss or two per lookup); this costs the
// characters plus 21-43 bytes and one probe, and looking a name up never allocates. Not part of
// the public API.
//
// Erasing is meant for undoing a recent insert: the characters of the last string added are
// given back, those of an earlier one stay in the buffer unused until the set is destroyed.
class StringSet {
 public:
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  [[nodiscard]] bool empty() const noexcept { return size_ == 0; }

  // Whether `s` is in the set. No allocation. O(1) on average.
  [[nodiscard]] bool contains(std::string_view s) const noexcept {
    return find_slot(s, name_hash(s)) != npos;
  }

  // Makes room for `count` more strings of `bytes` characters in total, so that as many
  // insert_reserved calls do not allocate. May throw std::bad_alloc or std::length_error and
  // then changes nothing observable. O(size) when the table grows, O(1) otherwise.
  void reserve_more(std::size_t count, std::size_t bytes) {
    const std::size_t chars_needed = chars_.size() + bytes;
    if (chars_needed > chars_.capacity()) {
      chars_.reserve(std::max(chars_needed, chars_.capacity() * 2));
    }
    flat_reserve<Policy>(slots_, size_ + count);
  }

  // Adds `s` when absent and returns whether it was added. Strong guarantee (may throw
  // std::bad_alloc, or std::length_error for a string of 4 GiB or more). O(length) on average.
  bool insert(std::string_view s) {
    if (s.size() >= empty_length) throw std::length_error("epgraph: name longer than 4 GiB");
    if (contains(s)) return false;
    reserve_more(1, s.size());
    return insert_reserved(s);
  }

  // insert() with room made by reserve_more (and `s` shorter than 4 GiB - 1, as node names
  // are): no allocation, no-throw.
  bool insert_reserved(std::string_view s) noexcept { return insert_hashed(s, name_hash(s)); }

  // insert_reserved for `name_of(*it)` of every `it` in [first, last), with room made by
  // reserve_more: a batch of names is hashed and its slots prefetched before it is inserted, so
  // that on a big table the cache misses overlap instead of following one another. No-throw
  // when `name_of` is. O(total length) on average.
  template <class It, class NameOf>
  void insert_many_reserved(It first, It last, const NameOf& name_of) noexcept {
    constexpr std::size_t batch = 16;
    std::string_view names[batch];
    std::size_t hashes[batch];
    const std::size_t mask = slots_.size() - 1;
    while (first != last) {
      std::size_t count = 0;
      for (; first != last && count < batch; ++first, ++count) {
        names[count] = name_of(*first);
        hashes[count] = name_hash(names[count]);
        prefetch_for_write(&slots_[hashes[count] & mask]);
      }
      for (std::size_t k = 0; k < count; ++k) insert_hashed(names[k], hashes[k]);
    }
  }

  // Removes `s` when present and returns whether it was there. No-throw. O(1) on average.
  bool erase(std::string_view s) noexcept {
    const std::size_t hole = find_slot(s, name_hash(s));
    if (hole == npos) return false;
    const Slot gone = slots_[hole];
    if (gone.offset + gone.length == chars_.size()) chars_.resize(gone.offset);
    flat_erase_at<Policy>(slots_, hole);
    --size_;
    return true;
  }

  void swap(StringSet& other) noexcept {
    slots_.swap(other.slots_);
    chars_.swap(other.chars_);
    std::swap(size_, other.size_);
  }

  // Equal when both hold the same strings. O(size) on average.
  friend bool operator==(const StringSet& a, const StringSet& b) noexcept {
    if (a.size_ != b.size_) return false;
    for (const Slot& s : a.slots_) {
      if (s.length != empty_length && !b.contains(a.view(s))) return false;
    }
    return true;
  }
  friend bool operator!=(const StringSet& a, const StringSet& b) noexcept { return !(a == b); }

 private:
  static constexpr std::uint32_t empty_length = UINT32_MAX;
  static constexpr std::size_t npos = SIZE_MAX;
  struct Slot {
    std::uint64_t offset = 0;             // into chars_
    std::uint32_t length = empty_length;  // empty_length: a free slot
    std::uint32_t hash = 0;               // the low 32 bits of name_hash (the home slot's bits)
  };
  struct Policy {  // how detail/flat_table.hpp reads a slot
    static bool is_free(const Slot& s) noexcept { return s.length == empty_length; }
    static std::size_t home_hash(const Slot& s) noexcept { return s.hash; }
  };

  // insert_reserved with the hash of `s` known.
  bool insert_hashed(std::string_view s, std::size_t h) noexcept {
    const std::size_t mask = slots_.size() - 1;
    const auto tag = static_cast<std::uint32_t>(h);
    std::size_t i = h & mask;
    for (; slots_[i].length != empty_length; i = (i + 1) & mask) {
      const Slot& slot = slots_[i];
      if (slot.hash == tag && slot.length == s.size() &&
          (s.empty() || std::memcmp(chars_.data() + slot.offset, s.data(), s.size()) == 0)) {
        return false;
      }
    }
    slots_[i] = Slot{static_cast<std::uint64_t>(chars_.size()),
                     static_cast<std::uint32_t>(s.size()), static_cast<std::uint32_t>(h)};
    chars_.insert(chars_.end(), s.begin(), s.end());  // within capacity: does not allocate
    ++size_;
    return true;
  }

  [[nodiscard]] std::string_view view(const Slot& s) const noexcept {
    return {chars_.data() + s.offset, s.length};
  }

  [[nodiscard]] std::size_t find_slot(std::string_view s, std::size_t h) const noexcept {
    if (size_ == 0) return npos;
    const std::size_t mask = slots_.size() - 1;
    const auto tag = static_cast<std::uint32_t>(h);
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& slot = slots_[i];
      if (slot.length == empty_length) return npos;
      if (slot.hash == tag && slot.length == s.size() &&
          (s.empty() || std::memcmp(chars_.data() + slot.offset, s.data(), s.size()) == 0)) {
        return i;
      }
    }
  }

  std::vector<Slot> slots_;  // power-of-two size, or empty
  std::vector<char> chars_;  // the strings, back to back
  std::size_t size_ = 0;
};

}  // namespace epgraph::detail
