// libFuzzer target: the input bytes choose a program of random shape and a sequence of edits
// (valid and deliberately invalid) with JSON round trips; every successful edit must leave a
// program that verifies, every failing one the program unchanged
// (tests/support/edit_sequences.hpp).
// SPDX-License-Identifier: BSD-3-Clause
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "../support/fuzz_bodies.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string problem = epgraph_test::fuzz_edits_body(data, size);
  if (!problem.empty()) {
    std::fprintf(stderr, "fuzz_edits: %s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
