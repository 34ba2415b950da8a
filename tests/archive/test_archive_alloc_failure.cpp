// load_archive and save_archive under allocation failure: each runs with its 1st, 2nd, 3rd, ...
// operator-new allocation failing (std::bad_alloc; libzip's own malloc calls are not counted).
// A load either completes with the same program as an undisturbed run or throws std::bad_alloc;
// a save either completes or throws std::bad_alloc with the destination file and its directory
// exactly as before (nothing half-written, no temporary file left). The sanitizer build
// (LeakSanitizer) proves that nothing leaks on these paths.
//
// The executable's global operator new/delete are replaced (support/alloc_failure_replacement.cpp);
// the replacement only differs from the default while a test arms it.
// SPDX-License-Identifier: BSD-3-Clause
#include <unistd.h>

#include <catch2/catch.hpp>
#include <epgraph/archive/archive.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <new>
#include <optional>
#include <set>
#include <string>

#include "../support/alloc_failure.hpp"
#include "../support/program_builders.hpp"
#include "../support/snapshot.hpp"

namespace fs = std::filesystem;

namespace {

using epgraph_test::Program;

std::string file_bytes(const fs::path& f) {
  std::ifstream in(f, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.insert(e.path().filename().string());
  return out;
}

fs::path scratch_dir(const std::string& tag) {
  // The pid keeps two test runs on one machine (two checkouts) from sharing the folder.
  const fs::path dir = fs::temp_directory_path() /
                       ("epgraph_archive_alloc_" + tag + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

}  // namespace

// nlohmann::json 3.11.2's destructor allocates for non-empty trees, so the loader dismantles every
// tree it owns first (json/dispose.hpp; the payload configs and the program JSON).
TEST_CASE("allocation failure: load_archive", "[alloc-load][archive]") {
  const fs::path dir = scratch_dir("load");
  const fs::path file = dir / "constants.pt2";
  epgraph::archive::save_archive(
      epgraph_test::with_tensor_meta(epgraph_test::params_and_buffers_program()), file);
  const auto expected = epgraph_test::snapshot(epgraph::archive::load_archive(file));
  std::optional<Program> loaded;
  const long failures = epgraph_test::for_each_allocation_failure(
      [&] { loaded.emplace(epgraph::archive::load_archive(file)); },
      [&](long) { return !loaded.has_value(); });
  REQUIRE(loaded.has_value());
  CHECK(epgraph_test::snapshot(*loaded) == expected);
  CHECK(failures > 50);  // pass-through records are not read at load (lazy): fewer than before
  fs::remove_all(dir);
}

// Hidden ("[.]"): saving writes JSON with nlohmann::json, same root causes as the load test
// (tests/json/test_json_alloc_failure.cpp). Run with "[alloc-save]".
TEST_CASE("allocation failure: save_archive leaves the destination untouched",
          "[alloc-save][archive]") {
  const fs::path dir = scratch_dir("save");
  const fs::path file = dir / "out.pt2";
  {
    std::ofstream out(file, std::ios::binary);
    out << "previous contents";
  }
  const Program ep = epgraph_test::with_tensor_meta(epgraph_test::linear_batchnorm_program());
  const auto before = epgraph_test::snapshot(ep);
  const auto files_before = listing(dir);
  bool saved = false;
  bool untouched = true;
  const long failures = epgraph_test::for_each_allocation_failure(
      [&] {
        epgraph::archive::save_archive(ep, file);
        saved = true;
      },
      [&](long n) {
        untouched = file_bytes(file) == "previous contents" && listing(dir) == files_before &&
                    epgraph_test::snapshot(ep) == before;
        if (!untouched) INFO("allocation " << n << " failed and changed the destination");
        return untouched && !saved;
      });
  CHECK(untouched);
  CHECK(saved);
  CHECK(failures > 100);
  fs::create_directories(dir / "reference");
  const fs::path reference = dir / "reference" / "out.pt2";  // same stem: same root folder
  epgraph::archive::save_archive(ep, reference);
  CHECK(file_bytes(file) == file_bytes(reference));
  fs::remove_all(dir);
}
