// Build switches and helpers that catch a Node* used after Graph::erase_node.
// SPDX-License-Identifier: BSD-3-Clause
//
// Build switches for catching a `Node*` used after Graph::erase_node (torch.fx marks such nodes
// `_erased`). Not part of the public API.
//
// EPGRAPH_STALE_NODE_CHECKS is 1 under AddressSanitizer and in builds without NDEBUG, 0 in
// release builds (define it to 0 or 1 yourself to override). When it is 1, a Graph
// - keeps the last `stale_quarantine_slots` erased slots out of reuse (a quarantine), so a kept
//   pointer does not alias the next node created;
// - tracks which of its slots hold live nodes, so `Graph::contains(stale)` is false and
//   erase_node / rename_node / inserting_before / inserting_after / set_args / ... refuse an
//   erased node with value_error "... an erased node (a Node* kept after Graph::erase_node)";
// - under AddressSanitizer, poisons the memory of erased nodes while they are quarantined, so any
//   read or write through a stale pointer (`stale->name()`, `stale->users()`) stops the program
//   with "AddressSanitizer: use-after-poison" and the stack of the access.
// A Graph's layout does not depend on the switch (translation units built with and without
// NDEBUG can share graphs); with it at 0 erased slots are reused at once, as before.
#pragma once

#include <cstddef>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EPGRAPH_DETAIL_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) && !defined(EPGRAPH_DETAIL_ASAN)
#define EPGRAPH_DETAIL_ASAN 1
#endif

#ifdef EPGRAPH_DETAIL_ASAN
#include <sanitizer/asan_interface.h>
#endif

#ifndef EPGRAPH_STALE_NODE_CHECKS
#if defined(EPGRAPH_DETAIL_ASAN) || !defined(NDEBUG)
#define EPGRAPH_STALE_NODE_CHECKS 1
#else
#define EPGRAPH_STALE_NODE_CHECKS 0
#endif
#endif

namespace epgraph::detail {

// How many erased node slots a graph keeps out of reuse when EPGRAPH_STALE_NODE_CHECKS is on
// (96 KiB of nodes).
inline constexpr std::size_t stale_quarantine_slots = 1024;

// Marks `size` bytes at `p` unaddressable under AddressSanitizer; does nothing otherwise.
inline void poison_memory(const void* p, std::size_t size) noexcept {
#ifdef EPGRAPH_DETAIL_ASAN
  ASAN_POISON_MEMORY_REGION(p, size);
#else
  (void)p;
  (void)size;
#endif
}

// Undoes poison_memory.
inline void unpoison_memory(const void* p, std::size_t size) noexcept {
#ifdef EPGRAPH_DETAIL_ASAN
  ASAN_UNPOISON_MEMORY_REGION(p, size);
#else
  (void)p;
  (void)size;
#endif
}

}  // namespace epgraph::detail
