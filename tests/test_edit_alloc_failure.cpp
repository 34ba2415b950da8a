// The strong guarantee of the graph edits under allocation failure: each edit is run with its
// 1st, 2nd, 3rd, ... allocation failing (std::bad_alloc), and after every failure the program
// must be exactly as before (snapshot: graph, users, metadata, insertion point, namespace,
// signature, dictionaries). The last run, with no failure, must give the same program as an
// undisturbed run.
//
// The executable's global operator new/delete are replaced (support/alloc_failure_replacement.cpp);
// the replacement only differs from the default while a test arms it.
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <epgraph/passes/subgraph_rewriter.hpp>
#include <epgraph/program/edit.hpp>
#include <epgraph/program/verify.hpp>
#include <new>
#include <string>
#include <vector>

#include "support/alloc_failure.hpp"
#include "support/fx_cases.hpp"
#include "support/program_builders.hpp"
#include "support/snapshot.hpp"

namespace {

using epgraph::InputKind;
using epgraph::Node;
using epgraph_test::Program;
using epgraph_test::snapshot;
using epgraph_test::tensor;

// Runs `edit` on programs made by `make` with each allocation failing in turn; returns the number
// of failures seen (each checked to leave the program unchanged).
template <class Make, class Edit>
long check_strong_under_allocation_failure(Make make, Edit edit) {
  Program reference = make();
  edit(reference);
  const auto expected = snapshot(reference);
  Program ep = make();
  long failures = 0;
  for (long n = 0; n < 100000; ++n) {
    const auto before = snapshot(ep);
    bool failed = false;
    epgraph_test::fail_allocation_after(n);
    try {
      edit(ep);
    } catch (const std::bad_alloc&) {
      failed = true;
    }
    epgraph_test::stop_failing_allocations();
    if (!failed) break;
    ++failures;
    const bool unchanged = snapshot(ep) == before;
    if (!unchanged) {
      INFO("allocation " << n << " failed and changed the program");
      CHECK(snapshot(ep) == before);
      return failures;
    }
  }
  CHECK(snapshot(ep) == expected);
  return failures;
}

}  // namespace

TEST_CASE("allocation failure: create_mutable_buffer", "[edit][strong]") {
  const epgraph::HostTensor data = tensor({1, 2, 8, 4});
  CHECK(check_strong_under_allocation_failure(
            epgraph_test::linear_batchnorm_program,
            [&](Program& ep) { epgraph::create_mutable_buffer(ep, "b_k_cache", data); }) > 10);
  CHECK(check_strong_under_allocation_failure(epgraph_test::plain_program, [&](Program& ep) {
          epgraph::create_mutable_buffer(ep, "x", data);
        }) > 10);
  CHECK(check_strong_under_allocation_failure(
            [] { return epgraph_test::token_program(true); },
            [&](Program& ep) { epgraph::create_mutable_buffer(ep, "0_cache", data); }) > 10);
}

TEST_CASE("allocation failure: create_constant_placeholder", "[edit][strong]") {
  const epgraph::HostTensor data = tensor({4});
  for (InputKind kind : {InputKind::PARAMETER, InputKind::BUFFER, InputKind::CONSTANT_TENSOR}) {
    for (bool persistent : {true, false}) {
      CHECK(
          check_strong_under_allocation_failure(epgraph_test::constants_program, [&](Program& ep) {
            auto at = ep.graph().inserting_before(ep.graph().find_node("x"));
            epgraph::create_constant_placeholder(ep, "c_new", kind, data, persistent);
          }) > 10);
    }
  }
  // Insertion point among compute nodes: epgraph moves the node into the placeholder prefix.
  CHECK(check_strong_under_allocation_failure(
            epgraph_test::params_and_buffers_program, [&](Program& ep) {
              auto at = ep.graph().inserting_after(ep.graph().find_node("mul"));
              epgraph::create_constant_placeholder(ep, "mul", InputKind::PARAMETER, data);
            }) > 10);
}

TEST_CASE("allocation failure: delete_constant_placeholder", "[edit][strong]") {
  auto make = [] {
    Program ep = epgraph_test::constants_program();
    ep.graph().find_node("add_2")->replace_input_with(ep.graph().find_node("b_npb"),
                                                      ep.graph().find_node("add_1"));
    return ep;
  };
  CHECK(check_strong_under_allocation_failure(make, [](Program& ep) {
          epgraph::delete_constant_placeholder(ep, ep.graph().find_node("b_npb"));
        }) > 0);
}

TEST_CASE("allocation failure: set_buffer_mutation", "[edit][strong]") {
  auto make = [] {
    Program ep = epgraph_test::linear_batchnorm_program();
    ep.graph().call_function("torch.ops.aten.clone.default",
                             {ep.graph().find_node("b_bn_running_var")});
    return ep;
  };
  CHECK(check_strong_under_allocation_failure(make, [](Program& ep) {
          epgraph::set_buffer_mutation(ep, "bn.running_var", ep.graph().find_node("clone"));
        }) > 5);
  auto make_new = [] {
    Program ep = epgraph_test::params_and_buffers_program();
    ep.graph().call_function("torch.ops.aten.clone.default", {ep.graph().find_node("b_scale")});
    return ep;
  };
  CHECK(check_strong_under_allocation_failure(make_new, [](Program& ep) {
          epgraph::set_buffer_mutation(ep, "scale", ep.graph().find_node("clone"));
        }) > 3);  // 4: the results list grows in place (Graph::insert_result), no copy
}

// The same edits on a program an earlier edit validated and indexed: they skip the validation,
// insert into the output node's results in place (Graph::insert_result) and keep the lookups in
// step; a failure must still change nothing, and the run after it must give what an
// undisturbed run gives.
TEST_CASE("allocation failure: edits on a program validated by an earlier edit",
          "[edit][strong][index]") {
  const epgraph::HostTensor data = tensor({4});
  auto make = [&] {
    Program ep = epgraph_test::linear_batchnorm_program();
    epgraph::create_mutable_buffer(ep, "b_first", data);
    epgraph::create_constant_placeholder(ep, "p_spare", InputKind::PARAMETER, data);
    ep.graph().call_function("torch.ops.aten.clone.default",
                             {ep.graph().find_node("b_bn_running_var")});
    return ep;
  };
  CHECK(check_strong_under_allocation_failure(
            make, [&](Program& ep) { epgraph::create_mutable_buffer(ep, "b_second", data); }) > 5);
  for (InputKind kind : {InputKind::PARAMETER, InputKind::BUFFER, InputKind::CONSTANT_TENSOR}) {
    CHECK(check_strong_under_allocation_failure(make, [&](Program& ep) {
            epgraph::create_constant_placeholder(ep, "c_second", kind, data, false);
          }) > 5);
  }
  CHECK(check_strong_under_allocation_failure(make, [](Program& ep) {
          epgraph::delete_constant_placeholder(ep, ep.graph().find_node("p_spare"));
        }) > 0);
  CHECK(check_strong_under_allocation_failure(make, [](Program& ep) {
          epgraph::set_buffer_mutation(ep, "bn.running_var", ep.graph().find_node("clone"));
        }) > 3);
  CHECK(check_strong_under_allocation_failure(make, [](Program& ep) {
          epgraph::set_buffer_mutation(ep, "first", ep.graph().find_node("clone"));
        }) > 3);
  // Graph::insert_result on its own, where the results list and the users must grow.
  CHECK(check_strong_under_allocation_failure(
            epgraph_test::params_and_buffers_program, [](Program& ep) {
              ep.graph().insert_result(0, ep.graph().find_node("p_weight"));
            }) > 1);
}

TEST_CASE("allocation failure: the signature follows replacements and renames",
          "[edit][strong][hook]") {
  auto make = [] {
    Program ep = epgraph_test::linear_batchnorm_program();
    ep.graph().call_function("torch.ops.aten.clone.default", {ep.graph().find_node("getitem_4")});
    return ep;
  };
  CHECK(check_strong_under_allocation_failure(make, [](Program& ep) {
          ep.graph()
              .find_node("getitem_4")
              ->replace_all_uses_with(ep.graph().find_node("clone"),
                                      [&](Node* u) { return u->op() == epgraph::OpCode::output; });
        }) > 0);
  CHECK(check_strong_under_allocation_failure(
            epgraph_test::user_input_mutation_program,
            [](Program& ep) { ep.graph().rename_node(ep.graph().find_node("x"), "inp"); }) > 0);
}

TEST_CASE("allocation failure: set_param_tensor", "[edit][strong]") {
  const epgraph::HostTensor data = tensor({4}, 3.0);
  CHECK(check_strong_under_allocation_failure(epgraph_test::constants_program, [&](Program& ep) {
          epgraph::set_param_tensor(ep, ep.graph().find_node("b_npb"), data);
        }) > 0);
}

TEST_CASE("allocation failure: replace_pattern", "[fx][rewrite][strong]") {
  // Three matches in a chain (the second binds the first's replacement): a failure in any
  // copy, rewiring or erasure must give back every copy, name and use.
  const auto pattern = epgraph_test::build_spec_graph(epgraph_test::fx_case("rw_relu.pattern"));
  const auto replacement =
      epgraph_test::build_spec_graph(epgraph_test::fx_case("rw_relu.replacement"));
  auto make = [] {
    Program ep(epgraph_test::build_spec_graph(epgraph_test::fx_case("rw_relu.graph")), {});
    return ep;
  };
  CHECK(check_strong_under_allocation_failure(make, [&](Program& ep) {
          (void)epgraph::replace_pattern(ep.graph(), *pattern, *replacement);
        }) > 20);
}
