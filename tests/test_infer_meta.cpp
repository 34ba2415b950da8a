// Unit tests for epgraph::infer_meta / set_inferred_meta (infer_meta.hpp): error messages,
// operator.getitem, symbolic sizes, the quantized_decomposed schemas. The agreement with torch on
// hundreds of cases is tested by tests/json/test_infer_meta.cpp.
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <cstdint>
#include <epgraph/epgraph.hpp>
#include <epgraph/passes/infer_meta.hpp>
#include <limits>
#include <string>
#include <utility>
#include <vector>

using epgraph::Argument;
using epgraph::Graph;
using epgraph::Node;
using epgraph::NodeValue;
using epgraph::SymExpr;
using epgraph::SymInt;
using epgraph::TensorMeta;
using epgraph::value_error;

namespace {

TensorMeta meta_of(epgraph::dtype d, std::vector<std::int64_t> sizes) {
  TensorMeta m;
  m.dtype = d;
  for (std::int64_t s : sizes) m.sizes.emplace_back(s);
  for (std::int64_t s : epgraph::contiguous_strides(sizes)) m.strides.emplace_back(s);
  return m;
}

// A tensor of `sizes` stored with `strides` (a permuted, sliced or broadcast layout).
TensorMeta meta_of(epgraph::dtype d, std::vector<std::int64_t> sizes,
                   std::vector<std::int64_t> strides) {
  TensorMeta m = meta_of(d, std::move(sizes));
  m.strides.assign(strides.begin(), strides.end());
  return m;
}

Node* input(Graph& g, const char* name, TensorMeta m) {
  Node* p = g.placeholder(name);
  p->mutable_meta().val = std::move(m);
  return p;
}

std::vector<SymInt> syms(std::vector<std::int64_t> v) { return {v.begin(), v.end()}; }

}  // namespace

TEST_CASE("infer_meta: an op without a rule is refused, naming node and op", "[infer_meta]") {
  Graph g;
  Node* x = input(g, "x", meta_of(epgraph::dtype::float32, {2}));
  Node* foo = g.call_function("torch.ops.aten.logcumsumexp.default", {x, 0}, {}, "foo");
  CHECK_THROWS_WITH(
      epgraph::infer_meta(*foo),
      "Cannot infer the metadata of node 'foo' (torch.ops.aten.logcumsumexp.default): "
      "epgraph has no shape rule for it; set meta().val yourself");
  Node* custom = g.call_function("torch.ops.my_ns.my_op.default", {x}, {}, "custom");
  CHECK_THROWS_WITH(epgraph::infer_meta(*custom),
                    "Cannot infer the metadata of node 'custom' (torch.ops.my_ns.my_op.default): "
                    "epgraph has no shape rule for it; set meta().val yourself");
  CHECK_THROWS_WITH(epgraph::infer_meta(*x),
                    "Cannot infer the metadata of node 'x' (placeholder x): epgraph has no shape "
                    "rule for it; set meta().val yourself");
  Node* out = g.call_function("torch.ops.aten.add.out", {x, x}, {{"out", x}}, "add_out");
  CHECK_THROWS_WITH(epgraph::infer_meta(*out),
                    "Cannot infer the metadata of node 'add_out' (torch.ops.aten.add.out): epgraph "
                    "has no shape rule for it (out= variants are not covered); set meta().val "
                    "yourself");
}

TEST_CASE("infer_meta: bad inputs are reported with node, op and reason", "[infer_meta]") {
  Graph g;
  Node* a = input(g, "a", meta_of(epgraph::dtype::float32, {2, 3}));
  Node* b = input(g, "b", meta_of(epgraph::dtype::float32, {4}));
  Node* bare = g.placeholder("bare");
  Node* add = g.call_function("torch.ops.aten.add.Tensor", {a, b}, {}, "add");
  CHECK_THROWS_AS(epgraph::infer_meta(*add), value_error);
  CHECK_THROWS_WITH(epgraph::infer_meta(*add),
                    "Cannot infer the metadata of node 'add' (torch.ops.aten.add.Tensor): shapes "
                    "[2, 3] and [4] do not broadcast");
  Node* neg = g.call_function("torch.ops.aten.neg.default", {bare}, {}, "neg");
  CHECK_THROWS_WITH(epgraph::infer_meta(*neg),
                    "Cannot infer the metadata of node 'neg' (torch.ops.aten.neg.default): "
                    "argument 'self' (node 'bare') has no tensor metadata: its meta().val is "
                    "unset");
  Node* sel = g.call_function("torch.ops.aten.select.int", {a, 0, 5}, {}, "sel");
  CHECK_THROWS_WITH(epgraph::infer_meta(*sel),
                    "Cannot infer the metadata of node 'sel' (torch.ops.aten.select.int): "
                    "select(): index 5 out of range for tensor of size [2, 3] at dimension 0");
  // narrow refuses as torch's narrow_symint does (messages checked against torch 2.13)
  const std::pair<std::vector<std::int64_t>, const char*> narrow_refusals[] = {
      {{1, 0, -1}, "narrow(): length must be non-negative."},
      {{1, 4, 1}, "start out of range (expected to be in range of [-3, 3], but got 4)"},
      {{1, -4, 1}, "start out of range (expected to be in range of [-3, 3], but got -4)"},
      {{1, 2, 2}, "start (2) + length (2) exceeds dimension size (3)."},
      {{0, -1, 2}, "start (1) + length (2) exceeds dimension size (2)."},
  };
  for (const auto& [args, message] : narrow_refusals) {
    Node* nar = g.call_function("torch.ops.aten.narrow.default", {a, args[0], args[1], args[2]});
    CHECK_THROWS_WITH(epgraph::infer_meta(*nar),
                      "Cannot infer the metadata of node '" + std::string(nar->name()) +
                          "' (torch.ops.aten.narrow.default): " + message);
  }
  Node* nar_t = g.call_function("torch.ops.aten.narrow.Tensor", {a, 0, b, 1}, {}, "nar_t");
  CHECK_THROWS_AS(epgraph::infer_meta(*nar_t), epgraph::unsupported_meta_error);
  Node* perm = g.call_function("torch.ops.aten.sum.dim_IntList", {a, Argument{5}}, {}, "s");
  CHECK_THROWS_WITH(epgraph::infer_meta(*perm),
                    "Cannot infer the metadata of node 's' (torch.ops.aten.sum.dim_IntList): "
                    "Dimension out of range (expected to be in range of [-2, 1], but got 5)");
  // A new dimension is wrapped against rank + 1 (unsqueeze, stack), as torch's maybe_wrap_dim.
  Node* unsq = g.call_function("torch.ops.aten.unsqueeze.default", {a, 3}, {}, "unsq_far");
  CHECK_THROWS_WITH(
      epgraph::infer_meta(*unsq),
      "Cannot infer the metadata of node 'unsq_far' (torch.ops.aten.unsqueeze.default): "
      "Dimension out of range (expected to be in range of [-3, 2], but got 3)");
  Node* stk = g.call_function("torch.ops.aten.stack.default", {Argument{a, a}, -4}, {}, "stk");
  CHECK_THROWS_WITH(epgraph::infer_meta(*stk),
                    "Cannot infer the metadata of node 'stk' (torch.ops.aten.stack.default): "
                    "Dimension out of range (expected to be in range of [-3, 2], but got -4)");
  CHECK(epgraph::infer_meta(*g.call_function("torch.ops.aten.unsqueeze.default", {a, -3}))
            .tensor()
            ->sizes == syms({1, 2, 3}));
  Node* view = g.call_function("torch.ops.aten.view.default", {a, Argument{5, 5}}, {}, "view");
  CHECK_THROWS_WITH(epgraph::infer_meta(*view),
                    "Cannot infer the metadata of node 'view' (torch.ops.aten.view.default): "
                    "shape '[5, 5]' is invalid for input of size 6");
  Node* mm = g.call_function("torch.ops.aten.mm.default", {a, a}, {}, "mm");
  CHECK_THROWS_WITH(epgraph::infer_meta(*mm),
                    "Cannot infer the metadata of node 'mm' (torch.ops.aten.mm.default): mat1 "
                    "and mat2 shapes cannot be multiplied (2x3 and 2x3)");
  Node* ex = g.call_function("torch.ops.aten.expand.default", {b, Argument{2, 3}}, {}, "ex");
  CHECK_THROWS_WITH(epgraph::infer_meta(*ex),
                    "Cannot infer the metadata of node 'ex' (torch.ops.aten.expand.default): The "
                    "expanded size of the tensor (3) must match the existing size (4) at "
                    "non-singleton dimension 1.  Target sizes: [2, 3].  Tensor sizes: [4]");
  Node* tv = g.call_function(
      "torch.ops.aten.view.default",
      {g.call_function("torch.ops.aten.t.default", {a}, {}, "t"), Argument{6}}, {}, "tv");
  epgraph::set_inferred_meta(*g.find_node("t"));
  CHECK_THROWS_WITH(epgraph::infer_meta(*tv),
                    "Cannot infer the metadata of node 'tv' (torch.ops.aten.view.default): view "
                    "size is not compatible with input tensor's size and stride (at least one "
                    "dimension spans across two contiguous subspaces). Use .reshape(...) "
                    "instead.");
}

TEST_CASE("infer_meta: operator.getitem returns the element of a tuple value", "[infer_meta]") {
  Graph g;
  Node* x = input(g, "x", meta_of(epgraph::dtype::bfloat16, {2, 5, 8}));
  Node* ln = g.call_function("torch.ops.aten.native_layer_norm.default",
                             {x, Argument{8}, epgraph::none, epgraph::none, 1e-5}, {}, "ln");
  epgraph::set_inferred_meta(*ln);
  REQUIRE(ln->meta().val.elements() != nullptr);
  REQUIRE(ln->meta().val.elements()->size() == 3);
  Node* mean = g.call_function("operator.getitem", {ln, 1}, {}, "mean");
  Node* last = g.call_function("operator.getitem", {ln, -1}, {}, "last");
  const NodeValue v = epgraph::infer_meta(*mean);
  REQUIRE(v.tensor() != nullptr);
  CHECK(v.tensor()->dtype == epgraph::dtype::bfloat16);
  CHECK(v.tensor()->sizes == syms({2, 5, 1}));
  CHECK(v.tensor()->strides == syms({5, 1, 1}));
  CHECK(epgraph::infer_meta(*last) == (*ln->meta().val.elements())[2]);

  Node* bad = g.call_function("operator.getitem", {ln, 3}, {}, "bad");
  CHECK_THROWS_WITH(epgraph::infer_meta(*bad),
                    "Cannot infer the metadata of node 'bad' (operator.getitem): index 3 is out of "
                    "range for the 3 values of node 'ln'");
  Node* of_tensor = g.call_function("operator.getitem", {x, 0}, {}, "of_tensor");
  CHECK_THROWS_WITH(epgraph::infer_meta(*of_tensor),
                    "Cannot infer the metadata of node 'of_tensor' (operator.getitem): node 'x' "
                    "has no tuple metadata: its meta().val is a tensor");
}

TEST_CASE("infer_meta: symbolic sizes pass through and are computed with", "[infer_meta]") {
  Graph g;
  TensorMeta m;
  m.dtype = epgraph::dtype::float32;
  m.sizes = {SymExpr{"s0", 4}, std::int64_t{8}};
  m.strides = {std::int64_t{8}, std::int64_t{1}};
  Node* x = input(g, "x", m);
  Node* relu = g.call_function("torch.ops.aten.relu.default", {x}, {}, "relu");
  const NodeValue r = epgraph::infer_meta(*relu);
  REQUIRE(r.tensor() != nullptr);
  CHECK(r.tensor()->sizes == m.sizes);
  CHECK(r.tensor()->strides == m.strides);

  Node* tr = g.call_function("torch.ops.aten.transpose.int", {x, 0, 1}, {}, "tr");
  const NodeValue t = epgraph::infer_meta(*tr);
  REQUIRE(t.tensor() != nullptr);
  CHECK(t.tensor()->sizes == std::vector<SymInt>{std::int64_t{8}, SymExpr{"s0", 4}});

  // contiguous strides of [8, s0]: the single symbol is written as sympy does
  Node* c = g.call_function("torch.ops.aten.contiguous.default", {tr}, {}, "c");
  epgraph::set_inferred_meta(*tr);
  const NodeValue cv = epgraph::infer_meta(*c);
  REQUIRE(cv.tensor() != nullptr);
  CHECK(cv.tensor()->strides == std::vector<SymInt>{SymExpr{"s0", 4}, std::int64_t{1}});

  Node* sum = g.call_function("torch.ops.aten.sum.dim_IntList", {x, Argument{1}}, {}, "sum");
  const NodeValue sv = epgraph::infer_meta(*sum);
  REQUIRE(sv.tensor() != nullptr);
  CHECK(sv.tensor()->sizes == std::vector<SymInt>{SymExpr{"s0", 4}});

  // x[1:3] on dimension s0 (hint 4): torch's guards decide 3 <= s0 by the hint
  Node* sl = g.call_function("torch.ops.aten.slice.Tensor", {x, 0, 1, 3}, {}, "sl");
  const NodeValue slv = epgraph::infer_meta(*sl);
  REQUIRE(slv.tensor() != nullptr);
  CHECK(slv.tensor()->sizes == std::vector<SymInt>{std::int64_t{2}, std::int64_t{8}});
  CHECK(slv.tensor()->strides == std::vector<SymInt>{std::int64_t{8}, std::int64_t{1}});
  CHECK(slv.tensor()->storage_offset == SymInt{std::int64_t{8}});
  // s0 (hint 4) against 3: torch's infer_size would need s0 == 3
  Node* y = input(g, "y", meta_of(epgraph::dtype::float32, {3, 8}));
  Node* add = g.call_function("torch.ops.aten.add.Tensor", {x, y}, {}, "add");
  CHECK_THROWS_WITH(epgraph::infer_meta(*add),
                    "Cannot infer the metadata of node 'add' (torch.ops.aten.add.Tensor): shapes "
                    "[s0, 8] and [3, 8] do not broadcast (their sizes s0 and 3 differ under the "
                    "symbols' ranges or hints)");
  // an unbacked u0 (no hint) against 3: torch checks u0 == 3 at run time and keeps u0
  TensorMeta mu = m;
  mu.sizes = {SymExpr{"u0", std::nullopt}, std::int64_t{8}};
  Node* xu = input(g, "xu", mu);
  Node* addu = g.call_function("torch.ops.aten.add.Tensor", {xu, y}, {}, "addu");
  const NodeValue av = epgraph::infer_meta(*addu);
  REQUIRE(av.tensor() != nullptr);
  CHECK(av.tensor()->sizes == mu.sizes);
}

// Regression: run_decompositions() of torch.roll on a dynamic program gives `add.Tensor(x, mod)`
// with `mod` a SymInt; infer_meta said "argument 'other' (node 'mod') has no tensor metadata". A
// SymInt/SymFloat node for a Tensor argument is a wrapped number, as in torch's result_type: it
// promotes across categories only (int32 + SymInt stays int32, int32 * SymFloat is float32).
TEST_CASE("infer_meta: a SymInt or SymFloat node for a Tensor argument is a wrapped number",
          "[infer_meta]") {
  Graph g;
  TensorMeta m = meta_of(epgraph::dtype::int32, {5, 3});
  m.sizes[0] = SymExpr{"s0", 5};
  m.strides[0] = std::int64_t{3};
  Node* x = input(g, "x", m);
  Node* sz = g.call_function("torch.ops.aten.sym_size.int", {x, 0}, {}, "sz");
  sz->mutable_meta().val = epgraph::SymIntValue{SymExpr{"s0", 5}};
  Node* half = g.call_function("_operator.truediv", {sz, 2}, {}, "half");
  half->mutable_meta().val = epgraph::SymFloatValue{SymExpr{"s0/2", 2}};
  Node* add = g.call_function("torch.ops.aten.add.Tensor", {x, sz}, {}, "add");
  Node* sub = g.call_function("torch.ops.aten.sub.Tensor", {sz, x}, {}, "sub");
  Node* mul = g.call_function("torch.ops.aten.mul.Tensor", {x, half}, {}, "mul");
  for (Node* n : {add, sub, mul}) {
    const NodeValue v = epgraph::infer_meta(*n);
    REQUIRE(v.tensor() != nullptr);
    CHECK(v.tensor()->dtype == (n == mul ? epgraph::dtype::float32 : epgraph::dtype::int32));
    CHECK(v.tensor()->sizes == m.sizes);
    CHECK(v.tensor()->strides == m.strides);
  }
}

// Regression: `x.to(torch.complex64) * (1.5 - 2j)` exports mul.Tensor(to, as_complex), which the
// loader keeps as the list [1.5, -2.0]; infer_meta said "argument 'other' is not a node", so
// `validate --meta` failed a program torch exported (the zoo's complex_scalar). A Python complex
// is a wrapped number of the default complex dtype, complex64, as in torch's result_type: a real
// tensor goes to its complex type (float64 -> complex128, float16 -> complex32), an integer one
// to complex64 (values checked with torch 2.13).
TEST_CASE("infer_meta: a Python complex for a Tensor or Scalar argument is a wrapped number",
          "[infer_meta]") {
  using epgraph::dtype;
  Graph g;
  const epgraph::Argument z = epgraph::ArgumentList{1.5, -2.0};
  const std::vector<std::pair<dtype, dtype>> cases = {{dtype::complex64, dtype::complex64},
                                                      {dtype::float32, dtype::complex64},
                                                      {dtype::float64, dtype::complex128},
                                                      {dtype::float16, dtype::complex32},
                                                      {dtype::int32, dtype::complex64}};
  int k = 0;
  for (const auto& [in, out] : cases) {
    const TensorMeta m = meta_of(in, {2, 3});
    const std::string name = "x" + std::to_string(k);
    Node* x = input(g, name.c_str(), m);
    for (const char* op : {"torch.ops.aten.mul.Tensor", "torch.ops.aten.add.Scalar"}) {
      Node* n = g.call_function(op, {x, z}, {}, "n" + std::to_string(k++));
      const NodeValue v = epgraph::infer_meta(*n);
      REQUIRE(v.tensor() != nullptr);
      CHECK(v.tensor()->dtype == out);
      CHECK(v.tensor()->sizes == m.sizes);
      CHECK(v.tensor()->strides == m.strides);
    }
  }
}

TEST_CASE("infer_meta: in-place ops give self's metadata", "[infer_meta]") {
  Graph g;
  TensorMeta m = meta_of(epgraph::dtype::float16, {3, 2});
  m.strides = {std::int64_t{1}, std::int64_t{3}};
  Node* x = input(g, "x", m);
  Node* y = input(g, "y", meta_of(epgraph::dtype::float32, {2}));
  Node* add_ = g.call_function("torch.ops.aten.add_.Tensor", {x, y}, {}, "add_");
  CHECK(epgraph::infer_meta(*add_) == NodeValue(m));
  Node* idx = input(g, "idx", meta_of(epgraph::dtype::int64, {1}));
  Node* ic = g.call_function("torch.ops.aten.index_copy_.default", {x, 0, idx, y}, {}, "ic");
  CHECK(epgraph::infer_meta(*ic) == NodeValue(m));
}

// PT2E with per-channel weights (XNNPACKQuantizer, is_per_channel=True) gives
// dequantize_per_channel on every weight: the list of default-IR ops without a rule. The
// values are checked against torch in infer_meta_cases.json; here the checks of torch's Meta
// functions, with their messages (torch/ao/quantization/fx/_decomposed.py).
TEST_CASE("infer_meta: quantize_per_channel and dequantize_per_channel refuse what torch refuses",
          "[infer_meta]") {
  using epgraph::dtype;
  Graph g;
  Node* w = input(g, "w", meta_of(dtype::int8, {4, 3}));
  Node* f = input(g, "f", meta_of(dtype::float32, {4, 3}));
  Node* d = input(g, "d", meta_of(dtype::float64, {4, 3}));
  Node* s = input(g, "s", meta_of(dtype::float32, {4}));
  Node* z = input(g, "z", meta_of(dtype::int64, {4}));
  const std::string dq = "torch.ops.quantized_decomposed.dequantize_per_channel.default";
  const std::string q = "torch.ops.quantized_decomposed.quantize_per_channel.default";
  auto fails = [&](const std::string& target, epgraph::ArgumentList args, const std::string& why) {
    Node* n = g.call_function(target, std::move(args), {}, "n");
    const std::string name(n->name());
    CHECK_THROWS_MATCHES(epgraph::infer_meta(*n), value_error,
                         Catch::Message("Cannot infer the metadata of node '" + name + "' (" +
                                        target + "): " + why));
  };
  fails(dq, {w, s, z, 0, -128, 127, dtype::uint8},
        "Expecting input to have dtype torch.uint8, but got dtype: torch.int8");
  fails(q, {d, s, z, 0, -128, 127, dtype::int8},
        "Expecting input to have dtype torch.float32, but got dtype: torch.float64");
  fails(dq, {w, s, z, 2, -128, 127, dtype::int8}, "Expecting axis to be < 2");
  fails(q, {f, s, z, 0, -129, 127, dtype::int8},
        "quant_min out of bounds for dtype, quant_min_lower_bound: -128 quant_min: -129");
  fails(q, {f, s, z, 0, 0, 256, dtype::uint8},
        "quant_max out of bounds for dtype, quant_max_upper_bound: 255 quant_max: 256");
  fails(q, {f, s, z, 0, 0, 1, dtype::int64}, "Unsupported dtype: torch.int64");

  // a negative axis passes (torch checks only axis < dim); float16 quantizes as float32
  Node* h = input(g, "h", meta_of(dtype::float16, {4, 3}));
  Node* ok = g.call_function(q, {h, s, z, -1, 0, 255, dtype::uint8}, {}, "ok");
  CHECK(epgraph::infer_meta(*ok) == NodeValue(meta_of(dtype::uint8, {4, 3})));
  Node* back = g.call_function(dq, {w, s, epgraph::None{}, 0, -127, 127, dtype::int8},
                               {{"out_dtype", dtype::bfloat16}}, "back");
  CHECK(epgraph::infer_meta(*back) == NodeValue(meta_of(dtype::bfloat16, {4, 3})));
}

TEST_CASE("set_inferred_meta: stores the value, leaves the node unchanged on error",
          "[infer_meta]") {
  Graph g;
  Node* x = input(g, "x", meta_of(epgraph::dtype::int32, {2, 3}));
  Node* d = g.call_function("torch.ops.aten.div.Tensor", {x, x}, {}, "d");
  NodeValue& v = epgraph::set_inferred_meta(*d);
  CHECK(&v == &d->meta().val);
  CHECK(v == NodeValue(meta_of(epgraph::dtype::float32, {2, 3})));

  Node* bad = g.call_function("torch.ops.aten.select.int", {x, 0, 7}, {}, "bad");
  bad->mutable_meta().val = epgraph::SymIntValue{std::int64_t{3}};
  CHECK_THROWS_AS(epgraph::set_inferred_meta(*bad), value_error);
  CHECK(bad->meta().val == NodeValue(epgraph::SymIntValue{std::int64_t{3}}));
}

TEST_CASE("register_quantized_decomposed_schemas: torch 2.13's eight schemas, idempotent",
          "[infer_meta][schema]") {
  epgraph::OperatorRegistry r;
  epgraph::register_quantized_decomposed_schemas(r);
  REQUIRE(r.size() == 8);
  epgraph::register_quantized_decomposed_schemas(r);
  CHECK(r.size() == 8);
  const epgraph::FunctionSchema* dqc = r.find("quantized_decomposed::dequantize_per_channel");
  REQUIRE(dqc != nullptr);
  CHECK(dqc->str() ==
        "quantized_decomposed::dequantize_per_channel(Tensor input, Tensor scales, Tensor? "
        "zero_points, int axis, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? "
        "out_dtype=None) -> Tensor");
  const epgraph::FunctionSchema* dq = r.find("quantized_decomposed::dequantize_per_tensor.tensor");
  REQUIRE(dq != nullptr);
  CHECK(dq->str() ==
        "quantized_decomposed::dequantize_per_tensor.tensor(Tensor input, Tensor scale, Tensor "
        "zero_point, int quant_min, int quant_max, ScalarType dtype, *, ScalarType? "
        "out_dtype=None) -> Tensor");
  CHECK(r.find_target("torch.ops.quantized_decomposed.quantize_per_tensor.default") != nullptr);

  epgraph::OperatorRegistry taken;
  taken.register_schema(
      "quantized_decomposed::quantize_per_tensor.tensor2(Tensor input) -> Tensor");
  CHECK_THROWS_WITH(
      epgraph::register_quantized_decomposed_schemas(taken),
      Catch::StartsWith("Operator 'quantized_decomposed::quantize_per_tensor.tensor2' "
                        "is already registered with schema"));
  CHECK(taken.size() == 1);  // nothing registered

  // infer_meta knows the ops without registration
  Graph g;
  Node* x = input(g, "x", meta_of(epgraph::dtype::float32, {4}));
  Node* q = g.call_function("torch.ops.quantized_decomposed.quantize_per_tensor.default",
                            {x, 0.5, 0, -128, 127, epgraph::dtype::int8}, {}, "q");
  const NodeValue v = epgraph::infer_meta(*q);
  REQUIRE(v.tensor() != nullptr);
  CHECK(v.tensor()->dtype == epgraph::dtype::int8);
}

TEST_CASE("infer_meta: size, stride and offset arithmetic beyond int64 is an error, not UB",
          "[infer_meta][overflow]") {
  // Strides and offsets come from files (torch's fake tensors accept any) and sizes from a
  // pass's arguments; a product or sum beyond int64 was signed overflow (UBSan: "2 *
  // 9223372036854775807 cannot be represented"). Each is now refused, naming node and op.
  constexpr std::int64_t max = std::numeric_limits<std::int64_t>::max();
  Graph g;
  TensorMeta wide = meta_of(epgraph::dtype::float32, {3});
  wide.strides = syms({max});
  Node* x = input(g, "x", wide);
  Node* sliced = g.call_function("torch.ops.aten.slice.Tensor", {x, 0, 0, 3, 2}, {}, "sliced");
  CHECK_THROWS_WITH(epgraph::infer_meta(*sliced),
                    "Cannot infer the metadata of node 'sliced' (torch.ops.aten.slice.Tensor): "
                    "the stride of the slice overflows int64 (9223372036854775807 * 2)");
  Node* selected = g.call_function("torch.ops.aten.select.int", {x, 0, 2}, {}, "selected");
  CHECK_THROWS_WITH(epgraph::infer_meta(*selected),
                    "Cannot infer the metadata of node 'selected' (torch.ops.aten.select.int): "
                    "the selected offset overflows int64 (2 * 9223372036854775807)");
  TensorMeta late = meta_of(epgraph::dtype::float32, {3});
  late.storage_offset = max;
  Node* y = input(g, "y", late);
  Node* tail = g.call_function("torch.ops.aten.select.int", {y, 0, 1}, {}, "tail");
  CHECK_THROWS_WITH(epgraph::infer_meta(*tail),
                    "Cannot infer the metadata of node 'tail' (torch.ops.aten.select.int): the "
                    "storage offset overflows int64 (9223372036854775807 + 1)");
  Node* z = input(g, "z", meta_of(epgraph::dtype::float32, {2, 3}));
  Node* viewed = g.call_function("torch.ops.aten.view.default",
                                 {z, epgraph::ArgumentList{max, std::int64_t{2}}}, {}, "viewed");
  CHECK_THROWS_WITH(epgraph::infer_meta(*viewed),
                    "Cannot infer the metadata of node 'viewed' (torch.ops.aten.view.default): "
                    "the element count of shape [9223372036854775807, 2] overflows int64 "
                    "(9223372036854775807 * 2)");
  TensorMeta big = meta_of(epgraph::dtype::float32, {2});
  big.sizes = syms({max, 2});
  big.strides = syms({2, 1});
  Node* w = input(g, "w", big);
  Node* flat = g.call_function("torch.ops.aten.flatten.using_ints", {w, 0, 1}, {}, "flat");
  CHECK_THROWS_WITH(epgraph::infer_meta(*flat),
                    "Cannot infer the metadata of node 'flat' (torch.ops.aten.flatten.using_ints): "
                    "the flattened size overflows int64 (9223372036854775807 * 2)");
  Node* unsq = g.call_function("torch.ops.aten.unsqueeze.default", {x, 0}, {}, "unsq");
  CHECK_THROWS_WITH(epgraph::infer_meta(*unsq),
                    "Cannot infer the metadata of node 'unsq' (torch.ops.aten.unsqueeze.default): "
                    "the new stride overflows int64 (3 * 9223372036854775807)");
  // In range, the same rules still compute: a slice of step max keeps one element.
  Node* one = g.call_function("torch.ops.aten.slice.Tensor", {z, 1, 0, max, max}, {}, "one");
  const NodeValue v = epgraph::infer_meta(*one);
  REQUIRE(v.tensor() != nullptr);
  CHECK(v.tensor()->sizes == syms({2, 1}));
}

// Upsampling (F.interpolate; issue 28): the output sizes and strides are checked against torch on
// the generated cases (tests/json/test_infer_meta.cpp); here the refusals, each with the message
// torch's upsample meta gives (upsample_common_check, upsample_compute_output_size).
TEST_CASE("infer_meta: upsample refuses what torch's meta refuses", "[infer_meta]") {
  Graph g;
  Node* x3 = input(g, "x3", meta_of(epgraph::dtype::float32, {3, 4, 5}));
  Node* x4 = input(g, "x4", meta_of(epgraph::dtype::float32, {2, 3, 4, 5}));
  Node* empty = input(g, "empty", meta_of(epgraph::dtype::float32, {2, 0, 4, 5}));
  const Argument scales{2.0, 2.0};
  Node* rank = g.call_function("torch.ops.aten.upsample_nearest2d.vec", {x3, epgraph::none, scales},
                               {}, "rank");
  CHECK_THROWS_WITH(epgraph::infer_meta(*rank),
                    "Cannot infer the metadata of node 'rank' "
                    "(torch.ops.aten.upsample_nearest2d.vec): It is expected input_size equals to "
                    "4, but got size 3");
  Node* three = g.call_function("torch.ops.aten.upsample_bilinear2d.default",
                                {x4, Argument{4, 4, 4}, false}, {}, "three");
  CHECK_THROWS_WITH(epgraph::infer_meta(*three),
                    "Cannot infer the metadata of node 'three' "
                    "(torch.ops.aten.upsample_bilinear2d.default): It is expected output_size "
                    "equals to 2, but got size 3");
  Node* one_scale = g.call_function("torch.ops.aten.upsample_nearest2d.vec",
                                    {x4, epgraph::none, Argument{2.0}}, {}, "one_scale");
  CHECK_THROWS_WITH(epgraph::infer_meta(*one_scale),
                    "Cannot infer the metadata of node 'one_scale' "
                    "(torch.ops.aten.upsample_nearest2d.vec): It is expected output_size equals "
                    "to 2, but got size 1");
  Node* both = g.call_function("torch.ops.aten.upsample_nearest2d.vec",
                               {x4, Argument{8, 8}, scales}, {}, "both");
  Node* neither = g.call_function("torch.ops.aten.upsample_nearest2d.vec",
                                  {x4, epgraph::none, epgraph::none}, {}, "neither");
  for (Node* n : {both, neither}) {
    CHECK_THROWS_WITH(epgraph::infer_meta(*n),
                      "Cannot infer the metadata of node '" + std::string(n->name()) +
                          "' (torch.ops.aten.upsample_nearest2d.vec): Must specify exactly one of "
                          "output_size and scale_factors");
  }
  Node* zero = g.call_function("torch.ops.aten.upsample_nearest2d.vec",
                               {x4, epgraph::none, Argument{0.2, 2.0}}, {}, "zero");
  CHECK_THROWS_WITH(epgraph::infer_meta(*zero),
                    "Cannot infer the metadata of node 'zero' "
                    "(torch.ops.aten.upsample_nearest2d.vec): Input and output sizes should be "
                    "greater than 0, but got input size [2, 3, 4, 5] and output size [0, 10]");
  Node* no_channels = g.call_function("torch.ops.aten.upsample_bicubic2d.vec",
                                      {empty, epgraph::none, false, scales}, {}, "no_channels");
  CHECK_THROWS_WITH(epgraph::infer_meta(*no_channels),
                    "Cannot infer the metadata of node 'no_channels' "
                    "(torch.ops.aten.upsample_bicubic2d.vec): Non-empty 4D data tensor expected "
                    "but got a tensor with sizes [2, 0, 4, 5]");
  // a scale computed at run time (a SymFloat node): epgraph computes with constant scales only.
  // The list is spelled ArgumentList{...}: `Argument{Argument(ratio)}` is a one-element list for
  // g++ but a copy of the node argument for clang++ (CWG 2137), which made this test differ.
  Node* ratio = g.placeholder("ratio");
  ratio->mutable_meta().val = epgraph::SymFloatValue{SymExpr{"ToFloat(s0)/4", 2}};
  Node* dynamic_scale =
      g.call_function("torch.ops.aten.upsample_linear1d.vec",
                      {x3, epgraph::none, false, Argument(epgraph::ArgumentList{Argument(ratio)})},
                      {}, "dynamic_scale");
  CHECK_THROWS_WITH(epgraph::infer_meta(*dynamic_scale),
                    "Cannot infer the metadata of node 'dynamic_scale' "
                    "(torch.ops.aten.upsample_linear1d.vec): element 0 of argument "
                    "'scale_factors' is not a constant float (node 'ratio'); epgraph computes "
                    "upsampling with constant scales only");
}

// The dynamic-H/W program of F.interpolate(x, scale_factor=1.5): torch writes
// TruncToInt(1.5*ToFloat(s0)) for the size; a symbol with a hint gets the hint's value.
TEST_CASE("infer_meta: upsample by a fractional scale of a symbolic size", "[infer_meta]") {
  Graph g;
  TensorMeta m = meta_of(epgraph::dtype::float32, {1, 2, 8, 4});
  m.sizes[2] = SymExpr{"s0", 8};
  m.strides[0] = SymExpr{"8*s0", 64};
  m.strides[1] = SymExpr{"4*s0", 32};
  Node* x = input(g, "x", m);
  Node* up = g.call_function("torch.ops.aten.upsample_nearest2d.vec",
                             {x, epgraph::none, Argument{1.5, 2.0}}, {}, "up");
  const NodeValue v = epgraph::infer_meta(*up);
  REQUIRE(v.tensor() != nullptr);
  const std::vector<SymInt>& sizes = v.tensor()->sizes;
  REQUIRE(sizes.size() == 4);
  CHECK(sizes[0] == SymInt{std::int64_t{1}});
  CHECK(sizes[3] == SymInt{std::int64_t{8}});
  const auto* h = std::get_if<SymExpr>(&sizes[2]);
  REQUIRE(h != nullptr);
  CHECK(epgraph::sym::parse(h->expr) == epgraph::sym::parse("TruncToInt(1.5*ToFloat(s0))"));
  CHECK(h->hint == std::int64_t{12});
}

// grid sampling, im2col/col2im and the pairwise distances (issue 28): values are checked against
// torch on the generated cases; here the refusals, with the messages of torch's checks (eager's
// grid_sampler checks, the im2col/col2im decompositions, meta_cdist_forward, pdist).
TEST_CASE("infer_meta: grid_sampler, im2col, col2im, cdist and pdist refuse as torch does",
          "[infer_meta]") {
  Graph g;
  const epgraph::dtype f32 = epgraph::dtype::float32;
  Node* x = input(g, "x", meta_of(f32, {2, 3, 4, 6}));
  Node* x3 = input(g, "x3", meta_of(f32, {3, 4, 6}));
  Node* grid = input(g, "grid", meta_of(f32, {2, 5, 7, 2}));
  Node* grid3 = input(g, "grid3", meta_of(f32, {2, 5, 7, 3}));
  Node* grid_b3 = input(g, "grid_b3", meta_of(f32, {3, 5, 7, 2}));
  Node* grid64 = input(g, "grid64", meta_of(epgraph::dtype::float64, {2, 5, 7, 2}));
  Node* flat = input(g, "flat", meta_of(f32, {2, 3, 0, 6}));
  auto refusal = [](Node* n) {
    try {
      (void)epgraph::infer_meta(*n);
    } catch (const value_error& e) {
      const std::string what = e.what();
      return what.substr(what.find("): ") + 3);
    }
    return std::string("no error");
  };
  auto grid_call = [&](const char* op, Node* in, Node* gr, std::int64_t mode) {
    return g.call_function(std::string("torch.ops.aten.") + op + ".default",
                           {in, gr, mode, 0, false});
  };
  CHECK(refusal(grid_call("grid_sampler_2d", x, grid_b3, 0)) ==
        "grid_sampler(): expected grid and input to have same batch size, but got input with "
        "sizes [2, 3, 4, 6] and grid with sizes [3, 5, 7, 2]");
  CHECK(refusal(grid_call("grid_sampler_2d", x, grid3, 0)) ==
        "grid_sampler(): expected grid to have size 2 in last dimension, but got grid with sizes "
        "[2, 5, 7, 3]");
  CHECK(refusal(grid_call("grid_sampler_2d", flat, grid, 0)) ==
        "grid_sampler(): expected input to have non-empty spatial dimensions, but input has "
        "sizes [2, 3, 0, 6] with dimension 2 being empty");
  CHECK(refusal(grid_call("grid_sampler_3d", x, grid, 0)) ==
        "grid_sampler(): expected 5D input and grid with same number of dimensions, but got "
        "input with sizes [2, 3, 4, 6] and grid with sizes [2, 5, 7, 2]");
  CHECK(refusal(grid_call("grid_sampler", x3, grid, 0)) ==
        "grid_sampler(): expected grid and input to have same batch size, but got input with "
        "sizes [3, 4, 6] and grid with sizes [2, 5, 7, 2]");
  CHECK(refusal(grid_call("grid_sampler_2d", x, grid64, 0)) ==
        "grid_sampler(): expected input and grid to have the same dtype, but input has float32 "
        "and grid has float64");

  auto im2col = [&](Node* in, std::vector<std::int64_t> k, std::vector<std::int64_t> d) {
    epgraph::ArgumentList kl(k.begin(), k.end()), dl(d.begin(), d.end());
    return g.call_function("torch.ops.aten.im2col.default",
                           {in, kl, dl, Argument{0, 0}, Argument{1, 1}});
  };
  CHECK(refusal(im2col(x, {2}, {1, 1})) == "im2col(): only 2D kernel supported");
  CHECK(refusal(im2col(x, {0, 2}, {1, 1})) ==
        "kernel_size should be greater than zero, but got [0, 2]");
  CHECK(refusal(im2col(x, {2, 2}, {1, 0})) ==
        "dilation should be greater than zero, but got [1, 0]");
  CHECK(refusal(im2col(input(g, "m", meta_of(f32, {3, 6})), {2, 2}, {1, 1})) ==
        "Expected 3D or 4D (batch mode) tensor for input with possible 0 batch size and non-zero "
        "dimensions, but got: (3, 6)");
  CHECK(refusal(im2col(x, {5, 2}, {1, 1})) ==
        "Given an input with spatial size (4, 6), kernel_size=[5, 2], dilation=[1, 1], "
        "padding=[0, 0], stride=[1, 1], the calculated shape of the array of sliding blocks is "
        "(0, 5), but its components must be at least one.");

  auto col2im = [&](Node* in, std::vector<std::int64_t> out) {
    epgraph::ArgumentList ol(out.begin(), out.end());
    return g.call_function("torch.ops.aten.col2im.default", {in, ol, Argument{2, 2}, Argument{1, 1},
                                                             Argument{0, 0}, Argument{2, 2}});
  };
  CHECK(refusal(col2im(input(g, "c13", meta_of(f32, {2, 13, 6})), {4, 6})) ==
        "Expected size of input's first non-batch dimension to be divisible by the product of "
        "kernel_size, but got input.shape[-2] = 13 and kernel_size=[2, 2]");
  CHECK(refusal(col2im(input(g, "c7", meta_of(f32, {2, 12, 7})), {4, 6})) ==
        "Given output_size=[4, 6], kernel_size=[2, 2], dilation=[1, 1], padding=[0, 0], "
        "stride=[2, 2], expected input.size(-1) to be 6 but got 7.");
  CHECK(refusal(col2im(input(g, "c6", meta_of(f32, {2, 12, 6})), {4})) ==
        "only 2D output_size supported");

  Node* a = input(g, "a", meta_of(f32, {5, 4}));
  Node* b3 = input(g, "b3", meta_of(f32, {6, 3}));
  Node* v = input(g, "v", meta_of(f32, {4}));
  Node* ints = input(g, "ints", meta_of(epgraph::dtype::int64, {5, 4}));
  auto cdist = [&](Node* x1, Node* x2, double p) {
    return g.call_function("torch.ops.aten._cdist_forward.default", {x1, x2, p, epgraph::none});
  };
  CHECK(refusal(cdist(a, b3, 2.0)) ==
        "X1 and X2 must have the same number of columns. X1: 4 X2: 3");
  CHECK(refusal(cdist(v, a, 2.0)) == "cdist only supports at least 2D tensors, X1 got: 1D");
  CHECK(refusal(cdist(ints, a, 2.0)) ==
        "cdist only supports floating-point dtypes, X1 got: torch.int64");
  CHECK(refusal(cdist(a, a, -1.0)) == "cdist only supports non-negative p values");

  Node* cube = input(g, "cube", meta_of(f32, {2, 5, 3}));
  CHECK(refusal(g.call_function("torch.ops.aten.pdist.default", {cube, 2.0})) ==
        "pdist only supports 2D tensors, got: 3D");
  CHECK(refusal(g.call_function("torch.ops.aten.pdist.default", {ints, 2.0})) ==
        "pdist only supports floating-point dtypes");
  TensorMeta t = meta_of(f32, {5, 3});
  t.strides = syms({1, 5});
  CHECK(
      refusal(g.call_function("torch.ops.aten._pdist_forward.default", {input(g, "t", t), 2.0})) ==
      "_pdist_forward requires contiguous input");
}

// run_decompositions() of F.interpolate(scale_factor=1.5) on a dynamic size computes the size
// with SymFloats: torch.sym_float, float arithmetic and math.trunc. Each value equals torch's
// (the texts below are torch 2.13's, for a symbol of hint 8), compared as expressions.
TEST_CASE("infer_meta: SymFloat arithmetic of Python operators, sym_float and math.trunc",
          "[infer_meta]") {
  Graph g;
  const std::string s0 = "Symbol('s0', positive=True, integer=True)";
  Node* n = g.placeholder("n");
  n->mutable_meta().val = epgraph::SymIntValue{SymExpr{s0, 8}};
  auto text = [](const NodeValue& v) {
    if (const auto* f = v.sym_float()) return std::get<SymExpr>(f->value).expr;
    return std::get<SymExpr>(v.sym_int()->value).expr;
  };
  auto same = [](const std::string& got, const std::string& torch) {
    return epgraph::sym::parse(got) == epgraph::sym::parse(torch);
  };
  Node* f = g.call_function("torch.sym_float", {n}, {}, "f");
  epgraph::set_inferred_meta(*f);
  CHECK(text(f->meta().val) == "ToFloat(" + s0 + ")");
  const std::vector<std::pair<Node*, std::string>> cases{
      {g.call_function("operator.mul", {f, 1.5}, {}, "mul"),
       "Mul(Float('1.5', precision=53), ToFloat(" + s0 + "))"},
      {g.call_function("operator.truediv", {n, 2}, {}, "div_int"),
       "IntTrueDiv(" + s0 + ", Integer(2))"},
      {g.call_function("operator.truediv", {f, 3.0}, {}, "div_float"),
       "FloatTrueDiv(ToFloat(" + s0 + "), Float('3.0', precision=53))"},
      {g.call_function("operator.add", {f, 0.25}, {}, "add"),
       "Add(ToFloat(" + s0 + "), Float('0.25', precision=53))"},
      {g.call_function("operator.sub", {2.5, n}, {}, "sub"),
       "Add(Float('2.5', precision=53), Mul(Integer(-1), ToFloat(" + s0 + ")))"},
      {g.call_function("operator.neg", {f}, {}, "neg"), "Mul(Integer(-1), ToFloat(" + s0 + "))"},
  };
  for (const auto& [node, torch_text] : cases) {
    INFO(node->name());
    const NodeValue v = epgraph::infer_meta(*node);
    REQUIRE(v.sym_float() != nullptr);
    CHECK(same(text(v), torch_text));
  }
  Node* scaled = cases[0].first;
  epgraph::set_inferred_meta(*scaled);
  Node* third = cases[1].first;
  epgraph::set_inferred_meta(*third);
  Node* trunc = g.call_function("math.trunc", {scaled}, {}, "trunc");
  epgraph::MetaContext symbols;  // a program's context knows s0's hint from its placeholders
  symbols.set_hint("s0", 8);
  const NodeValue t = epgraph::infer_meta(*trunc, symbols);
  REQUIRE(t.sym_int() != nullptr);
  CHECK(same(text(t), "TruncToInt(Mul(Float('1.5', precision=53), ToFloat(" + s0 + ")))"));
  CHECK(std::get<SymExpr>(t.sym_int()->value).hint == std::int64_t{12});
  Node* floor = g.call_function("math.floor", {g.call_function("operator.truediv", {n, 3})});
  epgraph::set_inferred_meta(*g.writable(floor->args()[0].node()));
  CHECK(same(text(epgraph::infer_meta(*floor)), "FloorToInt(IntTrueDiv(" + s0 + ", Integer(3)))"));
  // an int stays an int; a comparison of floats is not computed (named)
  CHECK(epgraph::infer_meta(*g.call_function("math.trunc", {n})) ==
        NodeValue(epgraph::SymIntValue{SymExpr{s0, 8}}));
  Node* lt = g.call_function("operator.lt", {f, 2.0}, {}, "lt");
  CHECK_THROWS_WITH(epgraph::infer_meta(*lt),
                    "Cannot infer the metadata of node 'lt' (operator.lt): epgraph computes +, -, "
                    "*, / and negation on SymFloats, not lt");
}

namespace {

// The sizes and strides of a node's inferred tensor value, as plain ints.
std::vector<std::int64_t> ints_of(const std::vector<SymInt>& v) {
  std::vector<std::int64_t> out;
  for (const SymInt& s : v) out.push_back(std::get<std::int64_t>(s));
  return out;
}

}  // namespace

TEST_CASE("infer_meta: einsum gives torch 2.13's sizes, strides and dtype", "[infer_meta]") {
  Graph g;
  const epgraph::dtype f32 = epgraph::dtype::float32;
  auto einsum = [&](const char* eq, std::vector<Node*> ops) {
    epgraph::ArgumentList l(ops.begin(), ops.end());
    Node* n = g.call_function("torch.ops.aten.einsum.default",
                              {std::string(eq), epgraph::Argument(std::move(l))});
    return epgraph::infer_meta(*n);
  };
  Node* a = input(g, "a", meta_of(f32, {2, 3}));
  Node* b = input(g, "b", meta_of(f32, {3, 4}));
  // the bmm's operands are swapped so that the output comes out contiguous
  NodeValue ki = einsum("ij,jk->ki", {a, b});
  CHECK(ints_of(ki.tensor()->sizes) == std::vector<std::int64_t>{4, 2});
  CHECK(ints_of(ki.tensor()->strides) == std::vector<std::int64_t>{2, 1});
  CHECK(ki.tensor()->dtype == f32);
  // left- and right-only dimensions interleaved in the output: a permuted bmm result
  Node* c = input(g, "c", meta_of(f32, {3, 2, 3}));
  Node* d = input(g, "d", meta_of(f32, {4, 3}));
  NodeValue aef = einsum("dfa,ed", {c, d});
  CHECK(ints_of(aef.tensor()->sizes) == std::vector<std::int64_t>{3, 4, 2});
  CHECK(ints_of(aef.tensor()->strides) == std::vector<std::int64_t>{8, 1, 4});
  // a diagonal is a view of the operand (its strides summed, its storage offset kept)
  TensorMeta sq = meta_of(f32, {3, 3});
  sq.storage_offset = std::int64_t{5};
  Node* s = input(g, "s", sq);
  NodeValue diag = einsum("ii->i", {s});
  CHECK(ints_of(diag.tensor()->sizes) == std::vector<std::int64_t>{3});
  CHECK(ints_of(diag.tensor()->strides) == std::vector<std::int64_t>{4});
  CHECK(std::get<std::int64_t>(diag.tensor()->storage_offset) == 5);
  // a lone operand summed: int32 becomes int64 as torch's sum makes it
  Node* i = input(g, "i", meta_of(epgraph::dtype::int32, {2, 3}));
  NodeValue rows = einsum("ij->i", {i});
  CHECK(ints_of(rows.tensor()->sizes) == std::vector<std::int64_t>{2});
  CHECK(rows.tensor()->dtype == epgraph::dtype::int64);
  // a pure product: the reference elementwise strides, size-1 dimensions included
  Node* p = input(g, "p", meta_of(f32, {1, 1, 1, 2}));
  Node* q = input(g, "q", meta_of(f32, {2, 1}));
  NodeValue prod = einsum("dfeb,bd->bedf", {p, q});
  CHECK(ints_of(prod.tensor()->sizes) == std::vector<std::int64_t>{2, 1, 1, 1});
  CHECK(ints_of(prod.tensor()->strides) == std::vector<std::int64_t>{1, 2, 2, 2});
}

TEST_CASE("infer_meta: einsum refuses what torch refuses, naming the node", "[infer_meta]") {
  Graph g;
  const epgraph::dtype f32 = epgraph::dtype::float32;
  Node* a = input(g, "a", meta_of(f32, {2, 3}));
  Node* b = input(g, "b", meta_of(f32, {4, 5}));
  auto call = [&](const char* eq, std::vector<Node*> ops, const char* name) {
    epgraph::ArgumentList l(ops.begin(), ops.end());
    return g.call_function("torch.ops.aten.einsum.default",
                           {std::string(eq), epgraph::Argument(std::move(l))}, {}, name);
  };
  CHECK_THROWS_WITH(epgraph::infer_meta(*call("ij,jk->ik", {a, b}, "mm")),
                    "Cannot infer the metadata of node 'mm' (torch.ops.aten.einsum.default): "
                    "einsum(): subscript j has size 4 for operand 1 which does not broadcast with "
                    "previously seen size 3");
  CHECK_THROWS_WITH(epgraph::infer_meta(*call("ij->k", {a}, "bad_out")),
                    "Cannot infer the metadata of node 'bad_out' (torch.ops.aten.einsum.default): "
                    "einsum(): output subscript k does not appear in the equation for any input "
                    "operand");
  CHECK_THROWS_WITH(epgraph::infer_meta(*call("ijk", {a}, "rank")),
                    "Cannot infer the metadata of node 'rank' (torch.ops.aten.einsum.default): "
                    "einsum(): the number of subscripts in the equation (3) does not match the "
                    "number of dimensions (2) for operand 0 and no ellipsis was given");
}

TEST_CASE("infer_meta: instance_norm is contiguous in the input's dtype", "[infer_meta]") {
  Graph g;
  TensorMeta cl = meta_of(epgraph::dtype::float32, {2, 3, 4, 5});
  cl.strides = syms({60, 1, 15, 3});  // channels-last
  Node* x = input(g, "x", cl);
  Node* h = input(g, "h", meta_of(epgraph::dtype::float16, {2, 3, 7}));
  Node* stat = input(g, "stat", meta_of(epgraph::dtype::float16, {3}));
  Node* v = input(g, "v", meta_of(epgraph::dtype::float16, {3}));
  const Argument none;
  Node* n = g.call_function("torch.ops.aten.instance_norm.default",
                            {x, none, none, none, none, true, 0.1, 1e-5, false});
  const NodeValue out = epgraph::infer_meta(*n);
  CHECK(ints_of(out.tensor()->sizes) == std::vector<std::int64_t>{2, 3, 4, 5});
  CHECK(ints_of(out.tensor()->strides) == std::vector<std::int64_t>{60, 20, 5, 1});
  CHECK(out.tensor()->dtype == epgraph::dtype::float32);
  Node* n16 = g.call_function("torch.ops.aten.instance_norm.default",
                              {h, none, none, stat, v, false, 0.1, 1e-5, false});
  const NodeValue out16 = epgraph::infer_meta(*n16);
  CHECK(ints_of(out16.tensor()->strides) == std::vector<std::int64_t>{21, 7, 1});
  CHECK(out16.tensor()->dtype == epgraph::dtype::float16);
  Node* bad = g.call_function("torch.ops.aten.instance_norm.default",
                              {h, none, none, none, none, false, 0.1, 1e-5, false}, {}, "inorm");
  CHECK_THROWS_WITH(epgraph::infer_meta(*bad),
                    "Cannot infer the metadata of node 'inorm' (torch.ops.aten.instance_norm."
                    "default): Expected running_mean and running_var to be defined when "
                    "use_input_stats is false");
}

TEST_CASE("infer_meta: pooling and padding follow suggest_memory_format on ambiguous layouts",
          "[infer_meta]") {
  Graph g;
  // [2, 3, 1, 1] with strides [3, 1, 3, 3] is contiguous and channels-last at once; torch's
  // suggest_memory_format says channels-last
  TensorMeta both = meta_of(epgraph::dtype::float32, {2, 3, 1, 1});
  both.strides = syms({3, 1, 3, 3});
  Node* x = input(g, "x", both);
  Node* pad = g.call_function("torch.ops.aten.constant_pad_nd.default",
                              {x, epgraph::Argument(epgraph::ArgumentList{1, 1, 0, 1})});
  const NodeValue padded = epgraph::infer_meta(*pad);
  CHECK(ints_of(padded.tensor()->sizes) == std::vector<std::int64_t>{2, 3, 2, 3});
  CHECK(ints_of(padded.tensor()->strides) == std::vector<std::int64_t>{18, 1, 9, 3});
  // one channel stored channels-last: the pooled output and indices keep that layout
  TensorMeta one = meta_of(epgraph::dtype::float32, {2, 1, 4, 4});
  one.strides = syms({16, 1, 4, 1});
  Node* y = input(g, "y", one);
  Node* pool = g.call_function("torch.ops.aten.max_pool2d_with_indices.default",
                               {y, epgraph::Argument(epgraph::ArgumentList{1, 1})});
  const NodeValue pooled = epgraph::infer_meta(*pool);
  REQUIRE(pooled.elements() != nullptr);
  const NodeValue::List& both_out = *pooled.elements();
  CHECK(ints_of(both_out[0].tensor()->strides) == std::vector<std::int64_t>{16, 1, 4, 1});
  CHECK(ints_of(both_out[1].tensor()->strides) == std::vector<std::int64_t>{16, 1, 4, 1});
  CHECK(both_out[1].tensor()->dtype == epgraph::dtype::int64);
}

// max_pool1d (found missing by a fresh-clone run on a torch export): the layout of torch's
// unsqueeze -> max_pool2d_with_indices -> squeeze path, and check_max_pool1d's refusals with
// torch's messages (values from torch 2.13's FakeTensorMode).
TEST_CASE("infer_meta: max_pool1d follows torch's 2-D path and refuses as torch does",
          "[infer_meta]") {
  Graph g;
  TensorMeta inner = meta_of(epgraph::dtype::float32, {2, 3, 9});
  inner.strides = syms({27, 1, 3});  // channels innermost
  Node* x = input(g, "x", inner);
  const std::string op = "torch.ops.aten.max_pool1d.default";
  Node* p = g.call_function(op, {x, Argument{3}, Argument{2}, Argument{1}}, {}, "p");
  const NodeValue v = epgraph::infer_meta(*p);
  REQUIRE(v.tensor() != nullptr);
  CHECK(v.tensor()->sizes == syms({2, 3, 5}));
  CHECK(v.tensor()->strides == syms({15, 1, 3}));  // channels stay innermost
  Node* c = input(g, "c", meta_of(epgraph::dtype::float32, {2, 3, 10}));
  Node* pc = g.call_function(op, {c, Argument{3}, Argument{2}, Argument{0}, Argument{1}, true});
  const NodeValue vc = epgraph::infer_meta(*pc);
  REQUIRE(vc.tensor() != nullptr);
  CHECK(vc.tensor()->sizes == syms({2, 3, 5}));
  CHECK(vc.tensor()->strides == syms({15, 5, 1}));
  auto refusal = [&](Node* n) {
    try {
      (void)epgraph::infer_meta(*n);
    } catch (const value_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string prefix = "Cannot infer the metadata of node '";
  Node* x4 = input(g, "x4", meta_of(epgraph::dtype::float32, {2, 3, 4, 5}));
  CHECK(refusal(g.call_function(op, {x4, Argument{3}}, {}, "rank4")) ==
        prefix + "rank4' (" + op +
            "): max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch "
            "size for input, but got:[2, 3, 4, 5]");
  CHECK(refusal(g.call_function(op, {c, Argument{3}, Argument{0}}, {}, "stride0")) ==
        prefix + "stride0' (" + op + "): max_pool1d() stride must be greater than zero, but got 0");
  CHECK(refusal(g.call_function(op, {c, Argument{3}, Argument{1}, Argument{2}}, {}, "pad2")) ==
        prefix + "pad2' (" + op +
            "): max_pool1d() padding should be at most half of kernel size, but got padding=2 "
            "and kernel_size=3");
  Node* small = input(g, "small", meta_of(epgraph::dtype::float32, {3, 2}));
  CHECK(refusal(g.call_function(op, {small, Argument{3}}, {}, "tiny")) ==
        prefix + "tiny' (" + op + "): max_pool1d() Invalid computed output size: 0");
}

TEST_CASE("infer_meta: view strides are FakeTensorMode's in size-1 dimensions", "[infer_meta]") {
  Graph g;
  // x[2,1,4,1].permute(0,2,1,3).view(1,8,1): eager's computeStride gives [8,1,1]; torch 2.13
  // exports [8,1,4] (torch._refs._reshape_view_helper), and so must epgraph.
  Node* x = input(g, "x", meta_of(epgraph::dtype::float32, {2, 4, 1, 1}, {4, 1, 4, 1}));
  for (const char* op : {"torch.ops.aten.view.default", "torch.ops.aten.reshape.default",
                         "torch.ops.aten._unsafe_view.default"}) {
    Node* v = g.call_function(op, {x, Argument{1, 8, 1}});
    const NodeValue out = epgraph::infer_meta(*v);
    CHECK(ints_of(out.tensor()->sizes) == std::vector<std::int64_t>{1, 8, 1});
    CHECK(ints_of(out.tensor()->strides) == std::vector<std::int64_t>{8, 1, 4});
  }
  // an empty tensor's view is contiguous, whatever its strides
  Node* e = input(g, "e", meta_of(epgraph::dtype::float32, {0, 3}, {1, 7}));
  CHECK(ints_of(epgraph::infer_meta(
                    *g.call_function("torch.ops.aten.view.default", {e, Argument{0, 3}}))
                    .tensor()
                    ->strides) == std::vector<std::int64_t>{3, 1});
}

TEST_CASE("infer_meta: a view eager refuses is refused, though torch's FakeTensorMode takes it",
          "[infer_meta]") {
  // Torch 2.13's FakeTensorMode views [4,1,1,3] with strides [2,2,2,8] as [2,6,1] (its collapse
  // check skips pairs with a size-1 dimension), so export writes a program eager cannot run.
  Graph g;
  Node* x = input(g, "x", meta_of(epgraph::dtype::float32, {4, 1, 1, 3}, {2, 2, 2, 8}));
  Node* v = g.call_function("torch.ops.aten.view.default", {x, Argument{2, 6, 1}}, {}, "bad_view");
  CHECK_THROWS_WITH(epgraph::infer_meta(*v),
                    "Cannot infer the metadata of node 'bad_view' (torch.ops.aten.view.default): "
                    "view size is not compatible with input tensor's size and stride (at least "
                    "one dimension spans across two contiguous subspaces). Use .reshape(...) "
                    "instead.");
  // reshape copies instead: contiguous strides
  Node* r = g.call_function("torch.ops.aten.reshape.default", {x, Argument{2, 6, 1}});
  CHECK(ints_of(epgraph::infer_meta(*r).tensor()->strides) == std::vector<std::int64_t>{6, 1, 1});
}

TEST_CASE("infer_meta: FFT, view_as_complex and unfold refuse as torch does", "[infer_meta]") {
  Graph g;
  Node* real = input(g, "real", meta_of(epgraph::dtype::float32, {4, 6}));
  Node* cplx = input(g, "cplx", meta_of(epgraph::dtype::complex64, {4, 6}));
  Node* ints = input(g, "ints", meta_of(epgraph::dtype::int32, {3, 2}));
  Node* odd = input(g, "odd", meta_of(epgraph::dtype::float32, {3, 3}));
  auto refuses = [&](const char* target, epgraph::ArgumentList args, const std::string& why) {
    Node* n = g.call_function(target, args, {}, "n");
    // (erased names stay taken, as in torch.fx: the nodes are n, n_1, ...)
    CHECK_THROWS_WITH(epgraph::infer_meta(*n), "Cannot infer the metadata of node '" +
                                                   std::string(n->name()) + "' (" +
                                                   std::string(target) + "): " + why);
    g.erase_node(n);
  };
  refuses("torch.ops.aten.fft_rfft.default", {cplx},
          "fft_rfft expects a real input tensor, but got "
          "complex64");
  refuses("torch.ops.aten.fft_irfft.default", {cplx, 0},
          "Invalid number of data points (0) "
          "specified");
  refuses("torch.ops.aten.fft_fft2.default",
          {real, epgraph::Argument(), epgraph::ArgumentList{1, -1}}, "FFT dims must be unique");
  refuses("torch.ops.aten._fft_c2r.default", {real, epgraph::ArgumentList{1}, 0, 4},
          "_fft_c2r expects a complex input, not float32");
  // stft.default: torch's checks (torch prefixes each message with the call's description)
  const std::string stft = "torch.ops.aten.stft.default";
  const epgraph::Argument none;
  Node* sig = input(g, "sig", meta_of(epgraph::dtype::float32, {2, 100}));
  Node* win9 = input(g, "win9", meta_of(epgraph::dtype::float32, {9}));
  Node* sig3 = input(g, "sig3", meta_of(epgraph::dtype::float32, {2, 3, 100}));
  Node* csig = input(g, "csig", meta_of(epgraph::dtype::complex64, {100}));
  refuses(stft.c_str(), {sig, 16, 4, none, none, false, none, none},
          "stft requires the return_complex parameter be given for real inputs, and will further "
          "require that return_complex=True in a future PyTorch release.");
  refuses(stft.c_str(), {sig3, 16, 4, none, none, false, none, true},
          "stft: expected a 1D or 2D tensor");
  refuses(stft.c_str(), {ints, 2, 1, none, none, false, none, true},
          "stft: expected a tensor of floating point or complex values");
  refuses(stft.c_str(), {sig, 200, 4, none, none, false, none, true},
          "stft: expected 0 < n_fft < 100, but got n_fft=200");
  refuses(stft.c_str(), {sig, 16, 0, none, none, false, none, true},
          "stft: expected hop_length > 0, but got hop_length=0");
  refuses(stft.c_str(), {sig, 16, 4, 17, none, false, none, true},
          "stft: expected 0 < win_length <= n_fft, but got win_length=17");
  refuses(stft.c_str(), {sig, 16, 4, 8, win9, false, none, true},
          "stft: expected a 1D window tensor of size equal to win_length=8, but got window with "
          "size [9]");
  refuses(stft.c_str(), {csig, 16, 4, none, none, false, true, true},
          "Cannot have onesided output if window or input is complex");
  // stft.center (self, n_fft, hop_length, win_length, window, center, pad_mode, normalized,
  // onesided, return_complex, align_to_window): torch._refs.stft's checks, which export runs
  const std::string stft_center = "torch.ops.aten.stft.center";
  Node* short_sig = input(g, "short_sig", meta_of(epgraph::dtype::float32, {2, 5}));
  refuses(stft_center.c_str(), {sig, 16, 4, none, none, true, "reflect", false, none, true, true},
          "stft only supports align_to_window for center = False.");
  refuses(stft_center.c_str(), {short_sig, 16, 4, none, none, true, "reflect", false, none, true},
          "Argument #4: Padding size should be less than the corresponding input dimension, but "
          "got: padding (8, 8) at dimension 2 of input [1, 2, 5]");
  refuses(stft_center.c_str(), {short_sig, 16, 4, none, none, true, "circular", false, none, true},
          "Padding value causes wrapping around more than once.");
  refuses(stft_center.c_str(), {sig, 16, 4, none, none, true, "bogus", false, none, true},
          "Unrecognised padding mode bogus");
  // istft.default (self, n_fft, hop_length, win_length, window, center, normalized, onesided,
  // length, return_complex): the checks of torch._refs.istft, which export runs. Two messages are
  // torch's C++ ones on purpose: the reference prints its device message for a real input, and
  // a tuple's repr for the two-sided frequency check (a trailing comma).
  const std::string istft = "torch.ops.aten.istft.default";
  Node* spec = input(g, "spec", meta_of(epgraph::dtype::complex64, {9, 21}));
  auto istft_refuses = [&](epgraph::ArgumentList args, const std::string& why) {
    refuses(istft.c_str(), std::move(args), why);  // (the schema's defaults fill the rest)
  };
  istft_refuses({sig, 16, 4, none, none, true, false},
                "istft requires a complex-valued input tensor matching the output from stft with "
                "return_complex=True.");
  istft_refuses({csig, 16, 4}, "istft expected a tensor with 2 or 3 dimensions, but got 1");
  istft_refuses({spec, 32, 4, none, none, true, false},
                "istft expected the frequency dimension (3rd to the last) of the input tensor to "
                "match n_fft / 2 + 1 when onesided=True, but got 9");
  istft_refuses({spec, 16, 4, none, none, true, false, false},
                "istft expected the frequency dimension (3rd to the last) of the input tensor to "
                "match n_fft when onesided=False, but got 9");
  istft_refuses({spec, 16, 20, none, none, true, false},
                "istft expected 0 < hop_length <= win_length");
  istft_refuses({spec, 16, 4, 17, none, true, false}, "istft expected 0 < win_length <= n_fft");
  istft_refuses({spec, 16, 4, none, win9, true, false},
                "Invalid window shape. window has to be 1D and length of `win_length`");
  istft_refuses({spec, 16, 4, none, none, true, false, none, none, true},
                "cannot have onesided output if window or input is complex");
  // an odd n_fft: the reference's irfft makes n_fft - 1 points, and it asserts
  istft_refuses({spec, 17, 4, none, none, true, false},
                "Expected input.size(2) == n_fft, got 16 != 17");
  refuses("torch.ops.aten.hann_window.default", {-1},
          "hann_window requires non-negative window_length, got window_length=-1");
  {  // (torch prints the dtype inside its TensorOptions)
    Node* n = g.call_function("torch.ops.aten.kaiser_window.default", {4},
                              {{"dtype", epgraph::dtype::int64}}, "n");
    CHECK_THROWS_WITH(epgraph::infer_meta(*n),
                      "Cannot infer the metadata of node '" + std::string(n->name()) +
                          "' (torch.ops.aten.kaiser_window.default): kaiser_window expects "
                          "floating point dtypes, got: int64");
    g.erase_node(n);
  }
  refuses("torch.ops.aten.view_as_complex.default", {ints},
          "view_as_complex is only supported for float, double and half tensors, but got a tensor "
          "of scalar type: int32");
  refuses("torch.ops.aten.view_as_complex.default", {odd},
          "Tensor must have a last dimension of size 2");
  refuses("torch.ops.aten.view_as_real.default", {real},
          "view_as_real is only supported for complex tensors");
  // hfft/ihfft of n dimensions, the complex views, fftfreq
  refuses("torch.ops.aten.fft_ihfft2.default", {cplx},
          "fft_ihfft2 expects a real input tensor, but got complex64");
  refuses("torch.ops.aten.fft_hfftn.default", {cplx, epgraph::ArgumentList{0}},
          "Invalid number of data points (0) specified");
  refuses("torch.ops.aten.imag.default", {real},
          "imag is not implemented for tensors with non-complex dtypes.");
  refuses("torch.ops.aten._conj.default", {real},
          "_conj expects a complex tensor, not float32 (torch.conj returns a real tensor itself "
          "without calling _conj)");
  {
    Node* n = g.call_function("torch.ops.aten.fft_rfftfreq.default", {7},
                              {{"dtype", epgraph::dtype::int64}}, "n");
    CHECK_THROWS_WITH(epgraph::infer_meta(*n),
                      "Cannot infer the metadata of node '" + std::string(n->name()) +
                          "' (torch.ops.aten.fft_rfftfreq.default): rfftfreq requires a floating "
                          "point or complex dtype");
    g.erase_node(n);
  }
  refuses("torch.ops.aten.fft_fftfreq.default", {-2},
          "Trying to create tensor with negative dimension -2: [-2]");
  refuses("torch.ops.aten.fft_fftshift.default", {real, epgraph::ArgumentList{2}},
          "Dimension out of range (expected to be in range of [-2, 1], but got 2)");
  refuses("torch.ops.aten.unfold.default", {real, 1, 7, 1},
          "maximum size for tensor at dimension 1 is 6 but size is 7");
  refuses("torch.ops.aten.unfold.default", {real, 1, 2, 0}, "step is 0 but must be > 0");
  // a symbolic batch size is computed (it was refused as "needs concrete sizes")
  TensorMeta sym = meta_of(epgraph::dtype::float32, {4, 6});
  sym.sizes[0] = SymExpr{"s0", 4};
  Node* dyn = input(g, "dyn", sym);
  Node* f = g.call_function("torch.ops.aten.fft_rfft.default", {dyn}, {}, "f");
  CHECK(epgraph::value_text(epgraph::infer_meta(*f)) ==
        "complex64[s0{4}, 4] stride [4, 1] offset 0");
  // batch dimensions whose stride order depends on unbacked symbols: data-dependent in torch,
  // so epgraph cannot compute it (the node may be right)
  TensorMeta unbacked = meta_of(epgraph::dtype::float32, {2, 3, 6});
  unbacked.sizes[0] = SymExpr{"u0", std::nullopt};
  unbacked.sizes[1] = SymExpr{"u1", std::nullopt};
  unbacked.strides[0] = SymExpr{"6*u1", std::nullopt};
  unbacked.strides[1] = std::int64_t{6};
  Node* ub = input(g, "ub", unbacked);
  Node* fu = g.call_function("torch.ops.aten.fft_rfft.default", {ub}, {}, "fu");
  CHECK_THROWS_MATCHES(epgraph::infer_meta(*fu), epgraph::unsupported_meta_error,
                       Catch::Matchers::Message(
                           "Cannot infer the metadata of node 'fu' "
                           "(torch.ops.aten.fft_rfft.default): the order of the strides 6 and 6*u1 "
                           "cannot be decided (torch's sort of them is data-dependent)"));
}

TEST_CASE("infer_meta: backward ops check their gradients against the forward op", "[infer_meta]") {
  Graph g;
  Node* x = input(g, "x", meta_of(epgraph::dtype::float32, {2, 3, 6, 6}));
  Node* grad = input(g, "grad", meta_of(epgraph::dtype::float32, {2, 3, 4, 4}));
  Node* grad16 = input(g, "grad16", meta_of(epgraph::dtype::float16, {2, 3, 3, 3}));
  Node* idx = input(g, "idx", meta_of(epgraph::dtype::int64, {2, 3, 3, 3}));
  Node* avg = g.call_function(
      "torch.ops.aten.avg_pool2d_backward.default",
      {grad, x, Argument{2, 2}, Argument{2, 2}, Argument{0, 0}, false, true, Argument()}, {},
      "avg_bw");
  CHECK_THROWS_WITH(epgraph::infer_meta(*avg),
                    "Cannot infer the metadata of node 'avg_bw' (torch.ops.aten."
                    "avg_pool2d_backward.default): argument 'grad_output' has shape [2, 3, 4, "
                    "4], but the pooling of self gives [2, 3, 3, 3]");
  Node* mx = g.call_function(
      "torch.ops.aten.max_pool2d_with_indices_backward.default",
      {grad16, x, Argument{2, 2}, Argument{2, 2}, Argument{0, 0}, Argument{1, 1}, false, idx}, {},
      "max_bw");
  CHECK_THROWS_WITH(epgraph::infer_meta(*mx),
                    "Cannot infer the metadata of node 'max_bw' (torch.ops.aten."
                    "max_pool2d_with_indices_backward.default): Expected dtype float32 for "
                    "`gradOutput` but got dtype float16");
  Node* w = input(g, "w", meta_of(epgraph::dtype::float32, {4, 3, 3, 3}));
  Node* conv =
      g.call_function("torch.ops.aten.convolution_backward.default",
                      {grad, x, w, Argument(), Argument{1, 1}, Argument{0, 0}, Argument{1, 1},
                       false, Argument{0, 0}, 1, Argument{true, true, true}},
                      {}, "conv_bw");
  CHECK_THROWS_WITH(epgraph::infer_meta(*conv),
                    "Cannot infer the metadata of node 'conv_bw' (torch.ops.aten."
                    "convolution_backward.default): bias_sizes must be given when "
                    "output_mask[2] is true");
  // the outputs output_mask leaves out are None
  conv->update_arg(10, Argument{true, false, false});
  const NodeValue out = epgraph::infer_meta(*conv);
  REQUIRE(out.elements() != nullptr);
  REQUIRE(out.elements()->size() == 3);
  CHECK(ints_of((*out.elements())[0].tensor()->sizes) == std::vector<std::int64_t>{2, 3, 6, 6});
  CHECK((*out.elements())[1].is_none());
  CHECK((*out.elements())[2].is_none());
}

TEST_CASE("infer_meta: _embedding_bag refuses what torch refuses", "[infer_meta]") {
  Graph g;
  Node* w = input(g, "w", meta_of(epgraph::dtype::float32, {10, 3}));
  Node* idx = input(g, "idx", meta_of(epgraph::dtype::int64, {8}));
  Node* fidx = input(g, "fidx", meta_of(epgraph::dtype::float32, {8}));
  Node* off = input(g, "off", meta_of(epgraph::dtype::int64, {3}));
  Node* psw = input(g, "psw", meta_of(epgraph::dtype::float32, {8}));
  const char* target = "torch.ops.aten._embedding_bag.default";
  Node* mean = g.call_function(target, {w, idx, off, false, 1, false, psw}, {}, "bag");
  CHECK_THROWS_WITH(epgraph::infer_meta(*mean),
                    "Cannot infer the metadata of node 'bag' (torch.ops.aten._embedding_bag."
                    "default): embedding_bag: per_sample_weights only supported with mode='sum'");
  Node* floats = g.call_function(target, {w, fidx, off}, {}, "bag_f");
  CHECK_THROWS_WITH(epgraph::infer_meta(*floats),
                    "Cannot infer the metadata of node 'bag_f' (torch.ops.aten._embedding_bag."
                    "default): expected indices to be long or int, got float32");
  // mode max: max_indices [bags, dim]; the sum's fast path leaves offset2bag empty
  const NodeValue mx = epgraph::infer_meta(*g.call_function(target, {w, idx, off, false, 2}));
  CHECK(ints_of((*mx.elements())[3].tensor()->sizes) == std::vector<std::int64_t>{3, 3});
  const NodeValue sum = epgraph::infer_meta(*g.call_function(target, {w, idx, off}));
  CHECK(ints_of((*sum.elements())[1].tensor()->sizes) == std::vector<std::int64_t>{0});
}
