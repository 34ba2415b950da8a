// Tests for the compact node storage (node.hpp, graph.hpp, detail/name_index.hpp,
// detail/compact_string.hpp): inline vs boxed arguments and users, names on either side of the
// 15-character inline limit, node slots reused after erasure across chunks, and the name index
// under many inserts, erasures and renames (tombstones, names that differ only in their last
// digit).
#include <catch2/catch.hpp>
#include <epgraph/detail/compact_string.hpp>
#include <epgraph/ir/graph.hpp>
#include <epgraph/ir/print.hpp>
#include <random>
#include <string>
#include <vector>

#include "support/program_builders.hpp"

namespace {

using epgraph::Argument;
using epgraph::ArgumentList;
using epgraph::Graph;
using epgraph::Node;

constexpr const char* kAddOp = "torch.ops.aten.add.Tensor";
// No registered schema: these tests store argument shapes no real operator takes.
constexpr const char* cat_op = "torch.ops.epgraph_test.cat.default";

}  // namespace

TEST_CASE("node is compact", "[graph][storage]") {
  // The layout the memory benchmark relies on (LP64): 3 pointers, 2 inline arguments, one
  // inline user, a 16-byte name and 16 bytes of counters.
  if (sizeof(void*) == 8) CHECK(sizeof(Node) == 96);
  CHECK(sizeof(epgraph::detail::CompactString) == 16);
}

TEST_CASE("compact strings keep every length exactly", "[storage]") {
  using epgraph::detail::CompactString;
  for (std::size_t len : {0u, 1u, 14u, 15u, 16u, 17u, 100u}) {
    std::string s;
    for (std::size_t i = 0; i < len; ++i) s.push_back(static_cast<char>('a' + i % 26));
    CompactString c(s);
    CHECK(c.view() == s);
    CompactString copy(c);
    CHECK(copy.view() == s);
    CompactString moved(std::move(copy));
    CHECK(moved.view() == s);
    CHECK(copy.view().empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
    CompactString other("xyz");
    other.swap(moved);
    CHECK(other.view() == s);
    CHECK(moved.view() == "xyz");
    other = moved;
    CHECK(other.view() == "xyz");
  }
}

TEST_CASE("arguments move between inline and boxed storage without changing", "[graph][storage]") {
  Graph g;
  Node* x = g.placeholder("x");
  Node* y = g.placeholder("y");
  Node* z = g.placeholder("z");
  Node* c = g.call_function(cat_op, {x});
  g.output({c});
  CHECK(c->args() == ArgumentList{x});
  c->set_args({x, y, z, 1, 2.5});  // 1 -> 5 arguments: boxed
  CHECK(c->args() == ArgumentList{x, y, z, 1, 2.5});
  CHECK(x->users() == std::vector<Node*>{c});
  CHECK(z->users() == std::vector<Node*>{c});
  c->update_arg(3, 7);  // stays boxed
  CHECK(c->args() == ArgumentList{x, y, z, 7, 2.5});
  c->set_args({z, "s"});  // back inline
  CHECK(c->args() == ArgumentList{z, "s"});
  CHECK(x->users().empty());
  CHECK(y->users().empty());
  CHECK(z->users() == std::vector<Node*>{c});
  c->set_args({});
  CHECK(c->args().empty());
  CHECK(z->users().empty());
  c->set_args({x, x, x});
  CHECK(c->args() == ArgumentList{x, x, x});
  CHECK(x->users() == std::vector<Node*>{c});
  // replace_all_uses_with rewrites boxed and inline argument lists in place.
  Node* d = g.call_function(kAddOp, {x, 1});
  CHECK(x->replace_all_uses_with(y) == std::vector<Node*>{c, d});
  CHECK(c->args() == ArgumentList{y, y, y});
  CHECK(d->args() == ArgumentList{y, 1});
  CHECK(y->users() == std::vector<Node*>{c, d});
  CHECK(x->users().empty());
  g.lint();
}

TEST_CASE("users move from inline to boxed storage and keep first-use order", "[graph][storage]") {
  Graph g;
  Node* x = g.placeholder("x");
  Node* a = g.call_function(kAddOp, {x, 1});
  CHECK(x->users() == std::vector<Node*>{a});
  Node* b = g.call_function(kAddOp, {x, 2});
  Node* c = g.call_function(kAddOp, {x, 3});
  CHECK(x->users() == std::vector<Node*>{a, b, c});
  g.erase_node(b);
  CHECK(x->users() == std::vector<Node*>{a, c});
  g.erase_node(a);
  g.erase_node(c);
  CHECK(x->users().empty());
  Node* d = g.call_function(kAddOp, {x, 4});
  CHECK(x->users() == std::vector<Node*>{d});
  g.output({d});
  g.lint();
}

TEST_CASE("names longer than 15 characters and exactly 15", "[graph][storage]") {
  Graph g;
  Node* a = g.placeholder("p_fifteen_chars");   // 15
  Node* b = g.placeholder("p_sixteen_chars_");  // 16
  Node* c = g.placeholder("p_layers_0_attention_wq_weight");
  CHECK(a->name() == "p_fifteen_chars");
  CHECK(b->name() == "p_sixteen_chars_");
  CHECK(c->name() == "p_layers_0_attention_wq_weight");
  CHECK(c->target() == "p_layers_0_attention_wq_weight");
  CHECK(g.find_node("p_sixteen_chars_") == b);
  CHECK(g.rename_node(a, "p_a_much_longer_name_than_before") == "p_a_much_longer_name_than_before");
  CHECK(a->target() == "p_a_much_longer_name_than_before");
  CHECK(g.rename_node(c, "short") == "short");
  CHECK(g.find_node("short") == c);
  CHECK(g.find_node("p_layers_0_attention_wq_weight") == nullptr);
  CHECK(epgraph_test::node_names(g) ==
        std::vector<std::string>{"p_a_much_longer_name_than_before", "p_sixteen_chars_", "short"});
}

TEST_CASE("erased slots are reused and nodes in every chunk know their graph", "[graph][storage]") {
  Graph g;
  Graph other;
  Node* x = g.placeholder("x");
  Node* o = other.placeholder("o");
  std::vector<Node*> nodes;
  for (int i = 0; i < 1000; ++i) nodes.push_back(g.call_function(kAddOp, {x, i}));
  for (Node* n : nodes) CHECK(&n->graph() == &g);
  CHECK(&o->graph() == &other);
  // Erase every other node, then create as many again: the graph stays consistent and every
  // name is found.
  for (std::size_t i = 0; i < nodes.size(); i += 2) g.erase_node(nodes[i]);
  for (int i = 0; i < 500; ++i) g.call_function(kAddOp, {x, -i}, {}, "again");
  g.output({x});
  g.lint();
  CHECK(g.size() == 1 + 500 + 500 + 1);
  CHECK(g.find_node("add_1") == nodes[1]);
  CHECK(g.find_node("add") == nullptr);  // erased; the name stays taken
  CHECK(g.find_node("again") != nullptr);
  CHECK(g.find_node("again_499") != nullptr);
  CHECK(g.find_node("again_500") == nullptr);
  for (const Node& n : g.nodes()) CHECK(&n.graph() == &g);
  CHECK_THROWS_WITH(other.erase_node(nodes[1]),
                    "Node 'add_1' does not belong to this graph (cannot erase it)");
  auto copy = g.clone();
  CHECK(epgraph_test::node_names(*copy) == epgraph_test::node_names(g));
  for (const Node& n : copy->nodes()) CHECK(&n.graph() == copy.get());
  copy->lint();
}

TEST_CASE("the name index stays exact under random inserts, erasures and renames",
          "[graph][storage]") {
  // A model of the live names checked after every step against find_node; names are chosen so
  // that many differ only in their last digit (neighbouring home slots) and so that erasures
  // hit the middle of probe runs (tombstones, reused by later inserts).
  const std::uint32_t seed = 20261129;
  INFO("seed " << seed);
  std::mt19937 rng(seed);
  Graph g;
  Node* x = g.placeholder("x");
  std::vector<Node*> live;
  std::size_t created = 0;
  for (int step = 0; step < 6000; ++step) {
    const int what = static_cast<int>(rng() % 10);
    if (what < 6 || live.empty()) {
      const char* bases[] = {"add", "mul", "a1", "a12", "node_9"};
      Node* n = g.call_function(kAddOp, {x, 1}, {}, bases[rng() % 5]);
      live.push_back(n);
      ++created;
    } else if (what < 9) {
      const std::size_t i = rng() % live.size();
      g.erase_node(live[i]);
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    } else {
      Node* n = live[rng() % live.size()];
      const std::string old(n->name());
      const std::string_view now = g.rename_node(n, "renamed_" + std::to_string(rng() % 50));
      CHECK(g.find_node(old) == nullptr);
      CHECK(g.find_node(now) == n);
    }
    if (step % 500 == 0 || step == 5999) {
      for (Node* n : live) REQUIRE(g.find_node(n->name()) == n);
      REQUIRE(g.size() == live.size() + 1);
    }
  }
  CHECK(created > 3000);
  g.output({x});
  g.lint();
}

TEST_CASE("default placeholder insertion tracks the last placeholder in O(1)", "[graph][storage]") {
  // Regression: finding the last placeholder walked the whole prefix, so loading a program with
  // P inputs was O(P^2). The graph now keeps a link to it; every way the prefix changes must
  // keep that link right.
  Graph g;
  Node* a = g.placeholder("a");
  Node* b = g.placeholder("b");
  Node* add = g.call_function(kAddOp, {a, b});
  g.output({add});
  Node* c = g.placeholder("c");  // default: after the last placeholder
  CHECK(epgraph_test::node_names(g) == std::vector<std::string>{"a", "b", "c", "add", "output"});
  {
    auto guard = g.inserting_before(a);
    g.placeholder("first");  // explicit point at the front: c stays the last
  }
  Node* d = g.placeholder("d");
  CHECK(epgraph_test::node_names(g) ==
        std::vector<std::string>{"first", "a", "b", "c", "d", "add", "output"});
  g.erase_node(d);  // erasing the last placeholder makes c the last again
  g.placeholder("e");
  CHECK(epgraph_test::node_names(g) ==
        std::vector<std::string>{"first", "a", "b", "c", "e", "add", "output"});
  g.erase_node(c);  // erasing one in the middle changes nothing
  g.placeholder("f");
  CHECK(epgraph_test::node_names(g) ==
        std::vector<std::string>{"first", "a", "b", "e", "f", "add", "output"});
  g.lint();
  auto copy = g.clone();
  copy->placeholder("g");
  CHECK(epgraph_test::node_names(*copy) ==
        std::vector<std::string>{"first", "a", "b", "e", "f", "g", "add", "output"});
  copy->lint();
  Graph empty;
  Node* only = empty.placeholder("only");
  empty.erase_node(only);
  empty.placeholder("again");
  CHECK(epgraph_test::node_names(empty) == std::vector<std::string>{"again"});
}
