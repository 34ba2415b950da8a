// Replays the committed inputs of the fuzz_json and fuzz_edits fuzz targets
// (tests/fuzz/regressions/<target>/, minimized inputs that once crashed, leaked, hung or broke a
// check) through the same code the fuzz targets run (tests/support/fuzz_bodies.hpp), so every CI
// stage (gcc, clang, ASan) keeps them fixed.
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <string>

#include "../support/fuzz_bodies.hpp"

TEST_CASE("fuzz regressions: fuzz_json", "[json][fuzz]") {
  const auto inputs = epgraph_test::regression_inputs(EPGRAPH_SOURCE_DIR, "fuzz_json");
  CHECK(!inputs.empty());
  for (const auto& file : inputs) {
    INFO(file.string());
    const auto bytes = epgraph_test::read_bytes(file);
    CHECK(epgraph_test::fuzz_json_body(bytes.data(), bytes.size()) == "");
  }
}

TEST_CASE("fuzz regressions: fuzz_edits", "[edit][fuzz]") {
  const auto inputs = epgraph_test::regression_inputs(EPGRAPH_SOURCE_DIR, "fuzz_edits");
  CHECK(!inputs.empty());
  for (const auto& file : inputs) {
    INFO(file.string());
    const auto bytes = epgraph_test::read_bytes(file);
    CHECK(epgraph_test::fuzz_edits_body(bytes.data(), bytes.size()) == "");
  }
}
