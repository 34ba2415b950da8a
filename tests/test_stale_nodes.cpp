// Tests for what happens to a Node* kept after Graph::erase_node (issue 15 item 5; torch.fx
// marks such nodes `_erased`), and for the containers behind erasure: the namespace's set of
// given-up names (detail/string_set.hpp) and the name index's tombstones
// (detail/name_index.hpp).
//
// With EPGRAPH_STALE_NODE_CHECKS (AddressSanitizer builds and builds without NDEBUG, see
// detail/stale_nodes.hpp) an erased slot is kept out of reuse for a while: `contains(stale)` is
// false and the graph's member checks refuse the pointer. Under AddressSanitizer the erased
// slot is also poisoned, so dereferencing the pointer (`stale->name()`) stops the program with
// "ERROR: AddressSanitizer: use-after-poison on address ..." and the stack of the access; that
// is a death test Catch cannot run in-process. Reproduce it with a build configured with
// -DEPGRAPH_SANITIZE=ON and a program doing
//     Node* n = g.call_function(...); g.erase_node(n); (void)n->name();
// Release builds (NDEBUG, no ASan) reuse the slot at once, as before (checked below too).
#include <catch2/catch.hpp>
#include <epgraph/detail/string_set.hpp>
#include <epgraph/ir/detail/name_index.hpp>
#include <epgraph/ir/graph.hpp>
#include <string>
#include <vector>

namespace {

using epgraph::Graph;
using epgraph::Node;

constexpr const char* add_op = "torch.ops.aten.add.Tensor";
constexpr const char* neg_op = "torch.ops.aten.neg.default";

}  // namespace

#if EPGRAPH_STALE_NODE_CHECKS

namespace {
bool holds_address(const Graph& g, const Node* p) {
  for (const Node& n : g.nodes()) {
    if (&n == p) return true;
  }
  return false;
}
}  // namespace

TEST_CASE("a Node* kept after erase_node is not contained and does not alias a new node",
          "[graph][stale]") {
  Graph g;
  Node* x = g.placeholder("x");
  Node* a = g.call_function(neg_op, {x});
  Node* keep = g.call_function(neg_op, {x});
  g.output({keep});
  Node* stale = a;
  g.erase_node(a);
  CHECK_FALSE(g.contains(stale));
  // The next nodes go elsewhere: the erased slot is quarantined.
  std::vector<Node*> fresh;
  for (int i = 0; i < 100; ++i) fresh.push_back(g.call_function(add_op, {x, keep}));
  for (Node* n : fresh) CHECK(n != stale);
  CHECK_FALSE(g.contains(stale));
  CHECK_FALSE(holds_address(g, stale));
  CHECK(g.contains(keep));
  CHECK(g.contains(fresh.back()));
  g.lint();
}

TEST_CASE("the graph's checks refuse an erased node without reading it", "[graph][stale]") {
  Graph g;
  Node* x = g.placeholder("x");
  Node* a = g.call_function(neg_op, {x});
  Node* b = g.call_function(neg_op, {x});
  g.output({b});
  g.erase_node(a);
  const std::string erased = "an erased node (a Node* kept after Graph::erase_node)";
  CHECK_THROWS_WITH(g.erase_node(a), "Cannot erase " + erased);
  CHECK_THROWS_WITH(g.rename_node(a, "y"), "Cannot rename " + erased);
  CHECK_THROWS_WITH((void)g.inserting_before(a), "Cannot insert before " + erased);
  CHECK_THROWS_WITH((void)g.inserting_after(a), "Cannot insert after " + erased);
  CHECK_THROWS_WITH(b->set_args({a}),
                    "Argument node of node 'neg_1' is an erased node (a Node* kept after "
                    "Graph::erase_node)");
  CHECK_THROWS_WITH(g.call_function(neg_op, {a}),
                    "Argument node of node 'neg_2' is an erased node (a Node* kept after "
                    "Graph::erase_node)");
  CHECK_THROWS_WITH(x->replace_all_uses_with(a), "Cannot use " + erased);
  CHECK_THROWS_WITH(b->replace_input_with(x, a), "Cannot use " + erased);
  CHECK_THROWS_WITH(b->prepend(a), "Cannot move " + erased);
  // Nothing changed.
  CHECK(g.size() == 3);
  CHECK(b->args().to_vector() == epgraph::ArgumentList{x});
  CHECK(g.find_node("neg_2") == nullptr);
  g.lint();
}

TEST_CASE("the quarantine of erased slots is bounded: slots are reused later", "[graph][stale]") {
  Graph g;
  Node* x = g.placeholder("x");
  Node* first = g.call_function(neg_op, {x});
  Node* const stale = first;
  g.erase_node(first);
  // 1100 more erasures: the first erased slot leaves the quarantine after
  // stale_quarantine_slots of them.
  constexpr std::size_t more = 1100;
  static_assert(more >= epgraph::detail::stale_quarantine_slots);
  std::vector<Node*> nodes;
  for (std::size_t i = 0; i < more; ++i) nodes.push_back(g.call_function(neg_op, {x}));
  for (Node* n : nodes) {
    CHECK(n != stale);
    g.erase_node(n);
  }
  const std::size_t released = more + 1 - epgraph::detail::stale_quarantine_slots;
  bool reused = false;
  for (std::size_t i = 0; i < released; ++i)
    reused = reused || g.call_function(neg_op, {x}) == stale;
  CHECK(reused);
  g.output({x});
  g.lint();
}

#else

TEST_CASE("release builds reuse an erased slot at once", "[graph][stale]") {
  // What EPGRAPH_STALE_NODE_CHECKS guards against: without it a kept pointer names the next node.
  Graph g;
  Node* x = g.placeholder("x");
  Node* a = g.call_function(neg_op, {x});
  Node* const stale = a;
  g.erase_node(a);
  CHECK(g.call_function(neg_op, {x}) == stale);
}

#endif

TEST_CASE("StringSet keeps strings exactly through growth, erasure and copies", "[names][stale]") {
  epgraph::detail::StringSet s;
  CHECK(s.empty());
  CHECK_FALSE(s.contains(""));
  CHECK(s.insert("add"));
  CHECK_FALSE(s.insert("add"));
  CHECK(s.insert(""));
  CHECK(s.contains(""));
  std::vector<std::string> names;
  for (int i = 0; i < 5000; ++i) names.push_back("add_" + std::to_string(i));
  names.push_back(std::string(40, 'z'));
  for (const std::string& n : names) CHECK(s.insert(n));
  CHECK(s.size() == names.size() + 2);
  for (const std::string& n : names) REQUIRE(s.contains(n));
  CHECK_FALSE(s.contains("add_5000"));
  CHECK_FALSE(s.contains("add_"));
  CHECK_FALSE(s.contains("ad"));
  // Erase every third name; the others stay found (no backward-shift mistakes).
  for (std::size_t i = 0; i < names.size(); i += 3) CHECK(s.erase(names[i]));
  for (std::size_t i = 0; i < names.size(); ++i) REQUIRE(s.contains(names[i]) == (i % 3 != 0));
  CHECK_FALSE(s.erase(names[0]));
  epgraph::detail::StringSet copy = s;
  CHECK(copy == s);
  CHECK(copy.insert("add_0"));
  CHECK_FALSE(copy == s);
  CHECK(copy.erase("add_0"));
  CHECK(copy == s);
  // Batch insertion with room reserved first, as dead-code elimination does.
  epgraph::detail::StringSet batch;
  std::size_t bytes = 0;
  for (const std::string& n : names) bytes += n.size();
  batch.reserve_more(names.size(), bytes);
  batch.insert_many_reserved(names.begin(), names.end(),
                             [](const std::string& n) { return std::string_view(n); });
  CHECK(batch.size() == names.size());
  for (const std::string& n : names) REQUIRE(batch.contains(n));
}

TEST_CASE("name index tombstones: erasures leave every other name found, rebuilds drop them",
          "[graph][storage][stale]") {
  // Ids are their position in `names`.
  std::vector<std::string> names;
  for (int i = 0; i < 3000; ++i) names.push_back("n_" + std::to_string(i));
  std::vector<bool> live(names.size(), false);
  auto name_of = [&](std::uint32_t id) { return std::string_view(names[id]); };
  auto each = [&](auto&& visit) {
    std::size_t count = 0;
    for (std::uint32_t id = 0; id < names.size(); ++id) {
      if (live[id]) {
        visit(id, std::string_view(names[id]));
        ++count;
      }
    }
    return count;
  };
  epgraph::detail::NameIndex index;
  for (std::uint32_t id = 0; id < names.size(); ++id) {
    index.reserve_more(1, name_of, each);
    index.insert(id, names[id]);
    live[id] = true;
  }
  // Erase and re-insert in rounds: tombstones are reused or dropped, lookups stay exact.
  for (int round = 0; round < 5; ++round) {
    for (std::uint32_t id = static_cast<std::uint32_t>(round); id < names.size(); id += 2) {
      if (live[id]) {
        index.erase(id, names[id], name_of);
        live[id] = false;
      }
    }
    for (std::uint32_t id = 0; id < names.size(); ++id) {
      REQUIRE(index.find(names[id], name_of) ==
              (live[id] ? id : epgraph::detail::NameIndex::no_id));
    }
    for (std::uint32_t id = 0; id < names.size(); id += 3) {
      if (!live[id]) {
        index.reserve_more(1, name_of, each);
        index.insert(id, names[id]);
        live[id] = true;
      }
    }
    std::size_t count = 0;
    for (std::uint32_t id = 0; id < names.size(); ++id) {
      count += live[id] ? 1 : 0;
      REQUIRE(index.find(names[id], name_of) ==
              (live[id] ? id : epgraph::detail::NameIndex::no_id));
    }
    CHECK(index.size() == count);
  }
}

TEST_CASE("dead-code elimination and erasure keep every given-up name taken", "[graph][names]") {
  Graph g;
  Node* x = g.placeholder("x");
  Node* prev = x;
  for (int i = 0; i < 2000; ++i) {
    prev = g.call_function(add_op, {prev, x});
    g.call_function(neg_op, {prev});  // dead
  }
  g.output({prev});
  CHECK(g.eliminate_dead_code());
  CHECK(g.size() == 2002);
  CHECK(g.names().is_used("neg"));
  CHECK(g.names().is_used("neg_1999"));
  CHECK_FALSE(g.names().is_used("neg_2000"));
  CHECK(g.find_node("neg_5") == nullptr);
  CHECK(g.call_function(neg_op, {x})->name() == "neg_2000");
  CHECK(g.call_function(neg_op, {x}, {}, "neg_7")->name() == "neg_2001");
  g.lint();
  // A clone keeps the given-up names.
  auto copy = g.clone();
  CHECK(copy->names() == g.names());
  CHECK(copy->call_function(neg_op, {copy->find_node("x")}, {}, "neg_3")->name() == "neg_2002");
}
