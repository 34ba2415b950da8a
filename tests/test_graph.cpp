// Tests for Graph and Node (graph.hpp, node.hpp): order, names, users, insertion points,
// erasure, renaming, lint and clone.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <epgraph/ir/graph.hpp>
#include <epgraph/ir/print.hpp>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace epgraph::detail {
// Reaches into a graph to break invariants on purpose, so lint() has something to find.
struct test_access {
  static void clear_users(Node* n) {
    n->remove_users_if([](Node*) { return true; }, users_key());
  }
  static void set_arg_unchecked(Node* n, std::size_t i, Argument a) {
    ArgumentList args = n->args();
    args[i] = std::move(a);
    n->commit_args(std::move(args), nullptr);  // same count: no box needed
  }
  static void push_user(Node* n, Node* user) {
    n->reserve_users(1, users_key());
    n->push_user(user, users_key());
  }
  static void swap_order(Graph& g, Node* a, Node* b) {
    // a must directly precede b
    g.unlink(a);
    Node* after = b->next_;
    g.link_before(a, after);
  }
};
}  // namespace epgraph::detail

namespace {

using epgraph::Argument;
using epgraph::ArgumentList;
using epgraph::Graph;
using epgraph::Node;
using epgraph::OpCode;

constexpr const char* add_op = "torch.ops.aten.add.Tensor";
constexpr const char* mul_op = "torch.ops.aten.mul.Tensor";

std::vector<std::string> names_of(const Graph& g) {
  std::vector<std::string> out;
  for (const Node& n : g.nodes()) out.emplace_back(n.name());
  return out;
}

std::vector<std::string> names_of(const std::vector<Node*>& nodes) {
  std::vector<std::string> out;
  for (const Node* n : nodes) out.emplace_back(n->name());
  return out;
}

using Names = std::vector<std::string>;

}  // namespace

TEST_CASE("nodes keep creation order, default insertion is before the output", "[graph]") {
  Graph g;
  Node* x = g.placeholder("x");
  Node* out = g.output({x});
  Node* a = g.call_function(add_op, {x, x});
  Node* m = g.call_function(mul_op, {a, 2});
  out->set_args({Argument(ArgumentList{m})});
  Node* y = g.placeholder("y");  // goes after the last placeholder, not before the output
  CHECK(names_of(g) == Names{"x", "y", "add", "mul", "output"});
  CHECK(g.output_node() == out);
  CHECK(g.last_node() == out);
  CHECK(g.size() == 5);
  CHECK(g.num_placeholders() == 2);
  std::vector<Node*> ph;
  for (Node& n : g.placeholders()) ph.push_back(&n);
  CHECK(ph == std::vector<Node*>{x, y});
  CHECK(a->prev() == y);
  CHECK(a->next() == m);
  CHECK(x->prev() == nullptr);
  CHECK(out->next() == nullptr);
  CHECK(g.find_node("mul") == m);
  CHECK(g.find_node("nope") == nullptr);
  CHECK(a->target() == add_op);
  CHECK(a->op() == OpCode::call_function);
  CHECK(x->target() == "x");
  g.lint();
}

TEST_CASE("names are de-duplicated like FX", "[graph][names]") {
  Graph g;
  Node* x = g.placeholder("x");
  Node* x1 = g.placeholder("x");
  Node* cache = g.placeholder("0_cache");
  Node* w = g.placeholder("block1-0_weight");
  Node* in = g.placeholder("input");
  CHECK(x->name() == "x");
  CHECK(x1->name() == "x_1");
  CHECK(x1->target() == "x");  // FX keeps the requested name as a placeholder's target
  CHECK(cache->name() == "_0_cache");
  CHECK(w->name() == "block1_0_weight");
  CHECK(in->name() == "input_1");
  CHECK(in->target() == "input");
  Node* a = g.call_function(add_op, {x, x1});
  Node* b = g.call_function(add_op, {a, x1});
  Node* s = g.call_function("torch.ops.aten.sum.default", {b});
  Node* gi = g.call_function("operator.getitem", {b, 0});
  Node* attr = g.get_attr("linear.weight");
  CHECK(a->name() == "add");
  CHECK(b->name() == "add_1");
  CHECK(s->name() == "sum_1");  // `sum` is a Python builtin
  CHECK(gi->name() == "getitem");
  CHECK(attr->name() == "linear_weight");
  CHECK(g.propose_name("add") == "add_2");
  CHECK(g.find_node("add_2") == nullptr);  // proposing takes nothing
}

TEST_CASE("users are kept in first-use order, each once", "[graph][users]") {
  Graph g;
  Node* x = g.placeholder("x");
  Node* y = g.placeholder("y");
  Node* a = g.call_function(add_op, {x, x});
  CHECK(x->users() == std::vector<Node*>{a});
  Node* b = g.call_function(mul_op, {y, x});
  CHECK(x->users() == std::vector<Node*>{a, b});
  CHECK(y->users() == std::vector<Node*>{b});
  CHECK(b->all_input_nodes() == std::vector<Node*>{y, x});

  // set_args: y stops being used by b, a starts.
  b->set_args({x, a});
  CHECK(y->users().empty());
  CHECK(x->users() == std::vector<Node*>{a, b});  // b keeps its place among x's users
  CHECK(a->users() == std::vector<Node*>{b});

  // kwargs count as uses, nested lists too.
  // An operator without a registered schema: any arguments are accepted.
  Node* c = g.call_function("torch.ops.epgraph_test.any_args.default",
                            {Argument(ArgumentList{y, ArgumentList{y, a}})}, {{"dim", 0}});
  CHECK(y->users() == std::vector<Node*>{c});
  c->set_kwargs({{"out", x}});
  CHECK(x->users() == std::vector<Node*>{a, b, c});
  c->update_kwarg("out", y);
  CHECK(x->users() == std::vector<Node*>{a, b});
  c->update_arg(0, ArgumentList{b});
  CHECK(y->users() == std::vector<Node*>{c});  // still used through kwargs
  CHECK(a->users() == std::vector<Node*>{b});
  CHECK(b->users() == std::vector<Node*>{c});
  g.output({c});
  g.lint();
}

TEST_CASE("replace_all_uses_with rewrites every occurrence", "[graph][users]") {
  Graph g;
  Node* x = g.placeholder("x");
  Node* y = g.placeholder("y");
  Node* a = g.call_function(add_op, {x, x});
  Node* out = g.output({a, x});
  std::vector<Node*> changed = x->replace_all_uses_with(y);
  CHECK(changed == std::vector<Node*>{a, out});
  CHECK(a->args() == ArgumentList{y, y});
  CHECK(out->args()[0] == Argument(ArgumentList{a, y}));
  CHECK(x->users().empty());
  CHECK(y->users() == std::vector<Node*>{a, out});
  g.lint();
  CHECK(epgraph::format_node(*a) ==
        "%add : [num_users=1] = call_function[target=torch.ops.aten.add.Tensor](args = (%y, %y), "
        "kwargs = {})");
}

TEST_CASE("replace_all_uses_with honours delete_user_cb and refuses self-use", "[graph][users]") {
  Graph g;
  Node* x = g.placeholder("x");
  Node* relu = g.call_function("torch.ops.aten.relu.default", {x});
  Node* a = g.call_function(add_op, {x, relu});
  g.output({a});
  CHECK_THROWS_WITH(x->replace_all_uses_with(relu),
                    "Cannot replace uses of 'x' with 'relu': 'relu' uses 'x' itself; pass a "
                    "delete_user_cb that skips it");
  CHECK(x->users() == std::vector<Node*>{relu, a});  // unchanged
  auto changed = x->replace_all_uses_with(relu, [&](Node* u) { return u != relu; });
  CHECK(changed == std::vector<Node*>{a});
  CHECK(a->args() == ArgumentList{relu, relu});
  CHECK(x->users() == std::vector<Node*>{relu});
  CHECK(relu->users() == std::vector<Node*>{a});
  CHECK(x->replace_all_uses_with(x).empty());
  g.lint();
}

TEST_CASE("replace_input_with changes one node only", "[graph][users]") {
  Graph g;
  Node* x = g.placeholder("x");
  Node* y = g.placeholder("y");
  Node* a = g.call_function(add_op, {x, x});
  Node* b = g.call_function(mul_op, {x, 3});
  g.output({a, b});
  a->replace_input_with(x, y);
  CHECK(a->args() == ArgumentList{y, y});
  CHECK(x->users() == std::vector<Node*>{b});
  CHECK(y->users() == std::vector<Node*>{a});
  CHECK_THROWS_AS(a->replace_input_with(y, nullptr), epgraph::value_error);
  g.lint();
}

TEST_CASE("arguments from another graph or null are refused", "[graph][errors]") {
  Graph g;
  Graph other;
  Node* x = g.placeholder("x");
  Node* z = other.placeholder("z");
  const std::string before = epgraph::to_string(g);
  const epgraph::Namespace names_before = g.names();
  CHECK_THROWS_AS(g.call_function(add_op, {x, z}), epgraph::value_error);
  CHECK_THROWS_WITH(g.call_function(add_op, {x, z}),
                    "Argument node 'z' of node 'add' belongs to another graph");
  CHECK(epgraph::to_string(g) == before);
  CHECK(g.names() == names_before);  // the failed calls took no name
  Node* a = g.call_function(add_op, {x, x});
  CHECK(a->name() == "add");
  CHECK_THROWS_WITH(a->set_args({x, z}),
                    "Argument node 'z' of node 'add' belongs to another graph");
  CHECK(a->args() == ArgumentList{x, x});
  CHECK_THROWS_WITH(a->set_args({x, Argument(static_cast<Node*>(nullptr))}),
                    "Null argument node given to node 'add'");
  CHECK_THROWS_WITH(x->replace_all_uses_with(z),
                    "Replacement node 'z' for node 'x' belongs to another graph");
  CHECK_THROWS_WITH(a->update_arg(5, 1),
                    "Argument index 5 out of range for node 'add' with 2 arguments");
}

TEST_CASE("inserting_before/after guards place nodes and restore the point", "[graph][insert]") {
  Graph g;
  Node* x = g.placeholder("x");
  Node* a = g.call_function(add_op, {x, 1});
  Node* out = g.output({a});
  {
    auto guard = g.inserting_after(x);
    Node* m1 = g.call_function(mul_op, {x, 2});
    // After m1, not like FX: torch.fx 2.13 gives ['x', 'mul_1', 'mul', 'add', 'output'] here
    // (each new node goes right after x, `x.append`), which puts mul_1 before its input mul.
    Node* m2 = g.call_function(mul_op, {m1, 3});
    CHECK(names_of(g) == Names{"x", "mul", "mul_1", "add", "output"});
    {
      auto inner = g.inserting_before(a);
      g.call_function("torch.ops.aten.neg.default", {m2});
      CHECK(g.insertion_point().anchor == a);
    }
    CHECK(g.insertion_point().anchor == m2);  // inner guard restored the outer point
    g.call_function("torch.ops.aten.relu.default", {m2});
  }
  CHECK(g.insertion_point().anchor == nullptr);
  g.call_function("torch.ops.aten.exp.default", {a});
  CHECK(names_of(g) == Names{"x", "mul", "mul_1", "relu", "neg", "add", "exp", "output"});
  CHECK(out->next() == nullptr);
  g.lint();
}

TEST_CASE("insertion points that would break the layout are refused", "[graph][insert][errors]") {
  Graph g;
  Node* x = g.placeholder("x");
  Node* y = g.placeholder("y");
  Node* a = g.call_function(add_op, {x, y});
  Node* out = g.output({a});
  const std::string before = epgraph::to_string(g);
  {
    auto guard = g.inserting_before(y);
    CHECK_THROWS_WITH(g.call_function(mul_op, {x, 2}),
                      "Cannot insert call_function node 'mul' before placeholder 'y': "
                      "placeholders must come first");
    Node* w = g.placeholder("w");  // fine: inside the placeholder prefix
    CHECK(names_of(g) == Names{"x", "w", "y", "add", "output"});
    g.erase_node(w);
  }
  {
    auto guard = g.inserting_after(out);
    CHECK_THROWS_WITH(g.call_function(mul_op, {x, 2}),
                      "Cannot insert call_function node 'mul' after the output node");
  }
  {
    auto guard = g.inserting_after(a);
    CHECK_THROWS_WITH(g.placeholder("z"),
                      "Cannot insert placeholder 'z' after non-placeholder node 'add'");
  }
  CHECK_THROWS_AS(g.output({x}), epgraph::runtime_error);
  CHECK_THROWS_WITH(g.output({x}), "Graph already has an output node 'output'");
  CHECK(names_of(g) == Names{"x", "y", "add", "output"});
  CHECK(epgraph::to_string(g) == before);
  Graph other;
  Node* foreign = other.placeholder("q");
  CHECK_THROWS_WITH((void)g.inserting_before(foreign),
                    "Node 'q' does not belong to this graph (cannot insert before it)");
}

TEST_CASE("erase_node refuses nodes with users and never reuses names", "[graph][erase]") {
  Graph g;
  Node* x = g.placeholder("x");
  Node* a = g.call_function(add_op, {x, 1});
  Node* m = g.call_function(mul_op, {a, 2});
  Node* s = g.call_function("torch.ops.aten.sub.Tensor", {a, 3});
  g.output({m, s});
  CHECK_THROWS_AS(g.erase_node(a), epgraph::runtime_error);
  CHECK_THROWS_WITH(g.erase_node(a),
                    "Tried to erase Node add but it still had 2 users in the graph: {mul: None, "
                    "sub: None}!");
  CHECK(g.size() == 5);
  g.output_node()->set_args({Argument(ArgumentList{s})});
  g.erase_node(m);
  CHECK(a->users() == std::vector<Node*>{s});
  CHECK(g.find_node("mul") == nullptr);
  Node* m2 = g.call_function(mul_op, {a, 2});
  CHECK(m2->name() == "mul_1");  // `mul` stays taken
  CHECK(names_of(g) == Names{"x", "add", "sub", "mul_1", "output"});
  {
    auto guard = g.inserting_before(m2);
    CHECK_THROWS_WITH(g.erase_node(m2),
                      "Cannot erase node 'mul_1' while it anchors an insertion point");
  }
  g.erase_node(m2);
  CHECK_THROWS_WITH(g.erase_node(nullptr), "Cannot erase a null node");
  g.lint();
}

TEST_CASE("rename_node de-duplicates and keeps placeholder target == name", "[graph][names]") {
  Graph g;
  Node* x = g.placeholder("x");
  Node* a = g.call_function(add_op, {x, 1});
  g.output({a});
  CHECK(g.rename_node(a, "x") == "x_1");
  CHECK(a->name() == "x_1");
  CHECK(g.find_node("x_1") == a);
  CHECK(g.find_node("add") == nullptr);
  CHECK(g.rename_node(x, "inp") == "inp");
  CHECK(x->target() == "inp");
  CHECK(g.rename_node(x, "inp") == "inp");
  Node* b = g.call_function(add_op, {a, 1});
  CHECK(b->name() == "add_1");  // the old name `add` stays taken
  CHECK(epgraph::to_string(g) ==
        "graph():\n"
        "    %inp : [num_users=1] = placeholder[target=inp]\n"
        "    %x_1 : [num_users=2] = call_function[target=torch.ops.aten.add.Tensor](args = (%inp, "
        "1), kwargs = {})\n"
        "    %add_1 : [num_users=0] = call_function[target=torch.ops.aten.add.Tensor](args = "
        "(%x_1, 1), kwargs = {})\n"
        "    return (x_1,)");
  g.lint();
}

TEST_CASE("lint names the offender of each broken invariant", "[graph][lint]") {
  using access = epgraph::detail::test_access;
  SECTION("no output node") {
    Graph g;
    g.placeholder("x");
    CHECK_THROWS_AS(g.lint(), epgraph::lint_error);
    CHECK_THROWS_WITH(g.lint(), "Graph lint failed:\n  - Graph has no output node");
  }
  SECTION("user missing from users()") {
    Graph g;
    Node* x = g.placeholder("x");
    Node* a = g.call_function(add_op, {x, 1});
    g.output({a});
    access::clear_users(x);
    try {
      g.lint();
      FAIL("lint passed");
    } catch (const epgraph::lint_error& e) {
      CHECK(e.violations() == Names{"Node 'add' uses 'x' but is missing from its users"});
    }
  }
  SECTION("stale user and duplicate user") {
    Graph g;
    Node* x = g.placeholder("x");
    Node* a = g.call_function(add_op, {x, 1});
    Node* b = g.call_function(add_op, {a, 1});
    g.output({b});
    access::push_user(b, a);
    access::push_user(x, a);
    try {
      g.lint();
      FAIL("lint passed");
    } catch (const epgraph::lint_error& e) {
      CHECK(e.violations() ==
            Names{"Node 'x' lists user 'add' twice",
                  "Node 'add_1' lists 'add' as a user but 'add' does not use it"});
    }
  }
  SECTION("argument defined after its user") {
    Graph g;
    Node* x = g.placeholder("x");
    Node* a = g.call_function(add_op, {x, 1});
    Node* b = g.call_function(mul_op, {a, 2});
    g.output({b});
    access::swap_order(g, a, b);
    try {
      g.lint();
      FAIL("lint passed");
    } catch (const epgraph::lint_error& e) {
      CHECK(e.violations() == Names{"Node 'mul' uses node 'add' that is defined after it"});
    }
  }
  SECTION("placeholder after a compute node and output not last") {
    Graph g;
    Node* x = g.placeholder("x");
    Node* y = g.placeholder("y");
    Node* a = g.call_function(add_op, {x, 1});
    Node* out = g.output({a});
    access::swap_order(g, y, a);  // x, add, y, output
    (void)out;
    try {
      g.lint();
      FAIL("lint passed");
    } catch (const epgraph::lint_error& e) {
      REQUIRE(!e.violations().empty());
      CHECK(e.violations()[0] == "Placeholder 'y' comes after non-placeholder node 'add'");
    }
  }
  SECTION("argument node from another graph") {
    Graph g;
    Graph other;
    Node* z = other.placeholder("z");
    Node* x = g.placeholder("x");
    Node* a = g.call_function(add_op, {x, 1});
    g.output({a});
    access::set_arg_unchecked(a, 1, Argument(z));
    try {
      g.lint();
      FAIL("lint passed");
    } catch (const epgraph::lint_error& e) {
      CHECK(e.violations() == Names{"Node 'add' uses node 'z' that is not in this graph"});
    }
  }
}

TEST_CASE("clone copies nodes, users order and namespace, the copy is independent",
          "[graph][clone]") {
  Graph g;
  Node* x = g.placeholder("x");
  Node* y = g.placeholder("y");
  Node* a = g.call_function(add_op, {x, y}, {{"alpha", 2}});
  Node* dead = g.call_function(mul_op, {a, 2});
  g.erase_node(dead);
  Node* b = g.call_function(mul_op, {y, a});
  Node* out = g.output({b});
  a->set_args({x, x});
  a->set_args({x, y});  // y's users are now [b, a]: not graph order
  a->mutable_meta().requested_name = "requested";
  out->set_args({Argument(ArgumentList{b, a})});

  auto copy = g.clone();
  CHECK(epgraph::to_string(*copy) == epgraph::to_string(g));
  CHECK(copy->names() == g.names());
  Node* cy = copy->find_node("y");
  Node* ca = copy->find_node("add");
  REQUIRE(cy != nullptr);
  REQUIRE(ca != nullptr);
  CHECK(cy != y);
  CHECK(names_of(cy->users()) == names_of(y->users()));
  CHECK(names_of(cy->users()) == Names{"mul_1", "add"});
  CHECK(ca->meta().requested_name == "requested");
  CHECK(ca->kwargs().size() == 1);
  CHECK(&ca->graph() == copy.get());
  for (Node* in : ca->all_input_nodes()) CHECK(&in->graph() == copy.get());
  copy->lint();

  Node* extra = copy->call_function(mul_op, {ca, 5});
  CHECK(extra->name() == "mul_2");  // `mul` was erased in the original and stays taken in the copy
  CHECK(g.find_node("mul_2") == nullptr);
  CHECK(g.size() == 5);
}

// Issue 27 item 5: the invariants the types hold.
static_assert(!std::is_default_constructible_v<epgraph::detail::users_key>,
              "only EdgeUpdate (and test_access) may make the key that writes users lists");
static_assert(std::is_same_v<decltype(std::declval<Node&>().meta()), const epgraph::NodeMeta&>,
              "meta() is read-only even on a non-const node, so reading cannot allocate");

static_assert(std::is_same_v<decltype(std::declval<const Node&>().users()), epgraph::ConstNodeSpan>,
              "a const node (and so a const Graph&) hands out its users read-only");
static_assert(std::is_same_v<decltype(std::declval<Node&>().users()), epgraph::NodeSpan>,
              "a mutable node hands out mutable users");
static_assert(std::is_same_v<decltype(std::declval<const Graph&>().first_node()), const Node*>,
              "a const Graph& starts walks at a const node");

TEST_CASE("users() through a const graph are the same nodes, read-only", "[graph]") {
  Graph g;
  Node* x = g.placeholder("x");
  Node* a = g.call_function("torch.ops.aten.relu.default", {x});
  Node* b = g.call_function("torch.ops.aten.add.Tensor", {x, a});
  g.output({b});
  const Graph& cg = g;
  const Node* cx = cg.first_node();
  REQUIRE(cx == x);
  const epgraph::ConstNodeSpan cu = cx->users();
  REQUIRE(cu.size() == 2);
  CHECK(cu[0] == a);  // first-use order, as FX's node.users
  CHECK(cu[1] == b);
  // Through the mutable node, the same view, now mutable: edits go through it.
  const epgraph::NodeSpan mu = x->users();
  REQUIRE(mu.size() == 2);
  CHECK(mu[0]->name() == "relu");
  CHECK(mu[1]->name() == "add");
  // One user (the inline representation) reads the same both ways.
  const epgraph::ConstNodeSpan one = static_cast<const Node*>(a)->users();
  REQUIRE(one.size() == 1);
  CHECK(one[0] == b);
}

static_assert(
    std::is_same_v<decltype(std::declval<const epgraph::Argument&>().node()), const Node*>,
    "an argument names its node read-only: a const Graph& cannot reach a writable "
    "node through its nodes' arguments");
static_assert(std::is_same_v<decltype(std::declval<const Node&>().all_input_nodes()),
                             std::vector<const Node*>>,
              "a const node hands out its inputs read-only");
static_assert(std::is_same_v<decltype(std::declval<Node&>().all_input_nodes()), std::vector<Node*>>,
              "a writable node's inputs are writable (its graph is)");
static_assert(
    std::is_same_v<decltype(std::declval<Graph&>().writable(std::declval<const Node*>())), Node*>,
    "the non-const graph gives write access to the nodes it owns");

TEST_CASE("arguments name their nodes read-only, the non-const graph gives write access",
          "[graph]") {
  Graph g;
  Node* x = g.placeholder("x");
  Node* y = g.placeholder("y");
  Node* a = g.call_function("torch.ops.aten.neg.default", {y});
  Node* b = g.call_function("torch.ops.aten.mul.Tensor", {x, a});
  g.output({b});
  const Graph& read_only = g;
  const Node* cb = read_only.find_node("mul");
  REQUIRE(cb == b);
  const Node* in0 = cb->args()[0].node();
  CHECK(in0 == x);
  CHECK(cb->all_input_nodes() == std::vector<const Node*>{x, a});
  CHECK(b->all_input_nodes() == std::vector<Node*>{x, a});
  // Write access needs the non-const graph: the same node, writable.
  Node* wx = g.writable(in0);
  CHECK(wx == x);
  CHECK(g.writable(nullptr) == nullptr);
  // A node of another graph is refused, naming it; nothing changes.
  Graph other;
  const Node* foreign = other.placeholder("y");
  CHECK_THROWS_AS(g.writable(foreign), epgraph::value_error);
  CHECK_THROWS_WITH(g.writable(foreign),
                    "Node 'y' does not belong to this graph (cannot make it writable)");
  CHECK(g.size() == 5);
  // Regression: an Argument built from a `const Node*` used to take the bool constructor (the
  // node constructor took `Node*` only, and a pointer converts to bool): Argument(const_x) was
  // `True`. It is the node now.
  const epgraph::Argument from_const(in0);
  CHECK_FALSE(from_const.is<bool>());
  CHECK(from_const.is<Node*>());
  CHECK(from_const.node() == x);
  CHECK(from_const == epgraph::Argument(x));
  // A node's arguments may be set from const pointers of its own graph.
  b->set_args({in0, in0});
  CHECK(b->args()[0].node() == x);
  CHECK(b->args()[1].node() == x);
  CHECK(x->users().size() == 1);  // mul, once
  CHECK(a->users().empty());
}

TEST_CASE("reading meta() through a non-const node creates no storage and changes nothing",
          "[graph][meta]") {
  Graph g;
  Node* x = g.placeholder("x");
  Node* y = g.placeholder("y");
  Node* r = g.call_function("torch.ops.aten.add.Tensor", {x, y});
  g.output({r});
  const std::uint64_t version = g.version();
  // Nodes that never had metadata all share the one empty NodeMeta: no per-node storage.
  CHECK(&x->meta() == &y->meta());
  CHECK(&x->meta() == &r->meta());
  CHECK_FALSE(x->meta().val.has_value());
  CHECK(x->meta().requested_name.empty());
  CHECK(g.version() == version);  // reading a placeholder's meta is not an edit
  // Writing creates the node's own storage (and, on a placeholder, is an edit).
  x->mutable_meta().requested_name = "x_in";
  CHECK(&x->meta() != &y->meta());
  CHECK(&y->meta() == &r->meta());
  CHECK(x->meta().requested_name == "x_in");
  CHECK(g.version() != version);
}
