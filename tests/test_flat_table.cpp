// Tests of the flat open-addressing tables: ordered_dict's index (state_dict, constants) and
// detail::IdTable (the graph's interned targets). HashCounts, which shares their growth and
// erasure (detail/flat_table.hpp), is tested in test_edit_index.cpp.
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <epgraph/ir/graph.hpp>
#include <epgraph/program/detail/edit_index.hpp>
#include <epgraph/program/ordered_dict.hpp>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace {

// A value whose move constructor throws while `armed` is set.
struct Fragile {
  static inline bool armed = false;
  int v = 0;
  explicit Fragile(int x) : v(x) {}
  Fragile(const Fragile&) = default;
  Fragile(Fragile&& o) : v(o.v) {
    if (armed) throw std::runtime_error("move refused");
  }
  Fragile& operator=(const Fragile&) = default;
  Fragile& operator=(Fragile&&) = default;
  ~Fragile() = default;
};

std::vector<std::string> keys_of(const epgraph::ordered_dict<int>& d) {
  std::vector<std::string> out;
  for (const auto& entry : d) out.push_back(entry.first);
  return out;
}

}  // namespace

TEST_CASE("ordered_dict: thousands of keys, erasures and reinsertions keep order and lookups",
          "[dict]") {
  // Checked against a std::map of key -> value and a vector of keys in insertion order after
  // growth (16 slots up to 4096) and after erasing every third key (backward shifts).
  epgraph::ordered_dict<int> d;
  std::map<std::string, int> model;
  std::vector<std::string> order;
  for (int i = 0; i < 3000; ++i) {
    const std::string key = "l" + std::to_string(i) + ".k_cache";
    d.insert(key, i);
    model[key] = i;
    order.push_back(key);
  }
  CHECK(d.size() == 3000);
  for (int i = 0; i < 3000; i += 3) CHECK(d.erase("l" + std::to_string(i) + ".k_cache"));
  CHECK_FALSE(d.erase("l0.k_cache"));
  CHECK_FALSE(d.erase(""));
  std::vector<std::string> kept;
  for (std::size_t i = 0; i < order.size(); ++i) {
    if (i % 3 == 0) {
      model.erase(order[i]);
    } else {
      kept.push_back(order[i]);
    }
  }
  CHECK(d.size() == 2000);
  CHECK(keys_of(d) == kept);
  for (int i = 0; i < 3000; ++i) {
    const std::string key = "l" + std::to_string(i) + ".k_cache";
    INFO(key);
    const auto it = model.find(key);
    REQUIRE(d.contains(key) == (it != model.end()));
    const int* v = std::as_const(d).find(key);
    REQUIRE((v == nullptr ? -1 : *v) == (it == model.end() ? -1 : it->second));
  }
  CHECK(d.at("l1.k_cache") == 1);
  CHECK(d.position("l1.k_cache") == 0);
  CHECK(d.position("l2999.k_cache") == 1999);
  // A reinserted key goes to the end; the empty key is a key like any other.
  d.insert("l0.k_cache", -5);
  d.insert("", 7);
  CHECK(d.position("l0.k_cache") == 2000);
  CHECK(d.at("") == 7);
  CHECK(keys_of(d).back().empty());
  // Copies and moves carry the index with them.
  epgraph::ordered_dict<int> copy = d;
  epgraph::ordered_dict<int> moved = std::move(d);
  CHECK(copy.size() == 2002);
  CHECK(keys_of(copy) == keys_of(moved));
  CHECK(copy.at("l0.k_cache") == -5);
  CHECK(moved.at("l2998.k_cache") == 2998);
  CHECK(moved.erase("l2998.k_cache"));
  CHECK(copy.contains("l2998.k_cache"));
  epgraph::ordered_dict<int> other;
  other.insert("only", 1);
  other.swap(moved);
  CHECK(moved.size() == 1);
  CHECK(moved.at("only") == 1);
  CHECK(other.size() == 2001);
  CHECK_FALSE(other.contains("only"));
  CHECK(other.at("l4.k_cache") == 4);
  epgraph::ordered_dict<int> empty;
  CHECK_FALSE(empty.contains("l4.k_cache"));
  CHECK(empty.find("l4.k_cache") == nullptr);
  CHECK_FALSE(empty.erase("l4.k_cache"));
}

TEST_CASE("ordered_dict: an insertion that throws leaves the dictionary unchanged", "[dict]") {
  epgraph::ordered_dict<Fragile> d;
  for (int i = 0; i < 12; ++i) d.insert("k" + std::to_string(i), Fragile(i));  // 16 slots, 12 full
  Fragile::armed = true;
  // The 13th key needs a bigger table: the index grows, then moving the value throws.
  CHECK_THROWS_WITH(d.insert("k12", Fragile(12)), "move refused");
  CHECK_THROWS_WITH(d.insert_or_assign("k13", Fragile(13)), "move refused");
  Fragile::armed = false;
  CHECK(d.size() == 12);
  CHECK_FALSE(d.contains("k12"));
  CHECK_FALSE(d.contains("k13"));
  std::vector<int> values;
  for (const auto& [key, value] : d) values.push_back(value.v);
  CHECK(values == std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  for (int i = 0; i < 12; ++i) CHECK(d.at("k" + std::to_string(i)).v == i);
  CHECK_THROWS_WITH(d.insert("k3", Fragile(0)), "Key 'k3' already exists");
  d.insert("k12", Fragile(12));
  CHECK(d.position("k12") == 12);
}

TEST_CASE("IdTable: ids found by text, colliding and equal hash bits, growth", "[graph][index]") {
  // The caller passes the hash, so collisions are chosen: every string gets one of 5 hashes
  // (whole runs share a home slot and their stored hash bits), and the table grows from 16 slots.
  std::vector<std::string> texts;
  epgraph::detail::IdTable table;
  const auto text = [&](std::uint32_t id) { return std::string_view(texts[id]); };
  const auto hash = [](std::size_t i) { return (i % 5) * 0x10000000fULL; };
  CHECK(table.find("a", 0, text) == epgraph::detail::IdTable::none);
  for (std::size_t i = 0; i < 200; ++i) {
    texts.push_back("t" + std::to_string(i));
    REQUIRE(table.find(texts[i], hash(i), text) == epgraph::detail::IdTable::none);
    table.reserve_more(1);
    table.insert_reserved(static_cast<std::uint32_t>(i), hash(i));
  }
  CHECK(table.size() == 200);
  for (std::size_t i = 0; i < 200; ++i) {
    INFO(texts[i]);
    REQUIRE(table.find(texts[i], hash(i), text) == i);
    // The same text under another hash is not found.
    REQUIRE(table.find(texts[i], hash(i + 1), text) == epgraph::detail::IdTable::none);
  }
  CHECK(table.find("t200", hash(200), text) == epgraph::detail::IdTable::none);
}

TEST_CASE("Graph interns thousands of targets", "[graph][index]") {
  // Every placeholder's target is its name, so each interns a new target; compute nodes share
  // their operator's.
  epgraph::Graph g;
  std::vector<epgraph::Node*> ph;
  for (int i = 0; i < 2000; ++i) ph.push_back(g.placeholder("in_" + std::to_string(i)));
  epgraph::Node* a = g.call_function("torch.ops.aten.add.Tensor", {ph[0], ph[1]});
  epgraph::Node* b = g.call_function("torch.ops.aten.add.Tensor", {a, ph[1999]});
  g.output({b});
  for (int i = 0; i < 2000; ++i)
    CHECK(ph[static_cast<std::size_t>(i)]->target() == "in_" + std::to_string(i));
  CHECK(a->target() == "torch.ops.aten.add.Tensor");
  CHECK(b->target() == "torch.ops.aten.add.Tensor");
  const std::unique_ptr<epgraph::Graph> copy = g.clone();
  CHECK(copy->find_node("in_1234")->target() == "in_1234");
  CHECK(copy->find_node("add_1")->target() == "torch.ops.aten.add.Tensor");
}

TEST_CASE("RequestedIndex: names found through their nodes, first kept, erasure shifts back",
          "[edit][index]") {
  // The index stores no names: the key of a slot is read through name_of(node). Nodes are
  // stand-ins here (addresses of strings), so the test picks the names and checks every lookup
  // against a std::map after growth (16 slots up to 4096) and erasing every fourth name.
  using epgraph::detail::RequestedIndex;
  std::vector<std::string> names;
  for (int i = 0; i < 3000; ++i) names.push_back("b_l" + std::to_string(i) + "_k_cache");
  names.push_back("");  // the empty name is a name like any other
  const auto node_of = [&](std::size_t i) { return reinterpret_cast<epgraph::Node*>(&names[i]); };
  const auto name_of = [](const epgraph::Node* n) {
    return std::string_view(*reinterpret_cast<const std::string*>(n));
  };
  RequestedIndex ix;
  CHECK(ix.lookup("b_l0_k_cache", name_of) == nullptr);
  std::map<std::string, epgraph::Node*> model;
  for (std::size_t i = 0; i < names.size(); ++i) {
    REQUIRE(ix.insert(names[i], node_of(i), name_of));
    model[names[i]] = node_of(i);
  }
  // A second node under a kept name is refused: the first stays.
  std::string same = "b_l7_k_cache";
  CHECK_FALSE(ix.insert(same, reinterpret_cast<epgraph::Node*>(&same), name_of));
  CHECK(ix.lookup("b_l7_k_cache", name_of) == node_of(7));
  CHECK(ix.size() == names.size());
  for (std::size_t i = 0; i < names.size(); i += 4) {
    const std::size_t at = ix.find(names[i], RequestedIndex::hash(names[i]), name_of);
    REQUIRE(at != RequestedIndex::npos);
    REQUIRE(ix.node_at(at) == node_of(i));
    ix.erase_at(at);
    model.erase(names[i]);
  }
  CHECK(ix.size() == model.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    INFO(names[i]);
    const auto it = model.find(names[i]);
    REQUIRE(ix.lookup(names[i], name_of) == (it == model.end() ? nullptr : it->second));
  }
  CHECK(ix.lookup("b_l3000_k_cache", name_of) == nullptr);
  RequestedIndex other;
  other.swap(ix);
  CHECK(ix.size() == 0);
  CHECK(ix.lookup("b_l1_k_cache", name_of) == nullptr);
  CHECK(other.lookup("b_l1_k_cache", name_of) == node_of(1));
  other.clear();
  CHECK(other.size() == 0);
  CHECK(other.lookup("b_l1_k_cache", name_of) == nullptr);
}
