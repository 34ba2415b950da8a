// Tests for operator schemas (schema.hpp), the registry (registry.hpp, aten_schemas.hpp), checked
// calls (Graph::check_call) and normalized arguments (bind.hpp).
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <epgraph/epgraph.hpp>
#include <iostream>
#include <string>
#include <vector>

#include "support/program_builders.hpp"
#include "support/snapshot.hpp"

using epgraph::Argument;
using epgraph::ArgumentList;
using epgraph::FunctionSchema;
using epgraph::Node;
using epgraph::parse_schema;
using epgraph::SchemaType;
using epgraph_test::Program;
using epgraph_test::tensor;

namespace {
using K = SchemaType::Kind;
constexpr const char* index_copy_schema =
    "aten::index_copy(Tensor self, int dim, Tensor index, Tensor source) -> Tensor";
}  // namespace

TEST_CASE("parse_schema: every aten/prims schema of torch 2.13 prints back as torch printed it",
          "[schema]") {
  std::size_t aten = 0, prims = 0, mutable_ops = 0;
  for (const char* text : epgraph::detail::aten_schema_texts) {
    const FunctionSchema s = parse_schema(text);
    INFO(text);
    REQUIRE(s.str() == text);
    (s.op_namespace() == "aten" ? aten : prims) += 1;
    mutable_ops += s.is_mutable() ? 1 : 0;
  }
  std::cout << "epgraph registry: " << epgraph::aten_schema_count << " schemas of torch "
            << epgraph::aten_schemas_torch_version << " (" << aten << " aten::, " << prims
            << " prims::, " << mutable_ops << " mutating)\n";
  CHECK(epgraph::aten_schemas_torch_version == std::string_view("2.13.0"));
  CHECK(epgraph::aten_schema_count == 3880);
  CHECK(aten == 3754);
  CHECK(prims == 126);
  CHECK(epgraph::global_registry().size() >= 3880);
}

TEST_CASE("parse_schema: parts of a schema", "[schema]") {
  const FunctionSchema add =
      parse_schema("aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  CHECK(add.name == "aten::add");
  CHECK(add.overload_name == "Tensor");
  CHECK(add.qualified_name() == "aten::add.Tensor");
  CHECK(add.target() == "torch.ops.aten.add.Tensor");
  REQUIRE(add.arguments.size() == 3);
  CHECK(add.arguments[0].name == "self");
  CHECK(add.arguments[0].type.kind == K::Tensor);
  CHECK_FALSE(add.arguments[1].kwarg_only);
  CHECK(add.arguments[2].kwarg_only);
  CHECK(add.arguments[2].type.kind == K::Scalar);
  CHECK(add.arguments[2].default_value == std::optional<std::string>("1"));
  CHECK_FALSE(add.is_mutable());

  const FunctionSchema copy_ = parse_schema(
      "aten::index_copy_(Tensor(a!) self, int dim, Tensor index, Tensor source) -> Tensor(a!)");
  CHECK(copy_.is_mutable());
  CHECK(copy_.arguments[0].type.alias == "a!");
  CHECK(copy_.target() == "torch.ops.aten.index_copy_.default");

  const FunctionSchema conv = parse_schema(
      "aten::convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] "
      "padding, SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> "
      "Tensor");
  CHECK(conv.arguments[2].type.kind == K::Optional);
  CHECK(conv.arguments[2].type.elements[0].kind == K::Tensor);
  CHECK(conv.arguments[3].type.kind == K::List);
  CHECK(conv.arguments[3].type.elements[0].kind == K::SymInt);
  CHECK(conv.arguments[3].type.fixed_size == -1);

  const FunctionSchema maxp = parse_schema(
      "aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, "
      "int[2] dilation=1, bool ceil_mode=False) -> Tensor");
  CHECK(maxp.arguments[1].type.fixed_size == 2);
  CHECK(epgraph::default_argument(maxp.arguments[3]) == Argument(ArgumentList{0, 0}));
  CHECK(epgraph::default_argument(maxp.arguments[2]) == Argument(ArgumentList{}));
  CHECK(epgraph::default_argument(maxp.arguments[5]) == Argument(false));

  const FunctionSchema mx = parse_schema(
      "aten::max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)");
  REQUIRE(mx.returns.size() == 2);
  CHECK(mx.returns[0].name == "values");
  CHECK(mx.returns[1].name == "indices");

  const FunctionSchema idx =
      parse_schema("aten::index.Tensor(Tensor self, Tensor?[] indices) -> Tensor");
  CHECK(idx.arguments[1].type.str() == "Tensor?[]");
  CHECK(idx.arguments[1].type.kind == K::List);
  CHECK(idx.arguments[1].type.elements[0].kind == K::Optional);

  const FunctionSchema split = parse_schema(
      "aten::split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]");
  CHECK(split.returns[0].type.kind == K::List);
  CHECK(split.returns[0].type.elements[0].alias == "a");
  CHECK(split.arguments[0].type.alias == "a -> *");

  const FunctionSchema einsum = parse_schema("aten::einsum.sublist(Tensor a, ...) -> Tensor");
  CHECK(einsum.is_vararg);
  CHECK(einsum.str() == "aten::einsum.sublist(Tensor a, ...) -> Tensor");

  const FunctionSchema full = parse_schema(
      "aten::full(SymInt[] size, Scalar fill_value, *, ScalarType? dtype=None, Layout? "
      "layout=None, Device? device=None, bool? pin_memory=None) -> Tensor");
  CHECK(full.arguments[2].type.str() == "ScalarType?");
  CHECK(full.arguments[4].type.elements[0].kind == K::Device);
  CHECK(epgraph::default_argument(full.arguments[2]).is_none());

  const FunctionSchema s2 =
      parse_schema("aten::split.str(str self, str? separator=None, int max=-1) -> str[]");
  CHECK(epgraph::default_argument(s2.arguments[2]) == Argument(-1));
  const FunctionSchema norm = parse_schema(
      "aten::layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? "
      "bias=None, float eps=1.0000000000000001e-05, bool cudnn_enable=True) -> Tensor");
  CHECK(epgraph::default_argument(norm.arguments[4]) == Argument(1e-05));
  const FunctionSchema strip =
      parse_schema("aten::strip(str self, str chars=\" \\n\\t\\f\\v\") -> str");
  CHECK(epgraph::default_argument(strip.arguments[1]) == Argument(" \n\t\f\v"));
}

TEST_CASE("parse_schema: malformed text is refused with the offset and the reason", "[schema]") {
  CHECK_THROWS_WITH(parse_schema("index_copy(Tensor self) -> Tensor"),
                    "Cannot parse operator schema 'index_copy(Tensor self) -> Tensor' at offset "
                    "10: the name has no namespace ('ns::op')");
  CHECK_THROWS_WITH(parse_schema("my::op(Tensor self) Tensor"),
                    "Cannot parse operator schema 'my::op(Tensor self) Tensor' at offset 20: "
                    "expected '->' after the argument list");
  CHECK_THROWS_WITH(parse_schema("my::op(Tensor) -> Tensor"),
                    "Cannot parse operator schema 'my::op(Tensor) -> Tensor' at offset 13: "
                    "expected an argument name");
  CHECK_THROWS_WITH(parse_schema("my::op(Tensor x, int x) -> Tensor"),
                    "Cannot parse operator schema 'my::op(Tensor x, int x) -> Tensor' at offset "
                    "22: argument 'x' is declared twice");
  CHECK_THROWS_WITH(parse_schema("my::op(Tensor x, *, *, int y) -> Tensor"),
                    "Cannot parse operator schema 'my::op(Tensor x, *, *, int y) -> Tensor' at "
                    "offset 21: a second '*'");
  CHECK_THROWS_AS(parse_schema("my::op(int[x] y) -> Tensor"), epgraph::value_error);
  CHECK_THROWS_AS(parse_schema("my::op(str s=\"abc) -> Tensor"), epgraph::value_error);
  CHECK_THROWS_AS(parse_schema("my::op(Tensor x) -> Tensor trailing junk"), epgraph::value_error);
}

TEST_CASE("schema_name_of_target: FX targets to registry keys", "[schema]") {
  CHECK(epgraph::schema_name_of_target("torch.ops.aten.add.Tensor") == "aten::add.Tensor");
  CHECK(epgraph::schema_name_of_target("torch.ops.aten.index_copy.default") == "aten::index_copy");
  CHECK(epgraph::schema_name_of_target("torch.ops.my_ns.my_op.default") == "my_ns::my_op");
  CHECK(epgraph::schema_name_of_target("operator.getitem").empty());
  CHECK(epgraph::schema_name_of_target("torch.ops.higher_order.cond").empty());
  CHECK(epgraph::schema_name_of_target("torch.ops.aten.add.Tensor.extra").empty());
}

TEST_CASE("OperatorRegistry: user schemas, conflicts, lookups by target", "[schema][registry]") {
  epgraph::OperatorRegistry r;
  const FunctionSchema& s =
      r.register_schema("my_ns::my_op(Tensor x, *, float alpha=1.0) -> Tensor");
  CHECK(&r.register_schema("my_ns::my_op(Tensor x, *, float alpha=1.0) -> Tensor") == &s);
  CHECK_THROWS_WITH(r.register_schema("my_ns::my_op(Tensor x) -> Tensor"),
                    "Operator 'my_ns::my_op' is already registered with schema "
                    "'my_ns::my_op(Tensor x, *, float alpha=1.0) -> Tensor', not "
                    "'my_ns::my_op(Tensor x) -> Tensor'");
  CHECK(r.size() == 1);
  CHECK(r.find_target("torch.ops.my_ns.my_op.default") == &s);
  CHECK(r.find("my_ns::my_op") == &s);
  CHECK(r.find_target("torch.ops.my_ns.my_op.other") == nullptr);
  CHECK(r.find_target("torch.ops.aten.add.Tensor") == nullptr);  // not in this registry
  epgraph::register_aten_schemas(r);
  CHECK(r.size() == 3881);
  const FunctionSchema* ic = r.find_target("torch.ops.aten.index_copy.default");
  REQUIRE(ic != nullptr);
  CHECK(ic->str() == index_copy_schema);
  CHECK(r.qualified_names().front() == "aten::Bool.Tensor");
  CHECK(r.contains("prims::convert_element_type"));
}

namespace {
// x: float32 [2, 3]; pos: int64 [1]; a sym_size node with a SymInt value.
struct CallFixture {
  Program ep;
  Node* x;
  Node* pos;
  Node* n;
  CallFixture() {
    epgraph::Graph& g = ep.graph();
    x = epgraph_test::add_placeholder(g, "x", tensor({2, 3}));
    pos = epgraph_test::add_placeholder(g, "pos",
                                        epgraph::HostTensor::zeros(epgraph::dtype::int64, {1}));
    n = g.call_function("torch.ops.aten.sym_size.int", {x, 0});
    n->mutable_meta().val = epgraph::SymIntValue{epgraph::SymExpr{"s0", 2}};
    g.output({x});
    ep.graph_signature().input_specs = {epgraph_test::user_input("x"),
                                        epgraph_test::user_input("pos")};
    ep.graph_signature().output_specs = {epgraph_test::user_output("x")};
  }
};

// Checks that creating the call throws value_error `message` and leaves the program as it was.
void check_refused(CallFixture& f, std::string_view target, ArgumentList args,
                   epgraph::Kwargs kwargs, const std::string& message) {
  const epgraph_test::Snapshot before = epgraph_test::snapshot(f.ep);
  CHECK_THROWS_MATCHES(f.ep.graph().call_function(target, args, kwargs), epgraph::value_error,
                       Catch::Message(message));
  CHECK(epgraph_test::snapshot(f.ep) == before);
}
}  // namespace

TEST_CASE("call_function binds its arguments to the schema and refuses bad calls unchanged",
          "[schema][check]") {
  CallFixture f;
  const std::string sch = std::string("; schema: ") + index_copy_schema;
  const char* t = "torch.ops.aten.index_copy.default";
  check_refused(f, t, {f.x, 0, f.pos}, {},
                "Cannot create node 'index_copy' (torch.ops.aten.index_copy.default): missing "
                "required argument 'source'" +
                    sch);
  check_refused(f, t, {f.x, 0, f.pos, f.x, f.x}, {},
                "Cannot create node 'index_copy' (torch.ops.aten.index_copy.default): 5 "
                "positional arguments given, but it takes 4" +
                    sch);
  check_refused(f, t, {f.x, 0, f.pos, f.x}, {{"alpha", 1}},
                "Cannot create node 'index_copy' (torch.ops.aten.index_copy.default): unknown "
                "keyword argument 'alpha'" +
                    sch);
  check_refused(f, t, {f.x, 0, f.pos, f.x}, {{"dim", 1}},
                "Cannot create node 'index_copy' (torch.ops.aten.index_copy.default): argument "
                "'dim' given both by position and by keyword" +
                    sch);
  check_refused(f, t, {f.x, f.pos, f.pos, f.x}, {},
                "Cannot create node 'index_copy' (torch.ops.aten.index_copy.default): argument "
                "'dim' expects int, got node 'pos' (a tensor)" +
                    sch);
  check_refused(f, t, {f.x, 0, "3", f.x}, {},
                "Cannot create node 'index_copy' (torch.ops.aten.index_copy.default): argument "
                "'index' expects Tensor, got str '3'" +
                    sch);
  check_refused(f, t, {f.n, 0, f.pos, f.x}, {},
                "Cannot create node 'index_copy' (torch.ops.aten.index_copy.default): argument "
                "'self' expects Tensor, got node 'sym_size' (a SymInt)" +
                    sch);
  check_refused(
      f, "torch.ops.aten.sum.dim_IntList", {f.x, ArgumentList{1.5}, true}, {},
      "Cannot create node 'sum_1' (torch.ops.aten.sum.dim_IntList): argument 'dim' "
      "expects int[1]?, got a list of 1 values; schema: aten::sum.dim_IntList(Tensor self, int[1]? "
      "dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor");
  check_refused(f, "torch.ops.aten.view.default", {f.x, f.x}, {},
                "Cannot create node 'view' (torch.ops.aten.view.default): argument 'size' "
                "expects SymInt[], got node 'x' (a tensor); schema: aten::view(Tensor(a) self, "
                "SymInt[] size) -> Tensor(a)");
  check_refused(f, "torch.ops.aten._to_copy.default", {f.x, epgraph::dtype::float16}, {},
                "Cannot create node '_to_copy' (torch.ops.aten._to_copy.default): 2 positional "
                "arguments given, but it takes at most 1; schema: aten::_to_copy(Tensor self, *, "
                "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? "
                "pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> "
                "Tensor");
  check_refused(f, "torch.ops.aten._to_copy.default", {f.x}, {{"dtype", 5}},
                "Cannot create node '_to_copy' (torch.ops.aten._to_copy.default): argument "
                "'dtype' expects ScalarType?, got int 5; schema: aten::_to_copy(Tensor self, *, "
                "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? "
                "pin_memory=None, bool non_blocking=False, MemoryFormat? memory_format=None) -> "
                "Tensor");
  check_refused(f, "torch.ops.aten.cat.default", {Argument(ArgumentList{f.x, 2})}, {},
                "Cannot create node 'cat' (torch.ops.aten.cat.default): argument 'tensors' "
                "expects Tensor[], got a list of 2 values; schema: aten::cat(Tensor[] tensors, "
                "int dim=0) -> Tensor");

  // Good calls: keyword-only, optional, list, dtype, device and symbolic arguments.
  epgraph::Graph& g = f.ep.graph();
  Node* ic = g.call_function(t, {f.x, 0, f.pos, f.x});
  CHECK(ic->name() == "index_copy");
  Node* clamp = g.call_function("torch.ops.aten.clamp.default", {f.x, epgraph::none, 6.0});
  Node* sum = g.call_function("torch.ops.aten.sum.dim_IntList", {f.x, ArgumentList{1}, true});
  Node* to = g.call_function(
      "torch.ops.aten._to_copy.default", {f.x},
      {{"dtype", epgraph::dtype::float16}, {"device", epgraph::Device{"cpu", std::nullopt}}});
  Node* view = g.call_function("torch.ops.aten.view.default", {f.x, ArgumentList{f.n, 3}});
  Node* mp = g.call_function("torch.ops.aten.max_pool2d.default", {f.x, ArgumentList{2, 2}, 1});
  Node* idx =
      g.call_function("torch.ops.aten.index.Tensor", {f.x, ArgumentList{epgraph::none, f.pos}});
  Node* add = g.call_function("torch.ops.aten.add.Tensor", {f.x, f.x}, {{"alpha", 2}});
  // Found by the interop tests on torch-exported programs: torch passes two dims to `int[1]?`
  // (the N is no length check) and a complex number to a Tensor argument (a wrapped number).
  Node* mean = g.call_function("torch.ops.aten.mean.dim", {f.x, ArgumentList{0, 1}, true});
  Node* mulc = g.call_function("torch.ops.aten.mul.Tensor", {f.x, ArgumentList{1.0, 2.0}});
  Node* add1 = g.call_function("torch.ops.aten.add.Tensor", {f.x, 1});  // wrapped number
  CHECK(epgraph_test::node_names(g) ==
        std::vector<std::string>{"x", "pos", "sym_size", "index_copy", "clamp", "sum_1", "_to_copy",
                                 "view", "max_pool2d", "index", "add", "mean", "mul", "add_1",
                                 "output"});

  // normalized_arguments: which value feeds which schema argument, defaults included.
  const auto na = epgraph::normalized_arguments(*to);
  REQUIRE(na);
  CHECK(na->schema().qualified_name() == "aten::_to_copy");
  CHECK(na->size() == 7);
  CHECK(na->at(0) == Argument(f.x));
  CHECK((*na)["dtype"] == Argument(epgraph::dtype::float16));
  CHECK((*na)["layout"].is_none());
  CHECK((*na)["non_blocking"] == Argument(false));
  CHECK(na->given(1));
  CHECK_FALSE(na->given(2));
  CHECK(na->binding(1).source == epgraph::BindingSource::keyword);
  CHECK(na->binding(0).source == epgraph::BindingSource::positional);
  CHECK_THROWS_WITH((*na)["alpha"], "aten::_to_copy has no argument 'alpha'");
  const auto [args, kwargs] = na->args_kwargs();
  CHECK(args == ArgumentList{f.x});
  REQUIRE(kwargs.size() == 6);
  CHECK(kwargs[0].first == "dtype");
  CHECK(kwargs[5].first == "memory_format");

  const auto nsum = epgraph::normalized_arguments(*sum);
  REQUIRE(nsum);
  CHECK((*nsum)["keepdim"] == Argument(true));
  CHECK((*nsum)["dtype"].is_none());
  const auto nadd = epgraph::normalized_arguments(*add);
  CHECK((*nadd)["alpha"] == Argument(2));
  const auto nmp = epgraph::normalized_arguments(*mp);
  CHECK((*nmp)["stride"] == Argument(1));  // a lone int stands for int[2], kept as given
  CHECK((*nmp)["padding"] == Argument(ArgumentList{0, 0}));
  CHECK((*nmp)["dilation"] == Argument(ArgumentList{1, 1}));
  CHECK_FALSE(epgraph::normalized_arguments(*g.output_node()));
  (void)clamp;
  (void)mean;
  (void)mulc;
  (void)add1;
  (void)view;
  (void)idx;
  (void)ic;
}

// Regression (found by validating run_decompositions() of a dynamic program with torch.roll;
// interop: test_fidelity.py): torch passes a SymInt node (`mod`) to aten.add.Tensor as a wrapped
// number, and epgraph refused it ("argument 'other' expects Tensor, got node 'mod' (a SymInt)").
// SymFloat nodes go the same way. Only the operators torch wraps numbers for accept one; the rest
// (index_copy above) and lists of tensors still refuse it.
TEST_CASE("A SymInt or SymFloat node stands for a Tensor where torch wraps the number",
          "[schema][check]") {
  CallFixture f;
  epgraph::Graph& g = f.ep.graph();
  Node* half = g.call_function("_operator.truediv", {f.n, 2});
  half->mutable_meta().val = epgraph::SymFloatValue{epgraph::SymExpr{"s0/2", 1}};
  Node* add = g.call_function("torch.ops.aten.add.Tensor", {f.x, f.n});
  Node* mul = g.call_function("torch.ops.aten.mul.Tensor", {f.x, half});
  Node* sub = g.call_function("torch.ops.aten.sub.Tensor", {f.n, f.x});
  Node* pm = g.call_function("torch.ops.prims.mul.default", {f.x, f.n});
  CHECK(epgraph_test::node_names(g) == std::vector<std::string>{"x", "pos", "sym_size", "truediv",
                                                                "add", "mul", "sub", "mul_1",
                                                                "output"});
  CHECK(add->args()[1] == Argument(f.n));
  CHECK(pm->target() == "torch.ops.prims.mul.default");
  (void)mul;
  (void)sub;

  check_refused(f, "torch.ops.aten.maximum.default", {f.x, f.n}, {},
                "Cannot create node 'maximum' (torch.ops.aten.maximum.default): argument "
                "'other' expects Tensor, got node 'sym_size' (a SymInt); schema: "
                "aten::maximum(Tensor self, Tensor other) -> Tensor");
  check_refused(f, "torch.ops.aten.cat.default", {Argument(ArgumentList{f.x, f.n})}, {},
                "Cannot create node 'cat' (torch.ops.aten.cat.default): argument 'tensors' "
                "expects Tensor[], got a list of 2 values; schema: aten::cat(Tensor[] tensors, "
                "int dim=0) -> Tensor");
}

TEST_CASE("set_args and update_arg are checked too, loaders and unknown ops are not",
          "[schema][check]") {
  CallFixture f;
  epgraph::Graph& g = f.ep.graph();
  Node* relu = g.call_function("torch.ops.aten.relu.default", {f.x});
  const epgraph_test::Snapshot before = epgraph_test::snapshot(f.ep);
  CHECK_THROWS_WITH(relu->set_args({f.x, f.x}),
                    "Cannot set the arguments of node 'relu' (torch.ops.aten.relu.default): 2 "
                    "positional arguments given, but it takes 1; schema: aten::relu(Tensor self) "
                    "-> Tensor");
  CHECK_THROWS_WITH(relu->update_kwarg("inplace", true),
                    "Cannot set the arguments of node 'relu' (torch.ops.aten.relu.default): "
                    "unknown keyword argument 'inplace'; schema: aten::relu(Tensor self) -> "
                    "Tensor");
  CHECK(epgraph_test::snapshot(f.ep) == before);
  relu->update_arg(0, f.pos);
  CHECK(relu->args()[0] == Argument(f.pos));

  // Unknown operators and other targets are not checked.
  Node* mine = g.call_function("torch.ops.my_unregistered.op.default", {1, "x"});
  CHECK(mine->args().size() == 2);
  Node* gi = g.call_function("operator.getitem", {f.x, 0});
  CHECK(gi->name() == "getitem");
  CHECK(epgraph::operators_without_schema(g) ==
        std::vector<std::string>{"torch.ops.my_unregistered.op.default"});

  // With checks off (what loaders do) a call that does not bind is built; verify reports it.
  // (The fixture's s0 gets a range, or verify's rule 12 reports the sym_size node too.)
  f.ep.metadata().range_constraints = {epgraph::RangeConstraint{"s0", 2, 64}};
  g.set_schema_checks(false);
  Node* bad = g.call_function("torch.ops.aten.relu.default", {f.x, 1});
  // verify looks the schema up once per target: a second bad call of it is reported too
  Node* bad_2 = g.call_function("torch.ops.aten.relu.default", {}, {{"x", f.x}});
  g.set_schema_checks(true);
  CHECK(bad->args().size() == 2);
  CHECK_THROWS_WITH(epgraph::normalized_arguments(*bad),
                    "Node 'relu_1' (torch.ops.aten.relu.default) does not match its schema: 2 "
                    "positional arguments given, but it takes 1; schema: aten::relu(Tensor self) "
                    "-> Tensor");
  std::string bad_2_message;  // normalized_arguments' message, which verify must repeat
  try {
    (void)epgraph::normalized_arguments(*bad_2);
  } catch (const epgraph::value_error& e) {
    bad_2_message = e.what();
  }
  CHECK(bad_2_message.rfind("Node 'relu_2' (torch.ops.aten.relu.default) does not match", 0) == 0);
  try {
    epgraph::verify(f.ep);
    FAIL("verify passed");
  } catch (const epgraph::verification_error& e) {
    REQUIRE(e.violations().size() == 2);
    CHECK(e.violations()[0] ==
          "Node 'relu_1' (torch.ops.aten.relu.default) does not match its schema: 2 positional "
          "arguments given, but it takes 1; schema: aten::relu(Tensor self) -> Tensor");
    CHECK(e.violations()[1] == bad_2_message);
  }
  g.erase_node(bad_2);
  epgraph::VerifyOptions no_schemas;
  no_schemas.check_schemas = false;
  CHECK_NOTHROW(epgraph::verify(f.ep, no_schemas));
}

TEST_CASE("A user-registered schema checks calls of its op", "[schema][registry]") {
  epgraph::global_registry().register_schema(
      "epgraph_test::scale(Tensor x, *, float alpha=1.0) -> Tensor");
  CallFixture f;
  epgraph::Graph& g = f.ep.graph();
  Node* s = g.call_function("torch.ops.epgraph_test.scale.default", {f.x}, {{"alpha", 2}});
  CHECK(s->name() == "scale");
  CHECK_THROWS_WITH(g.call_function("torch.ops.epgraph_test.scale.default", {f.x, 2.0}),
                    "Cannot create node 'scale_1' (torch.ops.epgraph_test.scale.default): 2 "
                    "positional arguments given, but it takes at most 1; schema: "
                    "epgraph_test::scale(Tensor x, *, float alpha=1.0) -> Tensor");
  const auto na = epgraph::normalized_arguments(*s);
  CHECK((*na)["alpha"] == Argument(2));
  CHECK(epgraph::default_argument(na->schema().arguments[1]) == Argument(1.0));
}

TEST_CASE("NodeValue: kinds, equality, description", "[schema][value]") {
  epgraph::NodeValue unset;
  CHECK_FALSE(unset.has_value());
  CHECK(unset.describe() == "unset");
  const epgraph::TensorMeta m = epgraph::tensor_meta_of(tensor({2}));
  epgraph::NodeValue t = m;
  REQUIRE(t.tensor() != nullptr);
  CHECK(*t.tensor() == m);
  CHECK(t.describe() == "a tensor");
  epgraph::NodeValue tuple = epgraph::NodeValue::List{m, epgraph::none, m};
  REQUIRE(tuple.elements() != nullptr);
  CHECK(tuple.elements()->size() == 3);
  CHECK((*tuple.elements())[1].is_none());
  CHECK(tuple.describe() == "a tuple of 3 values");
  CHECK(tuple == epgraph::NodeValue(epgraph::NodeValue::List{m, epgraph::none, m}));
  CHECK(tuple != t);
  epgraph::NodeValue si = epgraph::SymIntValue{epgraph::SymExpr{"s0", 4}};
  CHECK(si.is_symbolic_scalar());
  CHECK(si.describe() == "a SymInt");
  CHECK(epgraph::NodeValue(epgraph::SymBoolValue{true}).describe() == "a SymBool");
  tuple.reset();
  CHECK_FALSE(tuple.has_value());
}
