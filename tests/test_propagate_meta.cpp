// propagate_meta: every node's value recomputed (or checked) from the placeholders', on a
// program with a dynamic dimension (the srepr form torch 2.13 writes), and its strong guarantee.
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <cstdint>
#include <epgraph/epgraph.hpp>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "support/program_builders.hpp"

namespace {

constexpr const char* kPropS0 = "Symbol('s0', positive=True, integer=True)";

epgraph::SymExpr prop_sym(std::string expr, std::int64_t hint) {
  return epgraph::SymExpr{std::move(expr), hint};
}

// x: float32[2, s0] (s0 in [2, 100], hint 8), y: float32[s0]; the nodes torch.export writes for
// `n = x.shape[1]; arange(n), x + y, relu, cat([x, x], 1), x.view(-1), x[:, 1:n - 1], sum(1)`.
epgraph_test::Program prop_program() {
  auto g = std::make_unique<epgraph::Graph>();
  epgraph::TensorMeta mx;
  mx.sizes = {std::int64_t{2}, prop_sym(kPropS0, 8)};
  mx.strides = {prop_sym(kPropS0, 8), std::int64_t{1}};
  epgraph::Node* x = g->placeholder("x");
  x->mutable_meta().val = mx;
  epgraph::TensorMeta my;
  my.sizes = {prop_sym(kPropS0, 8)};
  my.strides = {std::int64_t{1}};
  epgraph::Node* y = g->placeholder("y");
  y->mutable_meta().val = my;
  epgraph::Node* n = g->call_function("torch.ops.aten.sym_size.int", {x, 1}, {}, "sym_size_int");
  epgraph::Node* ar = g->call_function("torch.ops.aten.arange.default", {n}, {}, "arange");
  epgraph::Node* add = g->call_function("torch.ops.aten.add.Tensor", {x, y}, {}, "add");
  epgraph::Node* relu = g->call_function("torch.ops.aten.relu.default", {add}, {}, "relu");
  epgraph::Node* cat =
      g->call_function("torch.ops.aten.cat.default",
                       {epgraph::Argument(epgraph::ArgumentList{x, relu}), 1}, {}, "cat");
  epgraph::Node* flat =
      g->call_function("torch.ops.aten.view.default",
                       {cat, epgraph::Argument(epgraph::ArgumentList{-1})}, {}, "view");
  epgraph::Node* sub = g->call_function("operator.sub", {n, 1}, {}, "sub");
  epgraph::Node* sl =
      g->call_function("torch.ops.aten.slice.Tensor", {x, 1, 1, sub}, {}, "slice_1");
  epgraph::Node* sum =
      g->call_function("torch.ops.aten.sum.dim_IntList",
                       {sl, epgraph::Argument(epgraph::ArgumentList{1})}, {}, "sum_1");
  g->output({ar, flat, sum});
  epgraph::ExportGraphSignature sig;
  sig.input_specs = {epgraph_test::user_input("x"), epgraph_test::user_input("y")};
  sig.output_specs = {epgraph_test::user_output("arange"), epgraph_test::user_output("view"),
                      epgraph_test::user_output("sum_1")};
  epgraph::ProgramMetadata md;
  md.range_constraints = {epgraph::RangeConstraint{"s0", 2, 100}};
  return epgraph_test::Program(std::move(g), std::move(sig), {}, {}, std::move(md));
}

// Every node's name and value, one line each (what "the program is unchanged" compares).
std::string prop_values(const epgraph_test::Program& ep) {
  std::string out;
  for (const epgraph::Node& n : ep.graph().nodes()) {
    out += std::string(n.name()) + ": " + epgraph::value_text(n.meta().val) + "\n";
  }
  return out;
}

// A placeholder `name` of `g` whose value is a tensor of `type` with these sizes and strides.
epgraph::Node* prop_placeholder(epgraph::Graph& g, const char* name, epgraph::dtype type,
                                std::vector<epgraph::SymInt> sizes,
                                std::vector<epgraph::SymInt> strides) {
  epgraph::Node* n = g.placeholder(name);
  epgraph::TensorMeta m;
  m.dtype = type;
  m.sizes = std::move(sizes);
  m.strides = std::move(strides);
  n->mutable_meta().val = m;
  return n;
}

// The program of `g` whose inputs and outputs are the user inputs and outputs named.
epgraph_test::Program prop_user_program(std::unique_ptr<epgraph::Graph> g,
                                        const std::vector<std::string>& inputs,
                                        const std::vector<std::string>& outputs) {
  epgraph::ExportGraphSignature sig;
  for (const std::string& i : inputs) sig.input_specs.push_back(epgraph_test::user_input(i));
  for (const std::string& o : outputs) sig.output_specs.push_back(epgraph_test::user_output(o));
  return epgraph_test::Program(std::move(g), std::move(sig), {}, {}, {});
}

void prop_unset_all(epgraph_test::Program& ep) {
  for (epgraph::Node& n : ep.graph().nodes()) {
    if (n.op() == epgraph::OpCode::call_function) n.mutable_meta().val.reset();
  }
}

}  // namespace

TEST_CASE("propagate_meta: recompute_all computes every value of a dynamic program",
          "[propagate_meta]") {
  epgraph_test::Program ep = prop_program();
  const epgraph::MetaReport r = epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all);
  CHECK(r.nodes == 9);
  CHECK(r.computed == 9);
  CHECK(r.equal == 0);  // every stored value was unset
  CHECK(r.differences.size() == 9);
  CHECK(prop_values(ep) ==
        "x: float32[2, s0{8}] stride [s0{8}, 1] offset 0\n"
        "y: float32[s0{8}] stride [1] offset 0\n"
        "sym_size_int: SymInt s0{8}\n"
        "arange: int64[s0{8}] stride [1] offset 0\n"
        "add: float32[2, s0{8}] stride [s0{8}, 1] offset 0\n"
        "relu: float32[2, s0{8}] stride [s0{8}, 1] offset 0\n"
        "cat: float32[2, 2*s0{16}] stride [2*s0{16}, 1] offset 0\n"
        "view: float32[4*s0{32}] stride [1] offset 0\n"
        "sub: SymInt s0 - 1{7}\n"
        "slice_1: float32[2, s0 - 2{6}] stride [s0{8}, 1] offset 1\n"
        "sum_1: float32[2] stride [1] offset 0\n"
        "output: unset\n");
  // written in the srepr form of the file, as torch 2.13 writes it
  const epgraph::TensorMeta* cat = ep.graph().find_node("cat")->meta().val.tensor();
  REQUIRE(cat != nullptr);
  CHECK(std::get<epgraph::SymExpr>(cat->sizes[1]).expr ==
        "Mul(Integer(2), Symbol('s0', positive=True, integer=True))");
  // a second run finds every value equal and changes nothing
  const std::string before = prop_values(ep);
  const epgraph::MetaReport again = epgraph::propagate_meta(ep, epgraph::MetaMode::check_only);
  CHECK(again.computed == 9);
  CHECK(again.equal == 9);
  CHECK(again.differences.empty());
  CHECK(again.uncomputed.empty());
  CHECK(prop_values(ep) == before);
}

TEST_CASE("propagate_meta: a changed input shape flows to every node below it",
          "[propagate_meta]") {
  epgraph_test::Program ep = prop_program();
  (void)epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all);
  // a pass makes y a [1] tensor: add broadcasts it, nothing else changes
  epgraph::TensorMeta my;
  my.sizes = {std::int64_t{1}};
  my.strides = {std::int64_t{1}};
  ep.graph().find_node("y")->mutable_meta().val = my;
  const epgraph::MetaReport check = epgraph::propagate_meta(ep, epgraph::MetaMode::check_only);
  CHECK(check.differences.empty());
  // x becomes [3, s0]: the check lists every node whose stored value is now stale, with both
  epgraph::TensorMeta mx = *ep.graph().find_node("x")->meta().val.tensor();
  mx.sizes[0] = std::int64_t{3};
  ep.graph().find_node("x")->mutable_meta().val = mx;
  const std::string before = prop_values(ep);
  const epgraph::MetaReport r = epgraph::propagate_meta(ep, epgraph::MetaMode::check_only);
  CHECK(prop_values(ep) == before);  // check_only changes nothing
  std::vector<std::string> names;
  for (const epgraph::MetaDifference& d : r.differences) names.push_back(d.node);
  CHECK(names == std::vector<std::string>{"add", "relu", "cat", "view", "slice_1", "sum_1"});
  REQUIRE(!r.differences.empty());
  CHECK(r.differences[0].target == "torch.ops.aten.add.Tensor");
  CHECK(epgraph::value_text(r.differences[0].stored) ==
        "float32[2, s0{8}] stride [s0{8}, 1] offset 0");
  CHECK(epgraph::value_text(r.differences[0].computed) ==
        "float32[3, s0{8}] stride [s0{8}, 1] offset 0");
  CHECK(epgraph::value_text(r.differences[3].computed) == "float32[6*s0{48}] stride [1] offset 0");
  CHECK(r.equal == 3);  // sym_size_int, arange, sub
  // recompute_all then stores exactly the values the check computed
  const epgraph::MetaReport w = epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all);
  CHECK(w.differences.size() == 6);
  CHECK(epgraph::value_text(ep.graph().find_node("view")->meta().val) ==
        "float32[6*s0{48}] stride [1] offset 0");
}

TEST_CASE("propagate_meta: fill_unset computes only the unset values", "[propagate_meta]") {
  epgraph_test::Program ep = prop_program();
  (void)epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all);
  // a stale value (set by hand) is kept; the unset one below it is computed from it
  epgraph::TensorMeta stale = *ep.graph().find_node("relu")->meta().val.tensor();
  stale.dtype = epgraph::dtype::float16;
  ep.graph().find_node("relu")->mutable_meta().val = stale;
  ep.graph().find_node("cat")->mutable_meta().val.reset();
  const epgraph::MetaReport r = epgraph::propagate_meta(ep, epgraph::MetaMode::fill_unset);
  CHECK(r.nodes == 9);
  CHECK(r.computed == 1);
  CHECK(epgraph::value_text(ep.graph().find_node("relu")->meta().val) ==
        "float16[2, s0{8}] stride [s0{8}, 1] offset 0");
  // cat of float32 and float16 promotes to float32
  CHECK(epgraph::value_text(ep.graph().find_node("cat")->meta().val) ==
        "float32[2, 2*s0{16}] stride [2*s0{16}, 1] offset 0");
}

TEST_CASE("propagate_meta: an op without a rule is an error, and nothing changes",
          "[propagate_meta]") {
  epgraph_test::Program ep = prop_program();
  (void)epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all);
  epgraph::Graph& g = ep.graph();
  epgraph::Node* relu = g.find_node("relu");
  epgraph::Node* cs = nullptr;
  {
    const auto at = g.inserting_after(relu);
    cs = g.call_function("torch.ops.aten.logcumsumexp.default", {relu, 1}, {}, "logcumsumexp");
  }
  cs->mutable_meta().val = relu->meta().val;
  // x changes so that the nodes before logcumsumexp get new values before the error
  epgraph::TensorMeta mx = *g.find_node("x")->meta().val.tensor();
  mx.sizes[0] = std::int64_t{5};
  g.find_node("x")->mutable_meta().val = mx;
  const std::string before_values = prop_values(ep);
  const std::string before_graph = epgraph::to_string(g);
  CHECK_THROWS_WITH(
      epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all),
      "Cannot infer the metadata of node 'logcumsumexp' (torch.ops.aten.logcumsumexp.default): "
      "epgraph has no shape rule for it; set meta().val yourself");
  CHECK(prop_values(ep) == before_values);
  CHECK(epgraph::to_string(g) == before_graph);
  // fill_unset does not need a rule for a node that has a value
  const epgraph::MetaReport fill = epgraph::propagate_meta(ep, epgraph::MetaMode::fill_unset);
  CHECK(fill.computed == 0);
  CHECK(prop_values(ep) == before_values);
  // but does for one without
  cs->mutable_meta().val.reset();
  const std::string unset_values = prop_values(ep);
  CHECK_THROWS_WITH(
      epgraph::propagate_meta(ep, epgraph::MetaMode::fill_unset),
      "Cannot infer the metadata of node 'logcumsumexp' (torch.ops.aten.logcumsumexp.default): "
      "epgraph has no shape rule for it; set meta().val yourself");
  CHECK(prop_values(ep) == unset_values);
  // check_only lists it and carries on with its stored value
  cs->mutable_meta().val = relu->meta().val;
  const epgraph::MetaReport check = epgraph::propagate_meta(ep, epgraph::MetaMode::check_only);
  REQUIRE(check.uncomputed.size() == 1);
  CHECK(check.uncomputed[0].node == "logcumsumexp");
  CHECK(check.uncomputed[0].target == "torch.ops.aten.logcumsumexp.default");
  CHECK(check.uncomputed[0].reason ==
        "Cannot infer the metadata of node 'logcumsumexp' (torch.ops.aten.logcumsumexp.default): "
        "epgraph "
        "has no shape rule for it; set meta().val yourself");
  CHECK(check.nodes == 10);
  CHECK(check.computed == 9);
  CHECK(prop_values(ep) == before_values);
}

TEST_CASE("propagate_meta: an input without a value is an error naming both nodes",
          "[propagate_meta]") {
  epgraph_test::Program ep = prop_program();
  prop_unset_all(ep);
  ep.graph().find_node("y")->mutable_meta().val.reset();
  const std::string before = prop_values(ep);
  CHECK_THROWS_WITH(epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all),
                    "Cannot infer the metadata of node 'add' (torch.ops.aten.add.Tensor): "
                    "argument 'other' (node 'y') has no tensor metadata: its meta().val is unset");
  CHECK(prop_values(ep) == before);
}

TEST_CASE("propagate_meta: the range constraints decide what the hints cannot",
          "[propagate_meta]") {
  // x[:, :4] on s0 (hint 8): whether 4 <= s0 is decided by the hint...
  epgraph_test::Program ep = prop_program();
  epgraph::Graph& g = ep.graph();
  epgraph::Node* sl = nullptr;
  {
    const auto at = g.inserting_after(g.find_node("sum_1"));
    sl = g.call_function("torch.ops.aten.slice.Tensor", {g.find_node("x"), 1, 0, 4}, {}, "head");
  }
  (void)epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all);
  CHECK(epgraph::value_text(sl->meta().val) == "float32[2, 4] stride [s0{8}, 1] offset 0");
  // ...and without hints by the range: s0 in [2, 100] cannot say whether 4 <= s0, but [4, 100]
  // can (torch then keeps 4)
  epgraph::TensorMeta mx = *g.find_node("x")->meta().val.tensor();
  std::get<epgraph::SymExpr>(mx.sizes[1]).hint.reset();
  std::get<epgraph::SymExpr>(mx.strides[0]).hint.reset();
  g.find_node("x")->mutable_meta().val = mx;
  epgraph::TensorMeta my = *g.find_node("y")->meta().val.tensor();
  std::get<epgraph::SymExpr>(my.sizes[0]).hint.reset();
  g.find_node("y")->mutable_meta().val = my;
  ep.metadata().range_constraints = {epgraph::RangeConstraint{"s0", 4, 100}};
  (void)epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all);
  CHECK(epgraph::value_text(sl->meta().val) == "float32[2, 4] stride [s0, 1] offset 0");
  // with [2, 100] and no hint, torch's guard_or_false takes 4 <= s0 as unknown: Min(4, s0)
  ep.metadata().range_constraints = {epgraph::RangeConstraint{"s0", 2, 100}};
  (void)epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all);
  CHECK(epgraph::value_text(sl->meta().val) == "float32[2, Min(4, s0)] stride [s0, 1] offset 0");
}

TEST_CASE("propagate_meta: a size that is not an expression torch writes is an error naming it",
          "[propagate_meta]") {
  // `validate --meta` on a placeholder size "s0 +* 2" computed `float32[2, s0 +* 2{8}]` for the
  // nodes copying it and never named the placeholder: the values propagation starts from are
  // read first, and a node reading an unreadable value names the node and the field.
  epgraph_test::Program ep = prop_program();
  (void)epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all);
  epgraph::TensorMeta mx = *ep.graph().find_node("x")->meta().val.tensor();
  mx.sizes[1] = prop_sym("s0 +* 2", 8);
  ep.graph().find_node("x")->mutable_meta().val = mx;
  const std::string before = prop_values(ep);
  const std::string why =
      "sizes[1]: cannot read the symbolic expression 's0 +* 2': unexpected '*' at offset 4";
  for (const auto mode : {epgraph::MetaMode::recompute_all, epgraph::MetaMode::fill_unset}) {
    CHECK_THROWS_WITH(epgraph::propagate_meta(ep, mode),
                      "Node 'x' (placeholder) has a value epgraph cannot read: " + why);
    CHECK(prop_values(ep) == before);
  }
  const epgraph::MetaReport r = epgraph::propagate_meta(ep, epgraph::MetaMode::check_only);
  CHECK(prop_values(ep) == before);
  std::vector<std::string> invalid;
  for (const epgraph::MetaDifference& d : r.invalid) invalid.push_back(d.node + ": " + d.reason);
  CHECK(invalid ==
        std::vector<std::string>{
            "x: Node 'x' (placeholder) has a value epgraph cannot read: " + why,
            "sym_size_int: Cannot infer the metadata of node 'sym_size_int' "
            "(torch.ops.aten.sym_size.int): argument 'self' (node 'x') has a value epgraph cannot "
            "read: " +
                why,
            "add: Cannot infer the metadata of node 'add' (torch.ops.aten.add.Tensor): argument "
            "'self' (node 'x') has a value epgraph cannot read: " +
                why,
            "cat: Cannot infer the metadata of node 'cat' (torch.ops.aten.cat.default): element 0 "
            "of argument 'tensors' (node 'x') has a value epgraph cannot read: " +
                why,
            "slice_1: Cannot infer the metadata of node 'slice_1' (torch.ops.aten.slice.Tensor): "
            "argument 'self' (node 'x') has a value epgraph cannot read: " +
                why});
  CHECK(r.uncomputed.empty());
  CHECK(r.differences.empty());
  CHECK(r.nodes == 9);
  CHECK(r.computed == 5);
  CHECK(r.equal == 5);
}

TEST_CASE("propagate_meta: check_only names a stored value it cannot read", "[propagate_meta]") {
  epgraph_test::Program ep = prop_program();
  (void)epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all);
  epgraph::Node* relu = ep.graph().find_node("relu");
  epgraph::TensorMeta bad = *relu->meta().val.tensor();
  bad.strides[0] = prop_sym("((s0", 8);
  relu->mutable_meta().val = bad;
  const std::string before = prop_values(ep);
  const epgraph::MetaReport r = epgraph::propagate_meta(ep, epgraph::MetaMode::check_only);
  CHECK(prop_values(ep) == before);
  REQUIRE(r.invalid.size() == 2);
  CHECK(r.invalid[0].node == "relu");
  CHECK(r.invalid[0].reason ==
        "Node 'relu' (torch.ops.aten.relu.default) has a stored value epgraph cannot read: "
        "strides[0]: cannot read the symbolic expression '((s0': expected ')', found the end at "
        "offset 4");
  // cat reads relu's stored value
  CHECK(r.invalid[1].node == "cat");
  CHECK(r.differences.empty());
  // recompute_all replaces it
  (void)epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all);
  CHECK(epgraph::value_text(relu->meta().val) == "float32[2, s0{8}] stride [s0{8}, 1] offset 0");
}

// validate --meta compared torch's stride Min(16, 16*s27) (16 for s27 >= 1) with the 16 epgraph
// computes and reported a difference: sizes are compared after simplifying under the bounds.
TEST_CASE("same_value: Min/Max decided by the symbols' bounds compare equal", "[propagate_meta]") {
  const epgraph::MetaContext symbols(
      epgraph::sym::Ranges{{"s27", {1, 64}}, {"s0", {2, 64}}, {"u0", {}}});
  auto value = [](std::vector<epgraph::SymInt> strides) {
    epgraph::TensorMeta t;
    t.sizes = {epgraph::SymInt{std::int64_t{4}}, epgraph::SymInt{std::int64_t{16}}};
    t.strides = std::move(strides);
    return epgraph::NodeValue(t);
  };
  auto expr = [](std::string text) {
    return epgraph::SymInt{epgraph::SymExpr{std::move(text), std::nullopt}};
  };
  const epgraph::SymInt one{std::int64_t{1}};
  const epgraph::SymInt sixteen{std::int64_t{16}};
  CHECK(epgraph::same_value(value({expr("Min(16, 16*s27)"), one}), value({sixteen, one}), symbols));
  CHECK(epgraph::same_value(value({sixteen, one}), value({expr("Min(16, 16*s27)"), one}), symbols));
  CHECK(epgraph::same_value(value({expr("Max(1, s0)"), one}), value({expr("s0"), one}), symbols));
  // undecidable: a difference
  CHECK(!epgraph::same_value(value({expr("Min(16, 16*u0)"), one}), value({sixteen, one}), symbols));
  CHECK(!epgraph::same_value(value({expr("Max(3, s0)"), one}), value({expr("s0"), one}), symbols));
  CHECK(!epgraph::same_value(value({expr("Min(16, 16*s27)"), one}), value({expr("16*s27"), one}),
                             symbols));
  // floor divisions equal for every integer: torch keeps (2*s6 + 1)//4 for rfft(x[:, ::2])'s
  // size where epgraph computes s6//2 (validate --meta reported a difference)
  CHECK(epgraph::same_value(value({expr("((2*s0 + 1)//4) + 1"), one}),
                            value({expr("(s0//2) + 1"), one}), symbols));
  CHECK(epgraph::same_value(value({expr("(6*s0 + 6*s27 + 5)//12"), one}),
                            value({expr("(s0 + s27)//2"), one}), symbols));
  CHECK(epgraph::same_value(value({expr("(2*s0 - 1)//4"), one}), value({expr("(s0 - 1)//2"), one}),
                            symbols));
  // ... not one that differs for some integer ((2*s0 + 2)//4 is (s0 + 1)//2, not s0//2)
  CHECK(!epgraph::same_value(value({expr("(2*s0 + 2)//4"), one}), value({expr("s0//2"), one}),
                             symbols));
  CHECK(!epgraph::same_value(value({expr("(2*s0 + 1)//4"), one}), value({expr("s0//4"), one}),
                             symbols));
  CHECK(epgraph::sym::str(epgraph::sym::floordiv_normal_form(
            epgraph::sym::parse("Max(1, (4*s0 + 3)//8)"))) == "Max(1, (s0//2))");
  // hints: a missing one is no difference (torch writes none for a size it computed through an
  // unbacked symbol: s77 of cat([x[:u0], x[u0:]])); two different ones are
  auto hinted = [](std::string text, std::optional<std::int64_t> hint) {
    return epgraph::SymInt{epgraph::SymExpr{std::move(text), hint}};
  };
  CHECK(epgraph::same_value(value({hinted("s0", std::nullopt), one}), value({hinted("s0", 8), one}),
                            symbols));
  CHECK(epgraph::same_value(value({hinted("s0", 8), one}), value({hinted("s0", std::nullopt), one}),
                            symbols));
  CHECK(epgraph::same_value(value({hinted("s0", 8), one}), value({hinted("s0", 8), one}), symbols));
  CHECK(
      !epgraph::same_value(value({hinted("s0", 8), one}), value({hinted("s0", 9), one}), symbols));
}

TEST_CASE("propagate_meta: check_only tells a wrong node from one epgraph cannot compute",
          "[propagate_meta]") {
  // A bad einsum equation is wrong whatever epgraph can do (torch's meta refuses it): it goes to
  // `invalid`. A size epgraph cannot read, or an op without a rule, goes to `uncomputed`.
  epgraph_test::Program ep = prop_program();
  (void)epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all);
  epgraph::Graph& g = ep.graph();
  epgraph::Node* relu = g.find_node("relu");
  epgraph::Node* bad = nullptr;
  epgraph::Node* norule = nullptr;
  {
    const auto at = g.inserting_after(relu);
    bad = g.call_function("torch.ops.aten.einsum.default",
                          {"ij,jk->ik", epgraph::Argument(epgraph::ArgumentList{relu})}, {},
                          "einsum");
    norule = g.call_function("torch.ops.aten.logcumsumexp.default", {relu, 1}, {}, "lcse");
  }
  bad->mutable_meta().val = relu->meta().val;
  norule->mutable_meta().val = relu->meta().val;
  const std::string before = prop_values(ep);
  const epgraph::MetaReport r = epgraph::propagate_meta(ep, epgraph::MetaMode::check_only);
  REQUIRE(r.invalid.size() == 1);
  CHECK(r.invalid[0].node == "einsum");
  CHECK(r.invalid[0].reason ==
        "Cannot infer the metadata of node 'einsum' (torch.ops.aten.einsum.default): einsum(): "
        "fewer operands were provided than specified in the equation");
  REQUIRE(r.uncomputed.size() == 1);
  CHECK(r.uncomputed[0].node == "lcse");
  CHECK(r.differences.empty());
  CHECK(r.nodes == 11);
  CHECK(r.computed == 9);
  CHECK(prop_values(ep) == before);
  // the two kinds of error are told apart by type
  CHECK_THROWS_AS(epgraph::infer_meta(*norule), epgraph::unsupported_meta_error);
  try {
    (void)epgraph::infer_meta(*bad);
    FAIL("einsum with a bad equation was accepted");
  } catch (const epgraph::unsupported_meta_error&) {
    FAIL("a refusal was reported as unsupported");
  } catch (const epgraph::value_error&) {
  }
  // recompute_all throws the refusal and changes nothing
  CHECK_THROWS_WITH(epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all),
                    r.invalid[0].reason);
  CHECK(prop_values(ep) == before);
}

TEST_CASE("propagate_meta: data-dependent sizes and values are new unbacked symbols",
          "[propagate_meta]") {
  // nonzero / argwhere / item had no rule. FakeTensorMode gives nonzero a new unbacked size u<k>
  // (column-major strides [1, u<k>]) shared by every nonzero of the same input, item a new
  // unbacked value; an elementwise op of the result gets strides [1, Max(1, u<k>)].
  auto g = std::make_unique<epgraph::Graph>();
  auto tensor = [&](const char* name, epgraph::dtype type, std::vector<epgraph::SymInt> sizes,
                    std::vector<epgraph::SymInt> strides) {
    return prop_placeholder(*g, name, type, std::move(sizes), std::move(strides));
  };
  using I = std::int64_t;
  epgraph::Node* x = tensor("x", epgraph::dtype::float32, {I{3}, I{4}}, {I{4}, I{1}});
  epgraph::Node* k = tensor("k", epgraph::dtype::int64, {I{2}}, {I{1}});
  epgraph::Node* b = tensor("b", epgraph::dtype::bool_, {}, {});
  epgraph::Node* nz = g->call_function("torch.ops.aten.nonzero.default", {x}, {}, "nonzero");
  epgraph::Node* aw = g->call_function("torch.ops.aten.argwhere.default", {x}, {}, "argwhere");
  epgraph::Node* add = g->call_function("torch.ops.aten.add.Tensor", {aw, 1}, {}, "add");
  epgraph::Node* sum = g->call_function("torch.ops.aten.sum.default", {k}, {}, "sum_1");
  epgraph::Node* item = g->call_function("torch.ops.aten.item.default", {sum}, {}, "item");
  epgraph::Node* zeros =
      g->call_function("torch.ops.aten.zeros.default",
                       {epgraph::Argument(epgraph::ArgumentList{item})}, {}, "zeros");
  epgraph::Node* flag =
      g->call_function("torch.ops.aten._local_scalar_dense.default", {b}, {}, "flag");
  g->output({nz, add, zeros});
  epgraph_test::Program ep =
      prop_user_program(std::move(g), {"x", "k", "b"}, {"nonzero", "add", "zeros"});
  const epgraph::MetaReport r = epgraph::propagate_meta(ep, epgraph::MetaMode::fill_unset);
  CHECK(r.computed == 7);
  CHECK(epgraph::value_text(nz->meta().val) == "int64[u0, 2] stride [1, u0] offset 0");
  CHECK(epgraph::value_text(aw->meta().val) == "int64[u0, 2] stride [1, u0] offset 0");
  CHECK(epgraph::value_text(add->meta().val) == "int64[u0, 2] stride [1, Max(1, u0)] offset 0");
  CHECK(epgraph::value_text(item->meta().val) == "SymInt u1");
  CHECK(epgraph::value_text(zeros->meta().val) == "float32[u1] stride [1] offset 0");
  CHECK(epgraph::value_text(flag->meta().val) == "SymBool Eq(u2, 1)");
  // the new symbols' bounds, as torch records them: nonzero's at most the 12 elements of x
  const std::vector<epgraph::RangeConstraint> expected{
      {"u0", 0, 12}, {"u1", std::nullopt, std::nullopt}, {"u2", 0, 1}};
  CHECK(ep.metadata().range_constraints == expected);
  // checked against itself, the symbols are the stored ones: nothing differs
  const std::string before = prop_values(ep);
  const epgraph::MetaReport check = epgraph::propagate_meta(ep, epgraph::MetaMode::check_only);
  CHECK(check.equal == 7);
  CHECK(check.differences.empty());
  CHECK(prop_values(ep) == before);
  // a stored symbol of another name is kept, and a second nonzero of x shares it
  epgraph::TensorMeta stored = *nz->meta().val.tensor();
  stored.sizes[0] = epgraph::SymExpr{"Symbol('u7', integer=True)", std::nullopt};
  stored.strides[1] = stored.sizes[0];
  nz->mutable_meta().val = stored;
  (void)epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all);
  CHECK(epgraph::value_text(aw->meta().val) == "int64[u7, 2] stride [1, u7] offset 0");
  CHECK(epgraph::value_text(add->meta().val) == "int64[u7, 2] stride [1, Max(1, u7)] offset 0");
  CHECK(ep.metadata().range_constraints == expected);
  // item of a tensor of two elements is refused, as torch refuses it
  item->set_args({k});
  CHECK_THROWS_WITH(epgraph::infer_meta(*item),
                    "Cannot infer the metadata of node 'item' (torch.ops.aten.item.default): a "
                    "Tensor with 2 elements cannot be converted to Scalar");
  // strong guarantee: nonzero makes a new symbol, then item fails; the values and the range
  // constraints are as before
  prop_unset_all(ep);
  ep.metadata().range_constraints.clear();
  const std::string unset = prop_values(ep);
  CHECK_THROWS_AS(epgraph::propagate_meta(ep, epgraph::MetaMode::fill_unset), epgraph::value_error);
  CHECK(prop_values(ep) == unset);
  CHECK(ep.metadata().range_constraints.empty());
}

// torch.export of `n = k.item(); torch._check(n >= 0); torch._check(n <= x.shape[0]);
// y = x[:n]; y * 2` (x: [s77, 4], s77 in [2, 64]) stores y as [u0, 4]; epgraph computed
// [Min(s77, u0), 4] because the asserted u0 <= s77 was not used (its check mode reported slice_1
// and mul as differing from torch).
TEST_CASE("propagate_meta: an asserted relation between symbols decides the slice's size",
          "[propagate_meta]") {
  auto g = std::make_unique<epgraph::Graph>();
  using I = std::int64_t;
  const epgraph::SymInt s77 = prop_sym("Symbol('s77', positive=True, integer=True)", 8);
  epgraph::Node* x = prop_placeholder(*g, "x", epgraph::dtype::float32, {s77, I{4}}, {I{4}, I{1}});
  epgraph::Node* k = prop_placeholder(*g, "k", epgraph::dtype::int64, {}, {});
  epgraph::Node* size =
      g->call_function("torch.ops.aten.sym_size.int", {x, 0}, {}, "sym_size_int_1");
  epgraph::Node* item = g->call_function("torch.ops.aten.item.default", {k}, {}, "item");
  epgraph::Node* ge = g->call_function("operator.ge", {item, 0}, {}, "ge_1");
  (void)g->call_function("torch.ops.aten._assert_scalar.default", {ge, "u0 >= 0"}, {},
                         "_assert_scalar_default");
  epgraph::Node* le = g->call_function("operator.le", {item, size}, {}, "le_2");
  epgraph::Node* check = g->call_function("torch.ops.aten._assert_scalar.default",
                                          {le, "u0 <= s77"}, {}, "_assert_scalar_default_2");
  epgraph::Node* sl = g->call_function("torch.ops.aten.slice.Tensor",
                                       {x, 0, epgraph::Argument(), item}, {}, "slice_1");
  epgraph::Node* mul = g->call_function("torch.ops.aten.mul.Tensor", {sl, 2}, {}, "mul");
  g->output({mul});
  epgraph_test::Program ep = prop_user_program(std::move(g), {"x", "k"}, {"mul"});
  ep.metadata().range_constraints = {epgraph::RangeConstraint{"u0", 0, 64},
                                     epgraph::RangeConstraint{"s77", 2, 64}};
  const epgraph::MetaReport r = epgraph::propagate_meta(ep, epgraph::MetaMode::fill_unset);
  CHECK(r.computed == 8);
  CHECK(epgraph::value_text(item->meta().val) == "SymInt u0");
  CHECK(epgraph::value_text(le->meta().val) == "SymBool u0 <= s77");
  CHECK(epgraph::value_text(sl->meta().val) == "float32[u0, 4] stride [4, 1] offset 0");
  CHECK(epgraph::value_text(mul->meta().val) == "float32[u0, 4] stride [4, 1] offset 0");

  // Without the assertion the relation is unknown: Min(s77, u0), as before.
  g = nullptr;
  ep.graph().erase_node(check);
  prop_unset_all(ep);
  ep.metadata().range_constraints = {epgraph::RangeConstraint{"u0", 0, 64},
                                     epgraph::RangeConstraint{"s77", 2, 64}};
  (void)epgraph::propagate_meta(ep, epgraph::MetaMode::fill_unset);
  CHECK(epgraph::value_text(sl->meta().val) == "float32[Min(s77, u0), 4] stride [4, 1] offset 0");
}

TEST_CASE("propagate_meta: an asserted equality replaces the unbacked symbol in every value",
          "[propagate_meta]") {
  // torch._check(n == x.shape[0]): torch's ShapeEnv solves Eq(u0, s77) for u0 and prints every
  // SymInt through the replacement, so the file has s77 for item, for the `u0 >= 2` asserted
  // before the equality and for every size made from item; the equality itself is True. epgraph
  // kept u0, and recompute-meta wrote a file torch refuses ("expected no unbacked symbols").
  auto g = std::make_unique<epgraph::Graph>();
  using I = std::int64_t;
  const epgraph::SymInt s77 = prop_sym("Symbol('s77', positive=True, integer=True)", 8);
  epgraph::Node* x = prop_placeholder(*g, "x", epgraph::dtype::float32, {s77, I{3}}, {I{3}, I{1}});
  epgraph::Node* k = prop_placeholder(*g, "k", epgraph::dtype::int64, {}, {});
  epgraph::Node* size =
      g->call_function("torch.ops.aten.sym_size.int", {x, 0}, {}, "sym_size_int_1");
  epgraph::Node* item = g->call_function("torch.ops.aten.item.default", {k}, {}, "item");
  epgraph::Node* ge = g->call_function("operator.ge", {item, 2}, {}, "ge");
  (void)g->call_function("torch.ops.aten._assert_scalar.default", {ge, "u0 >= 2"}, {},
                         "_assert_scalar_default");
  epgraph::Node* eq = g->call_function("operator.eq", {item, size}, {}, "eq_1");
  (void)g->call_function("torch.ops.aten._assert_scalar.default", {eq, "Eq(u0, s77)"}, {},
                         "_assert_scalar_default_1");
  epgraph::Node* zeros = g->call_function(
      "torch.ops.aten.zeros.default",
      epgraph::ArgumentList{epgraph::Argument(std::vector<epgraph::Argument>{item})}, {}, "zeros");
  epgraph::Node* view = g->call_function(
      "torch.ops.aten.view.default", {zeros, std::vector<epgraph::Argument>{-1, 1}}, {}, "view");
  epgraph::Node* mul = g->call_function("torch.ops.aten.mul.Tensor", {view, x}, {}, "mul");
  epgraph::Node* times = g->call_function("operator.mul", {item, 3}, {}, "mul_1");
  g->output({mul});
  epgraph_test::Program ep = prop_user_program(std::move(g), {"x", "k"}, {"mul"});
  ep.metadata().range_constraints = {epgraph::RangeConstraint{"s77", 2, 64}};
  const epgraph::MetaReport r = epgraph::propagate_meta(ep, epgraph::MetaMode::fill_unset);
  CHECK(r.computed == 10);
  CHECK(epgraph::value_text(item->meta().val) == "SymInt s77");
  CHECK(epgraph::value_text(ge->meta().val) == "SymBool s77 >= 2");  // not folded by the range
  CHECK(epgraph::value_text(eq->meta().val) == "SymBool True");
  CHECK(epgraph::value_text(zeros->meta().val) == "float32[s77] stride [1] offset 0");
  CHECK(epgraph::value_text(view->meta().val) == "float32[s77, 1] stride [1, 1] offset 0");
  // sizes computed through u0 have no hint, as in torch's file (its SymNode keeps the hint it was
  // made with), the broadcast of view's [u0, 1] with x's [s77, 3] too
  CHECK(epgraph::value_text(mul->meta().val) == "float32[s77, 3] stride [3, 1] offset 0");
  CHECK(epgraph::value_text(times->meta().val) == "SymInt 3*s77");
  // u0 is gone from every value, so it is not added to range_constraints either
  REQUIRE(ep.metadata().range_constraints.size() == 1);
  CHECK(ep.metadata().range_constraints[0].symbol == "s77");
  // the values torch wrote (the ones just computed) check as equal
  const epgraph::MetaReport check = epgraph::propagate_meta(ep, epgraph::MetaMode::check_only);
  CHECK(check.equal == 10);
  CHECK(check.differences.empty());

  // Eq(u0, u1) between two unbacked symbols solves for neither (torch keeps both): no replacement
  epgraph::sym::Ranges ranges;
  const epgraph::sym::Expr u0 = epgraph::sym::parse("u0");
  const epgraph::sym::Expr u1 = epgraph::sym::parse("u1");
  CHECK(epgraph::sym::add_axiom(ranges, epgraph::sym::eq(u0, u1)));
  CHECK(ranges.replacements.empty());
}

TEST_CASE("propagate_meta: an item's stored value shows the replacement torch made",
          "[propagate_meta]") {
  // torch._check(n - 1 == x.shape[0]): torch solves Eq(u0, s77 + 1), writes s77 + 1 for item,
  // and its graph keeps a vacuous eq(item, item) for the assert, so the stored value is all
  // that is left of the equality. validate --meta reported 4 differences; with n == 2*x a view
  // of the zeros(n) was refused ("view size is not compatible"): u0 was not known to be even.
  auto g = std::make_unique<epgraph::Graph>();
  using I = std::int64_t;
  const std::string s77 = "Symbol('s77', positive=True, integer=True)";
  epgraph::Node* x =
      prop_placeholder(*g, "x", epgraph::dtype::float32, {prop_sym(s77, 4), I{6}}, {I{6}, I{1}});
  epgraph::Node* t = prop_placeholder(*g, "t", epgraph::dtype::int64, {}, {});
  epgraph::Node* u = prop_placeholder(*g, "u", epgraph::dtype::int64, {}, {});
  epgraph::Node* item = g->call_function("torch.ops.aten.item.default", {t}, {}, "item");
  epgraph::Node* eq = g->call_function("operator.eq", {item, item}, {}, "eq_1");
  (void)g->call_function("torch.ops.aten._assert_scalar.default",
                         {eq, "Runtime assertion failed for expression Eq(u0, s77 + 1)"}, {},
                         "_assert_scalar_default");
  epgraph::Node* ones = g->call_function(
      "torch.ops.aten.ones.default",
      epgraph::ArgumentList{epgraph::Argument(std::vector<epgraph::Argument>{item})}, {}, "ones");
  epgraph::Node* sl = g->call_function("torch.ops.aten.slice.Tensor",
                                       {ones, 0, 1, std::numeric_limits<I>::max()}, {}, "slice_1");
  epgraph::Node* item2 = g->call_function("torch.ops.aten.item.default", {u}, {}, "item_1");
  epgraph::Node* zeros = g->call_function(
      "torch.ops.aten.zeros.default",
      epgraph::ArgumentList{epgraph::Argument(std::vector<epgraph::Argument>{item2})}, {}, "zeros");
  epgraph::Node* view = g->call_function(
      "torch.ops.aten.view.default", {zeros, std::vector<epgraph::Argument>{2, -1}}, {}, "view");
  // torch.sym_min / torch.sym_max, & and torch.sym_not on SymInts and SymBools
  epgraph::Node* size = g->call_function("torch.ops.aten.sym_size.int", {x, 0}, {}, "sym_size");
  epgraph::Node* mn = g->call_function("torch.sym_min", {size, 16}, {}, "sym_min");
  epgraph::Node* mx = g->call_function("torch.sym_max", {size, 1}, {}, "sym_max");
  epgraph::Node* ge = g->call_function("operator.ge", {size, 3}, {}, "ge");
  epgraph::Node* le = g->call_function("operator.le", {size, 9}, {}, "le");
  epgraph::Node* both = g->call_function("operator.and_", {ge, le}, {}, "and_");
  epgraph::Node* either = g->call_function("operator.or_", {ge, false}, {}, "or_");
  epgraph::Node* no = g->call_function("torch.sym_not", {ge}, {}, "sym_not");
  g->output({sl, view});
  epgraph_test::Program ep = prop_user_program(std::move(g), {"x", "t", "u"}, {"slice_1", "view"});
  ep.metadata().range_constraints = {epgraph::RangeConstraint{"s77", 2, 64}};
  // the values torch wrote
  const epgraph::SymInt s77_1 = epgraph::SymExpr{"Add(" + s77 + ", Integer(1))", std::nullopt};
  const epgraph::SymInt two_s77 = epgraph::SymExpr{"Mul(Integer(2), " + s77 + ")", std::nullopt};
  const epgraph::SymInt s77_nohint = epgraph::SymExpr{s77, std::nullopt};
  auto meta = [](std::vector<epgraph::SymInt> sizes, std::vector<epgraph::SymInt> strides,
                 epgraph::SymInt offset) {
    epgraph::TensorMeta m;
    m.sizes = std::move(sizes);
    m.strides = std::move(strides);
    m.storage_offset = std::move(offset);
    return m;
  };
  item->mutable_meta().val = epgraph::SymIntValue{s77_1};
  eq->mutable_meta().val = epgraph::SymBoolValue{true};
  ones->mutable_meta().val = meta({s77_1}, {I{1}}, I{0});
  sl->mutable_meta().val = meta({s77_nohint}, {I{1}}, I{1});
  item2->mutable_meta().val = epgraph::SymIntValue{two_s77};
  zeros->mutable_meta().val = meta({two_s77}, {I{1}}, I{0});
  view->mutable_meta().val = meta({I{2}, s77_nohint}, {s77_nohint, I{1}}, I{0});
  const epgraph::MetaReport check = epgraph::propagate_meta(ep, epgraph::MetaMode::check_only);
  CHECK(check.invalid.empty());
  CHECK(check.uncomputed.empty());
  CHECK(check.equal == 8);         // the 7 values stored here, and the assert's None
  std::vector<std::string> unset;  // the others differ only in being unset
  for (const epgraph::MetaDifference& d : check.differences) {
    CHECK(!d.stored.has_value());
    unset.push_back(d.node);
  }
  CHECK(unset == std::vector<std::string>{"sym_size", "sym_min", "sym_max", "ge", "le", "and_",
                                          "or_", "sym_not"});
  const epgraph::MetaReport r = epgraph::propagate_meta(ep, epgraph::MetaMode::recompute_all);
  CHECK(r.differences.size() == 8);  // only the unset values changed
  CHECK(epgraph::value_text(item->meta().val) == "SymInt s77 + 1");
  CHECK(epgraph::value_text(sl->meta().val) == "float32[s77] stride [1] offset 1");
  CHECK(epgraph::value_text(view->meta().val) == "float32[2, s77] stride [s77, 1] offset 0");
  CHECK(epgraph::value_text(mn->meta().val) == "SymInt Min(16, s77){4}");
  CHECK(epgraph::value_text(mx->meta().val) == "SymInt s77{4}");  // Max(1, s77), s77 positive
  // sympy sorts And's arguments when it reads them; the order written does not matter
  CHECK(epgraph::value_text(both->meta().val) == "SymBool (s77 <= 9) & (s77 >= 3)");
  CHECK(epgraph::value_text(either->meta().val) == "SymBool s77 >= 3");
  CHECK(epgraph::value_text(no->meta().val) == "SymBool s77 < 3");
  // no unbacked symbol is left for range_constraints
  REQUIRE(ep.metadata().range_constraints.size() == 1);
}

TEST_CASE("propagate_meta: where(condition), an empty nonzero, and a symbol two inputs claim",
          "[propagate_meta]") {
  auto g = std::make_unique<epgraph::Graph>();
  auto tensor = [&](const char* name, std::vector<epgraph::SymInt> sizes,
                    std::vector<epgraph::SymInt> strides) {
    return prop_placeholder(*g, name, epgraph::dtype::float32, std::move(sizes),
                            std::move(strides));
  };
  using I = std::int64_t;
  epgraph::Node* x = tensor("x", {I{3}, I{4}}, {I{4}, I{1}});
  epgraph::Node* y = tensor("y", {I{5}}, {I{1}});
  epgraph::Node* e = tensor("e", {I{0}, I{3}}, {I{3}, I{1}});
  epgraph::Node* nx = g->call_function("torch.ops.aten.nonzero.default", {x}, {}, "nx");
  epgraph::Node* wh = g->call_function("torch.ops.aten.where.default", {x}, {}, "wh");
  epgraph::Node* ny = g->call_function("torch.ops.aten.nonzero.default", {y}, {}, "ny");
  epgraph::Node* ne = g->call_function("torch.ops.aten.nonzero.default", {e}, {}, "ne");
  g->output({nx, ny, ne});
  epgraph_test::Program ep = prop_user_program(std::move(g), {"x", "y", "e"}, {"nx", "ny", "ne"});
  (void)epgraph::propagate_meta(ep, epgraph::MetaMode::fill_unset);
  // where(x) is nonzero(x, as_tuple=True): the columns of nonzero's result, sharing its u0
  CHECK(epgraph::value_text(wh->meta().val) ==
        "(int64[u0] stride [1] offset 0, int64[u0] stride [1] offset u0)");
  CHECK(epgraph::value_text(ny->meta().val) == "int64[u1, 1] stride [1, u1] offset 0");
  // a statically empty input has no symbol: torch returns 0 rows
  CHECK(epgraph::value_text(ne->meta().val) == "int64[0, 2] stride [1, 0] offset 0");
  // ny's stored value claims nx's symbol: not reused for another input, so a difference
  epgraph::TensorMeta claimed = *ny->meta().val.tensor();
  claimed.sizes[0] = epgraph::SymExpr{"Symbol('u0', integer=True)", std::nullopt};
  claimed.strides[1] = claimed.sizes[0];
  ny->mutable_meta().val = claimed;
  const epgraph::MetaReport r = epgraph::propagate_meta(ep, epgraph::MetaMode::check_only);
  REQUIRE(r.differences.size() == 1);
  CHECK(r.differences[0].node == "ny");
  CHECK(epgraph::value_text(r.differences[0].computed) == "int64[u1, 1] stride [1, u1] offset 0");
}

TEST_CASE("same_value: SymFloat expressions compare parsed, a SymBool constant its folded form",
          "[propagate_meta]") {
  // validate --meta reported "stored: SymFloat 2*zuf0 computed: SymFloat 2*zuf0" (texts compared)
  // and "stored: SymBool True computed: SymBool True" (a constant against an expression).
  const epgraph::MetaContext symbols;
  auto f = [](const char* text) {
    return epgraph::NodeValue(epgraph::SymFloatValue{epgraph::SymExpr{text, std::nullopt}});
  };
  CHECK(epgraph::same_value(f("Mul(Float('2.0', precision=53), Symbol('zuf0'))"),
                            f("Mul(Integer(2), Symbol('zuf0'))"), symbols));
  CHECK(!epgraph::same_value(f("Mul(Float('3.0', precision=53), Symbol('zuf0'))"),
                             f("Mul(Integer(2), Symbol('zuf0'))"), symbols));
  const epgraph::NodeValue truth(epgraph::SymBoolValue{true});
  const epgraph::NodeValue folded(epgraph::SymBoolValue{epgraph::SymExpr{
      "LessThan(Piecewise(ExprCondPair(Integer(1), Equality(Symbol('u0', integer=True), "
      "Integer(1))), ExprCondPair(Integer(0), true)), Integer(1))",
      std::nullopt}});
  CHECK(epgraph::same_value(truth, folded, symbols));
  CHECK(epgraph::same_value(folded, truth, symbols));
  CHECK(!epgraph::same_value(epgraph::NodeValue(epgraph::SymBoolValue{false}), folded, symbols));
}
