// EditIndex: what a program remembers between edits (validated stamp, lookups kept up to date).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>

namespace epgraph {

class Node;

namespace detail {

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
  std::unordered_map<std::string, Node*> requested;
  // Whether two placeholders carry the same requested_name (then an erasure rebuilds).
  bool requested_duplicates = false;
  // Hash of each input spec's target -> how many input specs have a target with that hash
  // (a hit is confirmed by a scan, which only a taken target or a hash collision pays).
  std::unordered_map<std::size_t, std::size_t> target_hashes;
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
