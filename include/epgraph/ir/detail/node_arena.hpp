// NodeArena: where a Graph's nodes live (chunks of slots, reuse of erased slots, stale-node
// quarantine). SPDX-License-Identifier: BSD-3-Clause
//
// Not part of the public API. A Graph owns one NodeArena and asks it for a slot before it
// constructs a node and gives the slot back when it erases one. Nodes find their chunk, and so
// their graph, from their slot number (Node::chunk_header). With EPGRAPH_STALE_NODE_CHECKS the
// arena also keeps erased slots out of reuse for a while, tracks which slots hold live nodes and
// poisons erased ones under AddressSanitizer (see stale_nodes.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "../../error.hpp"
#include "../node.hpp"
#include "name_index.hpp"
#include "stale_nodes.hpp"

namespace epgraph::detail {

// A block of node slots owned by a Graph's arena. Slots are constructed and destroyed by the
// arena; the header lets a node find its graph (Node::chunk_header).
struct NodeChunk {
  NodeChunkHeader header;
  alignas(Node) unsigned char storage[node_chunk_slots * sizeof(Node)];
};
static_assert(offsetof(NodeChunk, storage) == node_chunk_storage_offset,
              "Node::chunk_header must find the header of its chunk");

// The slots of one graph's nodes. Neither copyable nor movable (nodes point at their chunks).
class NodeArena {
 public:
  // Node ids (chunk * slots + slot) stay below the name index's limit.
  static constexpr std::size_t max_chunks = NameIndex::id_limit / node_chunk_slots;

  // What a pointer points at, found from its address alone (see slot_state).
  enum class SlotState { live, erased, not_here };

  // An arena whose chunks name `owner` as their graph. O(1).
  explicit NodeArena(Graph* owner) noexcept : owner_(owner) {}
  NodeArena(const NodeArena&) = delete;
  NodeArena& operator=(const NodeArena&) = delete;
  NodeArena(NodeArena&&) = delete;
  NodeArena& operator=(NodeArena&&) = delete;
  // Frees the chunks; live nodes must have been destroyed by the graph first. O(chunks).
  ~NodeArena() {
#if EPGRAPH_STALE_NODE_CHECKS
    for (const std::uint32_t id : quarantine_) unpoison_memory(slot_address(id), sizeof(Node));
#endif
  }

  // Number of slot ids handed out so far (ids are below it): the size of a table by node id.
  [[nodiscard]] std::size_t slot_count() const noexcept {
    return chunks_.size() * node_chunk_slots;
  }

  // Makes sure construct() has a slot. Throws runtime_error "Graph cannot hold more than
  // 67108608 nodes" when the id space is full, std::bad_alloc; changes nothing observable.
  void reserve_slot() {
#if EPGRAPH_STALE_NODE_CHECKS
    quarantine_.reserve(stale_quarantine_slots);  // once: destroy() cannot allocate
#endif
    if (free_slots_ != nullptr || (!chunks_.empty() && chunk_used_ < node_chunk_slots)) return;
    if (chunks_.size() >= max_chunks) {
      throw runtime_error("Graph cannot hold more than " +
                          std::to_string(max_chunks * node_chunk_slots) + " nodes");
    }
    reserve_more(chunks_, 1);
#if EPGRAPH_STALE_NODE_CHECKS
    reserve_more(chunks_by_address_, 1);
    reserve_more(live_bits_, node_chunk_slots / 64);
#endif
    auto chunk = std::make_unique<NodeChunk>();
    chunk->header.graph = owner_;
    chunk->header.index = static_cast<std::uint32_t>(chunks_.size());
#if EPGRAPH_STALE_NODE_CHECKS  // room reserved: none of this throws
    const NodeChunk* c = chunk.get();
    chunks_by_address_.insert(std::upper_bound(chunks_by_address_.begin(), chunks_by_address_.end(),
                                               c, std::less<const NodeChunk*>()),
                              c);
    live_bits_.resize(live_bits_.size() + node_chunk_slots / 64, 0);
#endif
    chunks_.push_back(std::move(chunk));  // room reserved: does not throw
    chunk_used_ = 0;
  }

  // Constructs a node in the slot reserve_slot made sure of. No-throw.
  Node* construct(OpCode op, std::uint32_t target) noexcept {
    std::allocator<Node> alloc;
    Node* n = nullptr;
    if (FreeSlot* f = free_slots_) {
      free_slots_ = f->next;
      const std::uint8_t slot = f->slot;
      void* where = f;
      std::allocator_traits<std::allocator<FreeSlot>>::destroy(free_alloc_, f);
      n = static_cast<Node*>(where);
      std::allocator_traits<std::allocator<Node>>::construct(alloc, n, Node::create_key(), op,
                                                             target, slot);
    } else {
      const std::size_t slot = chunk_used_++;
      n = reinterpret_cast<Node*>(chunks_.back()->storage + slot * sizeof(Node));
      std::allocator_traits<std::allocator<Node>>::construct(
          alloc, n, Node::create_key(), op, target, static_cast<std::uint8_t>(slot));
    }
#if EPGRAPH_STALE_NODE_CHECKS
    const std::uint32_t id = id_of(n);
    live_bits_[id / 64] |= std::uint64_t{1} << (id % 64);
#endif
    return n;
  }

  // Destroys `node` (not linked, not indexed) and frees its slot for reuse: at once, or with
  // EPGRAPH_STALE_NODE_CHECKS after `stale_quarantine_slots` more slots were freed (poisoned for
  // AddressSanitizer meanwhile). No-throw.
  void destroy(Node* node) noexcept {
    std::uint8_t slot = node->slot_;
#if EPGRAPH_STALE_NODE_CHECKS
    const std::uint32_t id = id_of(node);
#endif
    std::allocator<Node> alloc;
    std::allocator_traits<std::allocator<Node>>::destroy(alloc, node);
#if EPGRAPH_STALE_NODE_CHECKS
    live_bits_[id / 64] &= ~(std::uint64_t{1} << (id % 64));
    poison_memory(node, sizeof(Node));
    if (quarantine_.size() < stale_quarantine_slots) {
      quarantine_.push_back(id);  // capacity reserved by reserve_slot: does not allocate
      return;
    }
    const std::uint32_t oldest = quarantine_[quarantine_next_];
    quarantine_[quarantine_next_] = id;
    quarantine_next_ = (quarantine_next_ + 1) % stale_quarantine_slots;
    unsigned char* freed = slot_address(oldest);
    unpoison_memory(freed, sizeof(Node));
    node = reinterpret_cast<Node*>(freed);
    slot = static_cast<std::uint8_t>(oldest % node_chunk_slots);
#endif
    FreeSlot* f = reinterpret_cast<FreeSlot*>(static_cast<void*>(node));
    std::allocator_traits<std::allocator<FreeSlot>>::construct(free_alloc_, f,
                                                               FreeSlot{free_slots_, slot});
    free_slots_ = f;
  }

  // The id of a node of any arena: its chunk's index * slots + its slot. O(1).
  [[nodiscard]] static std::uint32_t id_of(const Node* node) noexcept {
    return node->chunk_header().index * static_cast<std::uint32_t>(node_chunk_slots) + node->slot_;
  }

  // The node in slot `id` of this arena (which must hold a live node). O(1).
  [[nodiscard]] Node* node_by_id(std::uint32_t id) const noexcept {
    return std::launder(reinterpret_cast<Node*>(slot_address(id)));
  }

  // What `node` points at, found from its address alone (the slot is not read): a slot of this
  // arena holding a live node, an erased slot of this arena, or something else. Maintained only
  // with EPGRAPH_STALE_NODE_CHECKS (otherwise every pointer is not_here). O(log chunks).
  [[nodiscard]] SlotState slot_state(const Node* node) const noexcept {
    const auto* chunk_of = reinterpret_cast<const NodeChunk*>(node);
    auto it = std::upper_bound(chunks_by_address_.begin(), chunks_by_address_.end(), chunk_of,
                               std::less<const NodeChunk*>());
    if (it == chunks_by_address_.begin()) return SlotState::not_here;
    const NodeChunk* c = *(it - 1);
    const auto* p = reinterpret_cast<const unsigned char*>(node);
    std::less<const unsigned char*> before;
    if (before(p, c->storage) || !before(p, c->storage + sizeof c->storage)) {
      return SlotState::not_here;
    }
    const auto offset = static_cast<std::size_t>(p - c->storage);
    if (offset % sizeof(Node) != 0) return SlotState::not_here;
    const std::uint32_t id = c->header.index * static_cast<std::uint32_t>(node_chunk_slots) +
                             static_cast<std::uint32_t>(offset / sizeof(Node));
    if (id >= live_bits_.size() * 64) return SlotState::not_here;
    return (live_bits_[id / 64] >> (id % 64)) & 1u ? SlotState::live : SlotState::erased;
  }

 private:
  // An erased slot on the free list, written into the slot's own storage.
  struct FreeSlot {
    FreeSlot* next;
    std::uint8_t slot;
  };
  static_assert(sizeof(FreeSlot) <= sizeof(Node));

  // Where slot `id` of this arena is.
  [[nodiscard]] unsigned char* slot_address(std::uint32_t id) const noexcept {
    return chunks_[id / node_chunk_slots]->storage + (id % node_chunk_slots) * sizeof(Node);
  }

  Graph* owner_;
  std::vector<std::unique_ptr<NodeChunk>> chunks_;  // own the nodes' storage
  std::size_t chunk_used_ = 0;                      // slots handed out from chunks_.back()
  FreeSlot* free_slots_ = nullptr;                  // erased slots, in the chunks' storage
  std::allocator<FreeSlot> free_alloc_;
  // Used only with EPGRAPH_STALE_NODE_CHECKS (present always, so the layout does not depend on
  // it): erased slots kept out of reuse (a ring of ids), which slots hold live nodes (by id), and
  // the chunks by address (to find a pointer's slot without reading it).
  std::vector<std::uint32_t> quarantine_;
  [[maybe_unused]] std::size_t quarantine_next_ = 0;  // unread without the checks
  std::vector<std::uint64_t> live_bits_;
  std::vector<const NodeChunk*> chunks_by_address_;
};

}  // namespace epgraph::detail
