// libFuzzer target: epgraph::json::load_exported_program_from_string on arbitrary bytes; a
// loaded program must save, reload and save to the same text (tests/support/fuzz_bodies.hpp).
// SPDX-License-Identifier: BSD-3-Clause
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "../support/fuzz_bodies.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string problem = epgraph_test::fuzz_json_body(data, size);
  if (!problem.empty()) {
    std::fprintf(stderr, "fuzz_json: %s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
