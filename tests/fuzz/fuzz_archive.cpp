// libFuzzer target: epgraph::archive::load_archive on arbitrary bytes (written to a scratch
// file: the reader takes a path); a loaded archive must save and reload to the same program
// (tests/support/fuzz_bodies.hpp).
// SPDX-License-Identifier: BSD-3-Clause
#define EPGRAPH_TEST_WITH_ARCHIVE 1

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "../support/fuzz_bodies.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path scratch =
      std::filesystem::temp_directory_path() /
      ("epgraph_fuzz_archive_" + std::to_string(::getpid()) + ".pt2");
  const std::string problem = epgraph_test::fuzz_archive_body(data, size, scratch);
  if (!problem.empty()) {
    std::fprintf(stderr, "fuzz_archive: %s\n", problem.c_str());
    std::abort();
  }
  return 0;
}
