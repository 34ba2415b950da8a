// Capability-based partitioning for backends (delegation): which nodes a backend supports, and
// the partitions of them torch.fx's CapabilityBasedPartitioner proposes; validate_partition; and
// ExecuTorch-style delegation tags written into each node's `custom` metadata.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "../detail/strings.hpp"
#include "../error.hpp"
#include "../ir/graph.hpp"
#include "../ir/node.hpp"
#include "../program/exported_program.hpp"

namespace epgraph {

/// A call_function target as torch prints it (`_get_qualified_name`): the target itself, but
/// `_operator.getitem` for the `operator.getitem` epgraph's loader keeps from the file (Python's
/// `operator` functions live in module `_operator`). Throws std::bad_alloc. O(length).
[[nodiscard]] inline std::string qualified_target_name(const Node& node) {
  const std::string_view t = node.target();
  if (::epgraph::detail::starts_with(t, "operator.")) return "_" + std::string(t);
  return std::string(t);
}

/// Whether a backend runs a node: torch.fx's `OperatorSupportBase`
/// (torch/fx/passes/operator_support.py), as a C++ predicate. An empty OperatorSupport supports
/// nothing. Copyable; calling it is whatever the predicate costs.
class OperatorSupport {
 public:
  using Predicate = std::function<bool(const Node&)>;

  /// Supports nothing.
  OperatorSupport() = default;
  /// Wraps `predicate` (torch's `create_op_support`). Throws what copying it throws.
  explicit OperatorSupport(Predicate predicate) : predicate_(std::move(predicate)) {}

  /// Whether the backend runs `node` (torch's `is_node_supported`; epgraph has no submodule map
  /// to pass: nested graphs are get_attr nodes of the graph). False for an empty support. Throws
  /// what the predicate throws.
  [[nodiscard]] bool is_node_supported(const Node& node) const {
    return predicate_ ? predicate_(node) : false;
  }

 private:
  Predicate predicate_;
};

/// torch's `create_op_support(is_node_supported)`: an OperatorSupport calling `predicate`.
/// Throws what copying it throws. O(1).
[[nodiscard]] inline OperatorSupport create_op_support(OperatorSupport::Predicate predicate) {
  return OperatorSupport(std::move(predicate));
}

/// torch's `chain(*supports)`: supports a node when every one of `supports` does (all of an empty
/// list: every node). Evaluated left to right, stopping at the first refusal, as Python's `all`.
/// Throws std::bad_alloc. O(len) per call.
[[nodiscard]] inline OperatorSupport chain(std::vector<OperatorSupport> supports) {
  return OperatorSupport([s = std::move(supports)](const Node& n) {
    return std::all_of(s.begin(), s.end(),
                       [&](const OperatorSupport& x) { return x.is_node_supported(n); });
  });
}

/// torch's `any_chain(*supports)`: supports a node when at least one of `supports` does (none
/// of an empty list). Left to right, stopping at the first acceptance, as Python's `any`.
/// Throws std::bad_alloc. O(len) per call.
[[nodiscard]] inline OperatorSupport any_chain(std::vector<OperatorSupport> supports) {
  return OperatorSupport([s = std::move(supports)](const Node& n) {
    return std::any_of(s.begin(), s.end(),
                       [&](const OperatorSupport& x) { return x.is_node_supported(n); });
  });
}

/// Supports the call_function nodes whose target is one of `targets`, each written as torch
/// prints a target (`_get_qualified_name`, see qualified_target_name):
/// `torch.ops.aten.linear.default` names one overload, `torch.ops.aten.relu` (a
/// `torch.ops.<namespace>.<op>` without the overload) every overload of the op, `_operator.getitem`
/// a Python function (also written `operator.getitem`, as `print(ep.graph)` shows it: both
/// spellings name the same function). Other nodes (placeholders, get_attr, output) are not
/// supported: torch's dict-based `OperatorSupport` says True for them, which makes every
/// placeholder a partition of its own; write that with any_chain if wanted. Throws std::bad_alloc.
/// O(total length) to build, O(1) expected per call.
[[nodiscard]] inline OperatorSupport supports_targets(const std::vector<std::string>& targets) {
  // The names are looked up as views (no string made per call): the strings live in `owned`,
  // which is filled before any view is taken and never changes after.
  struct Names {
    std::vector<std::string> owned;
    std::unordered_set<std::string_view> exact;
    std::unordered_set<std::string_view> packets;  // "torch.ops.aten.relu": every overload
  };
  auto names = std::make_shared<Names>();
  names->owned.reserve(2 * targets.size());
  for (const std::string& t : targets) {
    names->owned.push_back(t);  // torch.ops.higher_order.cond is an operator of its own
    if (::epgraph::detail::starts_with(t, "operator.")) names->owned.push_back("_" + t);
  }
  for (const std::string& t : names->owned) {
    const bool torch_op = ::epgraph::detail::starts_with(t, "torch.ops.");
    const std::size_t dots = static_cast<std::size_t>(std::count(t.begin(), t.end(), '.'));
    names->exact.insert(t);
    if (torch_op && dots == 3) names->packets.insert(t);
  }
  return OperatorSupport([names = std::shared_ptr<const Names>(std::move(names))](const Node& n) {
    if (n.op() != OpCode::call_function) return false;
    const std::string_view target = n.target();
    if (::epgraph::detail::starts_with(target, "operator.")) {  // torch's `_operator.getitem`
      return names->exact.count(qualified_target_name(n)) != 0;
    }
    if (names->exact.count(target) != 0) return true;
    if (names->packets.empty() || target.rfind("torch.ops.", 0) != 0) return false;
    const std::size_t last = target.rfind('.');
    return last != std::string_view::npos && names->packets.count(target.substr(0, last)) != 0;
  });
}

/// Supports the call_function nodes whose every tensor (the tensors of `meta().val`, one or a
/// tuple, and those of the nodes it reads) has one of `dtypes`: what torch's `OperatorSupport`
/// dtype rules and `OpSupports.decline_if_input_dtype` express, for all inputs and outputs at
/// once. A node without tensor metadata passes (nothing to refuse); non-call_function nodes are
/// not supported. Throws std::bad_alloc. O(inputs + outputs) per call.
[[nodiscard]] inline OperatorSupport supports_dtypes(std::vector<dtype> dtypes) {
  return OperatorSupport([d = std::move(dtypes)](const Node& n) {
    if (n.op() != OpCode::call_function) return false;
    const std::function<bool(const NodeValue&)> ok = [&](const NodeValue& v) {
      if (const TensorMeta* t = v.tensor()) {
        return std::find(d.begin(), d.end(), t->dtype) != d.end();
      }
      if (const NodeValue::List* l = v.elements()) return std::all_of(l->begin(), l->end(), ok);
      return true;
    };
    if (!ok(n.meta().val)) return false;
    for (const Node* in : n.all_input_nodes()) {
      if (!ok(in->meta().val)) return false;
    }
    return true;
  });
}

/// One proposed partition: torch's `Partition` (torch/fx/passes/infra/partitioner.py).
struct Partition {
  /// torch's partition id (the order in which the reverse walk created it).
  std::size_t id = 0;
  /// The nodes, in torch's order: graph order, then getitem nodes moved in afterwards.
  std::vector<Node*> nodes;
};

/// The options of torch's CapabilityBasedPartitioner constructor, same names and defaults.
struct PartitionerOptions {
  /// Keep partitions of at most one compute node (default: dropped).
  bool allows_single_node_partition = false;
  /// Targets not counted as compute when dropping single-node partitions, besides torch's
  /// defaults `torch.ops.aten.view` and `_operator.getitem` (whole names, compared exactly:
  /// torch's `torch.ops.aten.view` matches no overload such as `torch.ops.aten.view.default`).
  std::vector<std::string> non_compute_ops;
  /// Targets that count twice, so that one of them alone makes a partition worth keeping.
  std::vector<std::string> allowed_single_node_partition_ops;
  /// Merge a new node's partition only with its direct users' partitions.
  bool skip_horizontal_fusion = false;
};

namespace detail {

// The node graph in the index form the partitioner walks: nodes in graph order, users by index.
struct PartitionGraph {
  std::vector<Node*> nodes;
  std::vector<char> getitem;              // whether node i is an `operator.getitem` call
  std::vector<std::uint32_t> user_begin;  // CSR: users of i are users[user_begin[i] .. [i+1])
  std::vector<std::uint32_t> users;

  explicit PartitionGraph(Graph& g) {
    nodes.reserve(g.size());
    getitem.reserve(g.size());
    for (Node& n : g.nodes()) {
      nodes.push_back(&n);
      getitem.push_back(n.op() == OpCode::call_function && (n.target() == "_operator.getitem" ||
                                                            n.target() == "operator.getitem")
                            ? 1
                            : 0);
    }
    // Node -> position. Nodes never overlap, so (address - lowest address) / sizeof(Node) differs
    // between nodes: where the nodes lie close together (a graph's nodes share a few large
    // blocks), an array indexed by it, read in about address order as users lie near their
    // producers; elsewhere an open-addressing table (linear probing, at least twice the node
    // count). Either is one allocation instead of one per node.
    std::uintptr_t low = std::numeric_limits<std::uintptr_t>::max();
    std::uintptr_t high = 0;
    for (const Node* n : nodes) {
      low = std::min(low, reinterpret_cast<std::uintptr_t>(n));
      high = std::max(high, reinterpret_cast<std::uintptr_t>(n));
    }
    const std::size_t span = nodes.empty() ? 0 : (high - low) / sizeof(Node) + 1;
    std::vector<std::uint32_t> direct;
    std::vector<std::pair<const Node*, std::uint32_t>> table;
    std::size_t mask = 0;
    const auto slot = [&mask](const Node* n) {
      return static_cast<std::size_t>(
                 (static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(n)) >> 4) *
                 std::uint64_t{0x9E3779B97F4A7C15u}) &
             mask;
    };
    const bool dense = span <= 8 * nodes.size() + 4096;
    if (dense) {
      direct.assign(span, std::numeric_limits<std::uint32_t>::max());
      for (std::size_t i = 0; i < nodes.size(); ++i) {
        direct[(reinterpret_cast<std::uintptr_t>(nodes[i]) - low) / sizeof(Node)] =
            static_cast<std::uint32_t>(i);
      }
    } else {
      mask = 1;
      while (mask < 2 * nodes.size()) mask <<= 1;
      table.assign(mask, {nullptr, 0});
      mask -= 1;
      for (std::size_t i = 0; i < nodes.size(); ++i) {
        std::size_t h = slot(nodes[i]);
        while (table[h].first != nullptr) h = (h + 1) & mask;
        table[h] = {nodes[i], static_cast<std::uint32_t>(i)};
      }
    }
    const auto missing = []() {
      return std::out_of_range("PartitionGraph: a user not in the graph");
    };
    const auto index = [&](const Node* n) {
      if (dense) {
        const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(n);
        if (a < low || a > high) throw missing();
        const std::uint32_t i = direct[(a - low) / sizeof(Node)];
        if (i == std::numeric_limits<std::uint32_t>::max() || nodes[i] != n) throw missing();
        return i;
      }
      std::size_t h = slot(n);
      while (table[h].first != n) {
        if (table[h].first == nullptr) throw missing();
        h = (h + 1) & mask;
      }
      return table[h].second;
    };
    user_begin.reserve(nodes.size() + 1);
    for (const Node* n : nodes) {
      user_begin.push_back(static_cast<std::uint32_t>(users.size()));
      for (const Node* u : n->users()) users.push_back(index(u));
    }
    user_begin.push_back(static_cast<std::uint32_t>(users.size()));
  }
  [[nodiscard]] std::size_t size() const noexcept { return nodes.size(); }
};

}  // namespace detail

/// torch.fx's `CapabilityBasedPartitioner` (torch/fx/passes/infra/partitioner.py, torch 2.13):
/// groups the nodes `support` accepts into partitions that keep the graph acyclic when each is
/// fused. Only proposes; nothing in the graph changes (tag_partitions writes the result).
///
/// The graph must outlive the partitioner and not change between construction and
/// propose_partitions.
class CapabilityBasedPartitioner {
 public:
  /// Throws std::bad_alloc. O(1).
  CapabilityBasedPartitioner(Graph& graph, OperatorSupport support, PartitionerOptions options = {})
      : graph_(&graph), support_(std::move(support)), options_(std::move(options)) {}

  /// The partitions torch 2.13's `propose_partitions()` returns on the same graph and support:
  /// the same node sets, ids and order (ascending id), and each partition's nodes in torch's
  /// order. torch's algorithm, reproduced step by step: nodes are visited in reverse graph
  /// order; each supported node starts a partition (ids 0, 1, ... in that order) that then tries
  /// to merge with every other partition, oldest first (with skip_horizontal_fusion: with its
  /// users' partitions only); an unsupported node makes the oldest partition try to merge with
  /// every other one. A merge is refused when the merged partition would close a cycle, judged
  /// as torch judges it: a path from the merged partition's users back into it, or into a
  /// partition whose recorded downstream partitions (torch's `partition_map`) hold one of the
  /// two. The larger partition keeps its id (the first one on a tie). Afterwards the users of a
  /// node whose users are all `_operator.getitem` join that node's partition (repeated until
  /// nothing moves; they leave their partition when the producer has none), and, unless
  /// allows_single_node_partition, partitions with at most one compute node are dropped
  /// (non_compute_ops / allowed_single_node_partition_ops as in torch); empty ones are dropped.
  ///
  /// Where torch is slower than it needs to be, the result is the same by other means: torch
  /// materializes every node's full set of downstream nodes (`_DependencyViewer`, quadratic
  /// memory), tries every partition against each new one and walks for every attempt. Here the
  /// downstream partitions of each partition's users (what torch's walk meets) are kept as a set
  /// per partition, exact because only a merge changes them and only the sets that hold one of
  /// the two merged ids (checked when a set is next used); a merge attempt is answered by bit
  /// tests, and by a walk only where a user of one partition lies in the other. Whole runs of
  /// candidates are answered at once: the candidates of a partition that lie in its cached set
  /// (and hold none of its users) are refused whatever their order, so only the others are
  /// tried, and filtered again after each merge; the pass of an unsupported node tries only the
  /// partitions created or merged since the previous pass of the same, unchanged oldest
  /// partition (and those before its last merge): a refused merge stays refused while neither
  /// partition changes. Walks stop where a cached set answers for everything below (an
  /// unassigned node that is a partition's only user; a partition whose set is in its record,
  /// or, for a cycle question, holds neither id). The id sets drop their low words whose live
  /// ids are all in (a partition's downstream partitions are most of the older ones), so most
  /// sets are a few words. Time on a decoder (bench=partition): near linear, about 0.02-0.04 s
  /// at 100k nodes and 0.26-0.55 s at 1M (26 s at 100k before); in general, O(P) attempts per new
  /// partition remain possible (graphs where many older partitions are neither upstream nor
  /// downstream of it), and each set is O(P / 64) words at worst. Memory O(N + E) plus the sets.
  /// torch's is O(N^2) for the downstream node sets alone. The graph must be in topological
  /// order (as every loaded or exported graph is; torch assumes it too).
  /// Throws what the support predicate throws, and std::bad_alloc.
  [[nodiscard]] std::vector<Partition> propose_partitions() const;

 private:
  Graph* graph_;
  OperatorSupport support_;
  PartitionerOptions options_;
};

namespace detail {

// A set of partition ids as bits (ids are dense: 0, 1, ... in creation order); grows on insert.
// The words below `base` are not stored: every id under base * 64 is in the set, or is the id
// of a partition merged away (compact() moves base up over words whose live ids are all in the
// set). A merged-away id is never asked about again (ids are not reused; every question is about
// live partitions), so it may count as in or out. A partition's downstream partitions are most
// of the older ones, which makes most sets a few words above their base.
struct IdBits {
  std::size_t base = 0;
  std::vector<std::uint64_t> words;  // words[i] holds ids (base + i) * 64 ...

  [[nodiscard]] bool test(std::uint32_t id) const noexcept {
    const std::size_t w = id / 64;
    if (w < base) return true;
    return w - base < words.size() && ((words[w - base] >> (id % 64)) & 1u) != 0;
  }
  // Word `w` of the set (all ones under base).
  [[nodiscard]] std::uint64_t word(std::size_t w) const noexcept {
    if (w < base) return ~std::uint64_t{0};
    return w - base < words.size() ? words[w - base] : 0;
  }
  void insert(std::uint32_t id) {
    const std::size_t w = id / 64;
    if (w < base) return;
    if (words.size() <= w - base) words.resize(w - base + 1, 0);
    words[w - base] |= std::uint64_t{1} << (id % 64);
  }
  void erase(std::uint32_t id) {
    const std::size_t w = id / 64;
    if (w < base) {  // store the words from id's on again, all ones
      words.insert(words.begin(), base - w, ~std::uint64_t{0});
      base = w;
    }
    if (w - base < words.size()) words[w - base] &= ~(std::uint64_t{1} << (id % 64));
  }
  void insert_all(const IdBits& other) {
    if (other.base > base) {
      words.erase(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(
                                                     std::min(words.size(), other.base - base)));
      base = other.base;
    }
    const std::size_t skip = base - other.base;  // other's words under our base
    if (other.words.size() <= skip) return;
    const std::size_t n = other.words.size() - skip;
    if (words.size() < n) words.resize(n, 0);
    for (std::size_t i = 0; i < n; ++i) words[i] |= other.words[skip + i];
  }
  // Moves base up over the words (under word `limit`, the ids that exist) whose ids in `live`
  // are all in the set.
  void compact(const IdBits& live, std::size_t limit) {
    std::size_t k = 0;
    while (k < words.size() && base + k < limit &&
           (words[k] | ~live.word(base + k)) == ~std::uint64_t{0})
      ++k;
    if (k == 0) return;
    words.erase(words.begin(), words.begin() + static_cast<std::ptrdiff_t>(k));
    base += k;
  }
  // The ids stored as bits (for a set whose base is 0: every id in it).
  template <class F>
  void for_each(F&& f) const {
    for (std::size_t i = 0; i < words.size(); ++i) {
      for (std::uint64_t w = words[i]; w != 0; w &= w - 1) {
        f(static_cast<std::uint32_t>((base + i) * 64 +
                                     static_cast<std::size_t>(count_trailing_zeros(w))));
      }
    }
  }
  // The index of the lowest set bit of w (w != 0): one instruction where the compiler has it
  // (for_each runs it once per id of sets as large as the partition count), a loop elsewhere.
  [[nodiscard]] static int count_trailing_zeros(std::uint64_t w) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_ctzll(w);
#else
    int n = 0;
    while ((w & 1u) == 0) {
      w >>= 1;
      ++n;
    }
    return n;
#endif
  }
};

// State of one propose_partitions run; names follow torch's locals.
class PartitionRun {
 public:
  // by_walks: try every candidate and answer every cycle question by a walk, as torch does (no
  // cached sets, no candidate filtering); the same partitions, slower. Kept to test against.
  PartitionRun(Graph& g, const OperatorSupport& support, const PartitionerOptions& options,
               bool by_walks = false)
      : pg_(g), support_(support), options_(options), by_walks_(by_walks) {}

  // torch's propose_partitions: nodes in reverse graph order, each supported one a new
  // partition that tries to merge with its users' partitions; then finish().
  std::vector<Partition> run();

 private:
  // torch's loop over merge_candidates: `self` tries every other live partition in
  // partitions_order, as torch does (every question answered by a walk): the reference the
  // faster merge_run is tested against.
  void merge_all_by_walks(std::uint32_t self) {
    if (self == none) return;
    std::vector<std::pair<std::size_t, std::uint32_t>> others;
    alive_.for_each([&](std::uint32_t id) {
      if (id != self) others.emplace_back(parts_[id].order, id);
    });
    std::sort(others.begin(), others.end());
    for (const auto& o : others) try_merge(self, o.second);
  }

  // The live partition with the least partitions_order (none when there is none).
  // (The least order of a live partition never decreases: a merge keeps the lesser of two.)
  [[nodiscard]] std::uint32_t oldest() {
    while (oldest_cursor_ < order_id_.size() && order_id_[oldest_cursor_] == none) ++oldest_cursor_;
    return oldest_cursor_ < order_id_.size() ? order_id_[oldest_cursor_] : none;
  }

  // The live partitions (but `self`) after partitions_order `after` that a merge with `self` is
  // not already known to refuse, in partitions_order: those outside `self`'s cached downstream
  // set, and those holding one of its users. (A partition in that set, none of whose nodes is a
  // user of self, closes a cycle with self: try_merge's first test.)
  std::vector<std::uint32_t> filtered_candidates(std::uint32_t self, std::int64_t after) {
    const IdBits& down = down_of(self);
    const std::vector<std::uint32_t> holders = user_partitions(self);
    std::vector<std::pair<std::size_t, std::uint32_t>> found;
    for (std::size_t i = down.base; i < alive_.words.size(); ++i) {
      const std::uint64_t d = down.word(i);
      for (std::uint64_t w = alive_.words[i] & ~d; w != 0; w &= w - 1) {
        const std::uint32_t id = static_cast<std::uint32_t>(
            i * 64 + static_cast<std::size_t>(IdBits::count_trailing_zeros(w)));
        if (id != self && static_cast<std::int64_t>(parts_[id].order) > after)
          found.emplace_back(parts_[id].order, id);
      }
    }
    for (const std::uint32_t id : holders) {  // those in down
      if (down.test(id) && id != self && parts_[id].alive &&
          static_cast<std::int64_t>(parts_[id].order) > after)
        found.emplace_back(parts_[id].order, id);
    }
    std::sort(found.begin(), found.end());
    found.erase(std::unique(found.begin(), found.end()), found.end());
    std::vector<std::uint32_t> out;
    out.reserve(found.size());
    for (const auto& f : found) out.push_back(f.second);
    return out;
  }

  // torch's loop over the merge candidates from `self` on, where every candidate not in `list`
  // (live ones, in partitions_order) is known to be refused while self is unchanged: each is tried
  // in turn; after a merge, the candidates after the merged one are filtered again for the new
  // self. Returns the partitions_order of the last candidate merged (-1 for none); `self`
  // becomes the surviving id.
  std::int64_t merge_run(std::uint32_t& self, std::vector<std::uint32_t> list) {
    std::int64_t last_merged = -1;
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::uint32_t other = list[i];
      if (other == self || !parts_[other].alive) continue;
      const std::int64_t order = static_cast<std::int64_t>(parts_[other].order);
      if (try_merge(self, other)) {
        last_merged = order;
        list = filtered_candidates(self, order);
        i = static_cast<std::size_t>(-1);
      }
    }
    return last_merged;
  }

  // The pass of an unsupported node: the oldest partition tries every other one. A refused merge
  // stays refused while neither partition changes (a merge of two others only moves nodes to a
  // partition whose record holds the removed one's, and records only grow; a new partition lies
  // upstream of every walk), so after a pass of the same, unchanged oldest partition only the
  // partitions created or merged since, and those before its last merge, need trying.
  void merge_pass_of_oldest() {
    std::uint32_t self = oldest();
    if (self == none) return;
    std::vector<std::uint32_t> list;
    if (pass_self_ == self && parts_[self].mod == pass_self_mod_) {
      std::vector<std::pair<std::size_t, std::uint32_t>> found;
      for (std::size_t o = parts_[self].order + 1;
           static_cast<std::int64_t>(o) <= pass_after_ && o < order_id_.size(); ++o) {
        if (order_id_[o] != none) found.emplace_back(o, order_id_[o]);
      }
      for (std::size_t i = pass_log_; i < log_.size(); ++i) {
        const std::uint32_t id = log_[i];
        if (id != self && parts_[id].alive &&
            static_cast<std::int64_t>(parts_[id].order) > pass_after_) {
          found.emplace_back(parts_[id].order, id);
        }
      }
      std::sort(found.begin(), found.end());
      found.erase(std::unique(found.begin(), found.end()), found.end());
      list.reserve(found.size());
      for (const auto& f : found) list.push_back(f.second);
    } else {
      list = filtered_candidates(self, -1);
    }
    pass_after_ = merge_run(self, std::move(list));
    pass_self_ = self;
    pass_self_mod_ = parts_[self].mod;
    pass_log_ = log_.size();
  }

  static constexpr std::uint32_t none = std::numeric_limits<std::uint32_t>::max();
  static constexpr std::size_t no_order = std::numeric_limits<std::size_t>::max();

  struct Part {
    std::vector<std::uint32_t> nodes;  // torch's dict, in insertion order
    std::vector<std::uint32_t> users;  // partition_users (a set)
    IdBits reach;                      // partition_map (merged-away ids: either way)
    std::size_t order = 0;             // partitions_order
    std::uint64_t mod = 0;             // when it was created or last merged (clock_)
    bool alive = true;
  };

  // Marks the visit of `i` in the current walk; false when already visited.
  bool visit(std::uint32_t i) {
    if (visit_mark_[i] == epoch_) return false;
    visit_mark_[i] = epoch_;
    return true;
  }
  void new_walk() {
    if (++epoch_ == 0) {
      std::fill(visit_mark_.begin(), visit_mark_.end(), 0u);
      std::fill(part_mark_.begin(), part_mark_.end(), 0u);
      epoch_ = 1;
    }
  }

  // Whether partition `id` has a cached downstream set that is still exact. A merge of m and r
  // makes inexact exactly the sets holding m or r (see down_of); the merges since a set was
  // last checked are looked at when it is next used (each once per set), not at every merge.
  bool down_valid(std::uint32_t id) {
    if (id >= down_.size() || !down_[id].valid) return false;
    Down& d = down_[id];
    for (; d.checked < merges_.size(); ++d.checked) {
      const auto& e = merges_[d.checked];
      if (d.bits.test(e.first) || d.bits.test(e.second)) {
        d.valid = false;
        return false;
      }
    }
    return true;
  }

  // torch's downstream_partitions (before it removes the source ids): the partitions assigned
  // anywhere downstream of `starts` (themselves included) and, for each of them, the partitions
  // it records. Every reached partition's record counts, as in torch. (An earlier version
  // skipped the record of a partition already met in another's record; 20,000 random graphs
  // gave the same partitions either way, but nothing proves it, and torch does not skip.)
  IdBits downstream_partitions(const std::vector<std::uint32_t>& starts) {
    IdBits found;
    new_walk();
    if (part_mark_.size() < parts_.size()) part_mark_.resize(parts_.size(), 0);
    std::vector<std::uint32_t> stack;
    for (std::uint32_t s : starts) {
      if (visit(s)) stack.push_back(s);
    }
    while (!stack.empty()) {
      const std::uint32_t d = stack.back();
      stack.pop_back();
      const std::uint32_t a = assignment_[d];
      // An unassigned node that is the only user of a partition with a valid cached set: what a
      // walk from it meets is that set.
      if (a == none && !by_walks_) {
        const std::uint32_t p = sole_user_of_[d];
        if (p != none && parts_[p].alive && parts_[p].users.size() == 1 &&
            parts_[p].users[0] == d && down_valid(p)) {
          found.insert_all(down_[p].bits);
          continue;
        }
      }
      if (a != none && part_mark_[a] != epoch_) {
        part_mark_[a] = epoch_;
        found.insert_all(parts_[a].reach);  // first: its base is usually high
        found.insert(a);
      }
      // What a walk from a node of a covered partition meets is already in: it lies in the
      // partition or downstream of its users, and its cached set of those is in its record.
      if (a != none && !by_walks_ && down_valid(a) && down_[a].covered) {
        continue;
      }
      for (std::uint32_t i = pg_.user_begin[d]; i < pg_.user_begin[d + 1]; ++i) {
        if (visit(pg_.users[i])) stack.push_back(pg_.users[i]);
      }
    }
    return found;
  }

  void create_partition(std::uint32_t node, std::uint32_t id) {
    parts_.emplace_back();
    alive_.insert(id);
    Part& p = parts_[id];
    p.nodes.push_back(node);
    p.order = id;
    assignment_[node] = id;
    order_id_.push_back(id);
    p.mod = ++clock_;
    log_.push_back(id);
    for (std::uint32_t i = pg_.user_begin[node]; i < pg_.user_begin[node + 1]; ++i) {
      p.users.push_back(pg_.users[i]);
    }
    IdBits found = downstream_partitions(parts_[id].users);
    p.reach.insert_all(found);
    p.reach.erase(id);
    p.reach.compact(alive_, parts_.size() / 64);
    store_down(id, std::move(found));
  }

  // The downstream partitions of partition `id`'s users (downstream_partitions(users), torch's
  // answer to "which partitions does a walk from here meet") as a bit set, cached. What keeps a
  // cached set exact: it depends only on the assignment and recorded sets of the partitions
  // holding nodes downstream of those users. A new partition holds one node upstream of every
  // assigned node (nodes are visited in reverse graph order), so creating one changes no other
  // set; a merge of m and r changes the assignment of r's nodes and the recorded set of m only,
  // so exactly the sets that hold m or r change (invalidate_after_merge).
  const IdBits& down_of(std::uint32_t id) {
    if (!down_valid(id)) store_down(id, downstream_partitions(parts_[id].users));
    return down_[id].bits;
  }
  void store_down(std::uint32_t id, IdBits found) {
    if (down_.size() <= id) down_.resize(std::size_t{id} + 1);
    Down& d = down_[id];
    d.bits = std::move(found);
    d.valid = true;
    d.checked = merges_.size();
    if (parts_[id].users.size() == 1) sole_user_of_[parts_[id].users[0]] = id;
    d.bits.compact(alive_, parts_.size() / 64);
    // Covered: every live partition the set holds (besides id) is in id's record.
    const IdBits& rec = parts_[id].reach;
    d.covered = true;
    const std::size_t end = d.bits.base + d.bits.words.size();
    for (std::size_t i = rec.base; i < end && d.covered; ++i) {
      std::uint64_t extra = d.bits.word(i) & ~rec.word(i) & alive_.word(i);
      if (i == id / 64) extra &= ~(std::uint64_t{1} << (id % 64));
      d.covered = extra == 0;
    }
  }
  void invalidate_after_merge(std::uint32_t m, std::uint32_t r) {
    merges_.emplace_back(m, r);
    if (m < down_.size()) down_[m].valid = false;
    if (r < down_.size()) down_[r].valid = false;
  }

  // The partitions holding a user of partition `id`.
  [[nodiscard]] std::vector<std::uint32_t> user_partitions(std::uint32_t id) const {
    std::vector<std::uint32_t> holders;
    for (std::uint32_t u : parts_[id].users) {
      if (assignment_[u] != none) holders.push_back(assignment_[u]);
    }
    return holders;
  }

  // Whether merging `self` and `other` closes a cycle, as finds_cycle would answer it. The walk
  // from the merged partition's outside users is the union of the walks from each one's users
  // (when none of one's users lies in the other, those are exactly its cached users), so the
  // answer is whether either cached set holds either id: two bit tests instead of a walk.
  bool closes_cycle(std::uint32_t self, std::uint32_t other, bool users_cross,
                    const std::vector<std::uint32_t>& users) {
    if (by_walks_ || users_cross) return finds_cycle(users, self, other);
    const IdBits& s = down_of(self);
    if (s.test(self) || s.test(other)) return true;
    const IdBits& o = down_of(other);
    return o.test(self) || o.test(other);
  }

  // torch's dfs_iter_find_cycle for merging partitions a and b whose outside users are `users`:
  // a walk from them that reaches a or b, or a partition whose recorded downstream partitions
  // hold a or b, closes a cycle. The cached sets cut the walk short, exactly: below an
  // unassigned node that is a partition's only user lies what its cached set holds (the walk
  // closes a cycle there exactly when the set holds a or b), and below a node of a partition q
  // lie only q's nodes and what q's users reach, so when q's cached set holds neither a nor b,
  // nothing below closes a cycle (q itself was just looked at).
  bool finds_cycle(const std::vector<std::uint32_t>& users, std::uint32_t a, std::uint32_t b) {
    new_walk();
    std::vector<std::uint32_t>& stack = stack_;
    stack.clear();
    for (std::uint32_t u : users) {
      if (visit(u)) stack.push_back(u);
    }
    while (!stack.empty()) {
      const std::uint32_t d = stack.back();
      stack.pop_back();
      const std::uint32_t p = assignment_[d];
      if (p == a || p == b) return true;
      if (p != none && (parts_[p].reach.test(a) || parts_[p].reach.test(b))) {
        return true;
      }
      if (!by_walks_) {
        if (p == none) {
          const std::uint32_t q = sole_user_of_[d];
          if (q != none && parts_[q].alive && parts_[q].users.size() == 1 &&
              parts_[q].users[0] == d && down_valid(q)) {
            if (down_[q].bits.test(a) || down_[q].bits.test(b)) return true;
            continue;
          }
        } else if (down_valid(p) && !down_[p].bits.test(a) && !down_[p].bits.test(b)) {
          continue;
        }
      }
      for (std::uint32_t i = pg_.user_begin[d]; i < pg_.user_begin[d + 1]; ++i) {
        const std::uint32_t u = pg_.users[i];
        if (visit(u)) stack.push_back(u);
      }
    }
    return false;
  }

  // torch's maybe_merge_partition: true when merged; `self` becomes the surviving id.
  bool try_merge(std::uint32_t& self, std::uint32_t other) {
    std::vector<std::uint32_t> users;
    bool users_cross = false;  // a user of one lies in the other
    new_walk();                // marks the users taken (each once)
    for (std::uint32_t id : {self, other}) {
      for (std::uint32_t u : parts_[id].users) {
        const std::uint32_t a = assignment_[u];
        if (a == self || a == other) {
          users_cross = true;
        } else if (visit(u)) {
          users.push_back(u);
        }
      }
    }
    if (closes_cycle(self, other, users_cross, users)) return false;
    std::uint32_t merge_id = self;
    std::uint32_t removed = other;
    if (parts_[self].nodes.size() < parts_[other].nodes.size()) std::swap(merge_id, removed);
    Part& m = parts_[merge_id];
    Part& r = parts_[removed];
    for (std::uint32_t x : r.nodes) {
      m.nodes.push_back(x);
      assignment_[x] = merge_id;
    }
    order_id_[m.order] = none;
    order_id_[r.order] = none;
    m.order = std::min(m.order, r.order);
    order_id_[m.order] = merge_id;
    m.mod = ++clock_;
    log_.push_back(merge_id);
    m.reach.insert_all(r.reach);
    m.users = std::move(users);
    r.alive = false;
    alive_.erase(removed);
    r.nodes.clear();
    r.users.clear();
    r.reach = IdBits();
    IdBits found = downstream_partitions(m.users);
    m.reach.insert_all(found);
    m.reach.erase(merge_id);
    // (torch also drops `removed`, a merged-away id: never asked about again.)
    m.reach.compact(alive_, parts_.size() / 64);
    invalidate_after_merge(merge_id, removed);
    // found is m's set in the state after the merge: only m's record changed since the walk,
    // and no walk from m's users meets m.
    store_down(merge_id, std::move(found));
    self = merge_id;
    return true;
  }

  // torch's merge_single_node(node, None, id) of the getitem pass.
  void move_node(std::uint32_t node, std::uint32_t id) {
    const std::uint32_t old = assignment_[node];
    if (old != none) {
      auto& v = parts_[old].nodes;
      v.erase(std::find(v.begin(), v.end(), node));
    }
    assignment_[node] = id;
    if (id != none) parts_[id].nodes.push_back(node);
  }

  // torch's last steps: each partition's nodes in graph order, pull_getitem_users, then
  // kept_partitions.
  std::vector<Partition> finish();
  // torch's getitem pass: a node all of whose users are getitems pulls those users into its
  // partition, until nothing moves.
  void pull_getitem_users();
  // The live, non-empty partitions, without those of one compute node unless
  // options_.allows_single_node_partition (torch's `non_compute_ops` and
  // `allowed_single_node_partition_ops` decide what counts).
  [[nodiscard]] std::vector<Partition> kept_partitions() const;

  PartitionGraph pg_;
  const OperatorSupport& support_;
  const PartitionerOptions& options_;
  std::vector<Part> parts_;
  std::vector<std::uint32_t> assignment_;
  std::vector<std::uint32_t> stack_;
  std::vector<std::uint32_t> visit_mark_;
  std::uint32_t epoch_ = 0;
  std::vector<std::uint32_t> part_mark_;  // partition id -> epoch_ of the walk that met it
  IdBits alive_;                          // the live partition ids
  struct Down {
    bool covered = false;  // valid, and its live ids (besides its own) are in its record
    IdBits bits;
    bool valid = false;
    std::size_t checked = 0;  // merges_ looked at since it was stored
  };
  std::vector<std::pair<std::uint32_t, std::uint32_t>> merges_;  // (kept, removed), in order
  std::vector<Down> down_;  // id -> cached downstream partitions of its users (down_of)
  bool by_walks_ = false;
  std::vector<std::uint32_t> order_id_;  // partitions_order -> live id (none once merged away)
  std::size_t oldest_cursor_ = 0;        // no live partition has a lesser order
  std::vector<std::uint32_t> log_;       // ids created or merged, in that order
  std::uint64_t clock_ = 0;
  // The last pass of an oldest partition: its id and `mod` then, the order of the last
  // candidate it merged (-1: none; every later candidate was refused), log_ size after it.
  std::uint32_t pass_self_ = none;
  std::uint64_t pass_self_mod_ = 0;
  std::int64_t pass_after_ = -1;
  std::size_t pass_log_ = 0;
  std::vector<std::uint32_t> sole_user_of_;  // node -> a partition whose only user it is
};

inline std::vector<Partition> PartitionRun::run() {
  const std::size_t n = pg_.size();
  assignment_.assign(n, none);
  visit_mark_.assign(n, 0);
  sole_user_of_.assign(n, none);
  for (std::size_t k = 0; k < n; ++k) {
    const std::uint32_t node = static_cast<std::uint32_t>(n - 1 - k);
    bool created = false;
    std::uint32_t self = none;
    if (support_.is_node_supported(*pg_.nodes[node]) && assignment_[node] == none) {
      self = static_cast<std::uint32_t>(parts_.size());
      create_partition(node, self);
      created = true;
    }
    if (options_.skip_horizontal_fusion) {
      if (!created) continue;
      std::vector<std::uint32_t> candidates;
      for (std::uint32_t i = pg_.user_begin[node]; i < pg_.user_begin[node + 1]; ++i) {
        const std::uint32_t a = assignment_[pg_.users[i]];
        if (a != none && a != self &&
            std::find(candidates.begin(), candidates.end(), a) == candidates.end())
          candidates.push_back(a);
      }
      for (const std::uint32_t other : candidates) try_merge(self, other);
    } else if (by_walks_) {
      merge_all_by_walks(created ? self : oldest());
    } else if (created) {
      merge_run(self, filtered_candidates(self, -1));
    } else if (!order_id_.empty()) {
      merge_pass_of_oldest();
    }
  }
  return finish();
}

inline std::vector<Partition> PartitionRun::finish() {
  for (Part& p : parts_) {  // graph order (torch: descending reverse order)
    if (p.alive) std::sort(p.nodes.begin(), p.nodes.end());
  }
  pull_getitem_users();
  return kept_partitions();
}

inline void PartitionRun::pull_getitem_users() {
  while (true) {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> moves;  // (node, id), first-set order
    std::unordered_map<std::uint32_t, std::size_t> move_index;
    for (std::uint32_t node = 0; node < pg_.size(); ++node) {
      bool tuple_output = true;
      for (std::uint32_t i = pg_.user_begin[node]; i < pg_.user_begin[node + 1]; ++i) {
        if (pg_.getitem[pg_.users[i]] == 0) {
          tuple_output = false;
          break;
        }
      }
      if (!tuple_output) continue;
      const std::uint32_t id = assignment_[node];
      for (std::uint32_t i = pg_.user_begin[node]; i < pg_.user_begin[node + 1]; ++i) {
        const std::uint32_t user = pg_.users[i];
        if (assignment_[user] == id) continue;
        const auto it = move_index.find(user);
        if (it == move_index.end()) {
          move_index.emplace(user, moves.size());
          moves.emplace_back(user, id);
        } else {
          moves[it->second].second = id;
        }
      }
    }
    if (moves.empty()) break;
    for (const auto& mv : moves) move_node(mv.first, mv.second);
  }
}

inline std::vector<Partition> PartitionRun::kept_partitions() const {
  std::vector<Partition> out;
  std::unordered_set<std::string_view> non_compute{"torch.ops.aten.view", "_operator.getitem"};
  for (const std::string& s : options_.non_compute_ops) non_compute.insert(s);
  const std::unordered_set<std::string_view> doubled(
      options_.allowed_single_node_partition_ops.begin(),
      options_.allowed_single_node_partition_ops.end());
  for (std::size_t id = 0; id < parts_.size(); ++id) {
    const Part& p = parts_[id];
    if (!p.alive) continue;
    if (!options_.allows_single_node_partition) {
      std::size_t compute = 0;
      for (std::uint32_t x : p.nodes) {
        const Node& node = *pg_.nodes[x];
        if (node.op() != OpCode::call_function) continue;
        std::string qualified;  // made only for Python functions (`_operator.getitem`)
        std::string_view name = node.target();
        if (::epgraph::detail::starts_with(name, "operator.")) {
          qualified = qualified_target_name(node);
          name = qualified;
        }
        if (non_compute.count(name) == 0) ++compute;
        if (doubled.count(name) != 0) ++compute;
      }
      if (compute <= 1) continue;
    }
    if (p.nodes.empty()) continue;
    Partition part;
    part.id = id;
    part.nodes.reserve(p.nodes.size());
    for (std::uint32_t x : p.nodes) part.nodes.push_back(pg_.nodes[x]);
    out.push_back(std::move(part));
  }
  return out;
}

}  // namespace detail

inline std::vector<Partition> CapabilityBasedPartitioner::propose_partitions() const {
  return detail::PartitionRun(*graph_, support_, options_).run();
}

/// Checks that fusing `partition` (nodes of `graph`, each once) into one node would keep the
/// graph acyclic: no path leaves the partition and comes back into it. torch's
/// `validate_partition` (torch/fx/passes/utils/fuser_utils.py), which returns False where this
/// throws value_error naming a shortest such path from the first partition node (in the given
/// order) that has one, e.g. "validate_partition: the partition {linear, linear_1} is not
/// convex: the path linear -> relu -> linear_1 leaves it after 'linear' and re-enters it at
/// 'linear_1'"; value_error "validate_partition: node 'x' is not in the graph" / "node 'x' is
/// given twice". Read-only. Throws std::bad_alloc. O(N + E) (N nodes of the graph).
inline void validate_partition(const Graph& graph, const std::vector<const Node*>& partition) {
  std::unordered_map<const Node*, std::size_t> member;
  member.reserve(partition.size());
  std::string listed;
  for (const Node* n : partition) {
    if (n == nullptr || !graph.contains(n)) {
      throw value_error("validate_partition: node '" +
                        std::string(n == nullptr ? "<null>" : n->name()) + "' is not in the graph");
    }
    if (!member.emplace(n, member.size()).second) {
      throw value_error("validate_partition: node '" + std::string(n->name()) + "' is given twice");
    }
    listed += (listed.empty() ? "" : ", ") + std::string(n->name());
  }
  // Breadth-first from the partition's outside users; parent links give the path back.
  std::unordered_map<const Node*, const Node*> parent;
  std::vector<const Node*> queue;
  for (const Node* n : partition) {
    for (const Node* u : n->users()) {
      if (member.count(u) == 0 && parent.emplace(u, n).second) queue.push_back(u);
    }
  }
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const Node* d = queue[head];
    for (const Node* u : d->users()) {
      if (member.count(u) != 0) {
        std::vector<const Node*> path{u, d};
        while (member.count(path.back()) == 0) path.push_back(parent.at(path.back()));
        std::reverse(path.begin(), path.end());
        std::string text;
        for (const Node* x : path) text += (text.empty() ? "" : " -> ") + std::string(x->name());
        throw value_error("validate_partition: the partition {" + listed +
                          "} is not convex: the path " + text + " leaves it after '" +
                          std::string(path.front()->name()) + "' and re-enters it at '" +
                          std::string(u->name()) + "'");
      }
      if (parent.emplace(u, d).second) queue.push_back(u);
    }
  }
}

namespace detail {

// The end of the JSON value starting at `i` of `s` (after leading blanks), or npos when it is not
// one. Enough JSON to step over values; strings honour escapes.
inline std::size_t json_skip_blank(std::string_view s, std::size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r')) ++i;
  return i;
}
inline std::size_t json_skip_string(std::string_view s, std::size_t i) {
  if (i >= s.size() || s[i] != '"') return std::string_view::npos;
  for (++i; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '"') {
      return i + 1;
    }
  }
  return std::string_view::npos;
}
inline std::size_t json_skip_value(std::string_view s, std::size_t i) {
  i = json_skip_blank(s, i);
  if (i >= s.size()) return std::string_view::npos;
  if (s[i] == '"') return json_skip_string(s, i);
  if (s[i] == '{' || s[i] == '[') {
    std::size_t depth = 0;
    while (i < s.size()) {
      if (s[i] == '"') {
        i = json_skip_string(s, i);
        if (i == std::string_view::npos) return i;
        continue;
      }
      if (s[i] == '{' || s[i] == '[') ++depth;
      if (s[i] == '}' || s[i] == ']') {
        if (--depth == 0) return i + 1;
      }
      ++i;
    }
    return std::string_view::npos;
  }
  const std::size_t start = i;
  while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\n' &&
         s[i] != '\t' && s[i] != '\r')
    ++i;
  return i == start ? std::string_view::npos : i;
}

// `object` (a JSON object's text, as torch's json.dumps writes node.meta["custom"]) without its
// top-level member `key`, then with `key: value` (a JSON string) appended when `value` is given;
// "" for an object left empty (torch writes no "custom" for an empty dict). Throws value_error
// ("is not a JSON object") naming `what` when `object` is not one.
inline std::string json_object_with(std::string_view object, std::string_view key,
                                    const std::string* value, const std::string& what) {
  const auto bad = [&]() {
    return value_error(
        what + ": its custom metadata is not a JSON object: " + std::string(object.substr(0, 80)));
  };
  std::vector<std::string_view> members;
  std::size_t i = json_skip_blank(object, 0);
  if (i >= object.size() || object[i] != '{') throw bad();
  i = json_skip_blank(object, i + 1);
  if (i < object.size() && object[i] == '}') {
    ++i;
  } else {
    while (true) {
      const std::size_t start = i;
      const std::size_t key_end = json_skip_string(object, i);
      if (key_end == std::string_view::npos) throw bad();
      const std::size_t colon = json_skip_blank(object, key_end);
      if (colon >= object.size() || object[colon] != ':') throw bad();
      const std::size_t end = json_skip_value(object, colon + 1);
      if (end == std::string_view::npos) throw bad();
      const std::string_view k = object.substr(start + 1, key_end - start - 2);
      if (k != key) members.push_back(object.substr(start, end - start));
      i = json_skip_blank(object, end);
      if (i < object.size() && object[i] == ',') {
        i = json_skip_blank(object, i + 1);
        continue;
      }
      if (i < object.size() && object[i] == '}') {
        ++i;
        break;
      }
      throw bad();
    }
  }
  if (json_skip_blank(object, i) != object.size()) throw bad();
  std::string out;
  for (const std::string_view m : members) {
    out += out.empty() ? "{" : ", ";
    out += m;
  }
  if (value != nullptr) {
    out += out.empty() ? "{\"" : ", \"";
    out += key;
    out += "\": \"";
    for (const char c : *value) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  if (!out.empty()) out += '}';
  return out;
}

}  // namespace detail

/// Writes each partition's delegation tag, `prefix` + its id ("tag0", "tag3": the tags
/// ExecuTorch's partitioners give, `node.meta["delegation_tag"]`), into the `custom` metadata of
/// its nodes (torch's `node.meta["custom"]`, a JSON object that torch 2.13 saves and loads with
/// the node; epgraph keeps it as the JSON text of NodeMeta::other["custom"]) under `key`, keeping
/// the object's other members; every other node of `graph` loses a `key` member it has (a stale
/// tag from an earlier partitioning), and a `custom` object left empty is removed (torch writes
/// none for an empty dict). A Python partitioner then reads
/// `node.meta["custom"]["delegation_tag"]`. Throws value_error, with nothing changed, when a
/// partition's node is not in `graph` ("tag_partitions: node 'x' of partition 2 is not in the
/// graph"), is in two partitions ("tag_partitions: node 'x' is in partitions 0 and 2"), or has a
/// `custom` entry that is not a JSON object ("tag_partitions: node 'x': its custom metadata is
/// not a JSON object: ..."); std::bad_alloc. Strong guarantee: every new text is made before any
/// node changes. O(N + total size of the custom texts).
inline void tag_partitions(Graph& graph, const std::vector<Partition>& partitions,
                           std::string_view prefix = "tag",
                           std::string_view key = "delegation_tag") {
  std::unordered_map<const Node*, std::size_t> tagged;  // node -> index into partitions
  for (std::size_t p = 0; p < partitions.size(); ++p) {
    for (const Node* n : partitions[p].nodes) {
      if (n == nullptr || !graph.contains(n)) {
        throw value_error("tag_partitions: node '" +
                          std::string(n == nullptr ? "<null>" : n->name()) + "' of partition " +
                          std::to_string(partitions[p].id) + " is not in the graph");
      }
      const auto it = tagged.emplace(n, p);
      if (!it.second) {
        throw value_error("tag_partitions: node '" + std::string(n->name()) +
                          "' is in partitions " + std::to_string(partitions[it.first->second].id) +
                          " and " + std::to_string(partitions[p].id));
      }
    }
  }
  struct Change {
    Node* node;
    std::string text;  // the new custom text; "" removes the entry
  };
  std::vector<Change> changes;
  for (Node& n : graph.nodes()) {
    const auto it = tagged.find(&n);
    const auto& other = n.read_meta().other;
    const auto entry = std::find_if(other.begin(), other.end(),
                                    [](const auto& kv) { return kv.first == "custom"; });
    const std::string what = "tag_partitions: node '" + std::string(n.name()) + "'";
    if (it == tagged.end()) {
      if (entry == other.end()) continue;
      std::string text = detail::json_object_with(entry->second, key, nullptr, what);
      if (text != entry->second) changes.push_back({&n, std::move(text)});
      continue;
    }
    const std::string tag = std::string(prefix) + std::to_string(partitions[it->second].id);
    std::string text =
        detail::json_object_with(entry == other.end() ? "{}" : entry->second, key, &tag, what);
    if (entry == other.end() || text != entry->second) changes.push_back({&n, std::move(text)});
  }
  // Room for every new entry first (out-of-line storage, one more metadata slot), then only
  // moves and swaps.
  for (Change& c : changes) {
    NodeMeta& m = c.node->mutable_meta();
    m.other.reserve(m.other.size() + 1);
  }
  for (Change& c : changes) {
    auto& other = c.node->mutable_meta().other;
    const auto entry = std::find_if(other.begin(), other.end(),
                                    [](const auto& kv) { return kv.first == "custom"; });
    if (c.text.empty()) {
      other.erase(entry);
    } else if (entry != other.end()) {
      entry->second.swap(c.text);
    } else {
      other.emplace_back(std::string("custom"), std::move(c.text));
    }
  }
}

}  // namespace epgraph
