// EditIndex: what a program remembers between edits (validated stamp, lookups kept up to date).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../../detail/flat_table.hpp"

namespace epgraph {

class Node;

namespace detail {

// A multiset of 64-bit hashes: how many times each was added. One flat table (open addressing,
// linear probing, at most 3/4 full, 16 bytes a slot), so that a lookup in a big one costs one
// cache miss (std::unordered_map's chained buckets cost two or three dependent ones). Removal
// shifts the later entries of the run back (their keys are the hashes, so no name is read).
// Growth and removal are detail/flat_table.hpp's.
// Not part of the public API; only reserve_more (and add, through it) allocates.
class HashCounts {
 public:
  // How many times `h` was added and not removed. O(1) on average. No-throw.
  [[nodiscard]] std::size_t count(std::uint64_t h) const noexcept {
    if (slots_.empty()) return 0;
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.count == 0) return 0;
      if (s.key == h) return s.count;
    }
  }
  // Number of distinct hashes held. No-throw.
  [[nodiscard]] std::size_t size() const noexcept { return size_; }

  // Starts loading the slot where `h` is looked up, so that a later count/add/remove of `h`
  // finds it in cache. No-throw; changes nothing.
  void prefetch(std::uint64_t h) const noexcept {
    flat_prefetch(slots_, static_cast<std::size_t>(h));
  }

  // Room for `extra` more distinct hashes without allocating. Throws std::bad_alloc and then
  // changes nothing. O(size) when it grows, else O(1).
  void reserve_more(std::size_t extra) { flat_reserve<Policy>(slots_, size_ + extra); }
  // Adds `h` once; needs room (reserve_more(1)) when `h` may be new. No-throw.
  void add_reserved(std::uint64_t h) noexcept {
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = h & mask;
    while (slots_[i].count != 0 && slots_[i].key != h) i = (i + 1) & mask;
    if (slots_[i].count++ == 0) {
      slots_[i].key = h;
      ++size_;
    }
  }
  // Adds `h` once. Strong guarantee (std::bad_alloc).
  void add(std::uint64_t h) {
    reserve_more(1);
    add_reserved(h);
  }
  // Removes one addition of `h` (nothing when absent). No-throw. O(1) on average.
  void remove(std::uint64_t h) noexcept {
    if (slots_.empty()) return;
    const std::size_t mask = slots_.size() - 1;
    std::size_t i = h & mask;
    for (;; i = (i + 1) & mask) {
      if (slots_[i].count == 0) return;
      if (slots_[i].key == h) break;
    }
    if (--slots_[i].count != 0) return;
    --size_;
    flat_erase_at<Policy>(slots_, i);
  }
  // Forgets every hash, keeping the table's room. No-throw. O(room).
  void clear() noexcept {
    for (Slot& s : slots_) s.count = 0;
    size_ = 0;
  }
  // Exchanges contents. No-throw.
  void swap(HashCounts& other) noexcept {
    slots_.swap(other.slots_);
    std::swap(size_, other.size_);
  }

 private:
  struct Slot {
    std::uint64_t key = 0;
    std::uint64_t count = 0;  // 0: empty
  };
  struct Policy {  // how detail/flat_table.hpp reads a slot
    static bool is_free(const Slot& s) noexcept { return s.count == 0; }
    static std::size_t home_hash(const Slot& s) noexcept { return static_cast<std::size_t>(s.key); }
  };
  std::vector<Slot> slots_;  // size a power of two (or empty)
  std::size_t size_ = 0;
};

// requested_name -> the first placeholder carrying it (find_requested_placeholder's answer):
// one flat table (detail/flat_table.hpp) of 16-byte slots, the name's hash beside the node, so
// that a lookup in a big program costs about one cache miss and never allocates (the
// std::unordered_map<std::string, Node*> it replaces built a string per lookup and took two or
// three dependent misses: ~30% of a create_mutable_buffer call at 1M nodes). The names are not
// stored: `name_of(node)` reads a node's (its meta's requested_name), only when the hashes match.
// Not part of the public API; only reserve_more (and insert, through it) allocates.
class RequestedIndex {
 public:
  static constexpr std::size_t npos = SIZE_MAX;

  // The hash under which `name` is kept (never 0: 0 marks a free slot). No-throw.
  [[nodiscard]] static std::size_t hash(std::string_view name) noexcept {
    const std::size_t h = std::hash<std::string_view>()(name);
    return h == 0 ? 1 : h;
  }
  // The slot holding `name` (of hash `h`, see hash()), or npos. No-throw when name_of is.
  // O(1) on average.
  template <class NameOf>
  [[nodiscard]] std::size_t find(std::string_view name, std::size_t h,
                                 const NameOf& name_of) const noexcept {
    if (slots_.empty()) return npos;
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.hash == 0) return npos;
      if (s.hash == h && name_of(s.node) == name) return i;
    }
  }
  // The node in slot `at` (from find). No-throw.
  [[nodiscard]] Node* node_at(std::size_t at) const noexcept { return slots_[at].node; }
  // The node kept under `name`, or nullptr. No-throw when name_of is. O(1) on average.
  template <class NameOf>
  [[nodiscard]] Node* lookup(std::string_view name, const NameOf& name_of) const noexcept {
    const std::size_t at = find(name, hash(name), name_of);
    return at == npos ? nullptr : slots_[at].node;
  }
  // Keeps `node` under `name` (its name_of) unless the name is kept already; returns whether
  // it was added. Strong guarantee (std::bad_alloc). O(1) on average.
  template <class NameOf>
  bool insert(std::string_view name, Node* node, const NameOf& name_of) {
    const std::size_t h = hash(name);
    if (find(name, h, name_of) != npos) return false;
    flat_reserve<Policy>(slots_, size_ + 1);
    slots_[flat_free_slot<Policy>(slots_, h)] = Slot{h, node};
    ++size_;
    return true;
  }
  // Frees slot `at` (from find; nothing changed since). Reads no name. No-throw.
  void erase_at(std::size_t at) noexcept {
    flat_erase_at<Policy>(slots_, at);
    --size_;
  }
  // Room for `extra` more names. Strong guarantee (std::bad_alloc). O(size) when it grows.
  void reserve_more(std::size_t extra) { flat_reserve<Policy>(slots_, size_ + extra); }
  // Starts loading the slot where `name` is looked up. No-throw; changes nothing.
  void prefetch(std::string_view name) const noexcept { flat_prefetch(slots_, hash(name)); }
  // Forgets every name, keeping the table's room. No-throw. O(room).
  void clear() noexcept {
    std::fill(slots_.begin(), slots_.end(), Slot{});
    size_ = 0;
  }
  [[nodiscard]] std::size_t size() const noexcept { return size_; }
  void swap(RequestedIndex& other) noexcept {
    slots_.swap(other.slots_);
    std::swap(size_, other.size_);
  }

 private:
  struct Slot {
    std::size_t hash = 0;  // 0: a free slot
    Node* node = nullptr;
  };
  struct Policy {  // how detail/flat_table.hpp reads a slot
    static bool is_free(const Slot& s) noexcept { return s.hash == 0; }
    static std::size_t home_hash(const Slot& s) noexcept { return s.hash; }
  };
  std::vector<Slot> slots_;  // power-of-two size, or empty
  std::size_t size_ = 0;
};

// Kept by each ExportedProgram for the edits of edit.hpp, so that an edit costs what it touches
// rather than the size of the program. Not observable: a cache that any doubt discards.
//
// - The stamp says "the program passed validate_graph_signature and nothing that check reads has
//   changed since": the graph's version() (bumped by every node creation, erasure, move, rename,
//   argument change and placeholder metadata write), the program's signature epoch (bumped by
//   every non-const graph_signature() call) and, as a guard against a reference to the
//   signature kept from before, the sizes and buffers of the two spec vectors. An edit that
//   finds the stamp current skips the O(placeholders + specs) validation, and re-stamps after
//   its own change, which keeps the program valid.
// - The lookups below are built on first use after a (re)validation, O(placeholders + input
//   specs), and kept in step by the edits themselves (O(1) each); an edit that cannot update one
//   cheaply marks it unknown (or the whole index unbuilt) and the next edit rebuilds it.
struct EditIndex {
  static constexpr std::size_t unknown = SIZE_MAX;
  static constexpr int ranks = 7;  // input ranks 0 (TOKEN) .. 6 (USER_INPUT), see input_rank

  // --- the validated stamp ---
  bool stamped = false;
  std::uint64_t graph_version = 0;
  std::uint64_t signature_epoch = 0;
  std::size_t inputs = 0;
  std::size_t outputs = 0;
  const void* input_data = nullptr;
  const void* output_data = nullptr;

  // --- lookups, valid while stamped and built ---
  bool built = false;
  // requested_name -> the first placeholder carrying it (find_requested_placeholder's answer).
  RequestedIndex requested;
  // Whether two placeholders carry the same requested_name (then an erasure rebuilds).
  bool requested_duplicates = false;
  // Hash of each input spec's target -> how many input specs have a target with that hash
  // (a hit is confirmed by a scan, which only a taken target or a hash collision pays).
  HashCounts target_hashes;
  // first_after[r]: index of the first input spec whose rank exceeds r (the number of input
  // specs when there is none): where canonical_input_index puts a spec of rank r.
  std::array<std::size_t, ranks> first_after{};
  // mutation_output_index(signature, first_after[2]) (where create_mutable_buffer puts its
  // output spec), or unknown.
  std::size_t mutation_pos = unknown;

  // Forgets everything (the next edit validates and rebuilds). No-throw.
  void drop() noexcept {
    stamped = false;
    built = false;
    mutation_pos = unknown;
  }

  // Exchanges two indexes (with their programs). No-throw.
  void swap(EditIndex& other) noexcept {
    std::swap(stamped, other.stamped);
    std::swap(graph_version, other.graph_version);
    std::swap(signature_epoch, other.signature_epoch);
    std::swap(inputs, other.inputs);
    std::swap(outputs, other.outputs);
    std::swap(input_data, other.input_data);
    std::swap(output_data, other.output_data);
    std::swap(built, other.built);
    requested.swap(other.requested);
    std::swap(requested_duplicates, other.requested_duplicates);
    target_hashes.swap(other.target_hashes);
    first_after.swap(other.first_after);
    std::swap(mutation_pos, other.mutation_pos);
  }

  // An input spec of rank `rank` was inserted at index `pos`. No-throw. O(ranks).
  void note_input_inserted(std::size_t pos, int rank) noexcept {
    for (int r = 0; r < ranks; ++r) {
      std::size_t& f = first_after[static_cast<std::size_t>(r)];
      if (f >= pos) f = rank > r ? pos : f + 1;
    }
  }
};

}  // namespace detail
}  // namespace epgraph
