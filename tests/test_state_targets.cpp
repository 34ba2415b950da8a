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
