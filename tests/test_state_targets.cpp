// State targets torch loads but cannot build a module for (issue 31, item 7): a persistent
// buffer found only in `constants` (torch's verifier accepts it, ep.module() raises KeyError),
// and targets that ep.module() cannot register because its module already has that attribute
// (`forward`, `training`, ...). tests/interop/test_formats_and_limits.py shows both in torch.
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <epgraph/program/edit.hpp>
#include <epgraph/program/lookup.hpp>
#include <epgraph/program/module_attributes.hpp>
#include <epgraph/program/verify.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "support/program_builders.hpp"
#include "support/snapshot.hpp"

using epgraph::InputKind;
using epgraph::Node;
using epgraph_test::Program;
using epgraph_test::tensor;
using TargetList = std::vector<std::string>;

namespace {

TargetList target_violations(const Program& ep) {
  try {
    epgraph::verify(ep);
  } catch (const epgraph::verification_error& e) {
    return e.violations();
  }
  return {};
}

Node* node_named(Program& ep, std::string_view name) {
  for (Node& n : ep.graph().nodes()) {
    if (n.name() == name) return &n;
  }
  return nullptr;
}

// params_and_buffers_program with its persistent buffer 'scale' moved from state_dict to
// constants, as torch lifts some buffers (e.g. from invoke_subgraph tracing).
Program buffer_in_constants() {
  Program ep = epgraph_test::params_and_buffers_program();
  const epgraph_test::Tensor scale = *ep.state_dict().find("scale");
  ep.state_dict().erase("scale");
  ep.constants().insert_or_assign("scale", scale);
  return ep;
}

}  // namespace

TEST_CASE("persistent buffer found only in constants: reported, saying why, lookups find it",
          "[verify][state]") {
  Program ep = buffer_in_constants();
  CHECK(target_violations(ep) ==
        TargetList{"Buffer scale is not in the state dict but in the constants dictionary: torch's "
                   "verifier accepts that, ep.module() raises KeyError('scale') (it reads "
                   "persistent buffers from the state dict)"});
  Node* b_scale = node_named(ep, "b_scale");
  REQUIRE(b_scale != nullptr);
  // The lookups find its data where it is.
  const epgraph_test::Tensor* data = epgraph::get_param_tensor(std::as_const(ep), b_scale);
  REQUIRE(data != nullptr);
  CHECK(data == std::get_if<epgraph_test::Tensor>(ep.constants().find("scale")));

  SECTION("deleting it removes it from constants") {
    Node* mul = node_named(ep, "mul");
    REQUIRE(mul != nullptr);
    // mul reads b_scale: drop the use first (return the weight instead).
    mul->replace_input_with(b_scale, node_named(ep, "p_weight"));
    epgraph::delete_constant_placeholder(ep, b_scale);
    CHECK(ep.constants().find("scale") == nullptr);
    CHECK(epgraph_test::keys(ep.state_dict()) == TargetList{"weight"});
    CHECK(epgraph_test::keys(ep.constants()) == TargetList{});
    CHECK(target_violations(ep).empty());
  }
  SECTION("in neither dictionary: torch's message") {
    ep.constants().erase("scale");
    CHECK(target_violations(ep) == TargetList{"Buffer scale is not in the state dict."});
  }
}

TEST_CASE("module_attribute_in: the component ep.module() already has", "[verify][state]") {
  using epgraph::module_attribute_in;
  CHECK(module_attribute_in("forward") == std::optional<std::string_view>("forward"));
  CHECK(module_attribute_in("training") == std::optional<std::string_view>("training"));
  CHECK(module_attribute_in("_modules") == std::optional<std::string_view>("_modules"));
  // GraphModule attributes exist on the root only; the submodules torch makes are plain.
  CHECK(module_attribute_in("graph") == std::optional<std::string_view>("graph"));
  CHECK(module_attribute_in("code") == std::optional<std::string_view>("code"));
  CHECK(module_attribute_in("layers.graph") == std::nullopt);
  CHECK(module_attribute_in("graph.w") == std::optional<std::string_view>("graph"));
  CHECK(module_attribute_in("layers.0.training") == std::optional<std::string_view>("training"));
  CHECK(module_attribute_in("layers.0.attn.k_cache") == std::nullopt);
  CHECK(module_attribute_in("weight") == std::nullopt);
  CHECK(module_attribute_in("list") == std::nullopt);
  CHECK(module_attribute_in("forwards") == std::nullopt);
  CHECK(module_attribute_in("") == std::nullopt);
}

TEST_CASE("verify reports state targets ep.module() cannot register", "[verify][state]") {
  Program ep = epgraph_test::params_and_buffers_program();
  auto& specs = ep.graph_signature().input_specs;
  specs[0] = epgraph_test::parameter("p_weight", "training");
  specs[1] = epgraph_test::buffer("b_scale", "blocks.0.forward");
  // The state checks still run (the keys are missing), then the registration rule.
  CHECK(target_violations(ep) ==
        TargetList{"Parameter training is not in the state dict.",
                   "Buffer blocks.0.forward is not in the state dict.",
                   "Input spec 'p_weight' (PARAMETER) has target 'training', which ep.module() "
                   "cannot register: its module already has an attribute 'training'",
                   "Input spec 'b_scale' (BUFFER) has target 'blocks.0.forward', which ep.module() "
                   "cannot register: its module already has an attribute 'forward'"});
}

TEST_CASE("edits refuse state targets ep.module() cannot register, changing nothing",
          "[edit][state]") {
  Program ep = epgraph_test::params_and_buffers_program();
  const auto before = epgraph_test::snapshot(ep);
  const std::string tail =
      " cannot be used: ep.module() registers it on a module that already has an attribute ";
  CHECK_THROWS_MATCHES(
      epgraph::create_mutable_buffer(ep, "forward", tensor({2})), epgraph::value_error,
      Catch::Message("Buffer target 'forward'" + tail +
                     "'forward' (torch raises KeyError \"attribute 'forward' already exists\")"));
  CHECK_THROWS_MATCHES(
      epgraph::create_mutable_buffer(ep, "b_training", tensor({2})), epgraph::value_error,
      Catch::Message("Buffer target 'training' (from name 'b_training')" + tail +
                     "'training' (torch raises KeyError \"attribute 'training' already "
                     "exists\")"));
  for (InputKind kind : {InputKind::PARAMETER, InputKind::BUFFER, InputKind::CONSTANT_TENSOR}) {
    std::optional<bool> persistent;
    if (kind == InputKind::BUFFER) persistent = true;
    CHECK_THROWS_MATCHES(
        epgraph::create_constant_placeholder(ep, "to", kind, tensor({2}), persistent),
        epgraph::value_error,
        Catch::Message("Constant target 'to'" + tail +
                       "'to' (torch raises KeyError \"attribute 'to' already exists\")"));
  }
  CHECK(epgraph_test::snapshot(ep) == before);
  // Names FX renames are free: `list` (a builtin) becomes `list_1`, `a.forward` becomes
  // `a_forward`; neither is an attribute.
  Node* list =
      epgraph::create_constant_placeholder(ep, "list", InputKind::CONSTANT_TENSOR, tensor({2}));
  CHECK(list->name() == "list_1");
  Node* dotted = epgraph::create_mutable_buffer(ep, "a.forward", tensor({2}));
  CHECK(dotted->name() == "a_forward");
  CHECK(target_violations(ep).empty());
}

// Found by a break test: `pt2_edit add-buffer --name b_lin` on a program with a Linear `lin`
// gave the buffer the target 'lin' beside 'lin.weight'; verify said OK, torch loaded it, and
// ep.module() failed ("Node lin_weight target lin.weight references nonexistent attribute
// weight of lin"). The same with `b_true_graph_0` on a torch.cond program (KeyError "attribute
// 'true_graph_0' already exists"). tests/interop/test_cli_errors.py runs both through torch.
TEST_CASE("module_paths_clash / falls_on_submodule: one target is the other's module",
          "[verify][state]") {
  using epgraph::falls_on_submodule;
  using epgraph::module_paths_clash;
  CHECK(module_paths_clash("lin", "lin.weight"));
  CHECK(module_paths_clash("layers.0.attn.k", "layers.0"));
  CHECK_FALSE(module_paths_clash("lin", "lin"));  // the same key: the duplicate rules' business
  CHECK_FALSE(module_paths_clash("lin", "linear.weight"));
  CHECK_FALSE(module_paths_clash("lin", "lin_weight"));
  CHECK(falls_on_submodule("true_graph_0", "true_graph_0"));
  CHECK(falls_on_submodule("true_graph_0.w", "true_graph_0"));
  CHECK_FALSE(falls_on_submodule("true_graph_01", "true_graph_0"));
  CHECK_FALSE(falls_on_submodule("x.true_graph_0", "true_graph_0"));
}

namespace {

// params_and_buffers_program with the parameter at 'lin.weight' and the buffer at `buffer`.
Program lin_program(const std::string& buffer) {
  Program ep = epgraph_test::params_and_buffers_program();
  const epgraph_test::Tensor weight = *ep.state_dict().find("weight");
  const epgraph_test::Tensor scale = *ep.state_dict().find("scale");
  ep.state_dict().erase("weight");
  ep.state_dict().erase("scale");
  ep.state_dict().insert_or_assign("lin.weight", weight);
  ep.state_dict().insert_or_assign(buffer, scale);
  auto& specs = ep.graph_signature().input_specs;
  specs[0] = epgraph_test::parameter("p_weight", "lin.weight");
  specs[1] = epgraph_test::buffer("b_scale", buffer);
  return ep;
}

}  // namespace

TEST_CASE("verify reports state targets that are another's module path", "[verify][state]") {
  CHECK(target_violations(lin_program("scale")).empty());
  CHECK(target_violations(lin_program("lin")) ==
        TargetList{"Input spec 'b_scale' (BUFFER) has target 'lin', which ep.module() cannot "
                   "register: target 'lin.weight' of input spec 'p_weight' needs a submodule "
                   "'lin' there"});
  CHECK(target_violations(lin_program("lin.weight.scale")) ==
        TargetList{"Input spec 'p_weight' (PARAMETER) has target 'lin.weight', which ep.module() "
                   "cannot register: target 'lin.weight.scale' of input spec 'b_scale' needs a "
                   "submodule 'lin.weight' there"});
}

TEST_CASE("edits refuse a target on another's module path or a nested graph, changing nothing",
          "[edit][state]") {
  Program ep = lin_program("scale");
  (void)ep.add_nested_graph("body", std::make_unique<epgraph::Graph>());
  Node* branch = ep.graph().get_attr("true_graph_0");
  branch->mutable_meta().serialized = R"({"inputs": [], "outputs": [], "nodes": []})";
  const auto before = epgraph_test::snapshot(ep);
  const std::string clash =
      " cannot be used: target 'lin.weight' of input spec 'p_weight' is already there, and "
      "ep.module() cannot register 'lin' as a tensor and as the module of 'lin.weight'";
  CHECK_THROWS_MATCHES(epgraph::create_mutable_buffer(ep, "b_lin", tensor({2})),
                       epgraph::value_error,
                       Catch::Message("Buffer target 'lin' (from name 'b_lin')" + clash));
  CHECK_THROWS_MATCHES(
      epgraph::create_constant_placeholder(ep, "lin", InputKind::CONSTANT_TENSOR, tensor({2})),
      epgraph::value_error, Catch::Message("Constant target 'lin'" + clash));
  CHECK_THROWS_MATCHES(
      epgraph::create_mutable_buffer(ep, "b_body", tensor({2})), epgraph::value_error,
      Catch::Message("Buffer target 'body' (from name 'b_body') cannot be used: 'body' is the "
                     "submodule of the program's nested graph 'body' in ep.module()"));
  CHECK_THROWS_MATCHES(
      epgraph::create_mutable_buffer(ep, "b_true_graph_0", tensor({2})), epgraph::value_error,
      Catch::Message("Buffer target 'true_graph_0' (from name 'b_true_graph_0') cannot be used: "
                     "'true_graph_0' is the submodule of the nested graph get_attr node "
                     "'true_graph_0' reads in ep.module()"));
  CHECK(epgraph_test::snapshot(ep) == before);
  // a name beside them is free
  Node* ok = epgraph::create_mutable_buffer(ep, "b_lin_cache", tensor({2}));
  CHECK(ok->name() == "b_lin_cache");
  std::optional<std::string> target;
  for (const epgraph::InputSpec& spec : ep.graph_signature().input_specs) {
    if (spec.name() == "b_lin_cache") target = spec.target();
  }
  CHECK(target == std::optional<std::string>("lin_cache"));
}
