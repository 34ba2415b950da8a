// NameIndex: the graph's name -> node id hash index (find_node in O(1)).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include "../../detail/flat_table.hpp"
#include "../../detail/string_set.hpp"

namespace epgraph::detail {

// A hash set of 32-bit ids keyed by a name the caller derives from the id (`name_of(id)`): the
// graph's node-by-name index. Open addressing with linear probing, 4 bytes per slot and a load
// (entries and tombstones) of at most 3/4, so a million nodes take 8 MiB (an
// std::unordered_map<std::string_view, Node*> takes about 40 bytes per entry). Ids are below
// 2^26; the top 6 bits of a slot hold 6 bits of the name's hash, so a probe that meets another
// name rarely needs to look at it (a cache miss on a big graph). Erasing leaves a tombstone
// instead of shifting later entries back: a backward shift must read the name of every entry
// after the hole to find its home slot, a cache miss per entry on a big graph, which made
// erasing many nodes (dead-code elimination) grow faster than linearly. Tombstones are reused by
// inserts and dropped when the table is rebuilt. Not part of the public API; no function here
// calls the allocator except reserve_more.
class NameIndex {
 public:
  static constexpr std::uint32_t no_id = UINT32_MAX;
  static constexpr unsigned id_bits = 26;
  // Ids must be below this (and the all-ones slot is the empty marker).
  static constexpr std::uint32_t id_limit = (std::uint32_t{1} << id_bits) - 1;

  [[nodiscard]] std::size_t size() const noexcept { return size_; }

  // Starts loading the slot where `name` is looked up (and would be inserted), so that a later
  // find/insert of `name` finds it in cache. No-throw; changes nothing.
  void prefetch_slot(std::string_view name) const noexcept {
    if (!slots_.empty()) prefetch_for_write(&slots_[hash(name) & (slots_.size() - 1)]);
  }

  // The id stored under `name`, or no_id. O(1) on average.
  template <class NameOf>
  [[nodiscard]] std::uint32_t find(std::string_view name, const NameOf& name_of) const noexcept {
    if (slots_.empty()) return no_id;
    const std::size_t mask = slots_.size() - 1;
    const std::size_t h = hash(name);
    const std::uint32_t tag = tag_of(h);
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
      const std::uint32_t entry = slots_[i];
      if (entry == no_id) return no_id;
      if ((entry & ~id_mask) == tag && entry != tombstone && name_of(entry & id_mask) == name) {
        return entry & id_mask;
      }
    }
  }

  // Makes room so that `extra` more inserts need no allocation. May throw std::bad_alloc (and
  // then changes nothing). When it grows, the entries are re-read through `each_entry(visit)`,
  // which must call `visit(id, name)` once per entry and return how many it visited (the graph
  // walks its node list, in memory order); when that count is off, the old slots are re-read
  // instead. The table is rebuilt (same size or bigger) when entries and tombstones would pass
  // 3/4 of it; a rebuild leaves at least 1/8 of it free, so rebuilds are amortized O(1) per
  // insert or erase. O(size) when it rebuilds, O(1) otherwise.
  template <class NameOf, class EachEntry>
  void reserve_more(std::size_t extra, const NameOf& name_of, const EachEntry& each_entry) {
    const std::size_t need = size_ + extra;
    if ((need + tombstones_) * 4 <= slots_.size() * 3) return;
    std::size_t capacity = slots_.empty() ? 16 : slots_.size();
    while (need * 4 > capacity * 3) capacity *= 2;
    if (capacity == slots_.size() && need * 8 > capacity * 5) capacity *= 2;
    std::vector<std::uint32_t> bigger(capacity, no_id);
    const std::size_t mask = capacity - 1;
    // Entries are placed in batches: hash a batch, prefetch the slots it goes to, then place
    // it, so that on a big table the cache misses overlap instead of following one another.
    constexpr std::size_t batch = 16;
    std::size_t pending_hash[batch];
    std::uint32_t pending_id[batch];
    std::size_t pending = 0;
    auto flush = [&]() noexcept {
      for (std::size_t k = 0; k < pending; ++k) {
        std::size_t i = pending_hash[k] & mask;
        while (bigger[i] != no_id) i = (i + 1) & mask;
        bigger[i] = tag_of(pending_hash[k]) | pending_id[k];
      }
      pending = 0;
    };
    auto place = [&](std::uint32_t id, std::string_view name) noexcept {
      const std::size_t h = hash(name);
      prefetch_for_write(&bigger[h & mask]);
      pending_hash[pending] = h;
      pending_id[pending] = id;
      if (++pending == batch) flush();
    };
    const std::size_t visited = each_entry(place);
    flush();
    if (visited != size_) {
      std::fill(bigger.begin(), bigger.end(), no_id);
      for (const std::uint32_t entry : slots_) {
        if (entry != no_id && entry != tombstone) place(entry & id_mask, name_of(entry & id_mask));
      }
      flush();
    }
    slots_.swap(bigger);
    tombstones_ = 0;
  }

  // Adds `id` (< id_limit) under `name`, which must not be present; room must have been
  // reserved. No-throw.
  void insert(std::uint32_t id, std::string_view name) noexcept {
    const std::size_t mask = slots_.size() - 1;
    const std::size_t h = hash(name);
    std::size_t i = h & mask;
    while (slots_[i] != no_id && slots_[i] != tombstone) i = (i + 1) & mask;
    if (slots_[i] == tombstone) --tombstones_;
    slots_[i] = tag_of(h) | id;
    ++size_;
  }

  // Removes the entry `id` stored under `name` (no-op when absent), leaving a tombstone; reads no
  // other name. No-throw. O(1) on average. (`name_of` is unused; kept for the callers.)
  template <class NameOf>
  void erase(std::uint32_t id, std::string_view name, const NameOf& name_of) noexcept {
    (void)name_of;
    if (slots_.empty()) return;
    const std::size_t mask = slots_.size() - 1;
    const std::size_t h = hash(name);
    const std::uint32_t entry = tag_of(h) | id;
    std::size_t i = h & mask;
    while (slots_[i] != entry) {
      if (slots_[i] == no_id) return;
      i = (i + 1) & mask;
    }
    // An empty slot next: no probe run goes through this one, so it can be emptied.
    if (slots_[(i + 1) & mask] == no_id) {
      slots_[i] = no_id;
    } else {
      slots_[i] = tombstone;
      ++tombstones_;
    }
    --size_;
  }

 private:
  static constexpr std::uint32_t id_mask = (std::uint32_t{1} << id_bits) - 1;
  // An erased entry: tag 0 and the id id_mask, which no entry has (ids are below id_limit).
  static constexpr std::uint32_t tombstone = id_mask;
  // Names that differ only in their last decimal digit get neighbouring home slots (name_hash).
  static std::size_t hash(std::string_view s) noexcept { return name_hash(s); }
  // 6 hash bits from the top of the hash (the slot position uses the bottom bits).
  static std::uint32_t tag_of(std::size_t h) noexcept {
    return static_cast<std::uint32_t>(h >> (sizeof(std::size_t) * 8 - (32 - id_bits))) << id_bits;
  }

  std::vector<std::uint32_t> slots_;  // power-of-two size, or empty
  std::size_t size_ = 0;
  std::size_t tombstones_ = 0;
};

}  // namespace epgraph::detail
