// torch.fx's graph toolkit in epgraph: Graph::eliminate_dead_code (and the program-level
// eliminate_dead_code of passes/program_passes.hpp), Node::prepend/append,
// Graph::node_copy/graph_copy and stable_topological_sort. The expected printed graphs come from
// torch 2.13 itself: tools/gen_fx_toolkit_cases.py builds the same graphs with torch.fx, runs
// torch's own functions and writes print(graph) to tests/data/fx_toolkit_cases.txt. Refused calls
// are checked for their exact message and for leaving the graph exactly as it was (snapshot).
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <cstddef>
#include <epgraph/epgraph.hpp>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "support/fx_cases.hpp"
#include "support/program_builders.hpp"
#include "support/refusal.hpp"
#include "support/snapshot.hpp"

namespace {

using epgraph::Argument;
using epgraph::ArgumentList;
using epgraph::Graph;
using epgraph::Kwargs;
using epgraph::Node;
using epgraph::OpCode;
using epgraph_test::check_refused;
using epgraph_test::Program;
using epgraph_test::snapshot;

const std::string& expected(const std::string& name) { return epgraph_test::fx_case(name); }

std::string printed(const Graph& g) { return epgraph::to_string(g); }

// The graph's node names in order, separated by spaces.
std::string printed_names(const Graph& g) {
  std::string out;
  for (const Node& n : g.nodes()) out += (out.empty() ? "" : " ") + std::string(n.name());
  return out;
}
std::string py_bool(bool b) { return b ? "True" : "False"; }

// A program around a graph (empty signature), so that snapshot() sees the whole graph state.
Program wrap(std::unique_ptr<Graph> g) { return Program(std::move(g), {}); }

Node* call(Graph& g, const char* target, ArgumentList args, const char* name, Kwargs kwargs = {}) {
  return g.call_function(target, std::move(args), std::move(kwargs), name);
}

// Rebuilds a graph written by the generator as "name;target;arg,arg;kw=arg" lines, in list order;
// uses of later nodes are set once every node exists (as the generator did).
std::unique_ptr<Graph> build_structure(const std::string& text) {
  auto g = std::make_unique<Graph>();
  struct Pending {
    Node* node;
    std::vector<std::string> args;
    std::vector<std::pair<std::string, std::string>> kwargs;
  };
  std::vector<Pending> pending;
  std::vector<std::string> outputs;
  Node* first = nullptr;
  for (const std::string& line : epgraph_test::split_fields(text, '\n')) {
    const std::vector<std::string> f = epgraph_test::split_fields(line, ';');
    REQUIRE(f.size() == 4);
    std::vector<std::string> args =
        f[2].empty() ? std::vector<std::string>{} : epgraph_test::split_fields(f[2], ',');
    if (f[1] == "placeholder") {
      Node* p = g->placeholder(f[0]);
      if (first == nullptr) first = p;
      continue;
    }
    if (f[1] == "output") {
      outputs = args;
      continue;
    }
    Pending p;
    ArgumentList stand_in(args.size(), Argument(first));
    Kwargs kw_stand_in;
    if (!f[3].empty()) {
      for (const std::string& kv : epgraph_test::split_fields(f[3], ',')) {
        const auto eq = kv.find('=');
        p.kwargs.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
        kw_stand_in.emplace_back(kv.substr(0, eq), Argument(first));
      }
    }
    p.node = g->call_function(f[1], std::move(stand_in), std::move(kw_stand_in), f[0]);
    p.args = args;
    pending.push_back(std::move(p));
  }
  for (Pending& p : pending) {
    ArgumentList args;
    for (const std::string& a : p.args) args.emplace_back(g->find_node(a));
    Kwargs kwargs;
    for (const auto& kv : p.kwargs)
      kwargs.emplace_back(kv.first, Argument(g->find_node(kv.second)));
    p.node->set_args(std::move(args));
    if (!kwargs.empty()) p.node->set_kwargs(std::move(kwargs));
  }
  ArgumentList results;
  for (const std::string& o : outputs) results.emplace_back(g->find_node(o));
  g->output(std::move(results));
  return g;
}

// The graph of the "dce" cases (see the generator).
std::unique_ptr<Graph> dce_graph() {
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* y = g->placeholder("y");
  Node* add = call(*g, "torch.ops.aten.add.Tensor", {x, y}, "add");
  Node* mul = call(*g, "torch.ops.aten.mul.Tensor", {add, y}, "mul");
  call(*g, "torch.ops.aten.neg.default", {mul}, "neg");
  call(*g, "torch.ops.aten.add_.Tensor", {x, 1}, "add_");
  call(*g, "torch.ops.aten.rand.default", {Argument(ArgumentList{2})}, "rand");
  call(*g, "torch.ops.aten._assert_scalar.default", {true, "msg"}, "_assert_scalar");
  call(*g, "torch.ops.aten.sin.default", {y}, "sin");
  Node* cos = call(*g, "torch.ops.aten.cos.default", {y}, "cos");
  call(*g, "torch.ops.aten.sub.Tensor", {cos, x}, "sub");
  Node* relu = call(*g, "torch.ops.aten.relu.default", {add}, "relu");
  g->output({relu});
  return g;
}

// x, y; a = add(x, y); b = mul(x, y); c = sub(a, b); d = relu(y); return (c, d)
std::unique_ptr<Graph> move_graph() {
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* y = g->placeholder("y");
  Node* a = call(*g, "torch.ops.aten.add.Tensor", {x, y}, "a");
  Node* b = call(*g, "torch.ops.aten.mul.Tensor", {x, y}, "b");
  Node* c = call(*g, "torch.ops.aten.sub.Tensor", {a, b}, "c");
  Node* d = call(*g, "torch.ops.aten.relu.default", {y}, "d");
  g->output({c, d});
  return g;
}

std::unique_ptr<Graph> copy_source() {
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* y = g->placeholder("y");
  Node* add = call(*g, "torch.ops.aten.add.Tensor", {x, y}, "add");
  Node* add_1 = call(*g, "torch.ops.aten.mul.Tensor", {add, y}, "add_1");
  Node* add_2 = call(*g, "torch.ops.aten.sub.Tensor", {add_1, x}, "add_2");
  Node* cat = call(*g, "torch.ops.aten.cat.default", {Argument(ArgumentList{add, add_2})}, "cat");
  g->output({cat, add_1});
  return g;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// eliminate_dead_code

TEST_CASE("eliminate_dead_code removes what torch.fx removes", "[fx][dce]") {
  auto g = dce_graph();
  CHECK(printed(*g) == expected("dce.before"));
  CHECK(py_bool(g->eliminate_dead_code()) == expected("dce.changed"));
  CHECK(printed(*g) == expected("dce.after"));
  CHECK(py_bool(g->eliminate_dead_code()) == expected("dce.again"));
  g->lint();
  // Names of removed nodes stay taken.
  CHECK(g->propose_name("mul") == "mul_1");

  auto h = dce_graph();
  CHECK(py_bool(h->eliminate_dead_code([](const Node& n) { return n.name() == "sin"; })) ==
        expected("dce_keep_sin.changed"));
  CHECK(printed(*h) == expected("dce_keep_sin.after"));
}

TEST_CASE("eliminate_dead_code on random graphs matches torch.fx", "[fx][dce]") {
  for (const char* seed : {"1", "2", "3"}) {
    const std::string prefix = std::string("dce_random_") + seed;
    auto g = build_structure(expected(prefix + ".structure"));
    CHECK(py_bool(g->eliminate_dead_code()) == expected(prefix + ".changed"));
    CHECK(printed(*g) == expected(prefix + ".after"));
    g->lint();
  }
}

TEST_CASE("Node::is_impure follows torch's is_impure", "[fx][dce]") {
  Graph g;
  g.set_schema_checks(false);
  Node* x = g.placeholder("x");
  auto impure = [&](const char* target, ArgumentList args = {}) {
    return g.call_function(target, std::move(args))->is_impure();
  };
  CHECK(x->is_impure());
  CHECK(impure("torch.ops.aten.add_.Tensor", {x, 1}));              // mutable schema
  CHECK(impure("torch.ops.aten.copy_.default", {x, x}));            // mutable schema
  CHECK(impure("torch.ops.aten.index_put_.default", {x}));          // mutable schema
  CHECK(impure("torch.ops.aten.dropout.default", {x, 0.5, true}));  // nondeterministic_seeded
  CHECK(impure("torch.ops.aten.bernoulli.p", {x, 0.5}));
  CHECK(impure("torch.ops.aten._assert_async.msg", {x, "m"}));  // FX's list
  CHECK(impure("torch.ops.aten._assert_async.default", {x}));   // epgraph: any aten._assert*
  CHECK(impure("torch.ops.aten.sym_constrain_range_for_size.default", {x}));
  CHECK(impure("torch.ops.aten._print.default", {"hi"}));  // epgraph: returns nothing
  CHECK(impure("torch.ops.higher_order.call_torchbind", {x, "m"}));
  CHECK(impure("torch.ops.higher_order.with_effects", {x, "torch.ops.mylib.record.default"}));
  CHECK(impure("operator.setitem", {x, 0, x}));
  CHECK(impure("torch._assert", {true, "m"}));
  CHECK(impure("torch.ops.higher_order.auto_functionalized",
               {"torch.ops.aten._assert_async.msg", x}));
  CHECK_FALSE(impure("torch.ops.higher_order.auto_functionalized",
                     {"torch.ops.mylib.inplace_.default", x}));
  CHECK_FALSE(impure("torch.ops.aten.add.Tensor", {x, x}));
  CHECK_FALSE(impure("operator.getitem", {x, 0}));
  // No schema: kept by default (a custom op may exist for its effect), pure when trusted.
  CHECK(impure("torch.ops.mylib.unknown_.default", {x}));
  CHECK_FALSE(g.call_function("torch.ops.mylib.unknown_.default", {x})
                  ->is_impure(epgraph::UnknownOperators::pure));
  CHECK(impure("torch.ops.quantized_decomposed.quantize_per_tensor.default", {x, 0.1, 0, 0, 255}));
  CHECK_FALSE(impure("torch.sym_max", {x, x}));  // a Python callable, as in FX
  CHECK_FALSE(impure("torch.ops.higher_order.cond", {x}));
  CHECK_FALSE(g.get_attr("sub")->is_impure());
  CHECK_FALSE(g.call_module("m", {x})->is_impure());
  CHECK_FALSE(g.call_method("view", {x})->is_impure());
  CHECK(g.output({x})->is_impure());
}

TEST_CASE("find_nodes lists nodes by op and target in graph order, as FX's find_nodes",
          "[fx][find_nodes]") {
  Graph g;
  Node* x = g.placeholder("x");
  Node* y = g.placeholder("y");
  Node* r0 = g.call_function("torch.ops.aten.relu.default", {x});
  Node* a = g.call_function("torch.ops.aten.add.Tensor", {r0, y});
  Node* r1 = g.call_function("torch.ops.aten.relu.default", {a});
  Node* out = g.output({r1});
  const std::string relu = "torch.ops.aten.relu.default";
  CHECK(g.find_nodes(OpCode::call_function, relu) == std::vector<Node*>{r0, r1});
  CHECK(g.find_nodes(OpCode::call_function) == std::vector<Node*>{r0, a, r1});
  CHECK(g.find_nodes(OpCode::placeholder) == std::vector<Node*>{x, y});
  CHECK(g.find_nodes(OpCode::placeholder, "y") == std::vector<Node*>{y});
  CHECK(g.find_nodes(OpCode::output) == std::vector<Node*>{out});
  CHECK(g.find_nodes(OpCode::call_function, "torch.ops.aten.sin.default").empty());
  CHECK(g.find_nodes(OpCode::get_attr, relu).empty());  // the target, but not the op
  // Graph order, not creation order: a node moved comes where it now is.
  Node* r2 = g.call_function("torch.ops.aten.relu.default", {x});
  r0->prepend(r2);
  CHECK(g.find_nodes(OpCode::call_function, relu) == std::vector<Node*>{r2, r0, r1});
  g.erase_node(r2);
  const Graph& cg = g;
  CHECK(cg.find_nodes(OpCode::call_function, relu) == std::vector<const Node*>{r0, r1});
}

// pytorch/pytorch PR #105875, #145697: a custom op declared with mutates_args that returns
// nothing, and an out-variant custom op, were erased by eliminate_dead_code(program) because a .pt2
// never carries their schemas; the buffers they write then stayed zero.
TEST_CASE("eliminate_dead_code keeps custom operators it has no schema for", "[fx][dce]") {
  auto build = [] {
    auto g = std::make_unique<Graph>();
    Node* x = g->placeholder("x");
    Node* buf = g->placeholder("b_buf");
    (void)g->call_function("torch.ops.mylib.accumulate_.default", {buf, x});  // -> ()
    Node* out = g->call_function("torch.ops.aten.empty_like.default", {x});
    (void)g->call_function("torch.ops.mylib.sin.out", {x}, {{"out", out}});  // out-variant
    Node* y = g->call_function("torch.ops.aten.neg.default", {x});
    (void)g->call_function("torch.ops.aten.cos.default", {x});  // dead and known pure
    g->output({y});
    return g;
  };
  SECTION("by default") {
    auto g = build();
    CHECK(g->eliminate_dead_code());
    CHECK(printed_names(*g) == "x b_buf accumulate_ empty_like sin neg output");
  }
  SECTION("trusting that unknown operators are pure") {
    auto g = build();
    CHECK(g->eliminate_dead_code({}, epgraph::UnknownOperators::pure));
    CHECK(printed_names(*g) == "x b_buf neg output");
  }
  SECTION("a registered schema decides") {
    // Registering the same schema again returns the one registered (other tests may run first).
    (void)epgraph::global_registry().register_schema(
        "mylib::sin.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)");
    auto g = build();
    CHECK(g->eliminate_dead_code({}, epgraph::UnknownOperators::pure));
    CHECK(printed_names(*g) == "x b_buf empty_like sin neg output");
  }
}

TEST_CASE("eliminate_dead_code keeps a chain of users and removes a whole dead chain",
          "[fx][dce]") {
  Graph g;
  Node* x = g.placeholder("x");
  Node* prev = x;
  for (int i = 0; i < 1000; ++i) prev = g.call_function("torch.ops.aten.neg.default", {prev});
  Node* keep = g.call_function("torch.ops.aten.relu.default", {x});
  g.output({keep});
  CHECK(g.size() == 1003);
  CHECK(g.eliminate_dead_code());
  CHECK(g.size() == 3);
  CHECK(x->users().size() == 1);
  g.lint();
}

TEST_CASE("eliminate_dead_code refuses without changing anything", "[fx][dce][strong]") {
  Program ep = wrap(dce_graph());
  Graph& g = ep.graph();
  SECTION("a dead node anchors an insertion point") {
    auto at = g.inserting_after(g.find_node("sin"));
    check_refused<epgraph::runtime_error>(
        ep, [&] { g.eliminate_dead_code(); },
        "Cannot erase node 'sin' while it anchors an insertion point");
  }
  SECTION("the predicate throws") {
    check_refused<std::logic_error>(
        ep,
        [&] {
          g.eliminate_dead_code([](const Node& n) -> bool {
            if (n.name() == "mul") throw std::logic_error("no");
            return false;
          });
        },
        "no");
  }
}

TEST_CASE("eliminate_dead_code on a program keeps what the signature names", "[fx][dce]") {
  using namespace epgraph_test;
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* unused_input = g->placeholder("u");
  Node* neg = g->call_function("torch.ops.aten.neg.default", {x});
  Node* sin = g->call_function("torch.ops.aten.sin.default", {x});
  Node* cos = g->call_function("torch.ops.aten.cos.default", {sin});
  g->output({neg});
  (void)unused_input;
  epgraph::ExportGraphSignature sig;
  sig.input_specs = {user_input("x"), user_input("u")};
  // An inconsistent program: the second output spec names 'cos', which the output node lacks.
  sig.output_specs = {user_output("neg"), user_output("cos")};
  Program ep(std::move(g), std::move(sig));
  const std::string signature = epgraph::to_string(ep.graph_signature());
  CHECK_FALSE(epgraph::eliminate_dead_code(ep));
  CHECK(ep.graph().find_node("cos") == cos);
  CHECK(ep.graph().find_node("sin") == sin);
  ep.graph_signature().output_specs.pop_back();
  CHECK(epgraph::eliminate_dead_code(ep));
  CHECK(ep.graph().find_node("cos") == nullptr);
  CHECK(ep.graph().find_node("sin") == nullptr);
  CHECK(ep.graph().find_node("u") != nullptr);
  CHECK_FALSE(epgraph::eliminate_dead_code(ep, [](const Node&) { return true; }));
  ep.graph().lint();
}

// ---------------------------------------------------------------------------------------------
// prepend / append

TEST_CASE("prepend and append move nodes as torch.fx does", "[fx][move]") {
  auto g = move_graph();
  auto n = [&](const char* name) { return g->find_node(name); };
  n("a")->prepend(n("b"));
  CHECK(printed(*g) == expected("move.1"));
  n("a")->prepend(n("d"));
  CHECK(printed(*g) == expected("move.2"));
  n("x")->prepend(n("y"));
  CHECK(printed(*g) == expected("move.3"));
  n("a")->append(n("d"));
  CHECK(printed(*g) == expected("move.4"));
  g->lint();

  auto h = move_graph();
  auto m = [&](const char* name) { return h->find_node(name); };
  m("c")->prepend(m("d"));
  m("d")->prepend(m("d"));  // itself: nothing
  m("c")->prepend(m("d"));  // already there: nothing
  m("b")->append(m("a"));
  CHECK(printed(*h) == expected("move.5"));
  h->lint();
}

TEST_CASE("moves keep the graph's bookkeeping", "[fx][move]") {
  auto g = move_graph();
  Node* x = g->find_node("x");
  Node* y = g->find_node("y");
  x->prepend(y);                  // y is first now, x the last placeholder
  Node* z = g->placeholder("z");  // after the last placeholder
  CHECK(z->prev() == x);
  z->prepend(x);  // no-op: already before z
  y->append(z);   // z between y and x
  Node* w = g->placeholder("w");
  CHECK(w->prev() == x);
  CHECK(g->first_node() == y);
  g->lint();
  // An insertion point moves with its anchor.
  Node* d = g->find_node("d");
  Node* a = g->find_node("a");
  {
    auto at = g->inserting_after(d);
    a->prepend(d);
    Node* e = g->call_function("torch.ops.aten.neg.default", {d}, {}, "e");
    CHECK(e->prev() == d);
    CHECK(e->next() == a);
  }
  // To the end, right before the output node.
  Node* c = g->find_node("c");
  g->output_node()->prepend(c);
  CHECK(c->next() == g->output_node());
  g->lint();
}

TEST_CASE("refused moves name both nodes and leave the graph as it was", "[fx][move][strong]") {
  Program ep = wrap(move_graph());
  Graph& g = ep.graph();
  auto n = [&](const char* name) { return g.find_node(name); };
  using epgraph::value_error;
  check_refused<value_error>(
      ep, [&] { n("a")->prepend(n("c")); },
      "Cannot move node 'c' before 'a': 'c' would come before its input 'a'");
  check_refused<value_error>(
      ep, [&] { n("y")->append(n("c")); },
      "Cannot move node 'c' after 'y': 'c' would come before its input 'a'");
  check_refused<value_error>(
      ep, [&] { n("d")->append(n("a")); },
      "Cannot move node 'a' after 'd': 'a' would come after its user 'c'");
  check_refused<value_error>(
      ep, [&] { g.output_node()->prepend(n("b")); },
      "Cannot move node 'b' before 'output': 'b' would come after its user 'c'");
  check_refused<value_error>(
      ep, [&] { n("x")->prepend(g.output_node()); },
      "Cannot move node 'output' before 'x': the output node must stay last");
  check_refused<value_error>(
      ep, [&] { g.output_node()->append(n("d")); },
      "Cannot move node 'd' after 'output': nothing may follow the output node");
  check_refused<value_error>(
      ep, [&] { n("b")->prepend(n("x")); },
      "Cannot move node 'x' before 'b': placeholder 'x' would come after non-placeholder node "
      "'a'");
  check_refused<value_error>(
      ep, [&] { n("y")->prepend(n("a")); },
      "Cannot move node 'a' before 'y': call_function node 'a' would come before placeholder 'y' "
      "(placeholders come first)");
  check_refused<value_error>(
      ep, [&] { n("x")->append(n("d")); },
      "Cannot move node 'd' after 'x': call_function node 'd' would come before placeholder 'y' "
      "(placeholders come first)");
  Graph other;
  Node* z = other.placeholder("z");
  check_refused<value_error>(
      ep, [&] { n("a")->prepend(z); },
      "Cannot move node 'z' before 'a': 'z' belongs to another graph");
  check_refused<value_error>(
      ep, [&] { n("a")->append(nullptr); }, "Cannot move a null node after 'a'");
}

// ---------------------------------------------------------------------------------------------
// stable_topological_sort

TEST_CASE("stable_topological_sort orders as torch._inductor does", "[fx][sort]") {
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* y = g->placeholder("y");
  Node* d = call(*g, "torch.ops.aten.neg.default", {x}, "d");
  Node* c = call(*g, "torch.ops.aten.sub.Tensor", {x, x}, "c");
  Node* a = call(*g, "torch.ops.aten.add.Tensor", {x, y}, "a");
  Node* e = call(*g, "torch.ops.aten.relu.default", {x}, "e");
  Node* b = call(*g, "torch.ops.aten.mul.Tensor", {x, y}, "b");
  Node* f = call(*g, "torch.ops.fxtk.combine.default", {a, a}, "f", {{"c", c}});
  g->output({d, e, f});
  d->set_args({c});
  c->set_args({b, a});
  b->set_args({a, y});
  CHECK(printed(*g) == expected("sort.before"));
  epgraph::stable_topological_sort(*g);
  CHECK(printed(*g) == expected("sort.after"));
  g->lint();
  // Sorted graphs stay as they are.
  const std::string sorted = printed(*g);
  epgraph::stable_topological_sort(*g);
  CHECK(printed(*g) == sorted);
  Node* p = g->placeholder("p");  // the last-placeholder link is right
  CHECK(p->prev() == y);
  g->lint();
}

TEST_CASE("stable_topological_sort on shuffled random graphs matches torch", "[fx][sort]") {
  for (const char* seed : {"1", "2", "3"}) {
    const std::string prefix = std::string("sort_random_") + seed;
    auto g = build_structure(expected(prefix + ".structure"));
    CHECK(printed(*g) == expected(prefix + ".before"));
    epgraph::stable_topological_sort(*g);
    CHECK(printed(*g) == expected(prefix + ".after"));
    g->lint();
  }
}

TEST_CASE("stable_topological_sort refuses a cycle without moving anything", "[fx][sort][strong]") {
  auto g = std::make_unique<Graph>();
  Node* x = g->placeholder("x");
  Node* e = g->call_function("torch.ops.aten.relu.default", {x}, {}, "e");
  Node* a = g->call_function("torch.ops.aten.neg.default", {x}, {}, "a");
  Node* b = g->call_function("torch.ops.aten.neg.default", {a}, {}, "b");
  g->output({b, e});
  e->set_args({b});  // out of order, no cycle yet
  a->set_args({b});  // a <-> b
  Program ep = wrap(std::move(g));
  {
    const epgraph_test::Snapshot before = snapshot(ep);
    CHECK_THROWS_WITH(epgraph::stable_topological_sort(ep.graph()),
                      "Graph has a cycle through node 'b'");  // b waits on a, a on b
    CHECK(snapshot(ep) == before);
  }
  Graph h;
  Node* s = h.call_function("torch.ops.aten.neg.default", {h.placeholder("x")}, {}, "s");
  s->set_args({s});
  h.output({s});
  CHECK_THROWS_AS(epgraph::stable_topological_sort(h), epgraph::runtime_error);
  CHECK_THROWS_WITH(epgraph::stable_topological_sort(h), "Graph has a cycle through node 's'");
}

// ---------------------------------------------------------------------------------------------
// node_copy / graph_copy

TEST_CASE("graph_copy copies and names as torch.fx does", "[fx][copy]") {
  auto src = copy_source();
  CHECK(printed(*src) == expected("copy.source"));
  {
    Graph dst;
    dst.placeholder("x");
    dst.placeholder("add");
    std::unordered_map<const Node*, Node*> remap;
    const Argument rv = dst.graph_copy(*src, remap);
    dst.output(*rv.list());
    CHECK(printed(dst) == expected("graph_copy_placeholders"));
    CHECK(remap.size() == 6);
    CHECK(remap.at(src->find_node("add"))->name() == "add_1");
    dst.lint();
  }
  {
    Graph dst;
    Node* x = dst.placeholder("x");
    call(dst, "torch.ops.aten.add.Tensor", {x, x}, "add");
    call(dst, "torch.ops.aten.add.Tensor", {x, 2}, "add_1");
    std::unordered_map<const Node*, Node*> remap = {{src->find_node("x"), x},
                                                    {src->find_node("y"), x}};
    const Argument rv = dst.graph_copy(*src, remap);
    dst.output(*rv.list());
    CHECK(printed(dst) == expected("graph_copy_mapped"));
    dst.lint();
  }
  Graph empty;
  std::unordered_map<const Node*, Node*> remap;
  Graph none;
  none.placeholder("x");
  CHECK(empty.graph_copy(none, remap).is_none());  // no output node: None
  CHECK(empty.size() == 1);
}

TEST_CASE("node_copy copies and names as torch.fx does", "[fx][copy]") {
  auto src = copy_source();
  Node* s_add = src->find_node("add");
  Node* s_add_1 = src->find_node("add_1");
  Node* s_add_2 = src->find_node("add_2");
  s_add->mutable_meta().val = epgraph::TensorMeta{};
  s_add->mutable_meta().other.emplace_back("stack_trace", "here");
  Graph dst;
  Node* x = dst.placeholder("x");
  Node* add = call(dst, "torch.ops.aten.add.Tensor", {x, x}, "add");
  Node* c1 = dst.node_copy(*s_add, [&](const Node*) { return Argument(x); });
  Node* c2 =
      dst.node_copy(*s_add_1, [&](const Node* m) { return Argument(m == s_add ? c1 : add); });
  Node* c3 =
      dst.node_copy(*s_add_2, [&](const Node* m) { return Argument(m == s_add_1 ? c2 : x); });
  Node* c4 = dst.node_copy(*src->find_node("cat"), [&](const Node*) { return Argument(c3); });
  Node* c5 = dst.node_copy(*c4);
  dst.output({c5, add});
  CHECK(printed(dst) == expected("node_copy"));
  CHECK(c1->meta().val == s_add->meta().val);
  CHECK(c1->meta().other == s_add->meta().other);
  dst.lint();
}

TEST_CASE("node_copy and graph_copy refuse without changing anything", "[fx][copy][strong]") {
  auto src = copy_source();
  Program ep = wrap(std::make_unique<Graph>());
  Graph& dst = ep.graph();
  Node* x = dst.placeholder("x");
  dst.output({call(dst, "torch.ops.aten.add.Tensor", {x, x}, "add")});
  SECTION("node_copy of a node of another graph without a transform") {
    check_refused<epgraph::value_error>(
        ep, [&] { dst.node_copy(*src->find_node("add")); },
        "Argument node 'x' of node 'add_1' belongs to another graph");
  }
  SECTION("node_copy whose arguments do not bind") {
    check_refused<epgraph::value_error>(
        ep,
        [&] { dst.node_copy(*src->find_node("add"), [&](const Node*) { return Argument("s"); }); },
        "Cannot create node 'add_1' (torch.ops.aten.add.Tensor): argument 'self' expects "
        "Tensor, got str 's'; schema: aten::add.Tensor(Tensor self, Tensor other, *, Scalar "
        "alpha=1) -> Tensor");
  }
  SECTION("node_copy of a second output node") {
    check_refused<epgraph::runtime_error>(
        ep, [&] { dst.node_copy(*src->output_node(), [&](const Node*) { return Argument(x); }); },
        "Graph already has an output node 'output'");
  }
  SECTION("graph_copy into itself") {
    std::unordered_map<const Node*, Node*> remap;
    check_refused<epgraph::value_error>(
        ep, [&] { dst.graph_copy(dst, remap); }, "Cannot copy a graph into itself");
  }
  SECTION("graph_copy failing half-way removes its copies") {
    // A source node uses one that comes after it: the copy fails there.
    Node* late = src->call_function("torch.ops.aten.neg.default", {src->find_node("x")}, {}, "z");
    src->find_node("add_2")->set_args({late, src->find_node("x")});
    std::unordered_map<const Node*, Node*> remap = {{src->find_node("y"), x}};
    const auto remap_before = remap;
    check_refused<epgraph::runtime_error>(
        ep, [&] { dst.graph_copy(*src, remap); },
        "Cannot copy node 'add_2': its input 'z' has no copy");
    CHECK(remap == remap_before);
    // The names the copies took are free again: the same copy without the bad node works.
    src->find_node("add_2")->set_args({src->find_node("add_1"), src->find_node("x")});
    auto at = dst.inserting_after(x);
    const Argument rv = dst.graph_copy(*src, remap);
    CHECK(rv.list()->size() == 2);
    CHECK(dst.find_node("x_1") != nullptr);
    CHECK(dst.find_node("add_1") != nullptr);
    CHECK(dst.find_node("add_1")->prev() == dst.find_node("x_1"));
  }
  SECTION("graph_copy failing on a schema check removes its copies") {
    src->set_schema_checks(false);
    Node* bad = src->call_function("torch.ops.aten.add.Tensor", {src->find_node("x")}, {}, "bad");
    (void)bad;
    std::unordered_map<const Node*, Node*> remap;
    auto at = dst.inserting_after(x);
    check_refused<epgraph::value_error>(
        ep, [&] { dst.graph_copy(*src, remap); },
        "Cannot create node 'bad' (torch.ops.aten.add.Tensor): missing required argument "
        "'other'; schema: aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> "
        "Tensor");
    CHECK(remap.empty());
  }
}
