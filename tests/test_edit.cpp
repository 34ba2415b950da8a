// Tests for create_mutable_buffer (include/epgraph/program/edit.hpp).
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <epgraph/program/edit.hpp>
#include <epgraph/program/verify.hpp>
#include <string>
#include <vector>

#include "support/checks.hpp"
#include "support/program_builders.hpp"
#include "support/snapshot.hpp"

using epgraph::create_mutable_buffer;
using epgraph::Node;
using epgraph::OpCode;
using epgraph_test::check_valid;
using epgraph_test::input_spec_strings;
using epgraph_test::keys;
using epgraph_test::output_names;
using epgraph_test::output_spec_strings;
using epgraph_test::placeholder_names;
using epgraph_test::Program;
using epgraph_test::tensor;
using Strings = std::vector<std::string>;

TEST_CASE("create_mutable_buffer: plain [x] -> [x] program", "[edit][mutable_buffer]") {
  Program ep = epgraph_test::plain_program();
  const epgraph::HostTensor data = tensor({2, 3}, 1.5);
  Node* b = create_mutable_buffer(ep, "b_test_mutable_buffer", data);

  REQUIRE(b != nullptr);
  CHECK(b->name() == "b_test_mutable_buffer");
  CHECK(b->op() == OpCode::placeholder);
  CHECK(b->target() == "b_test_mutable_buffer");
  CHECK(b->meta().requested_name == "b_test_mutable_buffer");
  REQUIRE(b->meta().val.tensor());
  CHECK(*b->meta().val.tensor() == epgraph::tensor_meta_of(data));
  CHECK(b->users() == std::vector<Node*>{ep.graph().output_node()});

  CHECK(placeholder_names(ep.graph()) == Strings{"b_test_mutable_buffer", "x"});
  CHECK(input_spec_strings(ep.graph_signature()) ==
        Strings{"b_test_mutable_buffer: BUFFER target='test_mutable_buffer' persistent=True",
                "x: USER_INPUT"});
  CHECK(output_names(ep.graph()) == Strings{"b_test_mutable_buffer", "x"});
  CHECK(output_spec_strings(ep.graph_signature()) ==
        Strings{"b_test_mutable_buffer: BUFFER_MUTATION target='test_mutable_buffer'",
                "x: USER_OUTPUT"});
  CHECK(keys(ep.state_dict()) == Strings{"test_mutable_buffer"});
  CHECK(ep.state_dict().at("test_mutable_buffer") == data);
  CHECK(ep.constants().empty());
  CHECK(epgraph::to_string(ep.graph()) ==
        "graph():\n"
        "    %b_test_mutable_buffer : [num_users=1] = placeholder[target=b_test_mutable_buffer]\n"
        "    %x : [num_users=1] = placeholder[target=x]\n"
        "    return (b_test_mutable_buffer, x)");
  CHECK(epgraph::is_buffer(ep, b));
  CHECK(epgraph::is_mutable_buffer(ep, b));
  check_valid(ep);
}

TEST_CASE("create_mutable_buffer: a name FX renames because it is taken",
          "[edit][mutable_buffer]") {
  Program ep = epgraph_test::plain_program();
  Node* b = create_mutable_buffer(ep, "x", tensor({1}));
  CHECK(b->name() == "x_1");
  CHECK(b->target() == "x_1");
  CHECK(b->meta().requested_name == "x");
  CHECK(placeholder_names(ep.graph()) == Strings{"x_1", "x"});
  CHECK(input_spec_strings(ep.graph_signature()) ==
        Strings{"x_1: BUFFER target='x_1' persistent=True", "x: USER_INPUT"});
  CHECK(output_names(ep.graph()) == Strings{"x_1", "x"});
  CHECK(output_spec_strings(ep.graph_signature()) ==
        Strings{"x_1: BUFFER_MUTATION target='x_1'", "x: USER_OUTPUT"});
  CHECK(keys(ep.state_dict()) == Strings{"x_1"});
  check_valid(ep);
}

TEST_CASE("create_mutable_buffer: a name that is not an identifier", "[edit][mutable_buffer]") {
  Program ep = epgraph_test::plain_program();
  Node* b = create_mutable_buffer(ep, "0_cache", tensor({1}));
  CHECK(b->name() == "_0_cache");
  CHECK(b->target() == "_0_cache");
  CHECK(b->meta().requested_name == "0_cache");
  CHECK(placeholder_names(ep.graph()) == Strings{"_0_cache", "x"});
  CHECK(input_spec_strings(ep.graph_signature()) ==
        Strings{"_0_cache: BUFFER target='_0_cache' persistent=True", "x: USER_INPUT"});
  CHECK(output_spec_strings(ep.graph_signature()) ==
        Strings{"_0_cache: BUFFER_MUTATION target='_0_cache'", "x: USER_OUTPUT"});
  CHECK(keys(ep.state_dict()) == Strings{"_0_cache"});
  check_valid(ep);
}

TEST_CASE("create_mutable_buffer: a prefixed name that FX renames", "[edit][mutable_buffer]") {
  Program ep = epgraph_test::plain_program();
  ep.graph().rename_node(ep.graph().find_node("x"), "b_state");  // a user input named b_state
  // Requested target "state" is free; the node becomes b_state_1, whose target is state_1.
  Node* b = create_mutable_buffer(ep, "b_state", tensor({1}));
  CHECK(b->name() == "b_state_1");
  CHECK(b->target() == "b_state_1");
  CHECK(b->meta().requested_name == "b_state");
  CHECK(input_spec_strings(ep.graph_signature()) ==
        Strings{"b_state_1: BUFFER target='state_1' persistent=True", "b_state: USER_INPUT"});
  CHECK(output_spec_strings(ep.graph_signature()) ==
        Strings{"b_state_1: BUFFER_MUTATION target='state_1'", "b_state: USER_OUTPUT"});
  CHECK(keys(ep.state_dict()) == Strings{"state_1"});
  check_valid(ep);
}

TEST_CASE("create_mutable_buffer: two buffers in a row keep input order",
          "[edit][mutable_buffer]") {
  Program ep = epgraph_test::plain_program();
  Node* k = create_mutable_buffer(ep, "b_k_cache", tensor({1, 2, 8, 4}));
  Node* v = create_mutable_buffer(ep, "b_v_cache", tensor({1, 2, 8, 4}));
  CHECK(k->name() == "b_k_cache");
  CHECK(v->name() == "b_v_cache");
  CHECK(placeholder_names(ep.graph()) == Strings{"b_k_cache", "b_v_cache", "x"});
  CHECK(input_spec_strings(ep.graph_signature()) ==
        Strings{"b_k_cache: BUFFER target='k_cache' persistent=True",
                "b_v_cache: BUFFER target='v_cache' persistent=True", "x: USER_INPUT"});
  CHECK(output_names(ep.graph()) == Strings{"b_k_cache", "b_v_cache", "x"});
  CHECK(output_spec_strings(ep.graph_signature()) ==
        Strings{"b_k_cache: BUFFER_MUTATION target='k_cache'",
                "b_v_cache: BUFFER_MUTATION target='v_cache'", "x: USER_OUTPUT"});
  CHECK(keys(ep.state_dict()) == Strings{"k_cache", "v_cache"});
  check_valid(ep);
}

TEST_CASE("create_mutable_buffer: parameters and buffers, no user input",
          "[edit][mutable_buffer]") {
  Program ep = epgraph_test::params_and_buffers_program();
  Node* b = create_mutable_buffer(ep, "b_cache", tensor({2}));
  CHECK(placeholder_names(ep.graph()) == Strings{"p_weight", "b_scale", "b_cache"});
  CHECK(epgraph_test::node_names(ep.graph()) ==
        Strings{"p_weight", "b_scale", "b_cache", "mul", "output"});
  CHECK(b->prev()->name() == "b_scale");
  CHECK(input_spec_strings(ep.graph_signature()) ==
        Strings{"p_weight: PARAMETER target='weight'",
                "b_scale: BUFFER target='scale' persistent=True",
                "b_cache: BUFFER target='cache' persistent=True"});
  CHECK(output_names(ep.graph()) == Strings{"b_cache", "mul"});
  CHECK(output_spec_strings(ep.graph_signature()) ==
        Strings{"b_cache: BUFFER_MUTATION target='cache'", "mul: USER_OUTPUT"});
  CHECK(keys(ep.state_dict()) == Strings{"weight", "scale", "cache"});
  check_valid(ep);
}

TEST_CASE("create_mutable_buffer: a graph with no placeholder at all", "[edit][mutable_buffer]") {
  auto g = std::make_unique<epgraph::Graph>();
  Node* full = g->call_function("torch.ops.aten.full.default", {epgraph::Argument{2}, 1.0});
  g->output({full});
  epgraph::ExportGraphSignature sig;
  sig.output_specs = {epgraph_test::user_output("full")};
  Program ep(std::move(g), std::move(sig));
  Node* b = create_mutable_buffer(ep, "b_cache", tensor({2}));
  CHECK(ep.graph().first_node() == b);
  CHECK(epgraph_test::node_names(ep.graph()) == Strings{"b_cache", "full", "output"});
  CHECK(input_spec_strings(ep.graph_signature()) ==
        Strings{"b_cache: BUFFER target='cache' persistent=True"});
  CHECK(output_names(ep.graph()) == Strings{"b_cache", "full"});
  check_valid(ep);
}

TEST_CASE("create_mutable_buffer: output tokens stay first", "[edit][mutable_buffer]") {
  SECTION("tokens and a user output") {
    Program ep = epgraph_test::token_program(true);
    create_mutable_buffer(ep, "b_cache", tensor({3}));
    CHECK(placeholder_names(ep.graph()) == Strings{"token", "b_cache", "x"});
    CHECK(
        input_spec_strings(ep.graph_signature()) ==
        Strings{"token: TOKEN", "b_cache: BUFFER target='cache' persistent=True", "x: USER_INPUT"});
    CHECK(output_names(ep.graph()) == Strings{"getitem", "b_cache", "getitem_1"});
    CHECK(output_spec_strings(ep.graph_signature()) ==
          Strings{"getitem: TOKEN", "b_cache: BUFFER_MUTATION target='cache'",
                  "getitem_1: USER_OUTPUT"});
    check_valid(ep);
  }
  SECTION("only a token output") {
    Program ep = epgraph_test::token_program(false);
    create_mutable_buffer(ep, "b_cache", tensor({3}));
    CHECK(output_names(ep.graph()) == Strings{"getitem", "b_cache"});
    CHECK(output_spec_strings(ep.graph_signature()) ==
          Strings{"getitem: TOKEN", "b_cache: BUFFER_MUTATION target='cache'"});
    check_valid(ep);
  }
}

TEST_CASE("create_mutable_buffer: persistent block ends before non-persistent buffers",
          "[edit][mutable_buffer]") {
  Program ep = epgraph_test::constants_program();
  create_mutable_buffer(ep, "b_cache", tensor({4}));
  CHECK(placeholder_names(ep.graph()) ==
        Strings{"p_w", "b_pb", "b_cache", "b_npb", "c_lifted_tensor_0", "obj", "x"});
  CHECK(input_spec_strings(ep.graph_signature()) ==
        Strings{"p_w: PARAMETER target='w'", "b_pb: BUFFER target='pb' persistent=True",
                "b_cache: BUFFER target='cache' persistent=True",
                "b_npb: BUFFER target='npb' persistent=False",
                "c_lifted_tensor_0: CONSTANT_TENSOR target='lifted_tensor_0'",
                "obj: CUSTOM_OBJ target='obj'", "x: USER_INPUT"});
  CHECK(output_spec_strings(ep.graph_signature()) ==
        Strings{"b_cache: BUFFER_MUTATION target='cache'", "call_torchbind: USER_OUTPUT"});
  CHECK(output_names(ep.graph()) == Strings{"b_cache", "call_torchbind"});
  CHECK(keys(ep.state_dict()) == Strings{"w", "pb", "cache"});
  CHECK(keys(ep.constants()) == Strings{"npb", "lifted_tensor_0", "obj"});
  check_valid(ep);
}

TEST_CASE("create_mutable_buffer: after existing buffer mutations (Linear + BatchNorm)",
          "[edit][mutable_buffer]") {
  Program ep = epgraph_test::linear_batchnorm_program();
  check_valid(ep);
  create_mutable_buffer(ep, "b_cache", tensor({4}));
  CHECK(placeholder_names(ep.graph()) ==
        Strings{"p_linear_weight", "p_linear_bias", "p_bn_weight", "p_bn_bias", "b_bn_running_mean",
                "b_bn_running_var", "b_bn_num_batches_tracked", "b_cache", "x"});
  CHECK(output_names(ep.graph()) == Strings{"getitem_3", "getitem_4", "add", "b_cache", "getitem"});
  CHECK(output_spec_strings(ep.graph_signature()) ==
        Strings{"getitem_3: BUFFER_MUTATION target='bn.running_mean'",
                "getitem_4: BUFFER_MUTATION target='bn.running_var'",
                "add: BUFFER_MUTATION target='bn.num_batches_tracked'",
                "b_cache: BUFFER_MUTATION target='cache'", "getitem: USER_OUTPUT"});
  CHECK(keys(ep.state_dict()) == Strings{"linear.weight", "linear.bias", "bn.weight", "bn.bias",
                                         "bn.running_mean", "bn.running_var",
                                         "bn.num_batches_tracked", "cache"});
  check_valid(ep);
}

TEST_CASE("create_mutable_buffer: mutation outputs stay in input order", "[edit][mutable_buffer]") {
  SECTION("before the mutation of a user input") {
    Program ep = epgraph_test::user_input_mutation_program();
    create_mutable_buffer(ep, "b_cache", tensor({3}));
    CHECK(placeholder_names(ep.graph()) == Strings{"b_cache", "x"});
    CHECK(output_names(ep.graph()) == Strings{"b_cache", "add", "mul"});
    CHECK(output_spec_strings(ep.graph_signature()) ==
          Strings{"b_cache: BUFFER_MUTATION target='cache'", "add: USER_INPUT_MUTATION target='x'",
                  "mul: USER_OUTPUT"});
    check_valid(ep);
  }
  SECTION("before the mutation of a non-persistent buffer") {
    Program ep = epgraph_test::constants_program();
    Node* b_npb = ep.graph().find_node("b_npb");
    Node* update = ep.graph().call_function("torch.ops.aten.add.Tensor", {b_npb, 1});
    epgraph::set_buffer_mutation(ep, "npb", update);
    CHECK(output_spec_strings(ep.graph_signature()) ==
          Strings{"add_4: BUFFER_MUTATION target='npb'", "call_torchbind: USER_OUTPUT"});
    create_mutable_buffer(ep, "b_cache", tensor({4}));
    CHECK(output_names(ep.graph()) == Strings{"b_cache", "add_4", "call_torchbind"});
    CHECK(output_spec_strings(ep.graph_signature()) ==
          Strings{"b_cache: BUFFER_MUTATION target='cache'", "add_4: BUFFER_MUTATION target='npb'",
                  "call_torchbind: USER_OUTPUT"});
    check_valid(ep);
  }
}

TEST_CASE("create_mutable_buffer: ignores and keeps the caller's insertion point",
          "[edit][mutable_buffer]") {
  Program ep = epgraph_test::linear_batchnorm_program();
  Node* addmm = ep.graph().find_node("addmm");
  auto at = ep.graph().inserting_after(addmm);
  Node* b = create_mutable_buffer(ep, "b_cache", tensor({4}));
  CHECK(b->prev()->name() == "b_bn_num_batches_tracked");
  CHECK(b->next()->name() == "x");
  CHECK(ep.graph().insertion_point().anchor == addmm);
  CHECK_FALSE(ep.graph().insertion_point().before);
  // The caller's point still works, and still advances as FX's inserting_after does.
  Node* relu = ep.graph().call_function("torch.ops.aten.relu.default", {addmm});
  CHECK(addmm->next() == relu);
  CHECK(ep.graph().insertion_point().anchor == relu);
}

TEST_CASE("create_mutable_buffer: errors leave the program unchanged", "[edit][mutable_buffer]") {
  using epgraph::runtime_error;
  using epgraph::value_error;

  SECTION("empty or blank name") {
    Program ep = epgraph_test::plain_program();
    EPGRAPH_CHECK_THROWS_UNCHANGED(ep, create_mutable_buffer(ep, "", tensor({1})), value_error,
                                   "Buffer name cannot be empty");
    EPGRAPH_CHECK_THROWS_UNCHANGED(ep, create_mutable_buffer(ep, " \t\n", tensor({1})), value_error,
                                   "Buffer name cannot be empty");
  }
  SECTION("signature with more input specs than placeholders") {
    Program ep = epgraph_test::plain_program();
    ep.graph_signature().input_specs.push_back(epgraph_test::user_input("y"));
    EPGRAPH_CHECK_THROWS_UNCHANGED(ep, create_mutable_buffer(ep, "b_cache", tensor({1})),
                                   runtime_error,
                                   "Graph has 1 placeholder nodes but signature has 2 input specs");
  }
  SECTION("input spec naming another node") {
    Program ep = epgraph_test::plain_program();
    ep.graph_signature().input_specs[0].set_name("y");
    EPGRAPH_CHECK_THROWS_UNCHANGED(ep, create_mutable_buffer(ep, "b_cache", tensor({1})),
                                   runtime_error, "Input node x does not match input spec y");
  }
  SECTION("output specs out of step with the output node") {
    Program ep = epgraph_test::plain_program();
    ep.graph_signature().output_specs.push_back(epgraph_test::user_output("x"));
    EPGRAPH_CHECK_THROWS_UNCHANGED(ep, create_mutable_buffer(ep, "b_cache", tensor({1})),
                                   runtime_error,
                                   "Graph has 1 output nodes but signature has 2 output specs");
    ep.graph_signature().output_specs.pop_back();
    ep.graph_signature().output_specs[0].set_name("z");
    EPGRAPH_CHECK_THROWS_UNCHANGED(ep, create_mutable_buffer(ep, "b_cache", tensor({1})),
                                   runtime_error, "Output node x does not match output spec z");
  }
  SECTION("graph without output node") {
    auto g = std::make_unique<epgraph::Graph>();
    g->placeholder("x");
    epgraph::ExportGraphSignature sig;
    sig.input_specs = {epgraph_test::user_input("x")};
    Program ep(std::move(g), std::move(sig));
    EPGRAPH_CHECK_THROWS_UNCHANGED(ep, create_mutable_buffer(ep, "b_cache", tensor({1})),
                                   runtime_error, "Graph has no output node");
  }
  SECTION("the same requested name twice") {
    // ExecuTorch 1.5.1 checks the requested target against state_dict first; its own message,
    // which its test suite pins, is the one a second "b_cache" gets.
    Program ep = epgraph_test::plain_program();
    create_mutable_buffer(ep, "b_cache", tensor({1}));
    EPGRAPH_CHECK_THROWS_UNCHANGED(ep, create_mutable_buffer(ep, "b_cache", tensor({1})),
                                   runtime_error,
                                   "Buffer target 'cache' already exists in state_dict");
    // "x" is renamed x_1 (target x_1), so a second "x" passes that check and meets the next one.
    create_mutable_buffer(ep, "x", tensor({1}));
    EPGRAPH_CHECK_THROWS_UNCHANGED(ep, create_mutable_buffer(ep, "x", tensor({1})), runtime_error,
                                   "Placeholder for 'x' already exists in the graph");
  }
  SECTION("requested target in state_dict is checked before the signature, as in ExecuTorch") {
    Program ep = epgraph_test::params_and_buffers_program();
    ep.graph_signature().input_specs.pop_back();
    EPGRAPH_CHECK_THROWS_UNCHANGED(ep, create_mutable_buffer(ep, "b_scale", tensor({1})),
                                   runtime_error,
                                   "Buffer target 'scale' already exists in state_dict");
    EPGRAPH_CHECK_THROWS_UNCHANGED(ep, create_mutable_buffer(ep, "b_cache", tensor({1})),
                                   runtime_error,
                                   "Graph has 2 placeholder nodes but signature has 1 input specs");
  }
  SECTION("requested target already in state_dict") {
    Program ep = epgraph_test::params_and_buffers_program();
    EPGRAPH_CHECK_THROWS_UNCHANGED(ep, create_mutable_buffer(ep, "b_weight", tensor({1})),
                                   runtime_error,
                                   "Buffer target 'weight' already exists in state_dict");
    EPGRAPH_CHECK_THROWS_UNCHANGED(ep, create_mutable_buffer(ep, "scale", tensor({1})),
                                   runtime_error,
                                   "Buffer target 'scale' already exists in state_dict");
  }
  SECTION("target of a name FX keeps already in constants") {
    // "b_obj" is free as a node name, so the buffer's target would be "obj": the custom object's.
    Program ep = epgraph_test::constants_program();
    EPGRAPH_CHECK_THROWS_UNCHANGED(ep, create_mutable_buffer(ep, "b_obj", tensor({1})),
                                   runtime_error,
                                   "Buffer target 'obj' already exists in constants");
  }
  SECTION("requested target is the target of an input spec without data") {
    Program ep = epgraph_test::params_and_buffers_program();
    ep.state_dict() = {};
    EPGRAPH_CHECK_THROWS_UNCHANGED(
        ep, create_mutable_buffer(ep, "b_weight", tensor({1})), runtime_error,
        "Buffer target 'weight' already exists as the target of input spec 'p_weight'");
  }
  SECTION("empty requested target") {
    Program ep = epgraph_test::plain_program();
    EPGRAPH_CHECK_THROWS_UNCHANGED(ep, create_mutable_buffer(ep, "b_", tensor({1})), value_error,
                                   "Buffer target cannot be empty (from name 'b_')");
  }
  SECTION("empty target after FX sanitizes the name") {
    Program ep = epgraph_test::plain_program();
    // "b-" is its own target, but FX names the node "b_", whose target is empty.
    EPGRAPH_CHECK_THROWS_UNCHANGED(ep, create_mutable_buffer(ep, "b-", tensor({1})), value_error,
                                   "Buffer target cannot be empty (from name 'b_')");
  }
  SECTION("target of the assigned name already taken") {
    Program ep = epgraph_test::plain_program();
    ep.state_dict().insert("x_1", tensor({1}));
    EPGRAPH_CHECK_THROWS_UNCHANGED(ep, create_mutable_buffer(ep, "x", tensor({1})), runtime_error,
                                   "Buffer target 'x_1' already exists in state_dict");
    Program ep2 = epgraph_test::plain_program();
    ep2.constants().insert("_0_cache", tensor({1}));
    EPGRAPH_CHECK_THROWS_UNCHANGED(ep2, create_mutable_buffer(ep2, "0_cache", tensor({1})),
                                   runtime_error,
                                   "Buffer target '_0_cache' already exists in constants");
  }
}

TEST_CASE("create_mutable_buffer: a requested target taken in constants, assigned target free",
          "[edit][mutable_buffer]") {
  // "b_npb" is the placeholder of the non-persistent buffer "npb" (in constants). FX names the
  // request b_npb_1, whose target npb_1 is free: ExecuTorch 1.5.1 gives the same names on a
  // torch.export.load-ed program and torch verifies and runs its result, so it is not refused.
  Program ep = epgraph_test::constants_program();
  Node* b = create_mutable_buffer(ep, "b_npb", tensor({4}, 3.0));
  CHECK(b->name() == "b_npb_1");
  CHECK(b->target() == "b_npb_1");
  CHECK(b->meta().requested_name == "b_npb");
  CHECK(input_spec_strings(ep.graph_signature()) ==
        Strings{"p_w: PARAMETER target='w'", "b_pb: BUFFER target='pb' persistent=True",
                "b_npb_1: BUFFER target='npb_1' persistent=True",
                "b_npb: BUFFER target='npb' persistent=False",
                "c_lifted_tensor_0: CONSTANT_TENSOR target='lifted_tensor_0'",
                "obj: CUSTOM_OBJ target='obj'", "x: USER_INPUT"});
  CHECK(output_spec_strings(ep.graph_signature()) ==
        Strings{"b_npb_1: BUFFER_MUTATION target='npb_1'", "call_torchbind: USER_OUTPUT"});
  CHECK(keys(ep.state_dict()) == Strings{"w", "pb", "npb_1"});
  CHECK(keys(ep.constants()) == Strings{"npb", "lifted_tensor_0", "obj"});
  CHECK(ep.state_dict().at("npb_1") == tensor({4}, 3.0));
  check_valid(ep);
  CHECK(epgraph::input_order_departures(ep.graph_signature()).empty());
  // A second request passes ExecuTorch's first check ("npb" is still not in state_dict) and
  // meets its second: the request is recorded on b_npb_1.
  EPGRAPH_CHECK_THROWS_UNCHANGED(ep, create_mutable_buffer(ep, "b_npb", tensor({4})),
                                 epgraph::runtime_error,
                                 "Placeholder for 'b_npb' already exists in the graph");
}
