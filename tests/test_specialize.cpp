// specialize: a dynamic program's symbols fixed to values (SymInt nodes and runtime asserts
// folded, range constraints dropped, values recomputed), its errors and its strong guarantee.
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

constexpr const char* kSpecS0 = "Symbol('s0', positive=True, integer=True)";
constexpr const char* kSpecS1 = "Symbol('s1', positive=True, integer=True)";

epgraph::TensorMeta spec_meta(std::vector<epgraph::SymInt> sizes,
                              std::vector<epgraph::SymInt> strides) {
  epgraph::TensorMeta m;
  m.sizes = std::move(sizes);
  m.strides = std::move(strides);
  return m;
}

// x: float32[2, s0] (s0 in [2, 100], hint 8), y: float32[s1] (s1 in [1, 8], hint 3); what
// torch.export writes for `n = x.shape[1]; torch._check(n >= 4); arange(n), x.view(2 * n),
// relu(x), neg(y)`. The values are computed by propagate_meta, as torch stores them.
epgraph_test::Program spec_program() {
  auto g = std::make_unique<epgraph::Graph>();
  const epgraph::SymExpr s0{kSpecS0, 8};
  const epgraph::SymExpr s1{kSpecS1, 3};
  epgraph::Node* x = g->placeholder("x");
  x->mutable_meta().val = spec_meta({std::int64_t{2}, s0}, {s0, std::int64_t{1}});
  epgraph::Node* y = g->placeholder("y");
  y->mutable_meta().val = spec_meta({s1}, {std::int64_t{1}});
  epgraph::Node* n = g->call_function("torch.ops.aten.sym_size.int", {x, 1}, {}, "sym_size_int");
  epgraph::Node* ge = g->call_function("operator.ge", {n, 4}, {}, "ge");
  epgraph::Node* check =
      g->call_function("torch.ops.aten._assert_scalar.default",
                       {ge, "Runtime assertion failed for expression s0 >= 4 on node 'ge'"}, {},
                       "_assert_scalar_default");
  check->mutable_meta().val = epgraph::NodeValue(epgraph::none);  // no rule: torch's None
  epgraph::Node* ar = g->call_function("torch.ops.aten.arange.default", {n}, {}, "arange");
  epgraph::Node* mul = g->call_function("operator.mul", {n, 2}, {}, "mul");
  epgraph::Node* view =
      g->call_function("torch.ops.aten.view.default",
                       {x, epgraph::Argument(epgraph::ArgumentList{mul})}, {}, "view");
  epgraph::Node* relu = g->call_function("torch.ops.aten.relu.default", {x}, {}, "relu");
  epgraph::Node* neg = g->call_function("torch.ops.aten.neg.default", {y}, {}, "neg");
  g->output({ar, view, relu, neg});
  epgraph::ExportGraphSignature sig;
  sig.input_specs = {epgraph_test::user_input("x"), epgraph_test::user_input("y")};
  sig.output_specs = {epgraph_test::user_output("arange"), epgraph_test::user_output("view"),
                      epgraph_test::user_output("relu"), epgraph_test::user_output("neg")};
  epgraph::ProgramMetadata md;
  md.range_constraints = {epgraph::RangeConstraint{"s0", 2, 100},
                          epgraph::RangeConstraint{"s1", 1, 8}};
  epgraph_test::Program ep(std::move(g), std::move(sig), {}, {}, std::move(md));
  (void)epgraph::propagate_meta(ep, epgraph::MetaMode::fill_unset);
  return ep;
}

// The graph, every node's value, the signature and the range constraints: what "unchanged"
// compares.
std::string spec_snapshot(const epgraph_test::Program& ep) {
  std::string out = epgraph::to_string(ep.graph());
  for (const epgraph::Node& n : ep.graph().nodes()) {
    out += std::string(n.name()) + ": " + epgraph::value_text(n.meta().val) + "\n";
  }
  for (const epgraph::InputSpec& s : ep.graph_signature().input_specs) out += s.name() + " ";
  for (const epgraph::OutputSpec& s : ep.graph_signature().output_specs) out += s.name() + " ";
  for (const epgraph::RangeConstraint& r : ep.metadata().range_constraints) {
    out += "\n" + r.symbol + " [" + std::to_string(*r.min_val) + ", " + std::to_string(*r.max_val) +
           "]";
  }
  return out;
}

std::vector<std::string> spec_node_names(const epgraph_test::Program& ep) {
  std::vector<std::string> names;
  for (const epgraph::Node& n : ep.graph().nodes()) names.emplace_back(n.name());
  return names;
}

// Calls specialize, expecting value_error with `message` and the program unchanged (its node
// pointers included).
void spec_refused(const std::vector<std::pair<std::string, std::int64_t>>& dims,
                  const std::string& message) {
  epgraph_test::Program ep = spec_program();
  const std::string before = spec_snapshot(ep);
  const epgraph::Node* x = ep.graph().find_node("x");
  REQUIRE_THROWS_MATCHES(epgraph::specialize(ep, dims), epgraph::value_error,
                         Catch::Message(message));
  CHECK(spec_snapshot(ep) == before);
  CHECK(ep.graph().find_node("x") == x);
}

}  // namespace

TEST_CASE("specialize: the dynamic program before specialization", "[specialize]") {
  const epgraph_test::Program ep = spec_program();
  const epgraph::Node* ge = ep.graph().find_node("ge");
  REQUIRE(ge != nullptr);
  CHECK(epgraph::value_text(ge->meta().val) == "SymBool s0 >= 4");
  CHECK(epgraph::value_text(ep.graph().find_node("view")->meta().val) ==
        "float32[2*s0{16}] stride [1] offset 0");
}

TEST_CASE("specialize: fixing s0 folds its SymInt nodes and asserts into constants",
          "[specialize]") {
  epgraph_test::Program ep = spec_program();
  const epgraph::SpecializeReport r = epgraph::specialize(ep, {{"s0", 16}});
  REQUIRE(r.symbols.size() == 1);
  CHECK(r.symbols[0] == epgraph::SpecializedSymbol{"s0", 16, 2, 100});
  CHECK(r.folded == std::vector<std::string>{"sym_size_int", "ge", "mul"});
  CHECK(r.kept_for_output.empty());
  CHECK(r.asserts_removed == std::vector<std::string>{"_assert_scalar_default"});
  CHECK(r.constraints_dropped == std::vector<std::string>{"s0"});
  CHECK(r.recomputed == 4);  // arange, view, relu, neg
  CHECK(r.recomputed_changed == 0);
  CHECK(r.substituted_only.empty());
  CHECK(r.symbolic_values == 2);  // y and neg: s1 is still dynamic

  CHECK(spec_node_names(ep) ==
        std::vector<std::string>{"x", "y", "arange", "view", "relu", "neg", "output"});
  // the uses hold the constant, as torch writes a concrete SymInt
  const epgraph::Node* ar = ep.graph().find_node("arange");
  REQUIRE(ar != nullptr);
  REQUIRE(ar->args().size() == 1);
  CHECK(ar->args()[0] == epgraph::Argument(std::int64_t{16}));
  CHECK(epgraph::format_node(*ep.graph().find_node("view")) ==
        "%view : [num_users=1] = call_function[target=torch.ops.aten.view.default](args = "
        "(%x, [32]), kwargs = {})");
  std::string values;
  for (const epgraph::Node& n : ep.graph().nodes()) {
    values += std::string(n.name()) + ": " + epgraph::value_text(n.meta().val) + "\n";
  }
  CHECK(values ==
        "x: float32[2, 16] stride [16, 1] offset 0\n"
        "y: float32[s1{3}] stride [1] offset 0\n"
        "arange: int64[16] stride [1] offset 0\n"
        "view: float32[32] stride [1] offset 0\n"
        "relu: float32[2, 16] stride [16, 1] offset 0\n"
        "neg: float32[s1{3}] stride [1] offset 0\n"
        "output: unset\n");
  // s1's expression keeps the srepr form of the file
  CHECK(
      std::get<epgraph::SymExpr>(ep.graph().find_node("neg")->meta().val.tensor()->sizes[0]).expr ==
      kSpecS1);
  REQUIRE(ep.metadata().range_constraints.size() == 1);
  CHECK(ep.metadata().range_constraints[0] == epgraph::RangeConstraint{"s1", 1, 8});
  // the result checks clean
  const epgraph::MetaReport check = epgraph::propagate_meta(ep, epgraph::MetaMode::check_only);
  CHECK(check.differences.empty());
  CHECK(check.uncomputed.empty());
}

TEST_CASE("specialize: fixing every symbol leaves no symbolic value", "[specialize]") {
  epgraph_test::Program ep = spec_program();
  const epgraph::SpecializeReport r = epgraph::specialize(ep, {{"s1", 4}, {"s0", 4}});
  REQUIRE(r.symbols.size() == 2);
  CHECK(r.symbols[0].symbol == "s1");  // in the order given
  CHECK(r.symbols[1].symbol == "s0");
  CHECK(r.constraints_dropped == std::vector<std::string>{"s0", "s1"});  // the program's order
  CHECK(r.symbolic_values == 0);
  CHECK(ep.metadata().range_constraints.empty());
  CHECK(epgraph::value_text(ep.graph().find_node("neg")->meta().val) ==
        "float32[4] stride [1] offset 0");
  CHECK(epgraph::value_text(ep.graph().find_node("view")->meta().val) ==
        "float32[8] stride [1] offset 0");
}

TEST_CASE("specialize: a folded node the output returns is kept with its constant value",
          "[specialize]") {
  epgraph_test::Program ep = spec_program();
  epgraph::Node* out = ep.graph().find_node("output");
  epgraph::Node* mul = ep.graph().find_node("mul");
  epgraph::ArgumentList results = *out->args()[0].list();
  results.emplace_back(mul);
  out->set_args({epgraph::Argument(std::move(results))});
  ep.graph_signature().output_specs.push_back(
      {epgraph::OutputKind::USER_OUTPUT, epgraph::SymIntArgument{"mul"}});
  const epgraph::SpecializeReport r = epgraph::specialize(ep, {{"s0", 5}});
  CHECK(r.folded == std::vector<std::string>{"sym_size_int", "ge"});
  CHECK(r.kept_for_output == std::vector<std::string>{"mul"});
  const epgraph::Node* kept = ep.graph().find_node("mul");
  REQUIRE(kept != nullptr);
  CHECK(epgraph::value_text(kept->meta().val) == "SymInt 10");
  CHECK(kept->args() == std::vector<epgraph::Argument>{std::int64_t{5}, std::int64_t{2}});
}

TEST_CASE("specialize: refused values name the symbol and change nothing", "[specialize]") {
  spec_refused({{"s0", 1}}, "Cannot specialize s0 to 1: outside its range constraint [2, 100]");
  spec_refused({{"s0", 101}}, "Cannot specialize s0 to 101: outside its range constraint [2, 100]");
  spec_refused({{"s0", 16}, {"s1", 9}},
               "Cannot specialize s1 to 9: outside its range constraint [1, 8]");
  spec_refused({{"s70", 16}},
               "Cannot specialize 's70': it is not a symbol of the program's range_constraints "
               "(its symbols: s0, s1)");
  spec_refused({{"s0", 16}, {"s0", 16}}, "Cannot specialize 's0': the value is given twice");
  spec_refused({}, "specialize needs at least one symbol to fix");
  // a runtime assert that becomes false: s0 >= 4 fails for 3
  spec_refused({{"s0", 3}},
               "Cannot specialize s0 to 3: the runtime assert '_assert_scalar_default' "
               "(torch.ops.aten._assert_scalar.default) fails: Runtime assertion failed for "
               "expression s0 >= 4 on node 'ge'");
}

// Regression (a break test): `--dim u0=2` folded a data-dependent size to a constant and
// dropped its checks, and `--dim 2*s0=14` (a derived dimension's range_constraints key) was
// reported as specialized while nothing was. Both are refused; the list of symbols names the
// input-size symbols only.
TEST_CASE("specialize: an unbacked symbol or a derived dimension's key is refused",
          "[specialize]") {
  epgraph_test::Program ep = spec_program();
  ep.metadata().range_constraints.push_back(epgraph::RangeConstraint{"u0", 1, 100});
  ep.metadata().range_constraints.push_back(epgraph::RangeConstraint{"2*s0", 4, 200});
  const std::vector<epgraph::RangeConstraint> fixable =
      epgraph::specializable_symbols(ep.metadata().range_constraints);
  CHECK(fixable == std::vector<epgraph::RangeConstraint>{epgraph::RangeConstraint{"s0", 2, 100},
                                                         epgraph::RangeConstraint{"s1", 1, 8}});
  const std::string before = spec_snapshot(ep);
  CHECK_THROWS_MATCHES(
      epgraph::specialize(ep, {{"u0", 2}}), epgraph::value_error,
      Catch::Message("Cannot specialize 'u0': it is a data-dependent (unbacked) symbol, whose "
                     "value a tensor's data gives at run time, not an input size (its symbols: "
                     "s0, s1)"));
  CHECK(spec_snapshot(ep) == before);
  CHECK_THROWS_MATCHES(
      epgraph::specialize(ep, {{"s0", 7}, {"2*s0", 14}}), epgraph::value_error,
      Catch::Message("Cannot specialize '2*s0': it is an expression (a derived dimension), not "
                     "a symbol; fix the symbols it is made of (its symbols: s0, s1)"));
  CHECK(spec_snapshot(ep) == before);
  CHECK_THROWS_MATCHES(epgraph::specialize(ep, {{"s9", 7}}), epgraph::value_error,
                       Catch::Message("Cannot specialize 's9': it is not a symbol of the program's "
                                      "range_constraints (its symbols: s0, s1)"));
  // the derived key follows its symbol: dropped once s0 is fixed; u0's constraint stays
  const epgraph::SpecializeReport r = epgraph::specialize(ep, {{"s0", 7}});
  CHECK(r.constraints_dropped == std::vector<std::string>{"s0", "2*s0"});
  REQUIRE(ep.metadata().range_constraints.size() == 2);
  CHECK(ep.metadata().range_constraints[1] == epgraph::RangeConstraint{"u0", 1, 100});
}

TEST_CASE("specialize: a program without symbols says it has none", "[specialize]") {
  epgraph_test::Program ep = spec_program();
  ep.metadata().range_constraints.clear();
  CHECK_THROWS_MATCHES(epgraph::specialize(ep, {{"s0", 4}}), epgraph::value_error,
                       Catch::Message("Cannot specialize 's0': it is not a symbol of the "
                                      "program's range_constraints (it has none)"));
}

TEST_CASE("specialize: sym_constrain_range_for_size is checked against its bounds",
          "[specialize]") {
  epgraph_test::Program ep = spec_program();
  epgraph::Node* n = ep.graph().find_node("sym_size_int");
  epgraph::Node* c = ep.graph().call_function(
      "torch.ops.aten.sym_constrain_range_for_size.default", {n},
      {{"min", std::int64_t{6}}, {"max", std::int64_t{10}}}, "sym_constrain_range_for_size");
  c->mutable_meta().val = epgraph::NodeValue(epgraph::none);
  ep.graph().find_node("ge")->prepend(c);
  const std::string before = spec_snapshot(ep);
  CHECK_THROWS_MATCHES(
      epgraph::specialize(ep, {{"s0", 5}}), epgraph::value_error,
      Catch::Message("Cannot specialize s0 to 5: the runtime assert 'sym_constrain_range_for_size' "
                     "(torch.ops.aten.sym_constrain_range_for_size.default) fails: 5 is outside "
                     "[6, 10]"));
  CHECK(spec_snapshot(ep) == before);
  const epgraph::SpecializeReport r = epgraph::specialize(ep, {{"s0", 8}});
  CHECK(r.asserts_removed ==
        std::vector<std::string>{"sym_constrain_range_for_size", "_assert_scalar_default"});
  CHECK(ep.graph().find_node("sym_constrain_range_for_size") == nullptr);
}

TEST_CASE("specialize: the other symbols keep the file's str form and get their hints",
          "[specialize]") {
  // x: float32[s0, s1] in the str form of older files (hints 8 and 3); flat = x.view(-1)
  auto g = std::make_unique<epgraph::Graph>();
  epgraph::Node* x = g->placeholder("x");
  x->mutable_meta().val = spec_meta({epgraph::SymExpr{"s0", 8}, epgraph::SymExpr{"s1", 3}},
                                    {epgraph::SymExpr{"s1", 3}, std::int64_t{1}});
  epgraph::Node* flat = g->call_function(
      "torch.ops.aten.view.default", {x, epgraph::Argument(epgraph::ArgumentList{-1})}, {}, "flat");
  g->output({flat});
  epgraph::ExportGraphSignature sig;
  sig.input_specs = {epgraph_test::user_input("x")};
  sig.output_specs = {epgraph_test::user_output("flat")};
  epgraph::ProgramMetadata md;
  md.range_constraints = {epgraph::RangeConstraint{"s0", 2, std::nullopt},
                          epgraph::RangeConstraint{"s1", 2, 10}};
  epgraph_test::Program ep(std::move(g), std::move(sig), {}, {}, std::move(md));
  (void)epgraph::propagate_meta(ep, epgraph::MetaMode::fill_unset);
  CHECK(epgraph::value_text(ep.graph().find_node("flat")->meta().val) ==
        "float32[s0*s1{24}] stride [1] offset 0");
  const epgraph::SpecializeReport r = epgraph::specialize(ep, {{"s1", 4}});
  CHECK(r.symbols[0] == epgraph::SpecializedSymbol{"s1", 4, 2, 10});
  CHECK(r.folded.empty());
  CHECK(r.symbolic_values == 2);
  CHECK(epgraph::value_text(ep.graph().find_node("x")->meta().val) ==
        "float32[s0{8}, 4] stride [4, 1] offset 0");
  const epgraph::NodeValue& v = ep.graph().find_node("flat")->meta().val;
  CHECK(epgraph::value_text(v) == "float32[4*s0{32}] stride [1] offset 0");
  CHECK(std::get<epgraph::SymExpr>(v.tensor()->sizes[0]).expr == "4*s0");
  REQUIRE(ep.metadata().range_constraints.size() == 1);
  CHECK(ep.metadata().range_constraints[0] == epgraph::RangeConstraint{"s0", 2, std::nullopt});
  // an unbounded range is printed as torch prints it
  CHECK_THROWS_MATCHES(epgraph::specialize(ep, {{"s0", 1}}), epgraph::value_error,
                       Catch::Message("Cannot specialize s0 to 1: outside its range constraint "
                                      "[2, int_oo]"));
}

// torch writes SymFloat expressions for a float scale or a true division of a dynamic size
// (x.size(1) / 3 is a SymFloat node IntTrueDiv(s0, 3); F.interpolate(scale_factor=1.5) a size
// TruncToInt(1.5*ToFloat(s0))): specialize read none of them.
TEST_CASE("specialize: SymFloat expressions are read and evaluated in float64", "[specialize]") {
  epgraph_test::Program ep = spec_program();
  epgraph::Graph& g = ep.graph();
  const std::string s0 = kSpecS0;
  const epgraph::SymExpr up{"TruncToInt(Mul(Float('1.5', precision=53), ToFloat(" + s0 + ")))", 12};
  {
    const auto at = g.inserting_after(g.find_node("sym_size_int"));
    epgraph::Node* div =
        g.call_function("operator.truediv", {g.find_node("sym_size_int"), 3}, {}, "truediv");
    div->mutable_meta().val = epgraph::SymFloatValue{
        epgraph::SymExpr{"IntTrueDiv(" + s0 + ", Integer(3))", std::nullopt}};
    epgraph::Node* up_size =
        g.call_function("torch.ops.aten.sym_size.int", {g.find_node("x"), 0}, {}, "scaled");
    up_size->mutable_meta().val = epgraph::SymIntValue{up};
  }
  (void)epgraph::specialize(ep, {{"s0", 7}, {"s1", 3}});
  CHECK(epgraph::value_text(ep.graph().find_node("truediv")->meta().val) ==
        epgraph::value_text(epgraph::NodeValue(epgraph::SymFloatValue{7.0 / 3.0})));
  CHECK(ep.graph().find_node("truediv")->meta().val ==
        epgraph::NodeValue(epgraph::SymFloatValue{7.0 / 3.0}));
  // 1.5 * 7 = 10.5, truncated: the folded node's uses hold 10 (it was not used: erased)
  CHECK(ep.graph().find_node("scaled") == nullptr);
}

TEST_CASE("specialize: an expression it cannot read names the node, the field and the text",
          "[specialize]") {
  epgraph_test::Program ep = spec_program();
  epgraph::Graph& g = ep.graph();
  {
    const auto at = g.inserting_after(g.find_node("sym_size_int"));
    epgraph::Node* div =
        g.call_function("operator.truediv", {g.find_node("sym_size_int"), 3}, {}, "truediv");
    div->mutable_meta().val = epgraph::SymFloatValue{
        epgraph::SymExpr{"FloatTrueDiv(ToFloat(s0), Float('nan', precision=53))", std::nullopt}};
  }
  const std::string before = spec_snapshot(ep);
  const epgraph::Node* x = ep.graph().find_node("x");
  REQUIRE_THROWS_MATCHES(
      epgraph::specialize(ep, {{"s0", 16}}), epgraph::value_error,
      Catch::Message("Cannot specialize node 'truediv', its SymFloat value (sym_float_values "
                     "entry): cannot read the symbolic expression 'FloatTrueDiv(ToFloat(s0), "
                     "Float('nan', precision=53))': the Float 'nan' (not a finite float64 that "
                     "is a fraction of 64-bit integers) at offset 26"));
  CHECK(spec_snapshot(ep) == before);
  CHECK(ep.graph().find_node("x") == x);
}

// specialize built its copy without the program's own nested graphs and swapped it in: an
// outlined program lost them. They are kept, their values specialized.
TEST_CASE("specialize: the nested graphs the program owns are kept and specialized",
          "[specialize]") {
  epgraph_test::Program ep = spec_program();
  auto body = std::make_unique<epgraph::Graph>();
  epgraph::Node* p = body->placeholder("x");
  p->mutable_meta().val = spec_meta({std::int64_t{2}, epgraph::SymExpr{kSpecS0, 8}},
                                    {epgraph::SymExpr{kSpecS0, 8}, std::int64_t{1}});
  epgraph::Node* r = body->call_function("torch.ops.aten.relu.default", {p}, {}, "relu");
  r->mutable_meta().val = p->meta().val;
  body->output({r});
  (void)ep.add_nested_graph("repeated_subgraph0", std::move(body));
  (void)epgraph::specialize(ep, {{"s0", 16}});
  const epgraph::Graph* kept = ep.nested_graph("repeated_subgraph0");
  REQUIRE(kept != nullptr);
  CHECK(epgraph::value_text(kept->find_node("relu")->meta().val) ==
        "float32[2, 16] stride [16, 1] offset 0");
  CHECK(epgraph::value_text(kept->find_node("x")->meta().val) ==
        "float32[2, 16] stride [16, 1] offset 0");
}

namespace {

// forward(x) = cond(x.shape[1] > 4, relu, neg, [x])[0] + 1 with x: float32[2, s0], as
// torch.export writes `torch.cond(x.shape[1] > 4, ...)`; the branches are the program's own
// nested graphs, every value computed by propagate_meta.
epgraph_test::Program spec_cond_program() {
  auto g = std::make_unique<epgraph::Graph>();
  const epgraph::SymExpr s0{kSpecS0, 8};
  epgraph::Node* x = g->placeholder("x");
  x->mutable_meta().val = spec_meta({std::int64_t{2}, s0}, {s0, std::int64_t{1}});
  epgraph::Node* n = g->call_function("torch.ops.aten.sym_size.int", {x, 1}, {}, "sym_size_int");
  epgraph::Node* gt = g->call_function("operator.gt", {n, 4}, {}, "gt");
  epgraph::Node* t = g->get_attr("true_graph_0");
  epgraph::Node* f = g->get_attr("false_graph_0");
  epgraph::Node* c =
      g->call_function("torch.ops.higher_order.cond",
                       {gt, t, f, epgraph::Argument(epgraph::ArgumentList{x})}, {}, "cond");
  epgraph::Node* item = g->call_function("operator.getitem", {c, 0}, {}, "getitem");
  epgraph::Node* add = g->call_function("torch.ops.aten.add.Tensor", {item, 1}, {}, "add");
  g->output({add});
  epgraph::ExportGraphSignature sig;
  sig.input_specs = {epgraph_test::user_input("x")};
  sig.output_specs = {epgraph_test::user_output("add")};
  epgraph::ProgramMetadata md;
  md.range_constraints = {epgraph::RangeConstraint{"s0", 2, 100}};
  epgraph_test::Program ep(std::move(g), std::move(sig), {}, {}, std::move(md));
  for (const char* op : {"relu", "neg"}) {
    auto branch = std::make_unique<epgraph::Graph>();
    epgraph::Node* bx = branch->placeholder("x");
    epgraph::Node* r =
        branch->call_function(std::string("torch.ops.aten.") + op + ".default", {bx}, {}, op);
    branch->output({r});
    (void)ep.add_nested_graph(op == std::string("relu") ? "true_graph_0" : "false_graph_0",
                              std::move(branch));
  }
  (void)epgraph::propagate_meta(ep, epgraph::MetaMode::fill_unset);
  return ep;
}

}  // namespace

TEST_CASE("specialize: a cond whose predicate becomes constant takes its branch",
          "[specialize][nested]") {
  SECTION("s0 = 16: x.shape[1] > 4 holds, the true branch's relu replaces the cond") {
    epgraph_test::Program ep = spec_cond_program();
    const epgraph::SpecializeReport r = epgraph::specialize(ep, {{"s0", 16}});
    CHECK(r.folded == std::vector<std::string>{"sym_size_int", "gt"});
    CHECK(r.conds_inlined == std::vector<std::string>{"cond (true_graph_0)"});
    CHECK(spec_node_names(ep) == std::vector<std::string>{"x", "relu", "add", "output"});
    CHECK(ep.nested_graphs().empty());  // neither branch is read any more
    CHECK(epgraph::value_text(ep.graph().find_node("relu")->meta().val) ==
          "float32[2, 16] stride [16, 1] offset 0");
    CHECK(ep.graph().find_node("add")->args()[0].node() == ep.graph().find_node("relu"));
    CHECK(ep.graph_signature().output_specs[0].name() == "add");
    CHECK(r.symbolic_values == 0);
    CHECK_NOTHROW(epgraph::verify(ep));
  }
  SECTION("s0 = 3: it does not, the false branch's neg replaces it") {
    epgraph_test::Program ep = spec_cond_program();
    const epgraph::SpecializeReport r = epgraph::specialize(ep, {{"s0", 3}});
    CHECK(r.conds_inlined == std::vector<std::string>{"cond (false_graph_0)"});
    CHECK(spec_node_names(ep) == std::vector<std::string>{"x", "neg", "add", "output"});
    CHECK(epgraph::value_text(ep.graph().find_node("neg")->meta().val) ==
          "float32[2, 3] stride [3, 1] offset 0");
  }
  SECTION("a cond read by the output directly is left as it is") {
    epgraph_test::Program ep = spec_cond_program();
    epgraph::Graph& g = ep.graph();
    g.output_node()->update_arg(
        0, epgraph::Argument(epgraph::ArgumentList{g.find_node("add"), g.find_node("cond")}));
    ep.graph_signature().output_specs.push_back(epgraph_test::user_output("cond"));
    const epgraph::SpecializeReport r = epgraph::specialize(ep, {{"s0", 16}});
    CHECK(r.conds_inlined.empty());
    CHECK(ep.graph().find_node("cond") != nullptr);
    CHECK(ep.graph().find_node("cond")->args()[0].as<bool>() == true);
    CHECK(ep.nested_graphs().size() == 2);
  }
}

// Found by a break test: specialize wrote programs whose recomputation found an op refusing its
// arguments (exit 0, torch then failed to run them), and left a nested graph kept as a record
// (a cond inside a cond's branch) with the fixed symbol in its values after dropping its range.
TEST_CASE("specialize: an invalid node or a record using the symbol is refused, nothing changed",
          "[specialize][nested]") {
  SECTION("a cond giving its branch two operands for one input") {
    epgraph_test::Program ep = spec_cond_program();
    epgraph::Node* c = ep.graph().find_node("cond");
    epgraph::Node* x = ep.graph().find_node("x");
    c->update_arg(3, epgraph::Argument(epgraph::ArgumentList{x, x}));
    const std::string before = spec_snapshot(ep);
    REQUIRE_THROWS_MATCHES(
        epgraph::specialize(ep, {{"s0", 3}}), epgraph::value_error,
        Catch::Message("Cannot specialize: node 'cond' is invalid: Cannot infer the metadata of "
                       "node 'cond' (torch.ops.higher_order.cond): the nested graph "
                       "'true_graph_0' has 1 inputs and the node gives it 2"));
    CHECK(spec_snapshot(ep) == before);
  }
  SECTION("a nested graph kept as a record whose values use s0") {
    epgraph_test::Program ep = spec_cond_program();
    // the true branch holds a get_attr node of a cond of its own, kept as the file's record
    epgraph::Graph& branch = *ep.nested_graph("true_graph_0");
    epgraph::Node* inner = nullptr;
    {
      const auto at = branch.inserting_before(branch.output_node());
      inner = branch.get_attr("true_graph_0");
    }
    inner->mutable_meta().serialized =
        std::string(R"({"graph":{"tensor_values":{"x":{"sizes":[{"as_expr":{"expr_str":")") +
        kSpecS0 + R"("}}]}}}})";
    const std::string before = spec_snapshot(ep);
    REQUIRE_THROWS_MATCHES(
        epgraph::specialize(ep, {{"s0", 16}}), epgraph::value_error,
        Catch::Message("Cannot specialize s0: the nested graph 'true_graph_0' that get_attr node "
                       "'true_graph_0' of nested graph 'true_graph_0' reads is kept as the record "
                       "of the file it was read from (a nested graph inside another, or a program "
                       "not given to epgraph::json::materialize_nested_graphs) and its values use "
                       "s0; epgraph does not enter it"));
    CHECK(spec_snapshot(ep) == before);
    // a record without the symbol does not stop it (s01 is another symbol)
    inner->mutable_meta().serialized = R"({"graph":{"tensor_values":{"x":"s01"}}})";
    CHECK_NOTHROW(epgraph::specialize(ep, {{"s0", 16}}));
  }
}
