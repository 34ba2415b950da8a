// Open addressing shared by epgraph's flat hash tables (HashCounts, StringSet, ordered_dict's
// index, the graph's interned targets): growth with rehash, and backward-shift erasure.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

namespace epgraph::detail {

// The tables are a std::vector<Slot> whose size is a power of two (or zero), probed linearly
// from slot `hash & (size - 1)` and kept at most 3/4 full. Each slot stores the hash bits of its
// entry (at least the bits that pick its home slot), so that growing and erasing read slots
// only, never the keys, and a lookup compares stored hashes before it touches a key. A
// value-initialized Slot is a free slot. `Policy` says how to read a slot:
//   static bool is_free(const Slot&) noexcept;
//   static std::size_t home_hash(const Slot&) noexcept;  // its low bits pick the home slot
// Not part of the public API.

// Makes `slots` big enough for `need` entries at load <= 3/4, moving the entries to a new
// vector when it grows. Throws std::bad_alloc and then changes nothing (strong guarantee).
// O(size of the table) when it grows, O(1) otherwise.
template <class Policy, class Slot>
void flat_reserve(std::vector<Slot>& slots, std::size_t need) {
  if (need * 4 <= slots.size() * 3) return;
  std::size_t capacity = slots.empty() ? 16 : slots.size();
  while (need * 4 > capacity * 3) capacity *= 2;
  std::vector<Slot> bigger(capacity);
  const std::size_t mask = capacity - 1;
  for (const Slot& s : slots) {
    if (Policy::is_free(s)) continue;
    std::size_t i = Policy::home_hash(s) & mask;
    while (!Policy::is_free(bigger[i])) i = (i + 1) & mask;
    bigger[i] = s;
  }
  slots.swap(bigger);
}

// The first free slot of the probe run that starts at the home slot of `hash` (where an entry
// with that hash goes). The table must have a free slot. No-throw. O(1) on average.
template <class Policy, class Slot>
[[nodiscard]] std::size_t flat_free_slot(const std::vector<Slot>& slots,
                                         std::size_t hash) noexcept {
  const std::size_t mask = slots.size() - 1;
  std::size_t i = hash & mask;
  while (!Policy::is_free(slots[i])) i = (i + 1) & mask;
  return i;
}

// Frees the occupied slot `hole`, moving back each later entry of its probe run that would no
// longer be found past the hole (backward shift: no tombstones, no key read). No-throw.
// O(length of the run).
template <class Policy, class Slot>
void flat_erase_at(std::vector<Slot>& slots, std::size_t hole) noexcept {
  const std::size_t mask = slots.size() - 1;
  for (std::size_t j = (hole + 1) & mask; !Policy::is_free(slots[j]); j = (j + 1) & mask) {
    const std::size_t home = Policy::home_hash(slots[j]) & mask;
    // The entry at j may fill the hole unless its home lies cyclically in (hole, j].
    const bool movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
    if (movable) {
      slots[hole] = slots[j];
      hole = j;
    }
  }
  slots[hole] = Slot{};
}

// Starts loading the cache line at `p` for a write that follows soon (a slot about to be filled).
// A hint only: no effect on compilers without __builtin_prefetch. No-throw.
inline void prefetch_for_write(const void* p) noexcept {
#if defined(__GNUC__) || defined(__clang__)
  __builtin_prefetch(p, 1);
#else
  (void)p;
#endif
}

// Starts loading the home slot of `hash`, so that a later probe finds it in cache. No-throw.
template <class Slot>
void flat_prefetch(const std::vector<Slot>& slots, std::size_t hash) noexcept {
#if defined(__GNUC__) || defined(__clang__)
  if (!slots.empty()) __builtin_prefetch(&slots[hash & (slots.size() - 1)]);
#else
  (void)slots;
  (void)hash;
#endif
}

// A table of 32-bit ids of strings held elsewhere (the graph's interned targets): 8-byte slots
// with 32 bits of the string's hash next to the id, so that a probe reads a key only when
// those bits match. Ids must be below UINT32_MAX. Not part of the public API.
class IdTable {
 public:
  // The id stored for the string `s`, whose hash is `h`, or `none`; `text(id)` gives the string
  // of an id. No-throw when `text` is. O(length of s) on average.
  static constexpr std::uint32_t none = UINT32_MAX;
  template <class TextOf>
  [[nodiscard]] std::uint32_t find(std::string_view s, std::size_t h,
                                   const TextOf& text) const noexcept {
    if (slots_.empty()) return none;
    const std::size_t mask = slots_.size() - 1;
    const auto tag = static_cast<std::uint32_t>(h);
    for (std::size_t i = tag & mask;; i = (i + 1) & mask) {
      const Slot& slot = slots_[i];
      if (slot.id_plus_one == 0) return none;
      if (slot.hash == tag && text(slot.id_plus_one - 1) == s) return slot.id_plus_one - 1;
    }
  }
  // Room for `extra` more ids. Strong guarantee (std::bad_alloc). O(size) when it grows.
  void reserve_more(std::size_t extra) { flat_reserve<IdTable>(slots_, size_ + extra); }
  // Adds `id` for a string of hash `h` not in the table, with room reserved. No-throw.
  void insert_reserved(std::uint32_t id, std::size_t h) noexcept {
    slots_[flat_free_slot<IdTable>(slots_, static_cast<std::uint32_t>(h))] =
        Slot{static_cast<std::uint32_t>(h), id + 1};
    ++size_;
  }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  // Starts loading the slot where a string of hash `h` is looked up. No-throw; changes nothing.
  void prefetch(std::size_t h) const noexcept {
    flat_prefetch(slots_, static_cast<std::uint32_t>(h));
  }

  struct Slot {
    std::uint32_t hash = 0;         // the low 32 bits of the string's hash
    std::uint32_t id_plus_one = 0;  // 0: a free slot
  };
  static bool is_free(const Slot& s) noexcept { return s.id_plus_one == 0; }
  static std::size_t home_hash(const Slot& s) noexcept { return s.hash; }

 private:
  std::vector<Slot> slots_;  // power-of-two size, or empty
  std::size_t size_ = 0;
};

}  // namespace epgraph::detail
