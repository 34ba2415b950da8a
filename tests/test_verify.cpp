// Tests for validate_graph_signature and verify (include/epgraph/program/verify.hpp).
// SPDX-License-Identifier: BSD-3-Clause
#include <algorithm>
#include <catch2/catch.hpp>
#include <epgraph/program/verify.hpp>
#include <memory>
#include <string>
#include <vector>

#include "support/program_builders.hpp"
#include "support/snapshot.hpp"

using epgraph::ConstantArgument;
using epgraph::InputKind;
using epgraph::Node;
using epgraph::OutputKind;
using epgraph::validate_graph_signature;
using epgraph::verify;
using epgraph_test::Program;
using epgraph_test::tensor;
using Strings = std::vector<std::string>;

namespace {

// The violations verify() reports, or an empty list when it passes.
Strings violations(const Program& ep, epgraph::VerifyOptions options = {}) {
  try {
    verify(ep, options);
  } catch (const epgraph::verification_error& e) {
    return e.violations();
  }
  return {};
}

// A program `inputs -> output` whose graph has one placeholder per spec (in spec order) and returns
// `results`; no data.
Program program_from_specs(const std::vector<epgraph::InputSpec>& inputs,
                           const std::vector<epgraph::OutputSpec>& outputs,
                           const std::vector<std::string>& results) {
  auto g = std::make_unique<epgraph::Graph>();
  for (const auto& s : inputs) g->placeholder(s.name());
  epgraph::ArgumentList list;
  for (const auto& r : results) {
    Node* n = g->find_node(r);
    if (n == nullptr)
      n = g->call_function("torch.ops.aten.rand.default",
                           {epgraph::Argument(epgraph::ArgumentList{2})}, {}, r);
    list.push_back(n);
  }
  g->output(list);
  epgraph::ExportGraphSignature sig;
  sig.input_specs = inputs;
  sig.output_specs = outputs;
  return Program(std::move(g), std::move(sig));
}

const char* const verify_order_rule =
    "inputs must be ordered TOKEN < PARAMETER < persistent BUFFER < non-persistent BUFFER < "
    "CONSTANT_TENSOR < CUSTOM_OBJ < USER_INPUT";

}  // namespace

TEST_CASE("validate_graph_signature and verify accept the builders' programs", "[verify]") {
  for (bool tokens : {false, true}) {
    CHECK_NOTHROW(validate_graph_signature(epgraph_test::token_program(tokens)));
    CHECK(violations(epgraph_test::token_program(tokens)).empty());
  }
  for (const Program& ep :
       {epgraph_test::plain_program(), epgraph_test::params_and_buffers_program(),
        epgraph_test::constants_program(), epgraph_test::linear_batchnorm_program(),
        epgraph_test::user_input_mutation_program()}) {
    CHECK_NOTHROW(validate_graph_signature(ep));
    CHECK(violations(ep) == Strings{});
  }
}

TEST_CASE("validate_graph_signature: upstream's messages, first mismatch only", "[verify]") {
  using epgraph::runtime_error;
  SECTION("placeholder count") {
    Program ep = epgraph_test::linear_batchnorm_program();
    ep.graph_signature().input_specs.pop_back();
    CHECK_THROWS_AS(validate_graph_signature(ep), runtime_error);
    CHECK_THROWS_WITH(validate_graph_signature(ep),
                      "Graph has 8 placeholder nodes but signature has 7 input specs");
  }
  SECTION("input names, in order") {
    Program ep = epgraph_test::linear_batchnorm_program();
    std::swap(ep.graph_signature().input_specs[0], ep.graph_signature().input_specs[1]);
    CHECK_THROWS_WITH(validate_graph_signature(ep),
                      "Input node p_linear_weight does not match input spec p_linear_bias");
  }
  SECTION("no output node") {
    auto g = std::make_unique<epgraph::Graph>();
    Program ep(std::move(g), {});
    CHECK_THROWS_AS(validate_graph_signature(ep), runtime_error);
    CHECK_THROWS_WITH(validate_graph_signature(ep), "Graph has no output node");
  }
  SECTION("output node without a list of results") {
    auto g = std::make_unique<epgraph::Graph>();
    Node* x = g->placeholder("x");
    g->create_node(epgraph::OpCode::output, "output", {x});
    Program ep(std::move(g), {{epgraph_test::user_input("x")}, {}});
    CHECK_THROWS_WITH(validate_graph_signature(ep),
                      "Output node 'output' does not return a list of results");
  }
  SECTION("output count") {
    Program ep = epgraph_test::linear_batchnorm_program();
    ep.graph_signature().output_specs.push_back(epgraph_test::user_output("getitem"));
    CHECK_THROWS_WITH(validate_graph_signature(ep),
                      "Graph has 4 output nodes but signature has 5 output specs");
  }
  SECTION("output names, in order") {
    Program ep = epgraph_test::linear_batchnorm_program();
    auto& outs = ep.graph_signature().output_specs;
    std::swap(outs[2], outs[3]);
    CHECK_THROWS_WITH(validate_graph_signature(ep),
                      "Output node add does not match output spec getitem");
  }
}

TEST_CASE("validate_graph_signature: constant and None outputs", "[verify]") {
  auto g = std::make_unique<epgraph::Graph>();
  Node* x = g->placeholder("x");
  g->output({x, epgraph::none, 3, 1.5, true, "s"});
  epgraph::ExportGraphSignature sig;
  sig.input_specs = {epgraph_test::user_input("x")};
  sig.output_specs = {
      epgraph_test::user_output("x"),
      {OutputKind::USER_OUTPUT, ConstantArgument{"", epgraph::None{}}},
      {OutputKind::USER_OUTPUT, ConstantArgument{"", std::int64_t{3}}},
      {OutputKind::USER_OUTPUT, ConstantArgument{"", 1.5}},
      {OutputKind::USER_OUTPUT, ConstantArgument{"", true}},
      {OutputKind::USER_OUTPUT, ConstantArgument{"", std::string("s")}},
  };
  Program ep(std::move(g), std::move(sig));
  CHECK_NOTHROW(validate_graph_signature(ep));
  CHECK(violations(ep).empty());

  auto& outs = ep.graph_signature().output_specs;
  const auto original = outs;
  auto expect = [&](std::size_t i, epgraph::OutputSpec spec, const std::string& message) {
    outs = original;
    outs[i] = std::move(spec);
    CHECK_THROWS_AS(validate_graph_signature(ep), epgraph::runtime_error);
    CHECK_THROWS_WITH(validate_graph_signature(ep), message);
    CHECK(violations(ep) == Strings{message});
  };
  expect(2, {OutputKind::USER_OUTPUT, ConstantArgument{"", std::int64_t{4}}},
         "Output node 3 does not match output spec 4");
  expect(2, {OutputKind::USER_OUTPUT, ConstantArgument{"", 3.0}},
         "Output node 3 does not match output spec 3.0");
  expect(4, {OutputKind::USER_OUTPUT, ConstantArgument{"", std::int64_t{1}}},
         "Output node True does not match output spec 1");
  expect(1, epgraph_test::user_output("y"), "Output node None does not match output spec y");
  expect(5, {OutputKind::USER_OUTPUT, ConstantArgument{"", std::string("t")}},
         "Output node 's' does not match output spec 't'");
  expect(0, {OutputKind::USER_OUTPUT, ConstantArgument{"", epgraph::None{}}},
         "Output node x does not match output spec None");
  expect(3, {OutputKind::USER_OUTPUT, ConstantArgument{"", epgraph::None{}}},
         "Output node 1.5 does not match output spec None");
}

TEST_CASE("verify: state checks and VerifyOptions::check_state", "[verify]") {
  Program ep = epgraph_test::constants_program();
  ep.state_dict().erase("w");
  ep.state_dict().erase("pb");
  ep.state_dict().insert("npb", tensor({4}));
  ep.constants().erase("npb");
  ep.constants().insert_or_assign("lifted_tensor_0", epgraph::ScriptObject{"Foo", {}});
  ep.constants().insert_or_assign("obj", tensor({1}));
  const Strings expected = {
      "Parameter w is not in the state dict.",
      "Buffer pb is not in the state dict.",
      "Non-persistent buffer npb is in the state dict, it should not be.",
      "Non-persistent buffer npb is not in the constants dictionary.",
      "Constant tensor lifted_tensor_0 is a custom object in the constants dictionary, not a "
      "tensor.",
      "Custom object obj is a tensor in the constants dictionary, not a custom object.",
  };
  CHECK(violations(ep) == expected);
  CHECK(violations(ep, {false}).empty());

  SECTION("missing entries") {
    Program bare = epgraph_test::constants_program();
    bare.state_dict() = {};
    bare.constants() = {};
    CHECK(violations(bare) ==
          Strings{"Parameter w is not in the state dict.", "Buffer pb is not in the state dict.",
                  "Non-persistent buffer npb is not in the constants dictionary.",
                  "Constant tensor lifted_tensor_0 is not in the constants dictionary.",
                  "Custom object obj is not in the constants dictionary."});
    epgraph::VerifyOptions no_state;
    no_state.check_state = false;
    CHECK_NOTHROW(verify(bare, no_state));
  }
  SECTION("non-persistent buffer holding a custom object") {
    Program p = epgraph_test::constants_program();
    p.constants().insert_or_assign("npb", epgraph::ScriptObject{"Foo", {}});
    CHECK(violations(p) == Strings{"Non-persistent buffer npb is a custom object in the constants "
                                   "dictionary, not a tensor."});
  }
}

TEST_CASE("verify: canonical input order is checked at VerifyLevel::canonical_order",
          "[verify][order]") {
  using epgraph_test::buffer;
  using epgraph_test::parameter;
  using epgraph_test::user_input;
  epgraph::VerifyOptions strict;
  strict.check_state = false;
  strict.level = epgraph::VerifyLevel::canonical_order;
  // torch's own verifier does not look at the order: the default level passes each program and
  // input_order_departures lists what the strict level reports.
  auto departures = [&](const Program& ep) {
    CHECK(violations(ep, {false}) == Strings{});
    const Strings listed = epgraph::input_order_departures(ep.graph_signature());
    CHECK(violations(ep, strict) == listed);
    return listed;
  };
  SECTION("a parameter after a user input") {
    Program ep = program_from_specs({user_input("x"), parameter("p_w", "w")},
                                    {epgraph_test::user_output("x")}, {"x"});
    CHECK(departures(ep) ==
          Strings{std::string("Input 'p_w' (PARAMETER) comes after input 'x' (USER_INPUT): ") +
                  verify_order_rule});
  }
  SECTION("persistent after non-persistent buffers") {
    Program ep =
        program_from_specs({buffer("b_np", "np", false), buffer("b_p", "p"), buffer("b_q", "q")},
                           {epgraph_test::user_output("b_p")}, {"b_p"});
    CHECK(departures(ep) ==
          Strings{"Persistent buffers must come before non-persistent buffers: 'b_p' comes after "
                  "'b_np'",
                  "Persistent buffers must come before non-persistent buffers: 'b_q' comes after "
                  "'b_np'"});
  }
  SECTION("each kind against the highest kind before it") {
    Program ep = program_from_specs(
        {epgraph_test::constant_tensor("c", "c"),
         epgraph_test::input_token("token"),
         {InputKind::CUSTOM_OBJ, epgraph::CustomObjArgument{"obj", "Foo"}, std::string("obj")},
         parameter("p", "p")},
        {epgraph_test::user_output("c")}, {"c"});
    CHECK(departures(ep) ==
          Strings{std::string("Input 'token' (TOKEN) comes after input 'c' (CONSTANT_TENSOR): ") +
                      verify_order_rule,
                  std::string("Input 'p' (PARAMETER) comes after input 'obj' (CUSTOM_OBJ): ") +
                      verify_order_rule});
  }
  SECTION("canonical programs have no departure") {
    for (const Program& ep :
         {epgraph_test::plain_program(), epgraph_test::params_and_buffers_program(),
          epgraph_test::constants_program(), epgraph_test::linear_batchnorm_program(),
          epgraph_test::token_program(true)}) {
      CHECK(epgraph::input_order_departures(ep.graph_signature()).empty());
      CHECK(violations(ep, strict) == Strings{});
    }
  }
  SECTION("order violations come after the state checks, before output layout") {
    Program ep = program_from_specs({user_input("x"), parameter("p_w", "w")},
                                    {epgraph_test::user_output("x")}, {"x"});
    epgraph::VerifyOptions with_state = strict;
    with_state.check_state = true;
    CHECK(violations(ep, with_state) ==
          Strings{"Parameter w is not in the state dict.",
                  std::string("Input 'p_w' (PARAMETER) comes after input 'x' (USER_INPUT): ") +
                      verify_order_rule});
    CHECK(violations(ep) == Strings{"Parameter w is not in the state dict."});
  }
}

TEST_CASE("verify: a strict-mode export (constant before buffer) passes torch's level",
          "[verify][order]") {
  // The shape torch.export.export(..., strict=True) gives `x * self.gain + self.offset + self.w`
  // (../shared/cases/fidelity/strict_order.pt2): inputs PARAMETER, CONSTANT_TENSOR, BUFFER,
  // USER_INPUT. torch.export.load and torch's verifier accept it; NativeRT refuses it.
  Program ep = program_from_specs(
      {epgraph_test::parameter("p_w", "w"), epgraph_test::constant_tensor("c_gain", "gain"),
       epgraph_test::buffer("b_offset", "offset"), epgraph_test::user_input("x")},
      {epgraph_test::user_output("x")}, {"x"});
  ep.state_dict().insert("w", tensor({3}, 1.0));
  ep.state_dict().insert("offset", tensor({3}, 0.0));
  ep.constants().insert("gain", tensor({3}, 1.5));
  CHECK_NOTHROW(validate_graph_signature(ep));
  CHECK(violations(ep) == Strings{});
  const Strings expected{
      std::string("Input 'b_offset' (persistent BUFFER) comes after input 'c_gain' "
                  "(CONSTANT_TENSOR): ") +
      verify_order_rule};
  CHECK(epgraph::input_order_departures(ep.graph_signature()) == expected);
  epgraph::VerifyOptions strict;
  strict.level = epgraph::VerifyLevel::canonical_order;
  CHECK(violations(ep, strict) == expected);
  try {
    verify(ep, strict);
    FAIL("verify at canonical_order must throw");
  } catch (const epgraph::verification_error& e) {
    CHECK(std::string(e.what()) == "Exported program verification failed:\n  - " + expected[0]);
  }
}

TEST_CASE("verify: output layout and mutation targets", "[verify]") {
  using epgraph_test::buffer_mutation;
  using epgraph_test::output_token;
  using epgraph_test::user_output;
  SECTION("tokens first, then mutations, then user outputs") {
    Program ep =
        program_from_specs({epgraph_test::input_token("token"), epgraph_test::buffer("b_a", "a"),
                            epgraph_test::user_input("x")},
                           {user_output("y"), output_token("token"), buffer_mutation("b_a", "a")},
                           {"y", "token", "b_a"});
    CHECK(violations(ep, {false}) ==
          Strings{"Output token 'token' (TOKEN) comes after output 'y' (USER_OUTPUT): output "
                  "tokens must come first",
                  "Mutation output 'b_a' (BUFFER_MUTATION) comes after output 'y' (USER_OUTPUT): "
                  "mutation outputs must come right after the output tokens"});
  }
  SECTION("mutations after user outputs in a real program") {
    Program ep = epgraph_test::linear_batchnorm_program();
    Node* out = ep.graph().output_node();
    epgraph::ArgumentList results = out->args()[0].as<epgraph::ArgumentList>();
    std::rotate(results.begin(), results.begin() + 3, results.end());
    out->set_args({epgraph::Argument(results)});
    auto& specs = ep.graph_signature().output_specs;
    std::rotate(specs.begin(), specs.begin() + 3, specs.end());
    const std::string tail =
        " comes after output 'getitem' (USER_OUTPUT): mutation outputs must "
        "come right after the output tokens";
    CHECK(violations(ep) == Strings{"Mutation output 'getitem_3' (BUFFER_MUTATION)" + tail,
                                    "Mutation output 'getitem_4' (BUFFER_MUTATION)" + tail,
                                    "Mutation output 'add' (BUFFER_MUTATION)" + tail});
  }
  SECTION("targets that name nothing, and double mutations") {
    Program ep = program_from_specs(
        {epgraph_test::parameter("p_w", "w"), epgraph_test::buffer("b_a", "a"),
         epgraph_test::user_input("x")},
        {buffer_mutation("m1", "w"),
         buffer_mutation("m2", "a"),
         buffer_mutation("m3", "a"),
         {OutputKind::PARAMETER_MUTATION, epgraph::TensorArgument{"m4"}, std::string("a")},
         epgraph_test::user_input_mutation("m5", "y"),
         epgraph_test::user_input_mutation("m6", "x"),
         user_output("y"),
         {OutputKind::GRADIENT_TO_PARAMETER, epgraph::TensorArgument{"g1"}, std::string("w")},
         {OutputKind::GRADIENT_TO_USER_INPUT, epgraph::TensorArgument{"g2"}, std::string("w")}},
        {"m1", "m2", "m3", "m4", "m5", "m6", "y", "g1", "g2"});
    CHECK(
        violations(ep, {false}) ==
        Strings{"Output 'm1' (BUFFER_MUTATION) targets 'w', which is not a buffer of the signature",
                "Output 'm3' (BUFFER_MUTATION) mutates 'a', which output 'm2' already mutates",
                "Output 'm4' (PARAMETER_MUTATION) targets 'a', which is not a parameter of the "
                "signature",
                "Output 'm5' (USER_INPUT_MUTATION) targets 'y', which is not a user input of the "
                "signature",
                "Output 'g2' (GRADIENT_TO_USER_INPUT) targets 'w', which is not a user input of "
                "the signature"});
  }
}

TEST_CASE("verify: graph problems, mismatches and every violation at once", "[verify]") {
  SECTION("missing output node: lint and signature") {
    auto g = std::make_unique<epgraph::Graph>();
    g->placeholder("x");
    Program ep(std::move(g), {{epgraph_test::user_input("y")}, {}});
    CHECK(violations(ep) ==
          Strings{"Graph has no output node", "Input node x does not match input spec y"});
  }
  SECTION("placeholder count mismatch names the strays") {
    Program ep = epgraph_test::params_and_buffers_program();
    ep.graph_signature().input_specs = {epgraph_test::parameter("p_weight", "weight"),
                                        epgraph_test::buffer("b_other", "scale"),
                                        epgraph_test::user_input("z")};
    ep.graph_signature().output_specs.push_back(epgraph_test::user_output("mul"));
    CHECK(violations(ep) == Strings{"Graph has 2 placeholder nodes but signature has 3 input specs",
                                    "Placeholder b_scale has no input spec",
                                    "Input spec b_other names no placeholder",
                                    "Input spec z names no placeholder",
                                    "Graph has 1 output nodes but signature has 2 output specs"});
  }
  SECTION("the message lists everything") {
    Program ep = epgraph_test::plain_program();
    ep.graph_signature().input_specs[0].set_name("y");
    ep.graph_signature().output_specs[0].set_name("z");
    try {
      verify(ep);
      FAIL("verify did not throw");
    } catch (const epgraph::verification_error& e) {
      CHECK(std::string(e.what()) ==
            "Exported program verification failed:\n"
            "  - Input node x does not match input spec y\n"
            "  - Output node x does not match output spec z");
      CHECK(e.violations().size() == 2);
    }
    CHECK_THROWS_AS(verify(ep), epgraph::violations_error);
    CHECK_THROWS_AS(verify(ep), epgraph::runtime_error);
  }
}

TEST_CASE("verify: a call of an aten operator torch lacks is an error at every level",
          "[verify][order]") {
  // `pt2_edit validate` passed `torch.ops.aten.not_an_op.default` (and, before that was fixed,
  // only --strict refused it): operators without a schema are skipped by the schema check, and
  // torch's verifier does not resolve targets, but torch.export.load cannot load the node.
  Program ep =
      program_from_specs({epgraph_test::user_input("x")}, {epgraph_test::user_output("y")}, {"y"});
  Node* y = ep.graph().find_node("y");
  epgraph::Node* bad = nullptr;
  {
    const auto guard = ep.graph().inserting_before(y);
    bad = ep.graph().call_function("torch.ops.aten.not_an_op.default", {}, {}, "bad");
    (void)ep.graph().call_function("torch.ops.prims.not_a_prim.default", {}, {}, "bad_prim");
    (void)ep.graph().call_function("torch.ops.my_ns.my_op.default", {}, {}, "custom");
    // malformed: a packet without its overload, an overload with one part too many, no target
    (void)ep.graph().call_function("torch.ops.aten.mul", {}, {}, "packet");
    (void)ep.graph().call_function("torch.ops.aten.mul.Tensor.default", {}, {}, "extra");
    (void)ep.graph().call_function("", {}, {}, "empty");
    // verify looks each target up once: a second node of a target is judged the same way
    (void)ep.graph().call_function("torch.ops.my_ns.my_op.default", {}, {}, "custom_2");
    (void)ep.graph().call_function("torch.ops.aten.not_an_op.default", {}, {}, "bad_2");
  }
  REQUIRE(bad != nullptr);
  const Strings expected{
      "Node 'bad' calls 'torch.ops.aten.not_an_op.default', which is not an operator of "
      "torch 2.13.0 (no schema aten::not_an_op)",
      "Node 'bad_prim' calls 'torch.ops.prims.not_a_prim.default', which is not an "
      "operator of torch 2.13.0 (no schema prims::not_a_prim)",
      "Node 'packet' calls 'torch.ops.aten.mul', which is not an operator overload "
      "(torch.ops.<namespace>.<op>.<overload>)",
      "Node 'extra' calls 'torch.ops.aten.mul.Tensor.default', which is not an operator "
      "overload (torch.ops.<namespace>.<op>.<overload>)",
      "Node 'empty' has an empty target",
      "Node 'bad_2' calls 'torch.ops.aten.not_an_op.default', which is not an operator of "
      "torch 2.13.0 (no schema aten::not_an_op)"};
  epgraph::VerifyOptions strict;
  strict.check_state = false;
  strict.level = epgraph::VerifyLevel::canonical_order;
  CHECK(violations(ep, {false}) == expected);
  CHECK(violations(ep, strict) == expected);
}

TEST_CASE("verify: every symbol of a node's value is a readable one of range_constraints",
          "[verify][sym]") {
  // torch.export.load refuses a value whose expression sympy cannot read, one whose unbacked
  // symbol has no range ("vr must not be None"), and a symbol whose hint is outside its range
  // ("65 not in VR[2, 64]"); `validate` passed all three. A backed symbol without a range
  // torch 2.13 loads (the message said it refuses it); verify still reports it, truthfully.
  Program ep =
      program_from_specs({epgraph_test::user_input("x")}, {epgraph_test::user_output("y")}, {"y"});
  epgraph::TensorMeta m;
  m.sizes = {epgraph::SymExpr{"Symbol('s0', positive=True, integer=True)", 4}, std::int64_t{3}};
  m.strides = {std::int64_t{3}, std::int64_t{1}};
  ep.graph().find_node("x")->mutable_meta().val = m;
  ep.graph().find_node("y")->mutable_meta().val =
      epgraph::SymIntValue{epgraph::SymExpr{"2*s1 + u3", std::nullopt}};
  epgraph::VerifyOptions options;
  options.check_state = false;
  CHECK(violations(ep, options) ==
        Strings{"Node 'x': sizes[0]: the symbol 's0' is not a key of range_constraints "
                "(torch.export.load accepts it, but torch.export writes a range for every "
                "symbol it makes: the program was edited without one)",
                "Node 'y': SymInt: the symbol 's1' is not a key of range_constraints "
                "(torch.export.load accepts it, but torch.export writes a range for every "
                "symbol it makes: the program was edited without one)"});
  ep.metadata().range_constraints = {epgraph::RangeConstraint{"s0", 2, 64},
                                     epgraph::RangeConstraint{"s1", 2, 64}};
  CHECK(violations(ep, options) ==
        Strings{"Node 'y': SymInt: the symbol 'u3' is not a key of range_constraints "
                "(torch.export.load refuses it: \"vr must not be None\")"});
  ep.metadata().range_constraints.push_back(epgraph::RangeConstraint{"u3", 0, std::nullopt});
  CHECK(violations(ep, options) == Strings{});
  // a hint outside the symbol's range: below it, above it; a hint at a bound is fine, and an
  // expression of the symbol (2*s1 + u3) is not checked, as torch checks the symbol's own
  for (const std::int64_t hint : {1, 65, 2, 64}) {
    m.sizes[0] = epgraph::SymExpr{"Symbol('s0', positive=True, integer=True)", hint};
    ep.graph().find_node("x")->mutable_meta().val = m;
    const Strings expected =
        hint == 1 || hint == 65
            ? Strings{"Node 'x': sizes[0]: the hint " + std::to_string(hint) +
                      " of 'Symbol('s0', positive=True, integer=True)' is outside its range "
                      "constraint [2, 64] (torch.export.load refuses a symbol whose first hint is "
                      "outside "
                      "its range)"}
            : Strings{};
    CHECK(violations(ep, options) == expected);
  }
  m.sizes[0] = epgraph::SymExpr{"Symbol('s0', positive=True, integer=True)", 4};
  m.strides[0] = epgraph::SymExpr{"3*s0 +", std::nullopt};
  ep.graph().find_node("x")->mutable_meta().val = m;
  CHECK(violations(ep, options) ==
        Strings{"Node 'x': strides[0]: cannot read the symbolic expression '3*s0 +': unexpected "
                "end at offset 6"});
  // a constant expression whose hint disagrees, and a range that is empty
  m.strides[0] = epgraph::SymExpr{"Integer(7)", 4};
  ep.graph().find_node("x")->mutable_meta().val = m;
  ep.metadata().range_constraints[1] = epgraph::RangeConstraint{"s1", 100, 2};
  CHECK(violations(ep, options) ==
        Strings{"Range constraint 's1' has min_val 100 > max_val 2",
                "Node 'x': strides[0]: the expression 'Integer(7)' is 7, but its hint is 4"});
}

TEST_CASE("verify: a SymBool expression only where a SymBool belongs", "[verify][sym]") {
  // torch.export.load takes Eq(s0, 4) as a size (sympify, then create_symintnode) and fails only
  // when the size is used; verify names the slot.
  Program ep =
      program_from_specs({epgraph_test::user_input("x")}, {epgraph_test::user_output("y")}, {"y"});
  ep.metadata().range_constraints = {epgraph::RangeConstraint{"s0", 2, 64}};
  const std::string s0 = "Symbol('s0', positive=True, integer=True)";
  const std::string eq = "Eq(" + s0 + ", Integer(4))";
  epgraph::TensorMeta m;
  m.sizes = {epgraph::SymExpr{eq, std::nullopt}, std::int64_t{3}};
  m.strides = {std::int64_t{3}, std::int64_t{1}};
  Node* x = ep.graph().find_node("x");
  Node* y = ep.graph().find_node("y");
  x->mutable_meta().val = m;
  y->mutable_meta().val = epgraph::NodeValue::List{
      epgraph::SymIntValue{epgraph::SymExpr{"Ne(" + s0 + ", Integer(1))", std::nullopt}},
      epgraph::SymFloatValue{epgraph::SymExpr{"And(" + eq + ", " + eq + ")", std::nullopt}},
      epgraph::SymBoolValue{epgraph::SymExpr{"Mul(Integer(2), " + s0 + ")", std::nullopt}},
      epgraph::SymBoolValue{epgraph::SymExpr{eq, std::nullopt}}};
  epgraph::VerifyOptions options;
  options.check_state = false;
  const std::string what = " (a relation, And, Or, Not, True or False)";
  CHECK(violations(ep, options) ==
        Strings{"Node 'x': sizes[0]: '" + eq + "' is a SymBool expression" + what +
                    ", where an integer belongs",
                "Node 'y': [0] SymInt: 'Ne(" + s0 + ", Integer(1))' is a SymBool expression" +
                    what + ", where an integer belongs"});
  // the first problem of each node is named; with the first two fixed, the next ones show
  m.sizes[0] = epgraph::SymExpr{s0, 4};
  x->mutable_meta().val = m;
  y->mutable_meta().val = epgraph::NodeValue::List{
      epgraph::SymFloatValue{epgraph::SymExpr{"And(" + eq + ", " + eq + ")", std::nullopt}}};
  CHECK(violations(ep, options) ==
        Strings{"Node 'y': [0] SymFloat: 'And(" + eq + ", " + eq + ")' is a SymBool expression" +
                what + ", where a SymFloat belongs"});
  y->mutable_meta().val =
      epgraph::SymBoolValue{epgraph::SymExpr{"Mul(Integer(2), " + s0 + ")", std::nullopt}};
  CHECK(violations(ep, options) == Strings{"Node 'y': SymBool: 'Mul(Integer(2), " + s0 +
                                           ")' is not a SymBool expression" + what});
  y->mutable_meta().val = epgraph::SymBoolValue{epgraph::SymExpr{eq, std::nullopt}};
  CHECK(violations(ep, options) == Strings{});
}
