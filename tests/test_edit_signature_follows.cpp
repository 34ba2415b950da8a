// The signature follows the graph (ExportedProgram's replace / rename hook), set_buffer_mutation,
// and the lookups of epgraph/lookup.hpp.
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <epgraph/program/edit.hpp>
#include <epgraph/program/lookup.hpp>
#include <epgraph/program/verify.hpp>
#include <string>
#include <vector>

#include "support/checks.hpp"
#include "support/program_builders.hpp"
#include "support/snapshot.hpp"

using epgraph::InputKind;
using epgraph::Node;
using epgraph::set_buffer_mutation;
using epgraph_test::check_valid;
using epgraph_test::input_spec_strings;
using epgraph_test::keys;
using epgraph_test::output_names;
using epgraph_test::output_spec_strings;
using epgraph_test::Program;
using epgraph_test::tensor;
using Strings = std::vector<std::string>;

TEST_CASE("signature follows: replace_all_uses_with of a user output", "[edit][hook]") {
  Program ep = epgraph_test::linear_batchnorm_program();
  Node* getitem = ep.graph().find_node("getitem");
  Node* relu = ep.graph().call_function("torch.ops.aten.relu.default", {getitem});
  const auto changed = getitem->replace_all_uses_with(relu, [&](Node* u) { return u != relu; });
  CHECK(changed == std::vector<Node*>{ep.graph().output_node()});
  CHECK(output_names(ep.graph()) == Strings{"getitem_3", "getitem_4", "add", "relu"});
  CHECK(output_spec_strings(ep.graph_signature()) ==
        Strings{"getitem_3: BUFFER_MUTATION target='bn.running_mean'",
                "getitem_4: BUFFER_MUTATION target='bn.running_var'",
                "add: BUFFER_MUTATION target='bn.num_batches_tracked'", "relu: USER_OUTPUT"});
  check_valid(ep);
}

TEST_CASE("signature follows: replace_all_uses_with of a mutation output", "[edit][hook]") {
  Program ep = epgraph_test::linear_batchnorm_program();
  Node* add = ep.graph().find_node("add");
  Node* nbt = ep.graph().find_node("b_bn_num_batches_tracked");
  Node* add_1 = ep.graph().call_function("torch.ops.aten.add.Tensor", {nbt, 2});
  add->replace_all_uses_with(add_1);
  CHECK(output_names(ep.graph()) == Strings{"getitem_3", "getitem_4", "add_1", "getitem"});
  // The spec names the new node; its target (a state_dict key) does not change.
  CHECK(output_spec_strings(ep.graph_signature())[2] ==
        "add_1: BUFFER_MUTATION target='bn.num_batches_tracked'");
  CHECK(add->users().empty());
  ep.graph().erase_node(add);
  CHECK(epgraph::buffer_mutation_value(ep, "bn.num_batches_tracked") == add_1);
  check_valid(ep);
}

TEST_CASE("signature follows: replace_input_with on the output node", "[edit][hook]") {
  Program ep = epgraph_test::linear_batchnorm_program();
  Node* getitem_4 = ep.graph().find_node("getitem_4");
  Node* clone = ep.graph().call_function("torch.ops.aten.clone.default", {getitem_4});
  ep.graph().output_node()->replace_input_with(getitem_4, clone);
  CHECK(output_spec_strings(ep.graph_signature())[1] ==
        "clone: BUFFER_MUTATION target='bn.running_var'");
  check_valid(ep);
  // Replacing in a node other than the output node leaves the signature alone.
  const auto sig = ep.graph_signature();
  Node* getitem = ep.graph().find_node("getitem");
  Node* neg = ep.graph().call_function("torch.ops.aten.neg.default", {getitem});
  clone->replace_input_with(getitem_4, neg);
  CHECK(ep.graph_signature() == sig);
}

TEST_CASE("signature follows: a returned placeholder replaced keeps its input spec",
          "[edit][hook]") {
  Program ep = epgraph_test::plain_program();
  Node* x = ep.graph().find_node("x");
  Node* neg = ep.graph().call_function("torch.ops.aten.neg.default", {x});
  x->replace_all_uses_with(neg, [&](Node* u) { return u != neg; });
  CHECK(input_spec_strings(ep.graph_signature()) == Strings{"x: USER_INPUT"});
  CHECK(output_spec_strings(ep.graph_signature()) == Strings{"neg: USER_OUTPUT"});
  check_valid(ep);
}

TEST_CASE("signature follows: rename of a user input with a USER_INPUT_MUTATION", "[edit][hook]") {
  Program ep = epgraph_test::user_input_mutation_program();
  Node* x = ep.graph().find_node("x");
  CHECK(ep.graph().rename_node(x, "inp") == "inp");
  CHECK(x->target() == "inp");
  CHECK(input_spec_strings(ep.graph_signature()) == Strings{"inp: USER_INPUT"});
  CHECK(output_spec_strings(ep.graph_signature()) ==
        Strings{"add: USER_INPUT_MUTATION target='inp'", "mul: USER_OUTPUT"});
  check_valid(ep);
  // Renaming the mutation value renames the spec argument; the target stays the input's name.
  ep.graph().rename_node(ep.graph().find_node("add"), "new_x");
  CHECK(output_spec_strings(ep.graph_signature()) ==
        Strings{"new_x: USER_INPUT_MUTATION target='inp'", "mul: USER_OUTPUT"});
  check_valid(ep);
}

TEST_CASE("signature follows: rename of a user input with a GRADIENT_TO_USER_INPUT",
          "[edit][hook]") {
  auto g = std::make_unique<epgraph::Graph>();
  Node* x = g->placeholder("x");
  Node* mul = g->call_function("torch.ops.aten.mul.Tensor", {x, x});
  Node* grad = g->call_function("torch.ops.aten.mul.Tensor", {x, 2});
  g->output({mul, grad});
  epgraph::ExportGraphSignature sig;
  sig.input_specs = {epgraph_test::user_input("x")};
  sig.output_specs = {{epgraph::OutputKind::LOSS_OUTPUT, epgraph::TensorArgument{"mul"}},
                      {epgraph::OutputKind::GRADIENT_TO_USER_INPUT,
                       epgraph::TensorArgument{"mul_1"}, std::string("x")}};
  Program ep(std::move(g), std::move(sig));
  ep.graph().rename_node(x, "inp");
  CHECK(output_spec_strings(ep.graph_signature()) ==
        Strings{"mul: LOSS_OUTPUT", "mul_1: GRADIENT_TO_USER_INPUT target='inp'"});
  check_valid(ep);
}

TEST_CASE("signature follows: rename of a buffer placeholder keeps BUFFER_MUTATION targets",
          "[edit][hook]") {
  Program ep = epgraph_test::plain_program();
  Node* b = epgraph::create_mutable_buffer(ep, "b_cache", tensor({2}));
  CHECK(ep.graph().rename_node(b, "b_kv") == "b_kv");
  CHECK(b->target() == "b_kv");
  CHECK(input_spec_strings(ep.graph_signature()) ==
        Strings{"b_kv: BUFFER target='cache' persistent=True", "x: USER_INPUT"});
  CHECK(output_spec_strings(ep.graph_signature()) ==
        Strings{"b_kv: BUFFER_MUTATION target='cache'", "x: USER_OUTPUT"});
  CHECK(keys(ep.state_dict()) == Strings{"cache"});
  CHECK(epgraph::is_mutable_buffer(ep, b));
  check_valid(ep);

  SECTION("and of a buffer of a real program") {
    Program bn = epgraph_test::linear_batchnorm_program();
    bn.graph().rename_node(bn.graph().find_node("b_bn_running_mean"), "b_mean");
    bn.graph().rename_node(bn.graph().find_node("getitem_3"), "new_mean");
    CHECK(input_spec_strings(bn.graph_signature())[4] ==
          "b_mean: BUFFER target='bn.running_mean' persistent=True");
    CHECK(output_spec_strings(bn.graph_signature())[0] ==
          "new_mean: BUFFER_MUTATION target='bn.running_mean'");
    check_valid(bn);
  }
}

TEST_CASE("signature follows: rename of a placeholder returned as user output", "[edit][hook]") {
  Program ep = epgraph_test::plain_program();
  ep.graph().rename_node(ep.graph().find_node("x"), "input");  // reserved: FX gives input_1
  CHECK(input_spec_strings(ep.graph_signature()) == Strings{"input_1: USER_INPUT"});
  CHECK(output_spec_strings(ep.graph_signature()) == Strings{"input_1: USER_OUTPUT"});
  check_valid(ep);
}

TEST_CASE("signature follows: a clone follows its own graph only", "[edit][hook]") {
  Program ep = epgraph_test::plain_program();
  Program copy = ep.clone();
  copy.graph().rename_node(copy.graph().find_node("x"), "y");
  CHECK(input_spec_strings(copy.graph_signature()) == Strings{"y: USER_INPUT"});
  CHECK(input_spec_strings(ep.graph_signature()) == Strings{"x: USER_INPUT"});
  Program moved = std::move(copy);
  moved.graph().rename_node(moved.graph().find_node("y"), "z");
  CHECK(input_spec_strings(moved.graph_signature()) == Strings{"z: USER_INPUT"});
  check_valid(moved);
}

TEST_CASE("set_buffer_mutation: points a mutation output at the new value", "[edit][mutation]") {
  SECTION("replaces the placeholder returned by create_mutable_buffer") {
    Program ep = epgraph_test::plain_program();
    Node* b = epgraph::create_mutable_buffer(ep, "b_cache", tensor({2, 3}));
    Node* x = ep.graph().find_node("x");
    Node* upd = ep.graph().call_function("torch.ops.aten.add.Tensor", {b, x});
    set_buffer_mutation(ep, "cache", upd);
    CHECK(output_names(ep.graph()) == Strings{"add", "x"});
    CHECK(output_spec_strings(ep.graph_signature()) ==
          Strings{"add: BUFFER_MUTATION target='cache'", "x: USER_OUTPUT"});
    CHECK(b->users() == std::vector<Node*>{upd});
    CHECK(upd->users() == std::vector<Node*>{ep.graph().output_node()});
    CHECK(epgraph::buffer_mutation_value(ep, "cache") == upd);
    CHECK(epgraph::is_mutable_buffer(ep, b));
    check_valid(ep);
    // Setting the same value again changes nothing.
    const auto before = epgraph_test::snapshot(ep);
    set_buffer_mutation(ep, "cache", upd);
    CHECK(epgraph_test::snapshot(ep) == before);
  }
  SECTION("creates the mutation output of a buffer that had none") {
    Program ep = epgraph_test::params_and_buffers_program();
    Node* b_scale = ep.graph().find_node("b_scale");
    CHECK_FALSE(epgraph::is_mutable_buffer(ep, b_scale));
    Node* upd = ep.graph().call_function("torch.ops.aten.mul.Tensor", {b_scale, 0.5});
    set_buffer_mutation(ep, "scale", upd);
    CHECK(output_names(ep.graph()) == Strings{"mul_1", "mul"});
    CHECK(output_spec_strings(ep.graph_signature()) ==
          Strings{"mul_1: BUFFER_MUTATION target='scale'", "mul: USER_OUTPUT"});
    CHECK(epgraph::is_mutable_buffer(ep, b_scale));
    check_valid(ep);
  }
  SECTION("new mutation outputs go in input order, after tokens") {
    auto g = std::make_unique<epgraph::Graph>();
    Node* token = g->placeholder("token");
    Node* a = g->placeholder("b_a");
    Node* b = g->placeholder("b_b");
    Node* c = g->placeholder("b_c");
    Node* x = g->placeholder("x");
    Node* a1 = g->call_function("torch.ops.aten.add.Tensor", {a, 1});
    Node* b1 = g->call_function("torch.ops.aten.add.Tensor", {b, 1});
    Node* c1 = g->call_function("torch.ops.aten.add.Tensor", {c, 1});
    Node* y = g->call_function("torch.ops.aten.add.Tensor", {x, 1});
    static_cast<void>(b1);
    g->output({token, a1, c1, y});
    epgraph::ExportGraphSignature sig;
    sig.input_specs = {epgraph_test::input_token("token"), epgraph_test::buffer("b_a", "a"),
                       epgraph_test::buffer("b_b", "b"), epgraph_test::buffer("b_c", "c"),
                       epgraph_test::user_input("x")};
    sig.output_specs = {
        epgraph_test::output_token("token"), epgraph_test::buffer_mutation("add", "a"),
        epgraph_test::buffer_mutation("add_2", "c"), epgraph_test::user_output("add_3")};
    epgraph::ordered_dict<epgraph::HostTensor> sd;
    for (const char* k : {"a", "b", "c"}) sd.insert(k, tensor({1}));
    Program ep(std::move(g), std::move(sig), std::move(sd));
    check_valid(ep);
    set_buffer_mutation(ep, "b", ep.graph().find_node("add_1"));
    CHECK(output_names(ep.graph()) == Strings{"token", "add", "add_1", "add_2", "add_3"});
    CHECK(output_spec_strings(ep.graph_signature()) ==
          Strings{"token: TOKEN", "add: BUFFER_MUTATION target='a'",
                  "add_1: BUFFER_MUTATION target='b'", "add_2: BUFFER_MUTATION target='c'",
                  "add_3: USER_OUTPUT"});
    check_valid(ep);
  }
}

TEST_CASE("set_buffer_mutation: errors leave the program unchanged", "[edit][mutation]") {
  using epgraph::runtime_error;
  using epgraph::value_error;
  Program ep = epgraph_test::linear_batchnorm_program();
  Node* getitem = ep.graph().find_node("getitem");
  EPGRAPH_CHECK_THROWS_UNCHANGED(
      ep, set_buffer_mutation(ep, "bn.running_mean", nullptr), value_error,
      "Cannot make a null node the new value of buffer 'bn.running_mean'");
  Program other = epgraph_test::plain_program();
  EPGRAPH_CHECK_THROWS_UNCHANGED(
      ep, set_buffer_mutation(ep, "bn.running_mean", other.graph().find_node("x")), value_error,
      "Node 'x' does not belong to this program's graph");
  EPGRAPH_CHECK_THROWS_UNCHANGED(
      ep, set_buffer_mutation(ep, "bn.running_mean", ep.graph().output_node()), value_error,
      "The output node cannot be the new value of buffer 'bn.running_mean'");
  EPGRAPH_CHECK_THROWS_UNCHANGED(ep, set_buffer_mutation(ep, "nope", getitem), value_error,
                                 "No BUFFER input has target 'nope'");
  EPGRAPH_CHECK_THROWS_UNCHANGED(ep, set_buffer_mutation(ep, "linear.weight", getitem), value_error,
                                 "No BUFFER input has target 'linear.weight'");

  SECTION("signature out of step") {
    ep.graph_signature().output_specs.pop_back();
    EPGRAPH_CHECK_THROWS_UNCHANGED(ep, set_buffer_mutation(ep, "bn.running_mean", getitem),
                                   runtime_error,
                                   "Graph has 4 output nodes but signature has 3 output specs");
  }
  SECTION("two mutation outputs for one buffer") {
    ep.graph_signature().output_specs[1] =
        epgraph_test::buffer_mutation("getitem_4", "bn.running_mean");
    EPGRAPH_CHECK_THROWS_UNCHANGED(
        ep, set_buffer_mutation(ep, "bn.running_mean", getitem), runtime_error,
        "Buffer 'bn.running_mean' has more than one BUFFER_MUTATION output");
  }
}

TEST_CASE("lookups: kinds of placeholders", "[lookup]") {
  Program ep = epgraph_test::constants_program();
  const auto& g = ep.graph();
  const Node* p_w = g.find_node("p_w");
  const Node* b_pb = g.find_node("b_pb");
  const Node* b_npb = g.find_node("b_npb");
  const Node* c = g.find_node("c_lifted_tensor_0");
  const Node* obj = g.find_node("obj");
  const Node* x = g.find_node("x");
  const Node* add = g.find_node("add");

  CHECK(epgraph::is_parameter(ep, p_w));
  CHECK_FALSE(epgraph::is_parameter(ep, b_pb));
  CHECK(epgraph::is_buffer(ep, b_pb));
  CHECK(epgraph::is_buffer(ep, b_npb));
  CHECK_FALSE(epgraph::is_buffer(ep, c));
  CHECK(epgraph::is_lifted_tensor_constant(ep, c));
  CHECK_FALSE(epgraph::is_lifted_tensor_constant(ep, obj));
  for (const Node* n : {p_w, b_pb, b_npb, c}) CHECK(epgraph::is_param_node(ep, n));
  for (const Node* n : {obj, x, add}) CHECK_FALSE(epgraph::is_param_node(ep, n));
  CHECK_FALSE(epgraph::is_param_node(ep, nullptr));
  CHECK_FALSE(epgraph::is_parameter(ep, nullptr));
  CHECK_FALSE(epgraph::is_mutable_buffer(ep, b_pb));
  CHECK_FALSE(epgraph::is_mutable_buffer(ep, nullptr));
  REQUIRE(epgraph::input_spec_for(ep, obj) != nullptr);
  CHECK(epgraph::input_spec_for(ep, obj)->kind() == InputKind::CUSTOM_OBJ);
  CHECK(epgraph::input_spec_for(ep, add) == nullptr);
  CHECK(epgraph::input_spec_by_target(ep, InputKind::BUFFER, "npb") ==
        &ep.graph_signature().input_specs[2]);
  CHECK(epgraph::input_spec_by_target(ep, InputKind::PARAMETER, "npb") == nullptr);

  SECTION("mutable buffers are found by the signature, not by users") {
    Program bn = epgraph_test::linear_batchnorm_program();
    for (const char* name : {"b_bn_running_mean", "b_bn_running_var", "b_bn_num_batches_tracked"}) {
      CHECK(epgraph::is_mutable_buffer(bn, bn.graph().find_node(name)));
    }
    CHECK_FALSE(epgraph::is_mutable_buffer(bn, bn.graph().find_node("p_bn_weight")));
    CHECK(epgraph::buffer_mutation_value(bn, "bn.running_var") ==
          bn.graph().find_node("getitem_4"));
    CHECK(epgraph::buffer_mutation_value(bn, "bn.weight") == nullptr);
  }
}

TEST_CASE("lookups: get_param_tensor and set_param_tensor", "[lookup]") {
  Program ep = epgraph_test::constants_program();
  const auto& g = ep.graph();
  using epgraph::get_param_tensor;
  CHECK(get_param_tensor(ep, g.find_node("p_w")) == ep.state_dict().find("w"));
  CHECK(get_param_tensor(ep, g.find_node("b_pb")) == ep.state_dict().find("pb"));
  CHECK(get_param_tensor(ep, g.find_node("b_npb")) ==
        &std::get<epgraph::HostTensor>(*ep.constants().find("npb")));
  CHECK(*get_param_tensor(ep, g.find_node("c_lifted_tensor_0")) == tensor({4}, 4.0));
  CHECK(get_param_tensor(ep, g.find_node("obj")) == nullptr);
  CHECK(get_param_tensor(ep, g.find_node("x")) == nullptr);
  CHECK(get_param_tensor(ep, g.find_node("add")) == nullptr);
  CHECK(get_param_tensor(ep, nullptr) == nullptr);
  const Program& cep = ep;
  CHECK(get_param_tensor(cep, g.find_node("p_w")) == ep.state_dict().find("w"));

  const auto before_keys = std::make_pair(keys(ep.state_dict()), keys(ep.constants()));
  epgraph::set_param_tensor(ep, g.find_node("p_w"), tensor({4}, 10.0));
  epgraph::set_param_tensor(ep, g.find_node("b_pb"), tensor({4}, 20.0));
  epgraph::set_param_tensor(ep, g.find_node("b_npb"), tensor({4}, 30.0));
  epgraph::set_param_tensor(ep, g.find_node("c_lifted_tensor_0"), tensor({4}, 40.0));
  CHECK(std::make_pair(keys(ep.state_dict()), keys(ep.constants())) == before_keys);
  CHECK(ep.state_dict().at("w") == tensor({4}, 10.0));
  CHECK(ep.state_dict().at("pb") == tensor({4}, 20.0));
  CHECK(std::get<epgraph::HostTensor>(ep.constants().at("npb")) == tensor({4}, 30.0));
  CHECK(std::get<epgraph::HostTensor>(ep.constants().at("lifted_tensor_0")) == tensor({4}, 40.0));
  CHECK_NOTHROW(epgraph::verify(ep));

  for (const char* name : {"obj", "x", "add"}) {
    const std::string op = name == std::string("add") ? "call_function" : "placeholder";
    EPGRAPH_CHECK_THROWS_UNCHANGED(
        ep, epgraph::set_param_tensor(ep, g.find_node(name), tensor({1})), epgraph::runtime_error,
        "unsupported param type, " + op + ". Node '" + name +
            "' is not a parameter, a buffer, a lifted tensor constant nor a get_attr node");
  }
  EPGRAPH_CHECK_THROWS_UNCHANGED(
      ep, epgraph::set_param_tensor(ep, nullptr, tensor({1})), epgraph::value_error,
      "Node '<null>' is not a parameter, a buffer, a lifted tensor constant nor a get_attr node");

  SECTION("get_attr nodes read state_dict, then constants") {
    Node* ga = nullptr;
    Node* gc = nullptr;
    Node* gm = nullptr;
    {
      auto at = ep.graph().inserting_before(ep.graph().find_node("add"));
      ga = ep.graph().get_attr("w");
      gc = ep.graph().get_attr("lifted_tensor_0");
      gm = ep.graph().get_attr("missing");
    }
    CHECK(epgraph::is_param_node(ep, ga));
    CHECK(get_param_tensor(ep, ga) == ep.state_dict().find("w"));
    CHECK(get_param_tensor(ep, gc) ==
          &std::get<epgraph::HostTensor>(*ep.constants().find("lifted_tensor_0")));
    CHECK(get_param_tensor(ep, gm) == nullptr);
    epgraph::set_param_tensor(ep, ga, tensor({4}, 5.0));
    CHECK(ep.state_dict().at("w") == tensor({4}, 5.0));
    epgraph::set_param_tensor(ep, gc, tensor({4}, 7.0));
    CHECK(std::get<epgraph::HostTensor>(ep.constants().at("lifted_tensor_0")) == tensor({4}, 7.0));
    // A target in neither dictionary names no tensor: refused, nothing added.
    EPGRAPH_CHECK_THROWS_UNCHANGED(
        ep, epgraph::set_param_tensor(ep, gm, tensor({1}, 6.0)), epgraph::value_error,
        "Node 'missing' (get_attr 'missing') names no tensor of the program: 'missing' is in "
        "neither state_dict nor constants, so it names a submodule (such as the branch of a "
        "cond), which cannot be replaced by a tensor");
    CHECK(keys(ep.constants()) == Strings{"npb", "lifted_tensor_0", "obj"});
  }
  SECTION("a get_attr naming a custom object is refused") {
    Node* go = nullptr;
    {
      auto at = ep.graph().inserting_before(ep.graph().find_node("add"));
      go = ep.graph().get_attr("obj", "obj_attr");
    }
    CHECK(get_param_tensor(ep, go) == nullptr);
    EPGRAPH_CHECK_THROWS_UNCHANGED(
        ep, epgraph::set_param_tensor(ep, go, tensor({1})), epgraph::value_error,
        "Node 'obj_attr' (get_attr 'obj') names a custom object in constants, not a tensor");
  }
}

TEST_CASE("lookups: set_param_tensor refuses the branch of a cond", "[lookup]") {
  // `torch.cond(x.sum() > 0, lambda x: x + 1, lambda x: x - 1, (x,))` as torch.export gives it:
  // the branches are get_attr nodes naming nested graphs (epgraph keeps them with the node, in
  // neither dictionary). ExecuTorch 1.5.1 refuses to set a tensor there ("TypeError: cannot
  // assign 'torch.FloatTensor' as child module 'true_graph_0' (torch.nn.Module or None
  // expected)"); epgraph used to add an unused constants entry "true_graph_0".
  auto g = std::make_unique<epgraph::Graph>();
  Node* x = epgraph_test::add_placeholder(*g, "x", tensor({3}));
  Node* sum = g->call_function("torch.ops.aten.sum.default", {x});
  Node* gt = g->call_function("torch.ops.aten.gt.Scalar", {sum, 0});
  Node* t = g->get_attr("true_graph_0");
  Node* f = g->get_attr("false_graph_0");
  Node* cond = g->call_function("torch.ops.higher_order.cond",
                                {gt, t, f, epgraph::Argument(epgraph::ArgumentList{x})});
  Node* out = g->call_function("operator.getitem", {cond, 0});
  g->output({out});
  epgraph::ExportGraphSignature sig;
  sig.input_specs = {epgraph_test::user_input("x")};
  sig.output_specs = {epgraph_test::user_output("getitem")};
  Program ep(std::move(g), std::move(sig));
  CHECK(epgraph::is_param_node(ep, t));  // as upstream: every get_attr node
  CHECK(epgraph::get_param_tensor(ep, t) == nullptr);
  for (const char* branch : {"true_graph_0", "false_graph_0"}) {
    EPGRAPH_CHECK_THROWS_UNCHANGED(
        ep, epgraph::set_param_tensor(ep, ep.graph().find_node(branch), tensor({3})),
        epgraph::value_error,
        std::string("Node '") + branch + "' (get_attr '" + branch +
            "') names no tensor of the program: '" + branch +
            "' is in neither state_dict nor constants, so it names a submodule (such as the "
            "branch of a cond), which cannot be replaced by a tensor");
  }
  CHECK(ep.constants().empty());
  CHECK(ep.state_dict().empty());
}
