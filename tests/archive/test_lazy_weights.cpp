// Tests for lazy weights: load_archive reads no weight bytes, save_archive copies unchanged
// weight entries raw from the source archive, saving over the source, changed sources refused.
// SPDX-License-Identifier: BSD-3-Clause
#include <zip.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <epgraph/archive/archive.hpp>
#include <epgraph/json/json.hpp>
#include <epgraph/program/edit.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../support/archive_files.hpp"
#include "../support/archive_programs.hpp"
#include "../support/snapshot.hpp"
#include "../support/zip_inspect.hpp"

namespace {
using namespace epgraph;           // NOLINT: test file
using namespace epgraph::archive;  // NOLINT: test file
namespace fs = std::filesystem;
using Program = ExportedProgram<HostTensor>;
using epgraph_test::Bytes;
using epgraph_test::entry_of;
using epgraph_test::f32;
using epgraph_test::file_bytes;
using epgraph_test::floats;
using epgraph_test::floats_of;
using epgraph_test::method_of;
using epgraph_test::small_program;
using epgraph_test::TempDir;

// Rewrites `file` with the same entries, the payload files (data/weights/weight_*,
// data/constants/tensor_*) deflate-compressed, the others stored.
void deflate_payloads(const std::string& file) {
  epgraph_test::write_zip_compressed(file, epgraph_test::read_zip(file),
                                     epgraph_test::is_payload_entry);
}

// Makes `dir`/in.pt2: small_program saved, payloads deflated. Returns its path.
std::string compressed_archive(const TempDir& dir) {
  const std::string in = dir / "in.pt2";
  save_archive(small_program(4), in);
  deflate_payloads(in);
  return in;
}

const std::string kW = "in/data/weights/weight_0";
const std::string kBuf = "in/data/weights/weight_1";
const std::string kK = "in/data/constants/tensor_0";

}  // namespace

TEST_CASE(
    "lazy: load reads no weight bytes, first access reads them, the source is kept until a write",
    "[archive][lazy]") {
  TempDir dir;
  const std::string in = compressed_archive(dir);
  Program ep = load_archive(in);
  const HostTensor& w = ep.state_dict().at("w");
  const HostTensor& k = std::get<HostTensor>(ep.constants().at("k"));
  CHECK_FALSE(w.is_loaded());
  CHECK_FALSE(k.is_loaded());
  CHECK(w.nbytes() == 16);  // known without reading
  CHECK(w.source() != nullptr);
  CHECK(floats_of(w) == std::vector<float>{1, 2, 3, 4});
  CHECK(w.is_loaded());
  CHECK(w.source() != nullptr);  // reading is not a change
  CHECK(floats_of(k) == std::vector<float>{9, 10, 11, 12});

  // A copy of an unread tensor shares its source and compares equal without reading.
  const HostTensor& buf = ep.state_dict().at("buf");
  HostTensor copy = buf;
  CHECK_FALSE(copy.is_loaded());
  CHECK(copy == buf);
  CHECK_FALSE(copy.is_loaded());
  CHECK(floats_of(copy) == std::vector<float>{5, 6, 7, 8});

  HostTensor& wm = ep.state_dict().at("w");
  wm.data()[0] = std::byte{0};
  CHECK(wm.source() == nullptr);  // written: changed
  CHECK(copy.source() != nullptr);
}

TEST_CASE("lazy: save copies unchanged payload entries raw, writes changed ones",
          "[archive][lazy]") {
  TempDir dir;
  const std::string in = compressed_archive(dir);
  const auto w_in = method_of(in, kW);
  REQUIRE(w_in.first == ZIP_CM_DEFLATE);
  Program ep = load_archive(in);
  // buf is changed (written), w and k are not: w and k keep their deflated bytes.
  float v = 50.0f;
  std::memcpy(ep.state_dict().at("buf").data(), &v, sizeof v);
  const std::string out = dir / "out.pt2";
  save_archive(ep, out);
  CHECK(method_of(out, kW) == w_in);
  CHECK(method_of(out, kK) == method_of(in, kK));
  CHECK(method_of(out, kBuf).first == ZIP_CM_STORE);  // rewritten from the tensor's bytes
  CHECK_FALSE(ep.state_dict().at("w").is_loaded());   // copied without reading

  Program back = load_archive(out);
  CHECK(floats_of(back.state_dict().at("w")) == std::vector<float>{1, 2, 3, 4});
  CHECK(floats_of(back.state_dict().at("buf")) == std::vector<float>{50, 6, 7, 8});
  CHECK(floats_of(std::get<HostTensor>(back.constants().at("k"))) ==
        std::vector<float>{9, 10, 11, 12});
  // The constants config is unchanged byte for byte (raw copies keep config entries verbatim).
  CHECK(entry_of(out, "in/data/constants/model_constants_config.json") ==
        entry_of(in, "in/data/constants/model_constants_config.json"));
}

TEST_CASE("lazy: a new tensor is written, unchanged ones are copied", "[archive][lazy]") {
  TempDir dir;
  const std::string in = compressed_archive(dir);
  Program ep = load_archive(in);
  create_mutable_buffer(ep, "b_kv", HostTensor::full(dtype::float32, {4}, 2.0));
  const std::string out = dir / "out.pt2";
  save_archive(ep, out);
  CHECK(method_of(out, kW).first == ZIP_CM_DEFLATE);
  CHECK(method_of(out, "in/data/weights/weight_2").first == ZIP_CM_STORE);
  Program back = load_archive(out);
  CHECK(floats_of(back.state_dict().at("kv")) == std::vector<float>{2, 2, 2, 2});
  CHECK(floats_of(back.state_dict().at("w")) == std::vector<float>{1, 2, 3, 4});
}

TEST_CASE("lazy: views of one storage entry load lazily and the entry is copied once",
          "[archive][lazy]") {
  TempDir dir;
  const std::string in = dir / "in.pt2";
  save_archive(small_program(4), in);
  // Point w and buf at two halves of one 8-float file: weight_0 = [1..8].
  epgraph_test::ZipEntries entries = epgraph_test::read_zip(in);
  auto meta = [](int offset) {
    return R"({"dtype": 7, "sizes": [{"as_int": 4}], "requires_grad": false, "device": )"
           R"({"type": "cpu", "index": null}, "strides": [{"as_int": 1}], "storage_offset": )"
           R"({"as_int": )" +
           std::to_string(offset) + R"(}, "layout": 7})";
  };
  const std::string config =
      R"({"config": {"w": {"path_name": "weight_0", "is_param": true, "use_pickle": false, )"
      R"("tensor_meta": )" +
      meta(0) +
      R"(}, "buf": {"path_name": "weight_0", "is_param": false, "use_pickle": false, )"
      R"("tensor_meta": )" +
      meta(4) + "}}}";
  epgraph_test::ZipEntries edited;
  for (auto& [name, data] : entries) {
    if (name == kBuf) continue;
    if (name == kW) data = floats({1, 2, 3, 4, 5, 6, 7, 8});
    if (name == "in/data/weights/model_weights_config.json") data = epgraph_test::bytes_of(config);
    edited.emplace_back(name, data);
  }
  epgraph_test::write_zip(in, edited);
  deflate_payloads(in);

  Program ep = load_archive(in);
  CHECK_FALSE(ep.state_dict().at("buf").is_loaded());
  CHECK(floats_of(ep.state_dict().at("buf")) == std::vector<float>{5, 6, 7, 8});
  CHECK(floats_of(ep.state_dict().at("w")) == std::vector<float>{1, 2, 3, 4});
  const std::string out = dir / "out.pt2";
  save_archive(ep, out);
  CHECK(method_of(out, kW) == method_of(in, kW));
  std::vector<std::string> names;
  for (const auto& e : epgraph_test::read_zip(out)) names.push_back(e.first);
  CHECK(std::count(names.begin(), names.end(), kW) == 1);
  CHECK(std::count(names.begin(), names.end(), kBuf) == 0);
  Program back = load_archive(out);
  CHECK(floats_of(back.state_dict().at("buf")) == std::vector<float>{5, 6, 7, 8});
}

TEST_CASE("lazy: size checks happen at load from the zip directory, without reading",
          "[archive][lazy]") {
  TempDir dir;
  const std::string in = dir / "in.pt2";
  save_archive(small_program(4), in);
  epgraph_test::ZipEntries entries = epgraph_test::read_zip(in);
  for (auto& [name, data] : entries) {
    if (name == kW) data.resize(12);  // 3 floats for a float32[4]
  }
  epgraph_test::write_zip(in, entries);
  CHECK_THROWS_MATCHES(load_archive(in), archive_error,
                       Catch::Message(in + ": " + kW +
                                      ": weight 'w' (float32, sizes [4], strides [1], "
                                      "storage_offset 0) needs 16 bytes but the entry has 12"));
}

TEST_CASE("lazy: a source rewritten in place is refused by name, a failed read changes nothing",
          "[archive][lazy]") {
  TempDir dir;
  const std::string in = compressed_archive(dir);
  Program ep = load_archive(in);
  {  // rewrite in place (same inode), a different size
    std::ofstream f(in, std::ios::binary | std::ios::app);
    f << "trailing junk";
  }
  const HostTensor& w = ep.state_dict().at("w");
  try {
    (void)w.bytes();
    FAIL("no error");
  } catch (const archive_error& e) {
    CHECK(e.archive() == in);
    CHECK(e.entry() == kW);
    CHECK(std::string(e.what()).find(
              in + ": " + kW + ": the archive changed on disk since it was opened (size ") == 0);
  }
  CHECK_FALSE(w.is_loaded());
  CHECK(w.source() != nullptr);
  // Saving refuses too and leaves the destination untouched.
  const std::string out = dir / "out.pt2";
  std::ofstream(out) << "previous";
  CHECK_THROWS_AS(save_archive(ep, out), archive_error);
  CHECK(file_bytes(out) == "previous");
}

TEST_CASE("lazy: a source replaced by rename or deleted keeps reading the file that was loaded",
          "[archive][lazy]") {
  TempDir dir;
  const std::string in = compressed_archive(dir);
  Program ep = load_archive(in);
  fs::remove(in);
  CHECK(floats_of(ep.state_dict().at("w")) == std::vector<float>{1, 2, 3, 4});
  const std::string out = dir / "out.pt2";
  save_archive(ep, out);
  CHECK(floats_of(load_archive(out).state_dict().at("buf")) == std::vector<float>{5, 6, 7, 8});
}

TEST_CASE("lazy: saving over the source writes a new file and renames it", "[archive][lazy]") {
  TempDir dir;
  const std::string in = compressed_archive(dir);
  Program ep = load_archive(in);
  create_mutable_buffer(ep, "b_kv", HostTensor::full(dtype::float32, {4}, 3.0));
  save_archive(ep, in);
  CHECK(method_of(in, kW).first == ZIP_CM_DEFLATE);  // still a raw copy
  Program back = load_archive(in);
  CHECK(floats_of(back.state_dict().at("w")) == std::vector<float>{1, 2, 3, 4});
  CHECK(floats_of(back.state_dict().at("kv")) == std::vector<float>{3, 3, 3, 3});
  // The program loaded before still reads the file it opened.
  CHECK(floats_of(ep.state_dict().at("buf")) == std::vector<float>{5, 6, 7, 8});
  // Saving again over the new file, from the old program, works the same.
  save_archive(ep, in);
  CHECK(floats_of(load_archive(in).state_dict().at("kv")) == std::vector<float>{3, 3, 3, 3});
  std::vector<std::string> leftovers;
  for (const auto& e : fs::directory_iterator(dir.path)) leftovers.push_back(e.path().string());
  CHECK(leftovers == std::vector<std::string>{in});
}

namespace {
// A source that fails while `fail` is set.
struct flaky_source final : tensor_source {
  static inline bool fail = false;
  std::vector<std::byte> read() const override {
    if (fail) throw archive_error("src.pt2", "data/weights/weight_9", "cannot read");
    return floats({7, 7, 7, 7});
  }
};
}  // namespace

TEST_CASE("lazy: a failed save over the source leaves it and the program untouched",
          "[archive][lazy]") {
  TempDir dir;
  const std::string in = compressed_archive(dir);
  Program ep = load_archive(in);
  ep.state_dict().insert_or_assign(
      "buf", HostTensor::from_source(dtype::float32, {4}, std::make_shared<flaky_source>()));
  const Program twin = ep.clone();  // its tensors are read for the snapshot, ep's are not
  const epgraph_test::Snapshot before = epgraph_test::snapshot(twin);
  const std::string original = file_bytes(in);
  flaky_source::fail = true;
  CHECK_THROWS_MATCHES(save_archive(ep, in), archive_error,
                       Catch::Message("src.pt2: data/weights/weight_9: cannot read"));
  CHECK_FALSE(ep.state_dict().at("buf").is_loaded());
  CHECK_FALSE(ep.state_dict().at("w").is_loaded());
  flaky_source::fail = false;
  CHECK(file_bytes(in) == original);
  CHECK(epgraph_test::snapshot(ep) == before);
  std::vector<std::string> leftovers;
  for (const auto& e : fs::directory_iterator(dir.path)) leftovers.push_back(e.path().string());
  CHECK(leftovers == std::vector<std::string>{in});
  // Once the source reads again, the same save succeeds over the source.
  save_archive(ep, in);
  CHECK(floats_of(load_archive(in).state_dict().at("buf")) == std::vector<float>{7, 7, 7, 7});
}

namespace {
// A user tensor type without the lazy hooks: loaded eagerly, written from its bytes.
struct PlainTensor {
  dtype type = dtype::float32;
  std::vector<std::int64_t> sizes;
  std::vector<std::byte> bytes;
};
}  // namespace

template <>
struct epgraph::tensor_traits<PlainTensor> {
  static epgraph::dtype dtype(const PlainTensor& t) noexcept { return t.type; }
  static std::vector<std::int64_t> sizes(const PlainTensor& t) { return t.sizes; }
  static std::vector<std::int64_t> strides(const PlainTensor& t) {
    return HostTensor::zeros(t.type, t.sizes).strides();
  }
  static Device device(const PlainTensor&) { return Device{}; }
};
template <>
struct epgraph::archive::tensor_data_traits<PlainTensor> {
  static PlainTensor from_bytes(epgraph::dtype type, std::vector<std::int64_t> sizes,
                                std::vector<std::byte> bytes) {
    return PlainTensor{type, std::move(sizes), std::move(bytes)};
  }
  static const std::vector<std::byte>& to_bytes(const PlainTensor& t) { return t.bytes; }
};

TEST_CASE("lazy: a tensor type without the lazy hooks loads eagerly and saves its bytes",
          "[archive][lazy]") {
  static_assert(!epgraph::archive::detail::has_lazy_data<PlainTensor>::value);
  static_assert(epgraph::archive::detail::has_lazy_data<HostTensor>::value);
  TempDir dir;
  const std::string in = compressed_archive(dir);
  auto ep = load_archive<PlainTensor>(in);
  CHECK(ep.state_dict().at("w").bytes == floats({1, 2, 3, 4}));
  const std::string out = dir / "out.pt2";
  save_archive(ep, out);
  CHECK(method_of(out, kW).first == ZIP_CM_STORE);  // written from the bytes
  CHECK(floats_of(load_archive(out).state_dict().at("w")) == std::vector<float>{1, 2, 3, 4});
}
