// Nested graphs (cond branches, map bodies, invoke_subgraph) through Graph::node_copy and
// graph_copy, nested_graph_clashes and verify (issue 31 item 5 and "a copied nested graph cannot
// be given a new name"). A nested graph is a get_attr node whose record (NodeMeta::serialized,
// the JSON text the loader keeps) carries it; the core compares records as text, so the records
// here are short stand-ins. torch.fx's graph_copy keeps a copied get_attr's target, so a cond
// copied into a program with its own cond calls the destination's branches (torch's loader
// registers one submodule per name); epgraph gives the copy a fresh target, the first free one
// as torch names a new branch graph (unique_graph_name_with_root), or the caller's. The JSON
// side (save refuses, the round trip) is in tests/json/test_nested_graph_save.cpp; the numbers in
// torch in tests/interop/test_passes.py (test_graft_cond_into_cond).
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <epgraph/epgraph.hpp>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "support/program_builders.hpp"
#include "support/refusal.hpp"
#include "support/snapshot.hpp"

namespace {

using epgraph::Argument;
using epgraph::ArgumentList;
using epgraph::Graph;
using epgraph::NestedGraphTargets;
using epgraph::Node;
using epgraph::OpCode;
using epgraph_test::check_refused;
using epgraph_test::Program;

// Stand-ins for the records of four different branch graphs.
const std::string kSinPlus1 = R"j({"graph":{"nodes":"sin(x) + 1"}})j";
const std::string kCosMinus1 = R"j({"graph":{"nodes":"cos(x) - 1"}})j";
const std::string kExp = R"j({"graph":{"nodes":"exp(x)"}})j";
const std::string kTanhTimes4 = R"j({"graph":{"nodes":"tanh(x) * 4"}})j";

// A get_attr node reading `target` whose record is `record`.
Node* nested(Graph& g, const std::string& target, const std::string& record) {
  Node* n = g.get_attr(target);
  n->mutable_meta().serialized = record;
  return n;
}

// forward(x) = torch.cond(x.sum() > 0, <then>, <else>, (x,)) as torch.export writes it (see
// ../shared/cases/passes/d09_copy_nested_graphs/make.py):
//     x, sum_1, gt, true_graph_0, false_graph_0, cond, getitem; returns getitem.
Program cond_program(const std::string& then_record, const std::string& else_record) {
  auto g = std::make_unique<Graph>();
  Node* x = epgraph_test::add_placeholder(*g, "x", epgraph_test::tensor({2, 3}));
  Node* sum = g->call_function("torch.ops.aten.sum.default", {x}, {}, "sum_1");
  Node* gt = g->call_function("torch.ops.aten.gt.Scalar", {sum, 0});
  Node* t = nested(*g, "true_graph_0", then_record);
  Node* f = nested(*g, "false_graph_0", else_record);
  Node* cond =
      g->call_function("torch.ops.higher_order.cond", {gt, t, f, Argument(ArgumentList{x})});
  Node* out = g->call_function("operator.getitem", {cond, 0});
  g->output({out});
  epgraph::ExportGraphSignature sig;
  sig.input_specs = {epgraph_test::user_input("x")};
  sig.output_specs = {epgraph_test::user_output("getitem")};
  return Program(std::move(g), std::move(sig));
}

// d3tool's `graft`: graph_copy of `src`'s graph onto `dst`'s result (out = src(dst(x))), the
// output rerouted to the copy's result. Returns value_remap.
std::unordered_map<const Node*, Node*> graft(Program& dst, const Program& src,
                                             const NestedGraphTargets* targets = nullptr) {
  Graph& g = dst.graph();
  Node* out = g.output_node();
  Node* result = g.writable(out->args()[0].list()->at(0).node());
  std::unordered_map<const Node*, Node*> remap = {{src.graph().find_node("x"), result}};
  Argument copied;
  {
    auto at = g.inserting_before(out);
    copied =
        targets ? g.graph_copy(src.graph(), remap, *targets) : g.graph_copy(src.graph(), remap);
  }
  out->replace_input_with(result, g.writable(copied.list()->at(0).node()));
  return remap;
}

// "name:target" of every get_attr node, in order.
std::vector<std::string> get_attrs(const Graph& g) {
  std::vector<std::string> out;
  for (const Node& n : g.nodes()) {
    if (n.op() == OpCode::get_attr)
      out.push_back(std::string(n.name()) + ":" + std::string(n.target()));
  }
  return out;
}

// The violations verify reports, or none.
std::vector<std::string> verify_violations(const Program& ep) {
  try {
    epgraph::verify(ep);
  } catch (const epgraph::verification_error& e) {
    return e.violations();
  }
  return {};
}

const char* const kGraftedGraph =
    "graph():\n"
    "    %x : [num_users=2] = placeholder[target=x]\n"
    "    %sum_1 : [num_users=1] = call_function[target=torch.ops.aten.sum.default](args = "
    "(%x,), kwargs = {})\n"
    "    %gt : [num_users=1] = call_function[target=torch.ops.aten.gt.Scalar](args = (%sum_1, "
    "0), kwargs = {})\n"
    "    %true_graph_0 : [num_users=1] = get_attr[target=true_graph_0]\n"
    "    %false_graph_0 : [num_users=1] = get_attr[target=false_graph_0]\n"
    "    %cond : [num_users=1] = call_function[target=torch.ops.higher_order.cond](args = (%gt, "
    "%true_graph_0, %false_graph_0, [%x]), kwargs = {})\n"
    "    %getitem : [num_users=2] = call_function[target=operator.getitem](args = (%cond, 0), "
    "kwargs = {})\n"
    "    %sum_2 : [num_users=1] = call_function[target=torch.ops.aten.sum.default](args = "
    "(%getitem,), kwargs = {})\n"
    "    %gt_1 : [num_users=1] = call_function[target=torch.ops.aten.gt.Scalar](args = "
    "(%sum_2, 0), kwargs = {})\n"
    "    %true_graph_1 : [num_users=1] = get_attr[target=true_graph_1]\n"
    "    %false_graph_1 : [num_users=1] = get_attr[target=false_graph_1]\n"
    "    %cond_1 : [num_users=1] = call_function[target=torch.ops.higher_order.cond](args = "
    "(%gt_1, %true_graph_1, %false_graph_1, [%getitem]), kwargs = {})\n"
    "    %getitem_1 : [num_users=1] = call_function[target=operator.getitem](args = (%cond_1, "
    "0), kwargs = {})\n"
    "    return (getitem_1,)";

TEST_CASE("graph_copy gives a copied nested graph a fresh target when the name holds another",
          "[nested][copy]") {
  // ../shared/cases/passes/d09_copy_nested_graphs (c): cond.pt2 grafted onto cond_b.pt2. FX
  // keeps `true_graph_0` / `false_graph_0`, so the copied cond calls cond_b's branches.
  Program dst = cond_program(kExp, kTanhTimes4);
  const Program src = cond_program(kSinPlus1, kCosMinus1);
  const auto remap = graft(dst, src);
  CHECK(epgraph::to_string(dst.graph()) == kGraftedGraph);
  CHECK(get_attrs(dst.graph()) ==
        std::vector<std::string>{"true_graph_0:true_graph_0", "false_graph_0:false_graph_0",
                                 "true_graph_1:true_graph_1", "false_graph_1:false_graph_1"});
  // Each copy carries its own graph; the destination's branches are untouched.
  const Graph& g = dst.graph();
  CHECK(g.find_node("true_graph_0")->meta().serialized == kExp);
  CHECK(g.find_node("false_graph_0")->meta().serialized == kTanhTimes4);
  CHECK(g.find_node("true_graph_1")->meta().serialized == kSinPlus1);
  CHECK(g.find_node("false_graph_1")->meta().serialized == kCosMinus1);
  CHECK(remap.at(src.graph().find_node("true_graph_0")) == g.find_node("true_graph_1"));
  // The copied cond reads the copies.
  const Node* cond_1 = g.find_node("cond_1");
  CHECK(cond_1->args()[1].node() == g.find_node("true_graph_1"));
  CHECK(cond_1->args()[2].node() == g.find_node("false_graph_1"));
  CHECK(epgraph::to_string(dst.graph_signature()) ==
        epgraph::to_string(epgraph::ExportGraphSignature{
            {epgraph_test::user_input("x")}, {epgraph_test::user_output("getitem_1")}}));
  CHECK(epgraph::nested_graph_clashes(g).empty());
  CHECK(verify_violations(dst).empty());
  // The source is as it was.
  CHECK(get_attrs(src.graph()) ==
        std::vector<std::string>{"true_graph_0:true_graph_0", "false_graph_0:false_graph_0"});
}

TEST_CASE("graph_copy shares a nested graph held under the same name", "[nested][copy]") {
  Program dst = cond_program(kSinPlus1, kCosMinus1);
  const Program src = cond_program(kSinPlus1, kCosMinus1);
  (void)graft(dst, src);
  // Same graphs, same targets: the copies read them again, named by FX's rule (`true_graph_0`
  // taken -> `true_graph_1`, as torch.fx names a second `create_node(name="true_graph_0")`).
  CHECK(get_attrs(dst.graph()) ==
        std::vector<std::string>{"true_graph_0:true_graph_0", "false_graph_0:false_graph_0",
                                 "true_graph_1:true_graph_0", "false_graph_1:false_graph_0"});
  CHECK(verify_violations(dst).empty());

  // One branch shared, the other one not.
  Program mixed = cond_program(kSinPlus1, kTanhTimes4);
  (void)graft(mixed, src);
  CHECK(get_attrs(mixed.graph()) ==
        std::vector<std::string>{"true_graph_0:true_graph_0", "false_graph_0:false_graph_0",
                                 "true_graph_1:true_graph_0", "false_graph_1:false_graph_1"});
  CHECK(verify_violations(mixed).empty());
}

TEST_CASE("a fresh target is the first name of its prefix no other graph uses", "[nested][copy]") {
  Graph g;
  Node* x = g.placeholder("x");
  nested(g, "true_graph_0", kExp);
  nested(g, "true_graph_1", kSinPlus1);
  nested(g, "true_graph_2", kTanhTimes4);
  Node* named_3 = g.call_function("torch.ops.aten.neg.default", {x}, {}, "true_graph_3");
  g.output({named_3});
  Graph src;
  Node* s_sin = nested(src, "true_graph_0", kSinPlus1);
  Node* s_cos = nested(src, "true_graph_0", kCosMinus1);
  Node* s_body = nested(src, "body", kCosMinus1);
  Node* s_sub = nested(src, "repeated_subgraph0", kCosMinus1);
  Node* s_bare = src.get_attr("true_graph_0");  // no record: reads what the name holds
  // true_graph_1 holds the same graph: shared (the node name is FX's de-duplication).
  Node* c_sin = g.node_copy(*s_sin);
  CHECK(c_sin->target() == "true_graph_1");
  CHECK(c_sin->name() == "true_graph_4");
  // true_graph_1 and _2 hold other graphs; true_graph_3 and _4 name nodes (the copy would not be
  // named after its target): true_graph_5.
  Node* c_cos = g.node_copy(*s_cos);
  CHECK(c_cos->target() == "true_graph_5");
  CHECK(c_cos->name() == "true_graph_5");
  CHECK(c_cos->meta().serialized == kCosMinus1);
  // A target without a `_<digits>` suffix is the prefix itself (torch: `body_0`), when taken.
  nested(g, "body", kExp);
  nested(g, "repeated_subgraph0", kExp);
  CHECK(g.node_copy(*s_body)->target() == "body_0");
  CHECK(g.node_copy(*s_sub)->target() == "repeated_subgraph0_0");
  // A get_attr node without a record keeps its target, as in FX.
  CHECK(g.node_copy(*s_bare)->target() == "true_graph_0");
  CHECK(epgraph::nested_graph_clashes(g).empty());
  g.lint();
}

TEST_CASE("node_copy one node at a time renames a nested graph once", "[nested][copy]") {
  // FX's way of moving nodes between graphs (pytorch/pytorch PR #88608, partition fusion):
  // env[n] = graph.node_copy(n, lambda a: env[a]) for each node. The second get_attr node of one
  // nested graph (several invoke_subgraph calls) goes to the target the first one got.
  Program dst = cond_program(kExp, kTanhTimes4);
  Graph src;
  Node* sx = src.placeholder("x");
  Node* t0 = nested(src, "true_graph_0", kSinPlus1);
  Node* t1 = src.create_node(OpCode::get_attr, "true_graph_0", {}, {}, "true_graph_0");
  t1->mutable_meta().serialized = kSinPlus1;
  src.output({sx});
  Graph& g = dst.graph();
  Node* c0 = nullptr;
  Node* c1 = nullptr;
  {
    auto at = g.inserting_before(g.output_node());
    c0 = g.node_copy(*t0);
    c1 = g.node_copy(*t1);
  }
  CHECK(std::string(t1->name()) == "true_graph_1");  // FX's name for a second reader
  CHECK(std::string(c0->name()) + ":" + std::string(c0->target()) == "true_graph_1:true_graph_1");
  CHECK(std::string(c1->name()) + ":" + std::string(c1->target()) == "true_graph_2:true_graph_1");
  CHECK(epgraph::nested_graph_clashes(g).empty());
  // Copied within its own graph, a nested graph keeps its target (FX's copy of a cond call).
  Node* again = g.node_copy(*g.find_node("true_graph_0"));
  CHECK(std::string(again->name()) + ":" + std::string(again->target()) ==
        "true_graph_3:true_graph_0");
}

TEST_CASE("node_copy and graph_copy give a copied nested graph the caller's target",
          "[nested][copy]") {
  Program dst = cond_program(kExp, kTanhTimes4);
  const Program src = cond_program(kSinPlus1, kCosMinus1);
  const NestedGraphTargets names = {{"true_graph_0", "then_graph"},
                                    {"false_graph_0", "else_graph"}};
  (void)graft(dst, src, &names);
  CHECK(get_attrs(dst.graph()) ==
        std::vector<std::string>{"true_graph_0:true_graph_0", "false_graph_0:false_graph_0",
                                 "then_graph:then_graph", "else_graph:else_graph"});
  CHECK(dst.graph().find_node("then_graph")->meta().serialized == kSinPlus1);
  CHECK(verify_violations(dst).empty());

  // A map naming another target leaves the rest to the automatic rule; a given target that holds
  // the same graph is shared.
  Graph& g = dst.graph();
  const NestedGraphTargets other = {{"unused", "x_graph"}};
  Node* c = nullptr;
  Node* same = nullptr;
  {
    auto at = g.inserting_before(g.output_node());
    c = g.node_copy(*src.graph().find_node("true_graph_0"), {}, other);
    same = g.node_copy(*src.graph().find_node("true_graph_0"), {},
                       NestedGraphTargets{{"true_graph_0", "then_graph"}});
  }
  CHECK(c->target() == "true_graph_1");
  CHECK(std::string(same->name()) + ":" + std::string(same->target()) == "then_graph_1:then_graph");
  CHECK(epgraph::nested_graph_clashes(g).empty());
}

TEST_CASE("a caller's target that holds a different nested graph is refused, naming both",
          "[nested][copy][strong]") {
  Program dst = cond_program(kExp, kTanhTimes4);
  const Program src = cond_program(kSinPlus1, kCosMinus1);
  Graph& g = dst.graph();
  auto at = g.inserting_before(g.output_node());
  const Node* s_true = src.graph().find_node("true_graph_0");
  SECTION("node_copy onto the destination's own branch") {
    check_refused<epgraph::value_error>(
        dst,
        [&] {
          (void)g.node_copy(*s_true, {}, NestedGraphTargets{{"true_graph_0", "false_graph_0"}});
        },
        "Cannot give the copy of get_attr node 'true_graph_0' the target 'false_graph_0': "
        "get_attr node 'false_graph_0' of this graph names a different nested graph under it");
  }
  SECTION("targets that are not Python identifiers") {
    for (const char* bad : {"a.b", "", "0graph", "true graph"}) {
      check_refused<epgraph::value_error>(
          dst,
          [&] {
            (void)g.node_copy(*s_true, {}, NestedGraphTargets{{"true_graph_0", bad}});
          },
          "Cannot give the copy of get_attr node 'true_graph_0' the target '" + std::string(bad) +
              "': a nested graph's target must be a Python identifier (torch registers it as a "
              "submodule)");
    }
  }
  SECTION("graph_copy mapping two different graphs to one target removes its copies") {
    std::unordered_map<const Node*, Node*> remap = {
        {src.graph().find_node("x"), g.find_node("getitem")}};
    const auto remap_before = remap;
    const NestedGraphTargets both = {{"true_graph_0", "branch"}, {"false_graph_0", "branch"}};
    check_refused<epgraph::value_error>(
        dst, [&] { (void)g.graph_copy(src.graph(), remap, both); },
        "Cannot give the copy of get_attr node 'false_graph_0' the target 'branch': get_attr "
        "node 'branch' of this graph names a different nested graph under it");
    CHECK(remap == remap_before);
    // Names and targets are free again: the same copy with distinct targets works.
    const Argument rv =
        g.graph_copy(src.graph(), remap,
                     NestedGraphTargets{{"true_graph_0", "branch"}, {"false_graph_0", "other"}});
    CHECK(rv.list()->at(0).node()->name() == "getitem_1");
    CHECK(g.find_node("branch")->target() == "branch");
    CHECK(g.find_node("sum_2") != nullptr);
  }
}

TEST_CASE("verify refuses two different nested graphs under one target, naming both nodes",
          "[nested][verify]") {
  Program ep = cond_program(kSinPlus1, kCosMinus1);
  Graph& g = ep.graph();
  CHECK(verify_violations(ep).empty());
  // What torch.fx's graph_copy makes: the copy keeps the target, carrying another graph.
  Node* cond = g.find_node("cond");
  Node* other_true = nullptr;
  Node* other_false = nullptr;
  {
    auto at = g.inserting_before(cond);
    other_true = g.create_node(OpCode::get_attr, "true_graph_0", {}, {}, "true_graph_0");
    other_false = g.create_node(OpCode::get_attr, "false_graph_0", {}, {}, "false_graph_0");
  }
  other_true->mutable_meta().serialized = kExp;
  other_false->mutable_meta().serialized = kCosMinus1;  // the same graph: no problem
  Node* cond_1 = nullptr;
  {
    auto at = g.inserting_after(g.find_node("getitem"));
    cond_1 = g.call_function("torch.ops.higher_order.cond",
                             {g.find_node("gt"), other_true, other_false,
                              Argument(ArgumentList{g.find_node("getitem")})});
  }
  Node* getitem_1 = nullptr;
  {
    auto at = g.inserting_after(cond_1);
    getitem_1 = g.call_function("operator.getitem", {cond_1, 0});
  }
  g.output_node()->replace_input_with(g.find_node("getitem"), getitem_1);
  CHECK(std::string(other_true->name()) == "true_graph_1");
  const auto clashes = epgraph::nested_graph_clashes(g);
  REQUIRE(clashes.size() == 1);
  CHECK(clashes[0].first == g.find_node("true_graph_0"));
  CHECK(clashes[0].second == other_true);
  CHECK(verify_violations(ep) ==
        std::vector<std::string>{"get_attr nodes 'true_graph_0' and 'true_graph_1' both name "
                                 "target 'true_graph_0' for different nested graphs"});
  // A third graph under the name: each later one is paired with the first.
  Node* third = nullptr;
  {
    auto at = g.inserting_before(cond);
    third = g.create_node(OpCode::get_attr, "true_graph_0", {}, {}, "true_graph_0");
  }
  third->mutable_meta().serialized = kTanhTimes4;
  Node* bare = nullptr;
  {
    auto at = g.inserting_before(cond);
    bare = g.get_attr("true_graph_0");  // no record: not compared
  }
  (void)bare;
  CHECK(verify_violations(ep) ==
        std::vector<std::string>{"get_attr nodes 'true_graph_0' and 'true_graph_1' both name "
                                 "target 'true_graph_0' for different nested graphs",
                                 "get_attr nodes 'true_graph_0' and 'true_graph_2' both name "
                                 "target 'true_graph_0' for different nested graphs"});
  g.erase_node(third);
  g.erase_node(g.find_node("true_graph_3"));
  // Giving the copy its own target, as graph_copy now does, makes the program valid: not
  // true_graph_1 (a node's name) nor true_graph_2/_3 (names of erased nodes stay taken, as in FX).
  Node* renamed = nullptr;
  {
    auto at = g.inserting_before(cond_1);
    renamed = g.node_copy(*other_true);
  }
  CHECK(std::string(renamed->name()) + ":" + std::string(renamed->target()) ==
        "true_graph_4:true_graph_4");
  cond_1->replace_input_with(other_true, renamed);
  g.erase_node(other_true);
  CHECK(verify_violations(ep).empty());
}

}  // namespace

TEST_CASE("a fresh target for a nested graph whose target is not an identifier", "[nested][copy]") {
  // Regression: the candidates `sub.branch_1`, `0_1`, ... were checked against the namespace,
  // which never hands out such a name verbatim, so graph_copy looped for ever. The candidates
  // are now identifiers (FX's rule: '.' -> '_', a leading digit gets '_').
  for (const std::string target : {"sub.branch_0", "0"}) {
    Graph dst;
    Node* d = dst.get_attr(target);
    d->mutable_meta().serialized = kSinPlus1;
    dst.output({d});
    Graph src;
    Node* s = src.get_attr(target);
    s->mutable_meta().serialized = kCosMinus1;
    src.output({s});
    std::unordered_map<const Node*, Node*> remap;
    (void)dst.graph_copy(src, remap);
    const Node* copy = remap.at(s);
    CHECK(copy->target() == (target == "0" ? "_0_0" : "sub_branch_1"));
    CHECK(d->target() == target);
  }
}
