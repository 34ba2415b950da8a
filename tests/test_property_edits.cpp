// Property tests of the graph edits: random valid programs (tokens, parameters, persistent and
// non-persistent buffers, tensor constants, custom objects, user inputs, mutation outputs, user
// outputs, output tokens) and random sequences of create_mutable_buffer,
// create_constant_placeholder (at random insertion points), delete_constant_placeholder,
// erase_node, replace_all_uses_with, set_buffer_mutation, rename_node, set_param_tensor, clone,
// Node::prepend/append, eliminate_dead_code, stable_topological_sort and node_copy, with
// deliberately invalid calls mixed in (blank, taken and reused names, nodes with
// users, wrong kinds, null and foreign nodes). After every successful call verify() and lint()
// pass; after every failing call the program equals its snapshot from before the call.
//
// Reproducible: sequence i uses seed EPGRAPH_PROPERTY_SEED + i (default base 1) and a failure
// prints its seed. EPGRAPH_PROPERTY_SEQUENCES sets the number of sequences (default 10000; the
// "property-long" ctest label runs many more).
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "support/edit_sequences.hpp"
#include "support/sanitized.hpp"

using epgraph_test::env_number;

TEST_CASE("property: random edit sequences keep programs valid or unchanged",
          "[property][edit][strong]") {
  // 10,000 sequences; a quarter under AddressSanitizer, where they took 88 of the asan stage's
  // 160 s of tests (the g++ stage runs all of them).
  const std::uint64_t count =
      env_number("EPGRAPH_PROPERTY_SEQUENCES", epgraph_test::cases_for_build(10000, 4));
  const std::uint64_t base = env_number("EPGRAPH_PROPERTY_SEED", 1);
  epgraph_test::EditStats stats;
  std::uint64_t failures = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t seed = base + i;
    epgraph_test::Chooser chooser(seed);
    const std::string problem =
        epgraph_test::run_random_sequence(chooser, 1 + chooser.below(12), {}, &stats);
    if (!problem.empty()) {
      ++failures;
      INFO("seed " << seed << " (rerun: EPGRAPH_PROPERTY_SEED=" << seed
                   << " EPGRAPH_PROPERTY_SEQUENCES=1)\n"
                   << problem);
      CHECK(problem.empty());
      if (failures >= 3) break;
    }
  }
  INFO(count << " sequences, " << stats.calls << " calls: " << stats.succeeded << " succeeded, "
             << stats.failed << " failed");
  CHECK(failures == 0);
  // The mix really exercises both outcomes.
  CHECK(stats.succeeded > count);
  CHECK(stats.failed > count / 2);
}

TEST_CASE("property: the generator is reproducible", "[property]") {
  epgraph_test::Chooser a(42), b(42);
  const auto pa = epgraph_test::random_program(a);
  const auto pb = epgraph_test::random_program(b);
  CHECK(epgraph_test::snapshot(pa) == epgraph_test::snapshot(pb));
}
