// Tests for the one edge-update path (detail/edges.hpp): users lists, version() and observer calls
// of the seven edits that change args <-> users edges, and their strong guarantee.
// SPDX-License-Identifier: BSD-3-Clause
//
// create_node, set_args, set_kwargs, replace_input_with, replace_all_uses_with, erase_node and
// clone all stage their edge change (may throw, changes nothing) and commit it (no-throw) through
// detail::EdgeUpdate. Pinned here: users follow FX's rule (a user appears once per node it
// reads, appended when it starts reading, removed in place when it stops), the edge commit
// changes version() once per edit, the observer hears of a replacement once with the right
// arguments, and an allocation failure anywhere leaves the graph exactly as it was.
#include <catch2/catch.hpp>
#include <epgraph/ir/graph.hpp>
#include <epgraph/ir/print.hpp>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/alloc_failure.hpp"

namespace {

using epgraph::Argument;
using epgraph::ArgumentList;
using epgraph::Graph;
using epgraph::Kwargs;
using epgraph::Node;
using Names = std::vector<std::string>;

// Not in any registry: no schema check gets in the way of arbitrary argument lists.
constexpr const char* f_op = "torch.ops.edges_test.f.default";

Names users_of(const Node* n) {
  Names out;
  for (const Node* u : n->users()) out.emplace_back(u->name());
  return out;
}

// Everything an edge edit may change: the printed graph (order, names, targets, arguments,
// user counts), every users list in order, the namespace, size and insertion point.
struct GraphSnapshot {
  std::string printed;
  std::vector<Names> users;
  epgraph::Namespace names;
  std::size_t size = 0;
  std::size_t num_placeholders = 0;
  const Node* anchor = nullptr;

  friend bool operator==(const GraphSnapshot& a, const GraphSnapshot& b) {
    return a.printed == b.printed && a.users == b.users && a.names == b.names && a.size == b.size &&
           a.num_placeholders == b.num_placeholders && a.anchor == b.anchor;
  }
};

GraphSnapshot snapshot(const Graph& g) {
  GraphSnapshot s;
  s.printed = epgraph::to_string(g);
  for (const Node& n : g.nodes()) s.users.push_back(users_of(&n));
  s.names = g.names();
  s.size = g.size();
  s.num_placeholders = g.num_placeholders();
  s.anchor = g.insertion_point().anchor;
  return s;
}

// Records the observer calls.
struct Recorder final : epgraph::GraphObserver {
  std::vector<std::string> calls;
  bool fail = false;
  void before_replace_uses(const Node& old_value, const Node& replacement,
                           bool output_uses) override {
    calls.push_back("replace " + std::string(old_value.name()) + " -> " +
                    std::string(replacement.name()) + (output_uses ? " (output)" : ""));
    if (fail) throw std::runtime_error("observer refuses");
  }
  void before_rename(const Node& node, std::string_view new_name) override {
    calls.push_back("rename " + std::string(node.name()) + " -> " + std::string(new_name));
  }
};

// x, y placeholders; a = f(x, x); b = f(a, x, k=y); out returns (a, b).
//   users: x: a, b   y: b   a: b, output   b: output
struct Diamond {
  std::unique_ptr<Graph> g = std::make_unique<Graph>();
  Node* x = nullptr;
  Node* y = nullptr;
  Node* a = nullptr;
  Node* b = nullptr;
  Node* out = nullptr;
  Diamond() {
    x = g->placeholder("x");
    y = g->placeholder("y");
    a = g->call_function(f_op, {x, x}, {}, "a");
    b = g->call_function(f_op, {a, x}, {{"k", Argument(y)}}, "b");
    out = g->output({a, b});
  }
};

// Runs `edit` on graphs made by `make` with its 1st, 2nd, ... allocation failing; after each
// failure the graph must be as before. Returns the failures seen; the last, undisturbed run must
// give what `edit` gives on a fresh graph.
template <class Make, class Edit>
long failures_leave_graph_unchanged(Make make, Edit edit) {
  auto reference = make();
  edit(reference);
  const GraphSnapshot expected = snapshot(*reference.g);
  auto subject = make();
  const GraphSnapshot before = snapshot(*subject.g);
  const long failures = epgraph_test::for_each_allocation_failure(
      [&] { edit(subject); },
      [&](long n) {
        INFO("allocation " << n << " failed");
        const bool unchanged = snapshot(*subject.g) == before;
        CHECK(unchanged);
        return unchanged;
      });
  CHECK(snapshot(*subject.g) == expected);
  subject.g->lint();
  return failures;
}

}  // namespace

TEST_CASE("edge update: create appends the new node to each input's users once", "[graph][edges]") {
  Diamond d;
  Graph& g = *d.g;
  CHECK(users_of(d.x) == Names{"a", "b"});
  CHECK(users_of(d.y) == Names{"b"});
  CHECK(users_of(d.a) == Names{"b", "output"});
  Recorder rec;
  g.set_observer(&rec);
  const auto v0 = g.version();
  // Reads x three times (twice inside a list, once as a keyword) and y once.
  Node* c =
      g.call_function(f_op, {Argument(ArgumentList{d.x, d.y, d.x})}, {{"k", Argument(d.x)}}, "c");
  CHECK(g.version() == v0 + 2);  // the edge commit and the link into the list
  CHECK(users_of(d.x) == Names{"a", "b", "c"});
  CHECK(users_of(d.y) == Names{"b", "c"});
  CHECK(users_of(c).empty());
  CHECK(c->all_input_nodes() == std::vector<Node*>{d.x, d.y});
  CHECK(rec.calls.empty());
  g.lint();
}

TEST_CASE("edge update: set_args and set_kwargs move the node between users lists",
          "[graph][edges]") {
  Diamond d;
  Graph& g = *d.g;
  Recorder rec;
  g.set_observer(&rec);
  SECTION("set_args: stops reading x, keeps a, starts reading y") {
    const auto v0 = g.version();
    d.b->set_args({d.a, d.y, d.a});
    CHECK(g.version() == v0 + 1);
    CHECK(users_of(d.x) == Names{"a"});
    CHECK(users_of(d.y) == Names{"b"});  // already read through k: listed once
    CHECK(users_of(d.a) == Names{"b", "output"});
    CHECK(d.b->args()[1].node() == d.y);
  }
  SECTION("set_args keeps the users order of the others when a user leaves and comes back") {
    d.a->set_args({d.y});
    CHECK(users_of(d.x) == Names{"b"});
    CHECK(users_of(d.y) == Names{"b", "a"});
    d.a->set_args({d.x, d.y});
    CHECK(users_of(d.x) == Names{"b", "a"});  // appended: FX's insertion-ordered dict
    CHECK(users_of(d.y) == Names{"b", "a"});
  }
  SECTION("set_kwargs: drops y, reads x by keyword (already read by position)") {
    const auto v0 = g.version();
    d.b->set_kwargs({{"k", Argument(d.x)}, {"j", Argument(ArgumentList{d.x, 2})}});
    CHECK(g.version() == v0 + 1);
    CHECK(users_of(d.y).empty());
    CHECK(users_of(d.x) == Names{"a", "b"});
    CHECK(d.b->kwargs().size() == 2);
    CHECK(d.b->kwargs()[1].first == "j");
  }
  SECTION("set_kwargs on a node without kwargs storage") {
    d.a->set_kwargs({{"k", Argument(d.y)}});
    CHECK(users_of(d.y) == Names{"b", "a"});
    CHECK(d.a->kwargs().size() == 1);
  }
  CHECK(rec.calls.empty());
  g.lint();
}

TEST_CASE("edge update: replace_input_with notifies once and swaps one user", "[graph][edges]") {
  Diamond d;
  Graph& g = *d.g;
  Recorder rec;
  g.set_observer(&rec);
  SECTION("an ordinary node") {
    const auto v0 = g.version();
    d.b->replace_input_with(d.x, d.y);
    CHECK(g.version() == v0 + 1);
    CHECK(rec.calls == Names{"replace x -> y"});
    CHECK(users_of(d.x) == Names{"a"});
    CHECK(users_of(d.y) == Names{"b"});
    CHECK(d.b->args()[1].node() == d.y);
  }
  SECTION("the output node") {
    d.out->replace_input_with(d.b, d.x);
    CHECK(rec.calls == Names{"replace b -> x (output)"});
    CHECK(users_of(d.b).empty());
    CHECK(users_of(d.x) == Names{"a", "b", "output"});
  }
  SECTION("an input the node does not read: nothing happens") {
    const auto v0 = g.version();
    d.a->replace_input_with(d.y, d.b);
    CHECK(g.version() == v0);
    CHECK(rec.calls.empty());
    CHECK(users_of(d.b) == Names{"output"});
  }
  SECTION("an observer that throws cancels the change") {
    const GraphSnapshot before = snapshot(g);
    const auto v0 = g.version();
    rec.fail = true;
    CHECK_THROWS_WITH(d.b->replace_input_with(d.x, d.y), "observer refuses");
    CHECK(rec.calls == Names{"replace x -> y"});
    CHECK(snapshot(g) == before);
    CHECK(g.version() == v0);
  }
  g.lint();
}

TEST_CASE("edge update: replace_all_uses_with notifies once and keeps users in order",
          "[graph][edges]") {
  Diamond d;
  Graph& g = *d.g;
  Recorder rec;
  g.set_observer(&rec);
  SECTION("every user, one of which already reads the replacement") {
    const auto v0 = g.version();
    // x's users: a (reads x twice), b (also reads y through k).
    const std::vector<Node*> changed = d.x->replace_all_uses_with(d.y);
    CHECK(changed == std::vector<Node*>{d.a, d.b});
    CHECK(g.version() == v0 + 1);
    CHECK(rec.calls == Names{"replace x -> y"});
    CHECK(users_of(d.x).empty());
    CHECK(users_of(d.y) == Names{"b", "a"});  // b was listed already; a is appended
    CHECK(d.a->args()[0].node() == d.y);
    CHECK(d.a->args()[1].node() == d.y);
  }
  SECTION("the output node among the users") {
    Node* c = nullptr;
    {
      const epgraph::InsertingGuard before_b = g.inserting_before(d.b);
      c = g.call_function(f_op, {d.y}, {}, "c");
    }
    const std::vector<Node*> changed = d.a->replace_all_uses_with(c);
    CHECK(changed == std::vector<Node*>{d.b, d.out});
    CHECK(rec.calls == Names{"replace a -> c (output)"});
    CHECK(users_of(d.a).empty());
    CHECK(users_of(c) == Names{"b", "output"});
  }
  SECTION("some users: those left keep their order") {
    Node* c = g.call_function(f_op, {d.x}, {}, "c");
    Node* e = g.call_function(f_op, {d.x}, {}, "e");
    REQUIRE(users_of(d.x) == Names{"a", "b", "c", "e"});
    const std::vector<Node*> changed =
        d.x->replace_all_uses_with(d.y, [&](Node* u) { return u == d.b || u == e; });
    CHECK(changed == std::vector<Node*>{d.b, e});
    CHECK(rec.calls == Names{"replace x -> y"});
    CHECK(users_of(d.x) == Names{"a", "c"});
    CHECK(users_of(d.y) == Names{"b", "e"});
    CHECK(users_of(c).empty());
  }
  SECTION("no user changes: nothing happens") {
    const auto v0 = g.version();
    CHECK(d.y->replace_all_uses_with(d.x, [](Node*) { return false; }).empty());
    CHECK(g.version() == v0);
    CHECK(rec.calls.empty());
  }
  SECTION("an observer that throws cancels the change") {
    const GraphSnapshot before = snapshot(g);
    const auto v0 = g.version();
    rec.fail = true;
    CHECK_THROWS_WITH(d.x->replace_all_uses_with(d.y), "observer refuses");
    CHECK(rec.calls == Names{"replace x -> y"});
    CHECK(snapshot(g) == before);
    CHECK(g.version() == v0);
  }
  g.lint();
}

TEST_CASE("edge update: erase_node leaves every input's users list in order", "[graph][edges]") {
  Diamond d;
  Graph& g = *d.g;
  Recorder rec;
  g.set_observer(&rec);
  Node* c = g.call_function(f_op, {d.x, d.a, d.x}, {{"k", Argument(d.y)}}, "c");
  Node* e = g.call_function(f_op, {d.x, d.y}, {}, "e");
  REQUIRE(users_of(d.x) == Names{"a", "b", "c", "e"});
  REQUIRE(users_of(d.y) == Names{"b", "c", "e"});
  const auto v0 = g.version();
  g.erase_node(c);
  CHECK(g.version() == v0 + 2);  // the edge commit and the unlink
  CHECK(users_of(d.x) == Names{"a", "b", "e"});
  CHECK(users_of(d.y) == Names{"b", "e"});
  CHECK(users_of(d.a) == Names{"b", "output"});
  CHECK(e->all_input_nodes() == std::vector<Node*>{d.x, d.y});
  CHECK(rec.calls.empty());
  g.lint();
}

TEST_CASE("edge update: clone copies users lists verbatim", "[graph][edges]") {
  Diamond d;
  Graph& g = *d.g;
  // x's users out of first-use order: a leaves and comes back after b.
  d.a->set_args({d.y});
  d.a->set_args({d.x, d.x});
  REQUIRE(users_of(d.x) == Names{"b", "a"});
  Recorder rec;
  g.set_observer(&rec);
  const auto v0 = g.version();
  const std::unique_ptr<Graph> copy = g.clone();
  CHECK(g.version() == v0);
  CHECK(rec.calls.empty());
  CHECK(copy->observer() == nullptr);
  CHECK(users_of(copy->find_node("x")) == Names{"b", "a"});
  CHECK(users_of(copy->find_node("y")) == Names{"b"});
  CHECK(users_of(copy->find_node("a")) == Names{"b", "output"});
  CHECK(copy->find_node("b")->args()[0].node() == copy->find_node("a"));
  CHECK(copy->find_node("b")->kwargs()[0].second.node() == copy->find_node("y"));
  CHECK(snapshot(*copy) == snapshot(g));
  copy->lint();
}

TEST_CASE("edge update: every allocation failure leaves the graph as it was",
          "[graph][edges][strong]") {
  auto make = [] { return Diamond(); };
  SECTION("create") {
    CHECK(failures_leave_graph_unchanged(make, [](Diamond& d) {
            d.g->call_function(f_op, {Argument(ArgumentList{d.x, d.y, d.a}), 3, d.x},
                               {{"k", Argument(d.b)}, {"j", Argument(d.x)}}, "c");
          }) >= 5);
  }
  SECTION("create with a prepare step") {
    CHECK(failures_leave_graph_unchanged(make, [](Diamond& d) {
            d.g->create_node(epgraph::OpCode::call_function, f_op, {d.x, d.a}, {}, "c",
                             [](Node& n) { n.mutable_meta().other.emplace_back("k", "v"); });
          }) >= 5);
  }
  SECTION("set_args") {
    CHECK(failures_leave_graph_unchanged(make, [](Diamond& d) {
            d.b->set_args({d.y, d.x, d.a, ArgumentList{d.y, d.a}});
          }) >= 3);
  }
  SECTION("set_kwargs") {
    CHECK(failures_leave_graph_unchanged(make, [](Diamond& d) {
            d.a->set_kwargs({{"k", Argument(d.y)}, {"j", Argument(ArgumentList{d.x, d.y})}});
          }) >= 3);
  }
  SECTION("replace_input_with") {
    CHECK(failures_leave_graph_unchanged(
              make, [](Diamond& d) { d.out->replace_input_with(d.a, d.x); }) >= 3);
  }
  SECTION("replace_all_uses_with") {
    CHECK(failures_leave_graph_unchanged(
              make, [](Diamond& d) { (void)d.x->replace_all_uses_with(d.y); }) >= 3);
  }
  SECTION("erase_node") {
    auto make_with_c = [] {
      Diamond d;
      d.g->call_function(f_op, {d.x, d.y, d.a}, {{"k", Argument(d.x)}}, "c");
      return d;
    };
    CHECK(failures_leave_graph_unchanged(
              make_with_c, [](Diamond& d) { d.g->erase_node(d.g->find_node("c")); }) >= 1);
  }
  SECTION("clone: the source is untouched and the last copy is complete") {
    Diamond d;
    const GraphSnapshot before = snapshot(*d.g);
    std::unique_ptr<Graph> copy;
    const long failures =
        epgraph_test::for_each_allocation_failure([&] { copy = d.g->clone(); },
                                                  [&](long n) {
                                                    INFO("allocation " << n << " failed");
                                                    const bool unchanged = snapshot(*d.g) == before;
                                                    CHECK(unchanged);
                                                    return unchanged;
                                                  });
    CHECK(failures > 10);
    REQUIRE(copy != nullptr);
    CHECK(snapshot(*copy) == before);
    copy->lint();
  }
}
