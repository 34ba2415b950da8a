// Programs whose input order departs from torch's canonical order, as torch.export.export(...,
// strict=True) writes them (issue 13 item 4): verify accepts them at its default level (torch's
// verifier does), and no edit adds a departure. The program is built here in the shape of
// ../shared/cases/fidelity/strict_order.pt2, so these tests do not need the shared folder
// (tests/archive/test_strict_order_archive.cpp reads the file itself when present).
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <epgraph/program/edit.hpp>
#include <epgraph/program/verify.hpp>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "support/checks.hpp"
#include "support/program_builders.hpp"
#include "support/snapshot.hpp"

using epgraph::input_order_departures;
using epgraph::InputKind;
using epgraph::Node;
using epgraph_test::input_spec_strings;
using epgraph_test::keys;
using epgraph_test::output_names;
using epgraph_test::output_spec_strings;
using epgraph_test::placeholder_names;
using epgraph_test::Program;
using epgraph_test::tensor;
using Strings = std::vector<std::string>;

namespace {

// `forward(x): return x * self.gain + self.offset + self.w` exported with strict=True by torch
// 2.13 (make_cases.py in ../shared/cases/fidelity): the lifted constant comes before the buffer.
//     inputs [p_w: PARAMETER 'w', c_gain: CONSTANT_TENSOR 'gain',
//             b_offset: BUFFER 'offset' persistent, x: USER_INPUT]
//     %mul = mul(x, c_gain); %add = add(mul, b_offset); %add_1 = add(add, p_w)
//     outputs [add_1: USER_OUTPUT]
Program strict_order_program() {
  auto g = std::make_unique<epgraph::Graph>();
  const epgraph::HostTensor w = tensor({3}, 1.0);
  const epgraph::HostTensor gain = tensor({3}, 1.5);
  const epgraph::HostTensor offset = tensor({3}, 0.0);
  Node* p_w = epgraph_test::add_placeholder(*g, "p_w", w);
  Node* c_gain = epgraph_test::add_placeholder(*g, "c_gain", gain);
  Node* b_offset = epgraph_test::add_placeholder(*g, "b_offset", offset);
  Node* x = epgraph_test::add_placeholder(*g, "x", tensor({3}));
  Node* mul = g->call_function("torch.ops.aten.mul.Tensor", {x, c_gain});
  Node* add = g->call_function("torch.ops.aten.add.Tensor", {mul, b_offset});
  Node* add_1 = g->call_function("torch.ops.aten.add.Tensor", {add, p_w});
  g->output({add_1});
  epgraph::ExportGraphSignature sig;
  sig.input_specs = {epgraph_test::parameter("p_w", "w"),
                     epgraph_test::constant_tensor("c_gain", "gain"),
                     epgraph_test::buffer("b_offset", "offset"), epgraph_test::user_input("x")};
  sig.output_specs = {epgraph_test::user_output("add_1")};
  epgraph::ordered_dict<epgraph::HostTensor> sd;
  sd.insert("w", w);
  sd.insert("offset", offset);
  epgraph::ordered_dict<Program::constant_type> constants;
  constants.insert("gain", gain);
  return Program(std::move(g), std::move(sig), std::move(sd), std::move(constants));
}

const char* const order_rule =
    "inputs must be ordered TOKEN < PARAMETER < persistent BUFFER < non-persistent BUFFER < "
    "CONSTANT_TENSOR < CUSTOM_OBJ < USER_INPUT";

const Strings& original_departures() {
  static const Strings d{
      std::string(
          "Input 'b_offset' (persistent BUFFER) comes after input 'c_gain' (CONSTANT_TENSOR): ") +
      order_rule};
  return d;
}

}  // namespace

TEST_CASE("strict order: the program verifies at torch's level, departs at the strict one",
          "[order][verify]") {
  const Program ep = strict_order_program();
  epgraph_test::check_valid(ep);
  CHECK(input_order_departures(ep.graph_signature()) == original_departures());
  epgraph::VerifyOptions strict;
  strict.level = epgraph::VerifyLevel::canonical_order;
  CHECK_THROWS_AS(epgraph::verify(ep, strict), epgraph::verification_error);
}

TEST_CASE("strict order: create_mutable_buffer goes before the first spec ranking after it",
          "[order][edit][mutable_buffer]") {
  Program ep = strict_order_program();
  Node* b = epgraph::create_mutable_buffer(ep, "b_cache", tensor({3}));
  // Where ExecuTorch 1.5.1's create_mutable_buffer puts it on torch.export.load of the same
  // program (checked by tests/interop/test_fidelity.py): before c_gain.
  CHECK(placeholder_names(ep.graph()) == Strings{"p_w", "b_cache", "c_gain", "b_offset", "x"});
  CHECK(b->prev()->name() == "p_w");
  CHECK(input_spec_strings(ep.graph_signature()) ==
        Strings{"p_w: PARAMETER target='w'", "b_cache: BUFFER target='cache' persistent=True",
                "c_gain: CONSTANT_TENSOR target='gain'",
                "b_offset: BUFFER target='offset' persistent=True", "x: USER_INPUT"});
  CHECK(output_names(ep.graph()) == Strings{"b_cache", "add_1"});
  CHECK(output_spec_strings(ep.graph_signature()) ==
        Strings{"b_cache: BUFFER_MUTATION target='cache'", "add_1: USER_OUTPUT"});
  CHECK(keys(ep.state_dict()) == Strings{"w", "offset", "cache"});
  // The departure the program had, and no other.
  CHECK(input_order_departures(ep.graph_signature()) == original_departures());
  epgraph_test::check_valid(ep);

  // A second buffer goes after the first, still before c_gain.
  epgraph::create_mutable_buffer(ep, "b_cache2", tensor({3}));
  CHECK(placeholder_names(ep.graph()) ==
        Strings{"p_w", "b_cache", "b_cache2", "c_gain", "b_offset", "x"});
  CHECK(output_names(ep.graph()) == Strings{"b_cache", "b_cache2", "add_1"});
  CHECK(input_order_departures(ep.graph_signature()) == original_departures());
  epgraph_test::check_valid(ep);
}

TEST_CASE("strict order: create_constant_placeholder at the default point adds no departure",
          "[order][edit][constant]") {
  struct Case {
    InputKind kind;
    std::optional<bool> persistent;
    Strings placeholders;
  };
  // Before the first spec that ranks after the new one: c_gain (rank CONSTANT_TENSOR) for a
  // parameter or buffer; x for a constant tensor, which therefore lands after b_offset.
  const Case cases[] = {
      {InputKind::PARAMETER, std::nullopt, {"p_w", "new", "c_gain", "b_offset", "x"}},
      {InputKind::BUFFER, true, {"p_w", "new", "c_gain", "b_offset", "x"}},
      {InputKind::BUFFER, false, {"p_w", "new", "c_gain", "b_offset", "x"}},
      {InputKind::CONSTANT_TENSOR, std::nullopt, {"p_w", "c_gain", "b_offset", "new", "x"}},
  };
  for (const Case& c : cases) {
    INFO(epgraph::kind_name(c.kind) << " persistent=" << c.persistent.value_or(true));
    Program ep = strict_order_program();
    Node* n = epgraph::create_constant_placeholder(ep, "new", c.kind, tensor({3}), c.persistent);
    CHECK(placeholder_names(ep.graph()) == c.placeholders);
    Strings spec_names;
    for (const auto& s : ep.graph_signature().input_specs) spec_names.push_back(s.name());
    CHECK(spec_names == c.placeholders);
    CHECK(input_order_departures(ep.graph_signature()) == original_departures());
    epgraph_test::check_valid(ep);
    // And deleting it restores the program's order.
    const auto with_new = epgraph_test::snapshot(ep);
    epgraph::delete_constant_placeholder(ep, n);
    CHECK(placeholder_names(ep.graph()) == Strings{"p_w", "c_gain", "b_offset", "x"});
    CHECK(input_order_departures(ep.graph_signature()) == original_departures());
    CHECK(epgraph_test::snapshot(ep) != with_new);
  }
}

TEST_CASE("strict order: a refused edit leaves the program as it was", "[order][edit]") {
  Program ep = strict_order_program();
  EPGRAPH_CHECK_THROWS_UNCHANGED(ep, epgraph::create_mutable_buffer(ep, "b_offset", tensor({3})),
                                 epgraph::runtime_error,
                                 "Buffer target 'offset' already exists in state_dict");
  EPGRAPH_CHECK_THROWS_UNCHANGED(ep, epgraph::create_mutable_buffer(ep, "b_gain", tensor({3})),
                                 epgraph::runtime_error,
                                 "Buffer target 'gain' already exists in constants");
}
