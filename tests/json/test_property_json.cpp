// Property tests with JSON round trips: random programs and random edit sequences
// (tests/support/edit_sequences.hpp) where a save -> load -> save round trip is one of the
// operations; every reloaded program prints like the original and saves to the same text.
// EPGRAPH_PROPERTY_SEQUENCES / EPGRAPH_PROPERTY_SEED as in tests/test_property_edits.cpp (this
// file runs a tenth of the sequences: each round trip costs more than an edit).
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "../support/fuzz_bodies.hpp"
#include "../support/sanitized.hpp"

using epgraph_test::env_number;

TEST_CASE("property: random edit sequences with JSON round trips", "[property][json]") {
  // a quarter under AddressSanitizer (see test_property_edits.cpp)
  const std::uint64_t count =
      env_number("EPGRAPH_PROPERTY_SEQUENCES", epgraph_test::cases_for_build(10000, 4)) / 10 + 1;
  const std::uint64_t base = env_number("EPGRAPH_PROPERTY_SEED", 1);
  epgraph_test::EditStats stats;
  epgraph_test::json_round_trip_refusals = 0;
  std::uint64_t failures = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t seed = base + i;
    epgraph_test::Chooser chooser(seed);
    const std::string problem = epgraph_test::run_random_sequence(
        chooser, 1 + chooser.below(12), epgraph_test::json_round_trip, &stats);
    if (!problem.empty()) {
      ++failures;
      INFO("seed " << seed << " (rerun: EPGRAPH_PROPERTY_SEED=" << seed
                   << " EPGRAPH_PROPERTY_SEQUENCES=1)\n"
                   << problem);
      CHECK(problem.empty());
      if (failures >= 3) break;
    }
  }
  CHECK(failures == 0);
  CHECK(stats.round_trips > 0);
  // Most round trips really save and reload (the rest are documented save refusals).
  INFO(stats.round_trips << " round trips, " << epgraph_test::json_round_trip_refusals
                         << " refused");
  CHECK(epgraph_test::json_round_trip_refusals * 10 < stats.round_trips);
}
