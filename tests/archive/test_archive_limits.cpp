// Limits of the archive reader: payload layouts whose byte count overflows, or that would
// expand a few stored bytes into an absurd tensor, are refused with a clear archive_error.
// SPDX-License-Identifier: BSD-3-Clause
#include <catch2/catch.hpp>
#include <epgraph/archive/archive.hpp>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../support/program_builders.hpp"

namespace fs = std::filesystem;

namespace {

// Saves params_and_buffers_program (weight: float32[2, 2], scale: float32[2]) as an archive,
// then rewrites it with the tensor_meta of 'weight' given `sizes` and `strides`. Returns the path.
fs::path archive_with_weight_layout(const std::string& tag, const std::vector<long long>& sizes,
                                    const std::vector<long long>& strides) {
  const fs::path dir = fs::temp_directory_path() / "epgraph_archive_limits";
  fs::create_directories(dir);
  const fs::path original = dir / ("original_" + tag + ".pt2");
  const fs::path edited = dir / ("edited_" + tag + ".pt2");
  epgraph::archive::save_archive(
      epgraph_test::with_tensor_meta(epgraph_test::params_and_buffers_program()), original);
  epgraph::archive::zip_reader in(original);
  epgraph::archive::zip_writer out(edited);
  for (std::size_t i = 0; i < in.entries().size(); ++i) {
    const std::string& name = in.entries()[i].name;
    std::vector<std::byte> bytes = in.read(i);
    if (name.size() > 20 && name.substr(name.size() - 20) == "_weights_config.json") {
      auto doc =
          nlohmann::ordered_json::parse(reinterpret_cast<const char*>(bytes.data()),
                                        reinterpret_cast<const char*>(bytes.data()) + bytes.size());
      auto& meta = doc["config"]["weight"]["tensor_meta"];
      meta["sizes"] = nlohmann::ordered_json::array();
      meta["strides"] = nlohmann::ordered_json::array();
      for (long long s : sizes) meta["sizes"].push_back({{"as_int", s}});
      for (long long s : strides) meta["strides"].push_back({{"as_int", s}});
      const std::string text = doc.dump();
      bytes.assign(reinterpret_cast<const std::byte*>(text.data()),
                   reinterpret_cast<const std::byte*>(text.data()) + text.size());
    }
    out.add(name, std::make_shared<const std::vector<std::byte>>(std::move(bytes)));
  }
  out.commit();
  return edited;
}

}  // namespace

TEST_CASE("limits: a stride-0 payload whose byte count overflows is refused", "[archive][limits]") {
  CHECK(epgraph::archive::max_expanded_tensor_bytes == 268435456);
  // 2^62 float32 elements all reading element 0: numel fits int64, numel * 4 = 2^64 does not.
  // Before the fix the byte count wrapped to 0 and the gather loop wrote past an empty buffer
  // (heap-buffer-overflow).
  const fs::path file = archive_with_weight_layout("overflow", {4611686018427387904LL}, {0});
  CHECK_THROWS_AS(epgraph::archive::load_archive(file), epgraph::archive::archive_error);
  CHECK_THROWS_WITH(epgraph::archive::load_archive(file),
                    Catch::Matchers::EndsWith(
                        ": weight 'weight' (float32, sizes [4611686018427387904], strides [0], "
                        "storage_offset 0) is too large"));
}

TEST_CASE("limits: a stride-0 payload expanding past 256 MiB is refused", "[archive][limits]") {
  // 2^27 float32 elements = 512 MiB from 16 stored bytes.
  const fs::path file = archive_with_weight_layout("expand", {134217728}, {0});
  CHECK_THROWS_WITH(
      epgraph::archive::load_archive(file),
      Catch::Matchers::EndsWith(
          ": weight 'weight' (float32, sizes [134217728], strides [0], storage_offset 0) would "
          "expand to 536870912 bytes, more than the limit of 268435456 bytes for a layout that "
          "repeats storage elements"));
  // A small broadcast is materialized: 3 x 2 rows of the first two stored elements.
  const fs::path ok = archive_with_weight_layout("broadcast", {3, 2}, {0, 1});
  const auto ep = epgraph::archive::load_archive(ok);
  const epgraph::HostTensor& w = ep.state_dict().at("weight");
  CHECK(w.sizes() == std::vector<std::int64_t>{3, 2});
  CHECK(w.bytes().size() == 24);
}

TEST_CASE("limits: an empty tensor with huge sizes saves without overflow", "[archive][limits]") {
  // numel 0: allowed whatever the other sizes; contiguous strides wrap instead of overflowing.
  const fs::path file = archive_with_weight_layout(
      "empty", {0, 4611686018427387904LL, 4611686018427387904LL}, {1, 1, 1});
  auto ep = epgraph::archive::load_archive(file);
  CHECK(ep.state_dict().at("weight").bytes().empty());
  const fs::path again = fs::temp_directory_path() / "epgraph_archive_limits" / "empty_again.pt2";
  epgraph::archive::save_archive(ep, again);
  CHECK(epgraph::archive::load_archive(again).state_dict().at("weight").sizes() ==
        std::vector<std::int64_t>{0, 4611686018427387904LL, 4611686018427387904LL});
}
