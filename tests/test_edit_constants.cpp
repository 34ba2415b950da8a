// Tests for create_constant_placeholder and delete_constant_placeholder (epgraph/program/edit.hpp).
// SPDX-License-Identifier: BSD-3-Clause
#include <algorithm>
#include <catch2/catch.hpp>
#include <epgraph/program/edit.hpp>
#include <epgraph/program/verify.hpp>
#include <optional>
#include <string>
#include <vector>

#include "support/checks.hpp"
#include "support/program_builders.hpp"
#include "support/snapshot.hpp"

using epgraph::create_constant_placeholder;
using epgraph::delete_constant_placeholder;
using epgraph::InputKind;
using epgraph::Node;
using epgraph::runtime_error;
using epgraph::value_error;
using epgraph_test::check_valid;
using epgraph_test::input_spec_strings;
using epgraph_test::keys;
using epgraph_test::placeholder_names;
using epgraph_test::Program;
using epgraph_test::tensor;
using Strings = std::vector<std::string>;

namespace {

// Snapshot fields that a create-then-delete round trip restores (the namespace keeps the name).
bool same_but_names(const epgraph_test::Snapshot& a, const epgraph_test::Snapshot& b) {
  return a.graph == b.graph && a.users == b.users && a.meta == b.meta &&
         a.signature == b.signature && a.state_dict == b.state_dict && a.constants == b.constants &&
         a.size == b.size && a.num_placeholders == b.num_placeholders;
}

}  // namespace

TEST_CASE("create_constant_placeholder: each kind, created then deleted", "[edit][constant]") {
  struct Case {
    InputKind kind;
    std::optional<bool> persistent;
    const char* spec;
    bool in_state_dict;
  };
  const Case cases[] = {
      {InputKind::PARAMETER, std::nullopt, "p_new: PARAMETER target='p_new'", true},
      {InputKind::BUFFER, true, "p_new: BUFFER target='p_new' persistent=True", true},
      {InputKind::BUFFER, false, "p_new: BUFFER target='p_new' persistent=False", false},
      {InputKind::CONSTANT_TENSOR, std::nullopt, "p_new: CONSTANT_TENSOR target='p_new'", false},
  };
  for (const Case& c : cases) {
    INFO(c.spec);
    Program ep = epgraph_test::plain_program();
    const auto original = epgraph_test::snapshot(ep);
    Node* x = ep.graph().find_node("x");
    const epgraph::HostTensor data = tensor({2, 2}, 7.0);
    Node* node = nullptr;
    {
      auto at = ep.graph().inserting_before(x);
      node = create_constant_placeholder(ep, "p_new", c.kind, data, c.persistent);
    }
    REQUIRE(node != nullptr);
    CHECK(node->name() == "p_new");
    CHECK(node->target() == "p_new");
    CHECK(node->meta().requested_name == "p_new");
    CHECK(node->meta().val == epgraph::NodeValue(epgraph::tensor_meta_of(data)));
    CHECK(node->users().empty());
    CHECK(placeholder_names(ep.graph()) == Strings{"p_new", "x"});
    CHECK(input_spec_strings(ep.graph_signature()) == Strings{c.spec, "x: USER_INPUT"});
    if (c.in_state_dict) {
      CHECK(keys(ep.state_dict()) == Strings{"p_new"});
      CHECK(ep.state_dict().at("p_new") == data);
      CHECK(ep.constants().empty());
    } else {
      CHECK(ep.state_dict().empty());
      CHECK(keys(ep.constants()) == Strings{"p_new"});
      CHECK(std::get<epgraph::HostTensor>(ep.constants().at("p_new")) == data);
    }
    CHECK(epgraph::get_param_tensor(ep, node) != nullptr);
    CHECK(*epgraph::get_param_tensor(ep, node) == data);
    check_valid(ep);

    delete_constant_placeholder(ep, node);
    CHECK(same_but_names(epgraph_test::snapshot(ep), original));
    CHECK(ep.graph().names().is_used("p_new"));  // FX never hands a name out twice
    check_valid(ep);
  }
}

TEST_CASE("create_constant_placeholder: renamed by FX, keyed by the assigned name",
          "[edit][constant]") {
  Program ep = epgraph_test::plain_program();
  auto at = ep.graph().inserting_before(ep.graph().find_node("x"));
  Node* a = create_constant_placeholder(ep, "x", InputKind::PARAMETER, tensor({1}));
  Node* b = create_constant_placeholder(ep, "0_w", InputKind::CONSTANT_TENSOR, tensor({1}));
  CHECK(a->name() == "x_1");
  CHECK(a->target() == "x_1");
  CHECK(b->name() == "_0_w");
  CHECK(placeholder_names(ep.graph()) == Strings{"x_1", "_0_w", "x"});
  CHECK(input_spec_strings(ep.graph_signature()) == Strings{"x_1: PARAMETER target='x_1'",
                                                            "_0_w: CONSTANT_TENSOR target='_0_w'",
                                                            "x: USER_INPUT"});
  CHECK(keys(ep.state_dict()) == Strings{"x_1"});
  CHECK(keys(ep.constants()) == Strings{"_0_w"});
}

TEST_CASE("create_constant_placeholder: persistent_buffer is ignored for other kinds",
          "[edit][constant]") {
  Program ep = epgraph_test::params_and_buffers_program();
  Node* n = create_constant_placeholder(ep, "p_extra", InputKind::PARAMETER, tensor({1}), true);
  CHECK(epgraph::to_string(ep.graph_signature().input_specs[1]) ==
        "p_extra: PARAMETER target='p_extra'");
  CHECK(n->name() == "p_extra");
}

TEST_CASE("create_constant_placeholder: placement", "[edit][constant]") {
  SECTION("default insertion point: the kind's canonical place (here the last one)") {
    Program ep = epgraph_test::params_and_buffers_program();
    create_constant_placeholder(ep, "c_k", InputKind::CONSTANT_TENSOR, tensor({1}));
    CHECK(epgraph_test::node_names(ep.graph()) ==
          Strings{"p_weight", "b_scale", "c_k", "mul", "output"});
    CHECK(input_spec_strings(ep.graph_signature()) ==
          Strings{"p_weight: PARAMETER target='weight'",
                  "b_scale: BUFFER target='scale' persistent=True",
                  "c_k: CONSTANT_TENSOR target='c_k'"});
    check_valid(ep);
  }
  SECTION("before a placeholder") {
    Program ep = epgraph_test::params_and_buffers_program();
    auto at = ep.graph().inserting_before(ep.graph().find_node("b_scale"));
    create_constant_placeholder(ep, "p_bias", InputKind::PARAMETER, tensor({1}));
    CHECK(placeholder_names(ep.graph()) == Strings{"p_weight", "p_bias", "b_scale"});
    CHECK(input_spec_strings(ep.graph_signature()) ==
          Strings{"p_weight: PARAMETER target='weight'", "p_bias: PARAMETER target='p_bias'",
                  "b_scale: BUFFER target='scale' persistent=True"});
    CHECK(keys(ep.state_dict()) == Strings{"weight", "scale", "p_bias"});
    check_valid(ep);
  }
  SECTION("inserting_after advances like FX: nodes keep their call order") {
    Program ep = epgraph_test::params_and_buffers_program();
    auto at = ep.graph().inserting_after(ep.graph().find_node("p_weight"));
    Node* a = create_constant_placeholder(ep, "p_a", InputKind::PARAMETER, tensor({1}));
    CHECK(ep.graph().insertion_point().anchor == a);
    create_constant_placeholder(ep, "p_b", InputKind::PARAMETER, tensor({1}));
    CHECK(placeholder_names(ep.graph()) == Strings{"p_weight", "p_a", "p_b", "b_scale"});
    CHECK(input_spec_strings(ep.graph_signature()) ==
          Strings{"p_weight: PARAMETER target='weight'", "p_a: PARAMETER target='p_a'",
                  "p_b: PARAMETER target='p_b'", "b_scale: BUFFER target='scale' persistent=True"});
    check_valid(ep);
  }
  SECTION("insertion point among compute nodes: the kind's canonical place") {
    Program ep = epgraph_test::params_and_buffers_program();
    Node* mul = ep.graph().find_node("mul");
    auto at = ep.graph().inserting_after(mul);
    Node* c = create_constant_placeholder(ep, "c_k", InputKind::CONSTANT_TENSOR, tensor({1}));
    CHECK(epgraph_test::node_names(ep.graph()) ==
          Strings{"p_weight", "b_scale", "c_k", "mul", "output"});
    CHECK(c->next() == mul);
    CHECK(ep.graph().insertion_point().anchor == mul);  // the caller's point is kept
    CHECK(input_spec_strings(ep.graph_signature()).back() == "c_k: CONSTANT_TENSOR target='c_k'");
    check_valid(ep);
  }
  SECTION("a graph without placeholders") {
    auto g = std::make_unique<epgraph::Graph>();
    Node* full = g->call_function("torch.ops.aten.full.default", {epgraph::Argument{2}, 1.0});
    g->output({full});
    epgraph::ExportGraphSignature sig;
    sig.output_specs = {epgraph_test::user_output("full")};
    Program ep(std::move(g), std::move(sig));
    {
      auto at = ep.graph().inserting_before(ep.graph().output_node());
      create_constant_placeholder(ep, "p_a", InputKind::PARAMETER, tensor({1}));
    }
    create_constant_placeholder(ep, "p_b", InputKind::PARAMETER, tensor({1}));
    CHECK(epgraph_test::node_names(ep.graph()) == Strings{"p_a", "p_b", "full", "output"});
    CHECK(input_spec_strings(ep.graph_signature()) ==
          Strings{"p_a: PARAMETER target='p_a'", "p_b: PARAMETER target='p_b'"});
    check_valid(ep);
  }
}

TEST_CASE("create_constant_placeholder: the same requested name returns the shared node",
          "[edit][constant]") {
  Program ep = epgraph_test::params_and_buffers_program();
  Node* first = create_constant_placeholder(ep, "p_shared", InputKind::PARAMETER, tensor({1}));
  const auto before = epgraph_test::snapshot(ep);
  Node* again = create_constant_placeholder(ep, "p_shared", InputKind::PARAMETER, tensor({9}));
  CHECK(again == first);
  CHECK(epgraph_test::snapshot(ep) == before);
  // A placeholder FX renamed is found by the name that was asked for.
  Node* renamed = create_constant_placeholder(ep, "mul", InputKind::CONSTANT_TENSOR, tensor({1}));
  CHECK(renamed->name() == "mul_1");
  CHECK(create_constant_placeholder(ep, "mul", InputKind::CONSTANT_TENSOR, tensor({1})) == renamed);
}

TEST_CASE("create_constant_placeholder: errors leave the program unchanged", "[edit][constant]") {
  SECTION("blank name") {
    Program ep = epgraph_test::params_and_buffers_program();
    EPGRAPH_CHECK_THROWS_UNCHANGED(
        ep, create_constant_placeholder(ep, "  ", InputKind::PARAMETER, tensor({1})), value_error,
        "Placeholder name cannot be empty");
  }
  SECTION("signature out of step with the graph") {
    Program ep = epgraph_test::params_and_buffers_program();
    ep.graph_signature().input_specs.pop_back();
    EPGRAPH_CHECK_THROWS_UNCHANGED(
        ep, create_constant_placeholder(ep, "p_a", InputKind::PARAMETER, tensor({1})),
        runtime_error, "Graph has 2 placeholder nodes but signature has 1 input specs");
  }
  SECTION("existing placeholder is a mutable buffer") {
    Program ep = epgraph_test::params_and_buffers_program();
    epgraph::create_mutable_buffer(ep, "b_cache", tensor({1}));
    EPGRAPH_CHECK_THROWS_UNCHANGED(
        ep, create_constant_placeholder(ep, "b_cache", InputKind::BUFFER, tensor({1}), true),
        runtime_error, "Placeholder 'b_cache' already exists as a mutable buffer");
  }
  SECTION("kinds that are not constants") {
    Program ep = epgraph_test::params_and_buffers_program();
    for (InputKind k : {InputKind::USER_INPUT, InputKind::CUSTOM_OBJ, InputKind::TOKEN}) {
      EPGRAPH_CHECK_THROWS_UNCHANGED(ep, create_constant_placeholder(ep, "p_a", k, tensor({1})),
                                     runtime_error, "Can only create constant input nodes.");
    }
  }
  SECTION("buffer without persistence") {
    Program ep = epgraph_test::params_and_buffers_program();
    EPGRAPH_CHECK_THROWS_UNCHANGED(
        ep, create_constant_placeholder(ep, "b_a", InputKind::BUFFER, tensor({1})), runtime_error,
        "Must set persistent_buffer when creating a new buffer.");
  }
  SECTION("target already taken") {
    Program ep = epgraph_test::params_and_buffers_program();
    EPGRAPH_CHECK_THROWS_UNCHANGED(
        ep, create_constant_placeholder(ep, "weight", InputKind::PARAMETER, tensor({1})),
        runtime_error, "Constant target 'weight' already exists in state_dict");
    Program ep2 = epgraph_test::constants_program();
    auto at = ep2.graph().inserting_before(ep2.graph().find_node("x"));
    EPGRAPH_CHECK_THROWS_UNCHANGED(
        ep2, create_constant_placeholder(ep2, "npb", InputKind::CONSTANT_TENSOR, tensor({1})),
        runtime_error, "Constant target 'npb' already exists in constants");
    Program ep3 = epgraph_test::params_and_buffers_program();
    ep3.state_dict() = {};
    EPGRAPH_CHECK_THROWS_UNCHANGED(
        ep3, create_constant_placeholder(ep3, "scale", InputKind::BUFFER, tensor({1}), false),
        runtime_error,
        "Constant target 'scale' already exists as the target of input spec 'b_scale'");
  }
  SECTION("caller's position after a user input") {
    Program ep = epgraph_test::plain_program();
    {
      auto at = ep.graph().inserting_after(ep.graph().find_node("x"));
      EPGRAPH_CHECK_THROWS_UNCHANGED(
          ep, create_constant_placeholder(ep, "p_w", InputKind::PARAMETER, tensor({1})),
          runtime_error,
          "Failed to insert p_w; Const placeholder nodes must be inserted before user input "
          "nodes in the graph.");
    }
    Program ep2 = epgraph_test::linear_batchnorm_program();
    auto at = ep2.graph().inserting_before(ep2.graph().find_node("x")->next());  // right after x
    EPGRAPH_CHECK_THROWS_UNCHANGED(
        ep2, create_constant_placeholder(ep2, "c_k", InputKind::CONSTANT_TENSOR, tensor({1})),
        runtime_error,
        "Failed to insert c_k; Const placeholder nodes must be inserted before user input nodes "
        "in the graph.");
  }
}

TEST_CASE("delete_constant_placeholder: removes node, spec and data", "[edit][delete]") {
  SECTION("a parameter of a real program, once its users are gone") {
    Program ep = epgraph_test::linear_batchnorm_program();
    Node* bias = ep.graph().find_node("p_linear_bias");
    Node* addmm = ep.graph().find_node("addmm");
    Node* x = ep.graph().find_node("x");
    Node* permute = ep.graph().find_node("permute");
    Node* mm = nullptr;
    {
      auto at = ep.graph().inserting_before(addmm);
      mm = ep.graph().call_function("torch.ops.aten.mm.default", {x, permute});
    }
    addmm->replace_all_uses_with(mm);
    ep.graph().erase_node(addmm);
    delete_constant_placeholder(ep, bias);
    CHECK(ep.graph().find_node("p_linear_bias") == nullptr);
    CHECK(keys(ep.state_dict()) == Strings{"linear.weight", "bn.weight", "bn.bias",
                                           "bn.running_mean", "bn.running_var",
                                           "bn.num_batches_tracked"});
    CHECK(input_spec_strings(ep.graph_signature())[1] ==
          "p_bn_weight: PARAMETER target='bn.weight'");
    CHECK(ep.graph_signature().input_specs.size() == 7);
    check_valid(ep);
  }
  SECTION("a non-persistent buffer lives in constants") {
    Program ep = epgraph_test::constants_program();
    Node* b_npb = ep.graph().find_node("b_npb");
    Node* add_2 = ep.graph().find_node("add_2");
    add_2->replace_input_with(b_npb, ep.graph().find_node("add_1"));
    delete_constant_placeholder(ep, b_npb);
    CHECK(keys(ep.state_dict()) == Strings{"w", "pb"});
    CHECK(keys(ep.constants()) == Strings{"lifted_tensor_0", "obj"});
    CHECK(placeholder_names(ep.graph()) == Strings{"p_w", "b_pb", "c_lifted_tensor_0", "obj", "x"});
    check_valid(ep);
  }
  SECTION("data already missing is not an error") {
    Program ep = epgraph_test::params_and_buffers_program();
    Node* c = create_constant_placeholder(ep, "c_k", InputKind::CONSTANT_TENSOR, tensor({1}));
    ep.constants() = {};
    delete_constant_placeholder(ep, c);
    CHECK(placeholder_names(ep.graph()) == Strings{"p_weight", "b_scale"});
    CHECK(ep.graph_signature().input_specs.size() == 2);
  }
}

TEST_CASE("delete_constant_placeholder: errors leave the program unchanged", "[edit][delete]") {
  SECTION("null and foreign nodes") {
    Program ep = epgraph_test::params_and_buffers_program();
    Program other = epgraph_test::params_and_buffers_program();
    EPGRAPH_CHECK_THROWS_UNCHANGED(ep, delete_constant_placeholder(ep, nullptr), value_error,
                                   "Cannot delete a null node");
    Node* foreign = other.graph().find_node("mul");
    EPGRAPH_CHECK_THROWS_UNCHANGED(ep, delete_constant_placeholder(ep, foreign), value_error,
                                   "Node 'mul' does not belong to this program's graph");
  }
  SECTION("node with users") {
    Program ep = epgraph_test::params_and_buffers_program();
    EPGRAPH_CHECK_THROWS_UNCHANGED(
        ep, delete_constant_placeholder(ep, ep.graph().find_node("p_weight")), runtime_error,
        "Cannot delete input node p_weight since it has users in the graph.");
  }
  SECTION("user inputs, custom objects, tokens and compute nodes") {
    auto g = std::make_unique<epgraph::Graph>();
    Node* token = g->placeholder("token");
    Node* obj = g->placeholder("obj");
    Node* x = g->placeholder("x");
    Node* y = g->placeholder("y");
    Node* relu = g->call_function("torch.ops.aten.relu.default", {x});
    g->call_function("torch.ops.aten.neg.default", {x});
    g->output({relu});
    epgraph::ExportGraphSignature sig;
    sig.input_specs = {
        epgraph_test::input_token("token"),
        {InputKind::CUSTOM_OBJ, epgraph::CustomObjArgument{"obj", "Foo"}, std::string("obj")},
        epgraph_test::user_input("x"),
        epgraph_test::user_input("y")};
    sig.output_specs = {epgraph_test::user_output("relu")};
    epgraph::ordered_dict<Program::constant_type> constants;
    constants.insert("obj", epgraph::ScriptObject{"Foo", {}});
    Program ep(std::move(g), std::move(sig), {}, std::move(constants));
    for (const char* name : {"token", "obj", "y", "neg"}) {
      EPGRAPH_CHECK_THROWS_UNCHANGED(
          ep, delete_constant_placeholder(ep, ep.graph().find_node(name)), runtime_error,
          std::string("Cannot delete input node ") + name +
              " since it is not a parameter, a buffer, nor a lifted tensor constant.");
    }
    static_cast<void>(token);
    static_cast<void>(obj);
    static_cast<void>(y);
  }
  SECTION("a buffer whose mutation output is another node") {
    Program ep = epgraph_test::params_and_buffers_program();
    Node* cache = epgraph::create_mutable_buffer(ep, "b_cache", tensor({2}));
    Node* zeros = ep.graph().call_function("torch.ops.aten.zeros.default", {epgraph::Argument{2}});
    epgraph::set_buffer_mutation(ep, "cache", zeros);
    REQUIRE(cache->users().empty());
    EPGRAPH_CHECK_THROWS_UNCHANGED(
        ep, delete_constant_placeholder(ep, cache), runtime_error,
        "Cannot delete input node b_cache since output 'zeros' mutates it.");
  }
  SECTION("node anchoring an insertion point") {
    Program ep = epgraph_test::params_and_buffers_program();
    Node* c = create_constant_placeholder(ep, "c_k", InputKind::CONSTANT_TENSOR, tensor({1}));
    auto at = ep.graph().inserting_after(c);
    EPGRAPH_CHECK_THROWS_UNCHANGED(ep, delete_constant_placeholder(ep, c), runtime_error,
                                   "Cannot erase node 'c_k' while it anchors an insertion point");
  }
}

TEST_CASE("create_constant_placeholder: the default point puts each kind at its canonical place",
          "[edit][constant][order]") {
  using epgraph::input_order_departures;
  SECTION("a parameter on a program with a buffer and no user input goes before the buffer") {
    // ExecuTorch appends it after b_scale, an order NativeRT refuses.
    Program ep = epgraph_test::params_and_buffers_program();
    Node* p = create_constant_placeholder(ep, "p_new", InputKind::PARAMETER, tensor({2}));
    CHECK(epgraph_test::node_names(ep.graph()) ==
          Strings{"p_weight", "p_new", "b_scale", "mul", "output"});
    CHECK(p->prev()->name() == "p_weight");
    CHECK(input_spec_strings(ep.graph_signature()) ==
          Strings{"p_weight: PARAMETER target='weight'", "p_new: PARAMETER target='p_new'",
                  "b_scale: BUFFER target='scale' persistent=True"});
    CHECK(keys(ep.state_dict()) == Strings{"weight", "scale", "p_new"});
    CHECK(input_order_departures(ep.graph_signature()).empty());
    check_valid(ep);
  }
  SECTION("each kind on a program with every kind and a user input") {
    struct Case {
      InputKind kind;
      std::optional<bool> persistent;
      Strings placeholders;
    };
    const Case cases[] = {
        {InputKind::PARAMETER,
         std::nullopt,
         {"p_w", "new", "b_pb", "b_npb", "c_lifted_tensor_0", "obj", "x"}},
        {InputKind::BUFFER, true, {"p_w", "b_pb", "new", "b_npb", "c_lifted_tensor_0", "obj", "x"}},
        {InputKind::BUFFER,
         false,
         {"p_w", "b_pb", "b_npb", "new", "c_lifted_tensor_0", "obj", "x"}},
        {InputKind::CONSTANT_TENSOR,
         std::nullopt,
         {"p_w", "b_pb", "b_npb", "c_lifted_tensor_0", "new", "obj", "x"}},
    };
    for (const Case& c : cases) {
      INFO(epgraph::kind_name(c.kind) << " " << c.persistent.value_or(true));
      Program ep = epgraph_test::constants_program();
      // ExecuTorch refuses these ("Failed to insert new; ..."): its node goes after x.
      Node* n = create_constant_placeholder(ep, "new", c.kind, tensor({4}), c.persistent);
      CHECK(placeholder_names(ep.graph()) == c.placeholders);
      std::vector<std::string> spec_names;
      for (const auto& s : ep.graph_signature().input_specs) spec_names.push_back(s.name());
      CHECK(spec_names == c.placeholders);
      const auto at = std::find(c.placeholders.begin(), c.placeholders.end(), "new");
      REQUIRE(at + 1 != c.placeholders.end());
      CHECK(n->next()->name() == *(at + 1));  // the node sits where its spec does
      CHECK(input_order_departures(ep.graph_signature()).empty());
      check_valid(ep);
    }
  }
  SECTION("a point among compute nodes is treated as the default point") {
    Program ep = epgraph_test::linear_batchnorm_program();
    auto at = ep.graph().inserting_after(ep.graph().find_node("addmm"));
    create_constant_placeholder(ep, "c_k", InputKind::CONSTANT_TENSOR, tensor({1}));
    CHECK(placeholder_names(ep.graph()) ==
          Strings{"p_linear_weight", "p_linear_bias", "p_bn_weight", "p_bn_bias",
                  "b_bn_running_mean", "b_bn_running_var", "b_bn_num_batches_tracked", "c_k", "x"});
    CHECK(ep.graph().insertion_point().anchor == ep.graph().find_node("addmm"));
    CHECK(input_order_departures(ep.graph_signature()).empty());
    check_valid(ep);
  }
  SECTION("the caller's point inside the placeholders is kept, departure and all") {
    Program ep = epgraph_test::params_and_buffers_program();
    auto at = ep.graph().inserting_before(ep.graph().find_node("p_weight"));
    create_constant_placeholder(ep, "c_k", InputKind::CONSTANT_TENSOR, tensor({1}));
    CHECK(placeholder_names(ep.graph()) == Strings{"c_k", "p_weight", "b_scale"});
    CHECK(input_order_departures(ep.graph_signature()) ==
          Strings{"Input 'p_weight' (PARAMETER) comes after input 'c_k' (CONSTANT_TENSOR): inputs "
                  "must be ordered TOKEN < PARAMETER < persistent BUFFER < non-persistent BUFFER "
                  "< CONSTANT_TENSOR < CUSTOM_OBJ < USER_INPUT",
                  "Input 'b_scale' (persistent BUFFER) comes after input 'c_k' (CONSTANT_TENSOR): "
                  "inputs must be ordered TOKEN < PARAMETER < persistent BUFFER < non-persistent "
                  "BUFFER < CONSTANT_TENSOR < CUSTOM_OBJ < USER_INPUT"});
    CHECK_NOTHROW(epgraph::verify(ep));  // torch's verifier does not look at the order
  }
}
