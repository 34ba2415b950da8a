// Writes the seed corpora of the fuzz targets into OUT_DIR/<target>/ (run by run_fuzzers.sh):
// fuzz_json: examples/data/decoder_block.json and the JSON of the test-support programs;
// fuzz_archive: archives of those programs written by save_archive (with and without weights);
// fuzz_edits: a few byte strings.
// SPDX-License-Identifier: BSD-3-Clause
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "../support/fuzz_bodies.hpp"

namespace fs = std::filesystem;

namespace {

void write(const fs::path& file, const std::string& bytes) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << bytes;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_fuzz_seeds OUT_DIR\n");
    return 2;
  }
  const fs::path out = argv[1];
  for (const char* t : {"fuzz_json", "fuzz_archive", "fuzz_edits"}) fs::create_directories(out / t);

  std::vector<std::pair<std::string, epgraph_test::Program>> programs;
  // The saver needs the metadata of every tensor value (with_tensor_meta gives the compute nodes
  // theirs); the token program keeps none: the saver supplies the token's.
  using epgraph_test::with_tensor_meta;
  programs.emplace_back("plain", epgraph_test::plain_program());
  programs.emplace_back("params_and_buffers",
                        with_tensor_meta(epgraph_test::params_and_buffers_program()));
  programs.emplace_back("token", epgraph_test::token_program(false));
  programs.emplace_back("constants", with_tensor_meta(epgraph_test::constants_program()));
  programs.emplace_back("linear_batchnorm",
                        with_tensor_meta(epgraph_test::linear_batchnorm_program()));
  programs.emplace_back("user_input_mutation",
                        with_tensor_meta(epgraph_test::user_input_mutation_program()));

  const fs::path example =
      fs::path(EPGRAPH_SOURCE_DIR) / "examples" / "data" / "decoder_block.json";
  {
    std::ifstream in(example, std::ios::binary);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    write(out / "fuzz_json" / "decoder_block.json", text);
    try {
      programs.emplace_back("decoder_block",
                            epgraph::json::load_exported_program_from_string(text));
    } catch (const std::exception& e) {
      std::fprintf(stderr, "make_fuzz_seeds: %s: %s\n", example.c_str(), e.what());
      return 1;
    }
  }
  for (auto& [name, ep] : programs) {
    write(out / "fuzz_json" / (name + ".json"), epgraph::json::save_exported_program_to_string(ep));
#ifdef EPGRAPH_TEST_WITH_ARCHIVE
    epgraph::archive::save_archive(ep, out / "fuzz_archive" / (name + ".pt2"));
#endif
  }
  // Byte strings for fuzz_edits: each picks a different program shape and edit mix.
  for (int i = 0; i < 16; ++i) {
    std::string bytes;
    for (int k = 0; k < 64; ++k) bytes.push_back(static_cast<char>((i * 37 + k * 11) & 0xff));
    write(out / "fuzz_edits" / ("seed_" + std::to_string(i)), bytes);
  }
  return 0;
}
