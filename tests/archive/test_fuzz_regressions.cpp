// Replays the committed inputs of the fuzz_archive fuzz target
// (tests/fuzz/regressions/fuzz_archive/) through the code the fuzz target runs
// (tests/support/fuzz_bodies.hpp), so every CI stage keeps them fixed.
// SPDX-License-Identifier: BSD-3-Clause
#define EPGRAPH_TEST_WITH_ARCHIVE 1

#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "../support/fuzz_bodies.hpp"

TEST_CASE("fuzz regressions: fuzz_archive", "[archive][fuzz]") {
  const auto inputs = epgraph_test::regression_inputs(EPGRAPH_SOURCE_DIR, "fuzz_archive");
  CHECK(!inputs.empty());
  const std::filesystem::path scratch =
      std::filesystem::temp_directory_path() / "epgraph_fuzz_regression_archive.pt2";
  for (const auto& file : inputs) {
    INFO(file.string());
    const auto bytes = epgraph_test::read_bytes(file);
    CHECK(epgraph_test::fuzz_archive_body(bytes.data(), bytes.size(), scratch) == "");
  }
  std::filesystem::remove(scratch);
  std::filesystem::remove(scratch.string() + ".out.pt2");
}
