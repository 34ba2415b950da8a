// propagate_meta through nested graphs: cond's branches, map_impl's and while_loop's bodies and
// invoke_subgraph's subgraph run on their operands' values (issue 28 item 3), with the values
// torch's FakeTensorMode implementations give (torch/_higher_order_ops), the errors they raise,
// and the strong guarantee over the nested graphs' nodes as well.
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <cstdint>
#include <epgraph/epgraph.hpp>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "support/program_builders.hpp"

namespace {

constexpr const char* kNestS0 = "Symbol('s0', positive=True, integer=True)";

epgraph::SymInt nest_s0(std::int64_t factor = 1) {
  if (factor == 1) return epgraph::SymExpr{kNestS0, 5};
  return epgraph::SymExpr{"Mul(Integer(" + std::to_string(factor) + "), " + kNestS0 + ")",
                          5 * factor};
}

epgraph::TensorMeta nest_tensor(std::vector<epgraph::SymInt> sizes,
                                std::vector<epgraph::SymInt> strides,
                                epgraph::dtype type = epgraph::dtype::float32) {
  epgraph::TensorMeta m;
  m.dtype = type;
  m.sizes = std::move(sizes);
  m.strides = std::move(strides);
  return m;
}

// A graph `x -> <op>(x) -> output([<op>])` (a cond branch, a map body), its placeholder's value
// unset (propagate_meta binds it).
std::unique_ptr<epgraph::Graph> nest_unary_graph(const std::string& op, const std::string& name) {
  auto g = std::make_unique<epgraph::Graph>();
  epgraph::Node* x = g->placeholder("x");
  epgraph::Node* y = g->call_function("torch.ops.aten." + op + ".default", {x}, {}, name);
  g->output({y});
  return g;
}

// forward(p, x) = cond(p, true_graph_0, false_graph_0, [x])[0] with x: float32[s0, 4] (s0 in
// [2, 64], hint 5) and p: bool[]; the branches are relu and neg of their own graphs.
epgraph_test::Program nest_cond_program(std::unique_ptr<epgraph::Graph> then_graph,
                                        std::unique_ptr<epgraph::Graph> else_graph) {
  auto g = std::make_unique<epgraph::Graph>();
  epgraph::Node* p = g->placeholder("p");
  p->mutable_meta().val = nest_tensor({}, {}, epgraph::dtype::bool_);
  epgraph::Node* x = g->placeholder("x");
  x->mutable_meta().val =
      nest_tensor({nest_s0(), std::int64_t{4}}, {std::int64_t{4}, std::int64_t{1}});
  epgraph::Node* t = g->get_attr("true_graph_0");
  epgraph::Node* f = g->get_attr("false_graph_0");
  epgraph::Node* c =
      g->call_function("torch.ops.higher_order.cond",
                       {p, t, f, epgraph::Argument(epgraph::ArgumentList{x})}, {}, "cond");
  epgraph::Node* item = g->call_function("operator.getitem", {c, 0}, {}, "getitem");
  g->output({item});
  epgraph::ExportGraphSignature sig;
  sig.input_specs = {epgraph_test::user_input("p"), epgraph_test::user_input("x")};
  sig.output_specs = {epgraph_test::user_output("getitem")};
  epgraph::ProgramMetadata md;
  md.range_constraints = {epgraph::RangeConstraint{"s0", 2, 64}};
  epgraph_test::Program ep(std::move(g), std::move(sig), {}, {}, std::move(md));
  (void)ep.add_nested_graph("true_graph_0", std::move(then_graph));
  (void)ep.add_nested_graph("false_graph_0", std::move(else_graph));
  return ep;
}

// Every node's value, the program's graph first, then each nested graph's (`<target>.<node>`).
std::string nest_values(const epgraph_test::Program& ep) {
  std::string out;
  for (const epgraph::Node& n : ep.graph().nodes()) {
    out += std::string(n.name()) + ": " + epgraph::value_text(n.meta().val) + "\n";
  }
  for (const auto& [target, g] : ep.nested_graphs()) {
    for (const epgraph::Node& n : g->nodes()) {
      out += target + "." + std::string(n.name()) + ": " + epgraph::value_text(n.meta().val) + "\n";
    }
  }
  return out;
}

std::vector<std::string> difference_names(const epgraph::MetaReport& r) {
  std::vector<std::string> out;
  for (const epgraph::MetaDifference& d : r.differences) out.push_back(d.node);
  return out;
}

}  // namespace

TEST_CASE("propagate_meta: cond runs both branches on its operands' values",
          "[propagate_meta][nested]") {
  epgraph_test::Program ep =
      nest_cond_program(nest_unary_graph("relu", "relu"), nest_unary_graph("neg", "neg"));
  const epgraph::MetaReport r = epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all);
  CHECK(r.nodes == 4);  // cond, getitem, and one node in each branch
  CHECK(r.computed == 4);
  CHECK(r.equal == 0);  // every value was unset
  // the branches run first, from inside the cond node; the placeholders bound are listed too
  CHECK(difference_names(r) == std::vector<std::string>{"true_graph_0.x", "true_graph_0.relu",
                                                        "false_graph_0.x", "false_graph_0.neg",
                                                        "cond", "getitem"});
  CHECK(nest_values(ep) ==
        "p: bool[] stride [] offset 0\n"
        "x: float32[s0{5}, 4] stride [4, 1] offset 0\n"
        "true_graph_0: unset\n"
        "false_graph_0: unset\n"
        "cond: (float32[s0{5}, 4] stride [4, 1] offset 0)\n"
        "getitem: float32[s0{5}, 4] stride [4, 1] offset 0\n"
        "output: unset\n"
        "false_graph_0.x: float32[s0{5}, 4] stride [4, 1] offset 0\n"
        "false_graph_0.neg: float32[s0{5}, 4] stride [4, 1] offset 0\n"
        "false_graph_0.output: unset\n"
        "true_graph_0.x: float32[s0{5}, 4] stride [4, 1] offset 0\n"
        "true_graph_0.relu: float32[s0{5}, 4] stride [4, 1] offset 0\n"
        "true_graph_0.output: unset\n");
  // a second run: every value equal, nothing changed
  const std::string before = nest_values(ep);
  const epgraph::MetaReport again = epgraph::propagate_meta(ep, epgraph::MetaMode::check_only);
  CHECK(again.nodes == 4);
  CHECK(again.equal == 4);
  CHECK(again.differences.empty());
  CHECK(nest_values(ep) == before);
}

TEST_CASE("propagate_meta: a changed operand shape flows into the branches and out of cond",
          "[propagate_meta][nested]") {
  epgraph_test::Program ep =
      nest_cond_program(nest_unary_graph("relu", "relu"), nest_unary_graph("neg", "neg"));
  (void)epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all);
  // x becomes float32[s0, 8] (a pass widened it), and a parameter-like requires_grad
  epgraph::TensorMeta x =
      nest_tensor({nest_s0(), std::int64_t{8}}, {std::int64_t{8}, std::int64_t{1}});
  x.requires_grad = true;
  ep.graph().find_node("x")->mutable_meta().val = x;
  const std::string before = nest_values(ep);
  const epgraph::MetaReport check = epgraph::propagate_meta(ep, epgraph::MetaMode::check_only);
  CHECK(difference_names(check) == std::vector<std::string>{"true_graph_0.x", "true_graph_0.relu",
                                                            "false_graph_0.x", "false_graph_0.neg",
                                                            "cond", "getitem"});
  REQUIRE(check.differences.size() == 6);
  CHECK(epgraph::value_text(check.differences[0].stored) ==
        "float32[s0{5}, 4] stride [4, 1] offset 0");
  // bound without requires_grad: torch traces a nested graph on detached operands
  CHECK(epgraph::value_text(check.differences[0].computed) ==
        "float32[s0{5}, 8] stride [8, 1] offset 0");
  CHECK(nest_values(ep) == before);  // check_only changes nothing
  const epgraph::MetaReport r = epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all);
  CHECK(r.differences.size() == 6);
  CHECK(epgraph::value_text(ep.nested_graph("false_graph_0")->find_node("neg")->meta().val) ==
        "float32[s0{5}, 8] stride [8, 1] offset 0");
  CHECK(epgraph::value_text(ep.graph().find_node("getitem")->meta().val) ==
        "float32[s0{5}, 8] stride [8, 1] offset 0");
}

TEST_CASE("propagate_meta: cond branches that disagree are unsupported, and nothing changes",
          "[propagate_meta][nested]") {
  // the false branch sums over dim 1: float32[s0] where the true branch gives float32[s0, 4]
  auto else_graph = std::make_unique<epgraph::Graph>();
  epgraph::Node* x = else_graph->placeholder("x");
  epgraph::Node* s =
      else_graph->call_function("torch.ops.aten.sum.dim_IntList",
                                {x, epgraph::Argument(epgraph::ArgumentList{1})}, {}, "sum_1");
  else_graph->output({s});
  epgraph_test::Program ep =
      nest_cond_program(nest_unary_graph("relu", "relu"), std::move(else_graph));
  const std::string before = nest_values(ep);
  const std::string message =
      "Cannot infer the metadata of node 'cond' (torch.ops.higher_order.cond): output 0 differs "
      "between the branches (true: float32[s0{5}, 4] stride [4, 1] offset 0; false: "
      "float32[s0{5}] stride [1] offset 0): torch merges such outputs into new unbacked sizes, "
      "which epgraph does not";
  CHECK_THROWS_AS(epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all),
                  epgraph::unsupported_meta_error);
  CHECK_THROWS_WITH(epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all), message);
  CHECK(nest_values(ep) == before);  // the branches' values too
  const epgraph::MetaReport check = epgraph::propagate_meta(ep, epgraph::MetaMode::check_only);
  REQUIRE(check.uncomputed.size() == 2);
  CHECK(check.uncomputed[0].node == "cond");
  CHECK(check.uncomputed[0].reason == message);
  CHECK(check.uncomputed[1].node == "getitem");
  CHECK(nest_values(ep) == before);
}

TEST_CASE("propagate_meta: map_impl runs its body on a slice and stacks the outputs",
          "[propagate_meta][nested]") {
  auto g = std::make_unique<epgraph::Graph>();
  epgraph::Node* xs = g->placeholder("xs");
  xs->mutable_meta().val = nest_tensor({nest_s0(), std::int64_t{3}, std::int64_t{4}},
                                       {std::int64_t{12}, std::int64_t{4}, std::int64_t{1}});
  epgraph::Node* y = g->placeholder("y");
  y->mutable_meta().val =
      nest_tensor({std::int64_t{4}, std::int64_t{2}}, {std::int64_t{2}, std::int64_t{1}});
  epgraph::Node* body = g->get_attr("body_graph_0");
  epgraph::Node* m = g->call_function("torch.ops.higher_order.map_impl",
                                      {body, epgraph::Argument(epgraph::ArgumentList{xs}),
                                       epgraph::Argument(epgraph::ArgumentList{y})},
                                      {}, "map_impl");
  epgraph::Node* item = g->call_function("operator.getitem", {m, 0}, {}, "getitem");
  g->output({item});
  auto b = std::make_unique<epgraph::Graph>();
  epgraph::Node* bx = b->placeholder("xs");
  epgraph::Node* by = b->placeholder("y");
  epgraph::Node* mm = b->call_function("torch.ops.aten.mm.default", {bx, by}, {}, "mm");
  b->output({mm});
  epgraph::ProgramMetadata md;
  md.range_constraints = {epgraph::RangeConstraint{"s0", 2, 64}};
  epgraph::ExportGraphSignature sig;
  sig.input_specs = {epgraph_test::user_input("xs"), epgraph_test::user_input("y")};
  sig.output_specs = {epgraph_test::user_output("getitem")};
  epgraph_test::Program ep(std::move(g), std::move(sig), {}, {}, std::move(md));
  (void)ep.add_nested_graph("body_graph_0", std::move(b));
  const epgraph::MetaReport r = epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all);
  CHECK(r.nodes == 3);
  CHECK(r.computed == 3);
  CHECK(nest_values(ep) ==
        "xs: float32[s0{5}, 3, 4] stride [12, 4, 1] offset 0\n"
        "y: float32[4, 2] stride [2, 1] offset 0\n"
        "body_graph_0: unset\n"
        "map_impl: (float32[s0{5}, 3, 2] stride [6, 2, 1] offset 0)\n"
        "getitem: float32[s0{5}, 3, 2] stride [6, 2, 1] offset 0\n"
        "output: unset\n"
        "body_graph_0.xs: float32[3, 4] stride [4, 1] offset 0\n"
        "body_graph_0.y: float32[4, 2] stride [2, 1] offset 0\n"
        "body_graph_0.mm: float32[3, 2] stride [2, 1] offset 0\n"
        "body_graph_0.output: unset\n");
}

TEST_CASE("propagate_meta: while_loop's body must give back its carried inputs",
          "[propagate_meta][nested]") {
  // while_loop(cond, body, [i, x], []): cond is i < 3, body gives (i + 1, <x op>)
  auto make = [](const std::string& x_op) {
    auto g = std::make_unique<epgraph::Graph>();
    epgraph::Node* i = g->placeholder("i");
    i->mutable_meta().val = nest_tensor({}, {}, epgraph::dtype::int64);
    epgraph::Node* x = g->placeholder("x");
    x->mutable_meta().val =
        nest_tensor({std::int64_t{3}, std::int64_t{4}}, {std::int64_t{4}, std::int64_t{1}});
    epgraph::Node* c = g->get_attr("while_loop_cond_graph_0");
    epgraph::Node* b = g->get_attr("while_loop_body_graph_0");
    epgraph::Node* w = g->call_function("torch.ops.higher_order.while_loop",
                                        {c, b, epgraph::Argument(epgraph::ArgumentList{i, x}),
                                         epgraph::Argument(epgraph::ArgumentList{})},
                                        {}, "while_loop");
    epgraph::Node* g0 = g->call_function("operator.getitem", {w, 0}, {}, "getitem");
    epgraph::Node* g1 = g->call_function("operator.getitem", {w, 1}, {}, "getitem_1");
    g->output({g0, g1});
    auto cg = std::make_unique<epgraph::Graph>();
    epgraph::Node* ci = cg->placeholder("arg0_1");
    (void)cg->placeholder("arg1_1");
    epgraph::Node* lt = cg->call_function("torch.ops.aten.lt.Scalar", {ci, 3}, {}, "lt");
    cg->output({lt});
    auto bg = std::make_unique<epgraph::Graph>();
    epgraph::Node* bi = bg->placeholder("arg0_1");
    epgraph::Node* bx = bg->placeholder("arg1_1");
    epgraph::Node* add = bg->call_function("torch.ops.aten.add.Tensor", {bi, 1}, {}, "add");
    epgraph::Node* op = bg->call_function(x_op, {bx, 0}, {}, "step");
    bg->output({add, op});
    epgraph::ExportGraphSignature sig;
    sig.input_specs = {epgraph_test::user_input("i"), epgraph_test::user_input("x")};
    sig.output_specs = {epgraph_test::user_output("getitem"),
                        epgraph_test::user_output("getitem_1")};
    epgraph_test::Program ep(std::move(g), std::move(sig), {}, {}, {});
    (void)ep.add_nested_graph("while_loop_cond_graph_0", std::move(cg));
    (void)ep.add_nested_graph("while_loop_body_graph_0", std::move(bg));
    return ep;
  };
  epgraph_test::Program ok = make("torch.ops.aten.add.Tensor");
  const epgraph::MetaReport r = epgraph::propagate_meta(ok, epgraph::MetaMode::recompute_all);
  CHECK(r.nodes == 6);
  CHECK(r.computed == 6);
  CHECK(epgraph::value_text(ok.graph().find_node("while_loop")->meta().val) ==
        "(int64[] stride [] offset 0, float32[3, 4] stride [4, 1] offset 0)");
  CHECK(epgraph::value_text(
            ok.nested_graph("while_loop_cond_graph_0")->find_node("lt")->meta().val) ==
        "bool[] stride [] offset 0");
  // a body that sums x away does not give back float32[3, 4]: torch refuses the loop
  epgraph_test::Program bad = make("torch.ops.aten.sum.dim_IntList");
  bad.nested_graph("while_loop_body_graph_0")
      ->find_node("step")
      ->update_arg(1, epgraph::Argument(epgraph::ArgumentList{0}));
  const std::string before = nest_values(bad);
  CHECK_THROWS_AS(epgraph::propagate_meta(bad, epgraph::MetaMode::recompute_all),
                  epgraph::value_error);
  CHECK_THROWS_WITH(epgraph::propagate_meta(bad, epgraph::MetaMode::recompute_all),
                    "Cannot infer the metadata of node 'while_loop' "
                    "(torch.ops.higher_order.while_loop): body output 1 (float32[4] stride [1] "
                    "offset 0) does not match carried input 1 (float32[3, 4] stride [4, 1] "
                    "offset 0)");
  CHECK(nest_values(bad) == before);
  const epgraph::MetaReport check = epgraph::propagate_meta(bad, epgraph::MetaMode::check_only);
  REQUIRE(check.invalid.size() == 1);
  CHECK(check.invalid[0].node == "while_loop");
}

TEST_CASE("propagate_meta: invoke_subgraph runs a shared graph once, and refuses other values",
          "[propagate_meta][nested]") {
  // forward(x) = block(block(x)) with block = repeated_subgraph0 (relu), as a
  // nested_compile_region exports; then the second call gets an input of another shape
  auto g = std::make_unique<epgraph::Graph>();
  epgraph::Node* x = g->placeholder("x");
  x->mutable_meta().val =
      nest_tensor({nest_s0(), std::int64_t{4}}, {std::int64_t{4}, std::int64_t{1}});
  epgraph::Node* s1 = g->get_attr("repeated_subgraph0");
  epgraph::Node* c1 = g->call_function("torch.ops.higher_order.invoke_subgraph",
                                       {s1, "subgraph_0", x}, {}, "invoke_subgraph");
  epgraph::Node* i1 = g->call_function("operator.getitem", {c1, 0}, {}, "getitem");
  epgraph::Node* s2 = g->get_attr("repeated_subgraph0");
  epgraph::Node* c2 = g->call_function("torch.ops.higher_order.invoke_subgraph",
                                       {s2, "subgraph_0", i1}, {}, "invoke_subgraph_1");
  epgraph::Node* i2 = g->call_function("operator.getitem", {c2, 0}, {}, "getitem_1");
  g->output({i2});
  CHECK(s2->name() == "repeated_subgraph0_1");
  epgraph::ExportGraphSignature sig;
  sig.input_specs = {epgraph_test::user_input("x")};
  sig.output_specs = {epgraph_test::user_output("getitem_1")};
  epgraph::ProgramMetadata md;
  md.range_constraints = {epgraph::RangeConstraint{"s0", 2, 64}};
  epgraph_test::Program ep(std::move(g), std::move(sig), {}, {}, std::move(md));
  (void)ep.add_nested_graph("repeated_subgraph0", nest_unary_graph("relu", "relu"));
  const epgraph::MetaReport r = epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all);
  CHECK(r.nodes == 5);  // the subgraph's relu counted once
  CHECK(r.computed == 5);
  CHECK(epgraph::value_text(ep.graph().find_node("getitem_1")->meta().val) ==
        "float32[s0{5}, 4] stride [4, 1] offset 0");
  // the second call now reads a transposed value: one graph cannot hold both calls' values
  epgraph::Graph& graph = ep.graph();
  epgraph::Node* t = nullptr;
  {
    const auto at = graph.inserting_after(graph.find_node("getitem"));
    t = graph.call_function("torch.ops.aten.t.default", {graph.find_node("getitem")}, {}, "t");
  }
  graph.find_node("invoke_subgraph_1")->update_arg(2, t);
  const std::string before = nest_values(ep);
  CHECK_THROWS_AS(epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all),
                  epgraph::unsupported_meta_error);
  CHECK_THROWS_WITH(epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all),
                    "Cannot infer the metadata of node 'invoke_subgraph_1' "
                    "(torch.ops.higher_order.invoke_subgraph): it calls the nested graph "
                    "'repeated_subgraph0' with input 0 float32[4, s0{5}] stride [1, 4] offset 0, "
                    "which node 'invoke_subgraph' called with float32[s0{5}, 4] stride [4, 1] "
                    "offset 0: epgraph keeps one value per node");
  CHECK(nest_values(ep) == before);
}

TEST_CASE("propagate_meta: a nested graph it cannot run is named", "[propagate_meta][nested]") {
  SECTION("kept as a record (a program read from a file, not materialized)") {
    epgraph_test::Program ep =
        nest_cond_program(nest_unary_graph("relu", "relu"), nest_unary_graph("neg", "neg"));
    std::unique_ptr<epgraph::Graph> kept = ep.remove_nested_graph("true_graph_0");
    ep.graph().find_node("true_graph_0")->mutable_meta().serialized = R"({"graph":{}})";
    const std::string before = nest_values(ep);
    CHECK_THROWS_AS(epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all),
                    epgraph::unsupported_meta_error);
    CHECK_THROWS_WITH(epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all),
                      "Cannot infer the metadata of node 'cond' (torch.ops.higher_order.cond): "
                      "its nested graph 'true_graph_0' is kept as the record of the file it was "
                      "read from: epgraph::json::materialize_nested_graphs(program) makes those "
                      "of the program's graph Graphs (one nested in another stays a record)");
    CHECK(nest_values(ep) == before);
  }
  SECTION("missing") {
    epgraph_test::Program ep =
        nest_cond_program(nest_unary_graph("relu", "relu"), nest_unary_graph("neg", "neg"));
    (void)ep.remove_nested_graph("false_graph_0");
    CHECK_THROWS_WITH(epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all),
                      "Cannot infer the metadata of node 'cond' (torch.ops.higher_order.cond): "
                      "the program has no nested graph 'false_graph_0' (node 'false_graph_0')");
  }
  SECTION("a branch with two inputs for one operand") {
    auto two = nest_unary_graph("relu", "relu");
    (void)two->placeholder("extra");
    epgraph_test::Program ep = nest_cond_program(std::move(two), nest_unary_graph("neg", "neg"));
    CHECK_THROWS_AS(epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all),
                    epgraph::value_error);
    CHECK_THROWS_WITH(epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all),
                      "Cannot infer the metadata of node 'cond' (torch.ops.higher_order.cond): "
                      "the nested graph 'true_graph_0' has 2 inputs and the node gives it 1");
  }
  SECTION("a graph that calls itself") {
    // true_graph_0 calls invoke_subgraph on itself: a cycle no program torch writes has
    auto self = std::make_unique<epgraph::Graph>();
    epgraph::Node* x = self->placeholder("x");
    epgraph::Node* s = self->get_attr("true_graph_0");
    epgraph::Node* c = self->call_function("torch.ops.higher_order.invoke_subgraph",
                                           {s, "subgraph_0", x}, {}, "invoke_subgraph");
    epgraph::Node* i = self->call_function("operator.getitem", {c, 0}, {}, "getitem");
    self->output({i});
    epgraph_test::Program ep = nest_cond_program(std::move(self), nest_unary_graph("neg", "neg"));
    const std::string before = nest_values(ep);
    CHECK_THROWS_WITH(epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all),
                      "Cannot infer the metadata of node 'invoke_subgraph' "
                      "(torch.ops.higher_order.invoke_subgraph): the nested graph 'true_graph_0' "
                      "calls itself");
    CHECK(nest_values(ep) == before);
  }
}

// Found by a break test: a cond whose predicate is not boolean, and a grad region whose flag is
// not a bool, passed validate --meta; torch fails to run both.
TEST_CASE("propagate_meta: cond's predicate and set_grad_enabled's flag are checked",
          "[propagate_meta][nested]") {
  epgraph_test::Program ep =
      nest_cond_program(nest_unary_graph("relu", "relu"), nest_unary_graph("neg", "neg"));
  epgraph::Node* c = ep.graph().find_node("cond");
  c->update_arg(0, ep.graph().find_node("x"));  // float32[s0, 4]
  CHECK_THROWS_AS(epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all),
                  epgraph::value_error);
  CHECK_THROWS_WITH(epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all),
                    "Cannot infer the metadata of node 'cond' (torch.ops.higher_order.cond): the "
                    "predicate must be a bool, a SymBool or a boolean tensor of one element, not "
                    "float32[s0{5}, 4] stride [4, 1] offset 0");
  c->update_arg(0, true);  // a decided predicate is fine
  CHECK(epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all).computed == 4);
  c->update_arg(0, 1);  // an int: torch's cond refuses it too
  const epgraph::MetaReport check = epgraph::propagate_meta(ep, epgraph::MetaMode::check_only);
  REQUIRE(check.invalid.size() == 1);
  CHECK(check.invalid[0].node == "cond");
  CHECK(check.invalid[0].reason ==
        "Cannot infer the metadata of node 'cond' (torch.ops.higher_order.cond): the predicate "
        "must be a bool, a SymBool or a boolean tensor of one element, not a constant of another "
        "type");
  // wrap_with_set_grad_enabled(enabled, graph, *args) with a string flag
  auto g = std::make_unique<epgraph::Graph>();
  epgraph::Node* x = g->placeholder("x");
  x->mutable_meta().val = nest_tensor({std::int64_t{3}}, {std::int64_t{1}});
  epgraph::Node* sub = g->get_attr("submod_1");
  epgraph::Node* w = g->call_function("torch.ops.higher_order.wrap_with_set_grad_enabled",
                                      {"no", sub, x}, {}, "wrap_with_set_grad_enabled");
  epgraph::Node* item = g->call_function("operator.getitem", {w, 0}, {}, "getitem");
  g->output({item});
  epgraph::ExportGraphSignature sig;
  sig.input_specs = {epgraph_test::user_input("x")};
  sig.output_specs = {epgraph_test::user_output("getitem")};
  epgraph_test::Program region(std::move(g), std::move(sig), {}, {}, {});
  (void)region.add_nested_graph("submod_1", nest_unary_graph("relu", "relu"));
  CHECK_THROWS_WITH(epgraph::propagate_meta(region, epgraph::MetaMode::recompute_all),
                    "Cannot infer the metadata of node 'wrap_with_set_grad_enabled' "
                    "(torch.ops.higher_order.wrap_with_set_grad_enabled): argument 0 (enabled) "
                    "must be a bool");
  region.graph().find_node("wrap_with_set_grad_enabled")->update_arg(0, false);
  CHECK(epgraph::value_text(region.graph().find_node("getitem")->meta().val) == "unset");
  CHECK(epgraph::propagate_meta(region, epgraph::MetaMode::recompute_all).computed == 3);
  CHECK(epgraph::value_text(region.graph().find_node("getitem")->meta().val) ==
        "float32[3] stride [1] offset 0");
}
