// Tests for epgraph/archive: zip.hpp and pt2_archive.hpp (load_archive / save_archive).
// Every archive is made here, at test time, by save_archive or by zip_writer (libzip).
// SPDX-License-Identifier: BSD-3-Clause
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <epgraph/archive/archive.hpp>
#include <epgraph/ir/print.hpp>
#include <epgraph/json/json.hpp>
#include <epgraph/program/edit.hpp>
#include <epgraph/program/verify.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../support/archive_files.hpp"
#include "../support/archive_programs.hpp"

namespace {
using namespace epgraph;           // NOLINT: test file
using namespace epgraph::archive;  // NOLINT: test file
namespace fs = std::filesystem;
using Program = ExportedProgram<HostTensor>;
using epgraph_test::Bytes;
using epgraph_test::bytes_of;
using epgraph_test::f32;
using epgraph_test::floats;
using epgraph_test::floats_of;
using epgraph_test::small_program;
using epgraph_test::TempDir;
using epgraph_test::text_of;
using epgraph_test::write_zip;

// Every entry of a zip file: name and bytes, in order.
std::vector<std::pair<std::string, std::string>> read_zip_text(const std::string& file) {
  zip_reader r(file);
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t i = 0; i < r.entries().size(); ++i) {
    out.emplace_back(r.entries()[i].name, text_of(r.read(i)));
  }
  return out;
}
std::vector<std::string> names_of(const std::vector<std::pair<std::string, std::string>>& es) {
  std::vector<std::string> out;
  for (const auto& e : es) out.push_back(e.first);
  return out;
}
std::string entry_text(const std::string& file, const std::string& name) {
  for (const auto& [n, t] : read_zip_text(file)) {
    if (n == name) return t;
  }
  FAIL("no entry " << name);
  return "";
}

std::string program_json() { return json::save_exported_program_to_string(small_program(2)); }

std::string meta_json(const std::string& sizes, const std::string& strides, int offset,
                      bool requires_grad) {
  return R"({"dtype": 7, "sizes": [)" + sizes + R"(], "requires_grad": )" +
         (requires_grad ? "true" : "false") +
         R"(, "device": {"type": "cpu", "index": null}, "strides": [)" + strides +
         R"(], "storage_offset": {"as_int": )" + std::to_string(offset) + R"(}, "layout": 7})";
}
std::string payload(const std::string& path, bool is_param, bool use_pickle,
                    const std::string& meta) {
  return R"({"path_name": ")" + path + R"(", "is_param": )" + (is_param ? "true" : "false") +
         R"(, "use_pickle": )" + (use_pickle ? "true" : "false") + R"(, "tensor_meta": )" + meta +
         "}";
}
const std::string kMeta2 = meta_json(R"({"as_int": 2})", R"({"as_int": 1})", 0, false);

// A current-layout archive under root folder `m/`, with the given weights / constants configs and
// extra entries (added after the weight files).
std::vector<std::pair<std::string, Bytes>> pt2_entries(const std::string& weights_config,
                                                       const std::string& constants_config) {
  return {{"m/data/weights/weight_0", floats({1.0f, 2.0f})},
          {"m/data/weights/weight_1", floats({3.0f, 4.0f})},
          {"m/data/weights/model_weights_config.json", bytes_of(weights_config)},
          {"m/data/constants/tensor_0", floats({5.0f, 6.0f})},
          {"m/data/constants/model_constants_config.json", bytes_of(constants_config)},
          {"m/models/model.json", bytes_of(program_json())},
          {"m/data/sample_inputs/model.pt", bytes_of("PICKLE-SAMPLE")},
          {"m/archive_format", bytes_of("pt2")},
          {"m/archive_version", bytes_of("0")},
          {"m/.data/version", bytes_of("6\n")},
          {"m/byteorder", bytes_of("little")}};
}
const std::string kWeights = R"({"config": {"w": )" + payload("weight_0", true, false, kMeta2) +
                             R"(, "buf": )" + payload("weight_1", false, false, kMeta2) + "}}";
const std::string kConstants =
    R"({"config": {"k": )" + payload("tensor_0", false, false, kMeta2) + "}}";

void set_entry(std::vector<std::pair<std::string, Bytes>>& es, const std::string& name, Bytes b) {
  for (auto& e : es) {
    if (e.first == name) {
      e.second = std::move(b);
      return;
    }
  }
  es.emplace_back(name, std::move(b));
}
void erase_entry(std::vector<std::pair<std::string, Bytes>>& es, const std::string& name) {
  es.erase(std::remove_if(es.begin(), es.end(), [&](const auto& e) { return e.first == name; }),
           es.end());
}

std::vector<std::string> keys(const ordered_dict<HostTensor>& d) {
  std::vector<std::string> out;
  for (const auto& e : d) out.push_back(e.first);
  return out;
}
std::vector<std::string> keys(const ordered_dict<Program::constant_type>& d) {
  std::vector<std::string> out;
  for (const auto& e : d) out.push_back(e.first);
  return out;
}

}  // namespace

TEST_CASE("save_archive without archive metadata writes torch's current layout", "[archive]") {
  TempDir dir;
  const std::string file = dir / "prog.pt2";
  save_archive(small_program(2), file);
  const auto entries = read_zip_text(file);
  CHECK(names_of(entries) == std::vector<std::string>{
                                 "prog/data/weights/weight_0",
                                 "prog/data/weights/weight_1",
                                 "prog/data/weights/model_weights_config.json",
                                 "prog/data/constants/tensor_0",
                                 "prog/data/constants/model_constants_config.json",
                                 "prog/models/model.json",
                                 "prog/data/sample_inputs/model.pt",
                                 "prog/archive_format",
                                 "prog/archive_version",
                                 "prog/.data/version",
                                 "prog/byteorder",
                             });
  CHECK(entry_text(file, "prog/data/weights/weight_0") == text_of(floats({1.0f, 2.0f})));
  CHECK(entry_text(file, "prog/data/weights/model_weights_config.json") ==
        R"({"config":{"w":{"path_name":"weight_0","is_param":true,"use_pickle":false,)"
        R"("tensor_meta":{"dtype":7,"sizes":[{"as_int":2}],"requires_grad":true,)"
        R"("device":{"type":"cpu","index":null},"strides":[{"as_int":1}],)"
        R"("storage_offset":{"as_int":0},"layout":7}},)"
        R"("buf":{"path_name":"weight_1","is_param":false,"use_pickle":false,)"
        R"("tensor_meta":{"dtype":7,"sizes":[{"as_int":2}],"requires_grad":false,)"
        R"("device":{"type":"cpu","index":null},"strides":[{"as_int":1}],)"
        R"("storage_offset":{"as_int":0},"layout":7}}}})");
  CHECK(entry_text(file, "prog/data/constants/model_constants_config.json") ==
        R"({"config":{"k":{"path_name":"tensor_0","is_param":false,"use_pickle":false,)"
        R"("tensor_meta":{"dtype":7,"sizes":[{"as_int":2}],"requires_grad":false,)"
        R"("device":{"type":"cpu","index":null},"strides":[{"as_int":1}],)"
        R"("storage_offset":{"as_int":0},"layout":7}}}})");
  CHECK(entry_text(file, "prog/models/model.json") == program_json());
  CHECK(entry_text(file, "prog/data/sample_inputs/model.pt").empty());
  CHECK(entry_text(file, "prog/archive_format") == "pt2");
  CHECK(entry_text(file, "prog/archive_version") == "0");
  CHECK(entry_text(file, "prog/.data/version") == "6\n");
  CHECK(entry_text(file, "prog/byteorder") == "little");

  const Program ep = load_archive(file);
  const Program expected = small_program(2);
  CHECK(to_string(ep.graph()) == to_string(expected.graph()));
  CHECK(to_string(ep.graph_signature()) == to_string(expected.graph_signature()));
  CHECK(keys(ep.state_dict()) == std::vector<std::string>{"w", "buf"});
  CHECK(ep.state_dict().at("w") == expected.state_dict().at("w"));
  CHECK(ep.state_dict().at("buf") == expected.state_dict().at("buf"));
  CHECK(keys(ep.constants()) == std::vector<std::string>{"k"});
  CHECK(std::get<HostTensor>(ep.constants().at("k")) ==
        std::get<HostTensor>(expected.constants().at("k")));
  CHECK_NOTHROW(verify(ep));
  REQUIRE(ep.metadata().archive);
  const ArchiveInfo& info = *ep.metadata().archive;
  CHECK(info.layout == "pt2");
  CHECK(info.prefix == "prog/");
  CHECK(info.model_name == "model");
  CHECK(info.entry_order == names_of(entries));
  std::vector<std::string> record_names;
  for (const auto& r : info.records) record_names.push_back(r.name);
  CHECK(record_names == std::vector<std::string>{
                            "prog/data/weights/model_weights_config.json",
                            "prog/data/constants/model_constants_config.json",
                            "prog/data/sample_inputs/model.pt",
                            "prog/archive_format",
                            "prog/archive_version",
                            "prog/.data/version",
                            "prog/byteorder",
                        });
}

TEST_CASE("saving a loaded archive unchanged rewrites every entry byte for byte", "[archive]") {
  TempDir dir;
  write_zip(dir / "in.pt2", pt2_entries(kWeights, kConstants));
  const Program ep = load_archive(dir / "in.pt2");
  save_archive(ep, dir / "out.pt2");
  CHECK(read_zip_text(dir / "out.pt2") == read_zip_text(dir / "in.pt2"));
  // A clone keeps the archive metadata (records are shared, not copied: still unread, same source).
  const Program copy = ep.clone();
  REQUIRE(copy.metadata().archive);
  const ArchiveRecord& first = ep.metadata().archive->records.front();
  CHECK(first.source != nullptr);
  CHECK(first.data == nullptr);
  CHECK(copy.metadata().archive->records.front().source == first.source);
  CHECK_FALSE(copy.metadata().archive->records.front().is_loaded());
  CHECK(copy.metadata() == ep.metadata());
  save_archive(copy, dir / "copy.pt2");
  CHECK(read_zip_text(dir / "copy.pt2") == read_zip_text(dir / "in.pt2"));
}

TEST_CASE("create_mutable_buffer then save adds a weight record and its config entry",
          "[archive]") {
  TempDir dir;
  write_zip(dir / "in.pt2", pt2_entries(kWeights, kConstants));
  Program ep = load_archive(dir / "in.pt2");
  create_mutable_buffer(ep, "b_cache", HostTensor::full(dtype::float32, {2, 2}, 0.5));
  save_archive(ep, dir / "out.pt2");
  const auto in = read_zip_text(dir / "in.pt2");
  const auto out = read_zip_text(dir / "out.pt2");
  CHECK(names_of(out) == std::vector<std::string>{
                             "m/data/weights/weight_0",
                             "m/data/weights/weight_1",
                             "m/data/weights/weight_2",
                             "m/data/weights/model_weights_config.json",
                             "m/data/constants/tensor_0",
                             "m/data/constants/model_constants_config.json",
                             "m/models/model.json",
                             "m/data/sample_inputs/model.pt",
                             "m/archive_format",
                             "m/archive_version",
                             "m/.data/version",
                             "m/byteorder",
                         });
  CHECK(entry_text(dir / "out.pt2", "m/data/weights/weight_2") ==
        text_of(floats({0.5f, 0.5f, 0.5f, 0.5f})));
  const std::string config =
      entry_text(dir / "out.pt2", "m/data/weights/model_weights_config.json");
  CHECK(nlohmann::ordered_json::parse(config)["config"]["cache"] ==
        nlohmann::ordered_json::parse(
            R"({"path_name": "weight_2", "is_param": false, "use_pickle": false, "tensor_meta": )" +
            meta_json(R"({"as_int": 2}, {"as_int": 2})", R"({"as_int": 2}, {"as_int": 1})", 0,
                      false) +
            "}"));
  // Untouched records keep their bytes.
  for (const auto& name :
       {"m/data/weights/weight_0", "m/data/weights/weight_1", "m/data/constants/tensor_0",
        "m/data/sample_inputs/model.pt", "m/data/constants/model_constants_config.json"}) {
    CHECK(entry_text(dir / "out.pt2", name) == entry_text(dir / "in.pt2", name));
  }
  const Program back = load_archive(dir / "out.pt2");
  CHECK(to_string(back.graph()) == to_string(ep.graph()));
  CHECK(to_string(back.graph_signature()) == to_string(ep.graph_signature()));
  CHECK(keys(back.state_dict()) == std::vector<std::string>{"w", "buf", "cache"});
  CHECK(back.state_dict().at("cache") == ep.state_dict().at("cache"));
  CHECK_NOTHROW(verify(back));
}

TEST_CASE("a removed weight drops its file, a replaced one keeps its file name", "[archive]") {
  TempDir dir;
  write_zip(dir / "in.pt2", pt2_entries(kWeights, kConstants));
  Program ep = load_archive(dir / "in.pt2");
  REQUIRE(ep.state_dict().erase("w"));
  ep.state_dict().insert_or_assign("buf", HostTensor::full(dtype::float32, {3}, 2.0));
  save_archive(ep, dir / "out.pt2");
  const std::vector<std::string> names = names_of(read_zip_text(dir / "out.pt2"));
  CHECK(std::count(names.begin(), names.end(), "m/data/weights/weight_0") == 0);
  CHECK(entry_text(dir / "out.pt2", "m/data/weights/weight_1") ==
        text_of(floats({2.0f, 2.0f, 2.0f})));
  const Program back = load_archive(dir / "out.pt2");
  CHECK(keys(back.state_dict()) == std::vector<std::string>{"buf"});
  CHECK(back.state_dict().at("buf") == ep.state_dict().at("buf"));
}

TEST_CASE("raw payloads are read like torch's as_strided over the file's storage", "[archive]") {
  TempDir dir;
  // One 6-float storage shared by: "w" = the first row of a [2, 3] tensor read transposed
  // (sizes [3, 2], strides [1, 3]), and "buf" = elements 4..5 (storage_offset 4).
  auto es = pt2_entries(R"({"config": {"w": )" +
                            payload("weight_0", true, false,
                                    meta_json(R"({"as_int": 3}, {"as_int": 2})",
                                              R"({"as_int": 1}, {"as_int": 3})", 0, true)) +
                            R"(, "buf": )" +
                            payload("weight_0", false, false,
                                    meta_json(R"({"as_int": 2})", R"({"as_int": 1})", 4, false)) +
                            "}}",
                        kConstants);
  set_entry(es, "m/data/weights/weight_0", floats({0, 1, 2, 3, 4, 5}));
  erase_entry(es, "m/data/weights/weight_1");
  write_zip(dir / "in.pt2", es);
  const Program ep = load_archive(dir / "in.pt2");
  CHECK(ep.state_dict().at("w").sizes() == std::vector<std::int64_t>{3, 2});
  CHECK(floats_of(ep.state_dict().at("w")) == std::vector<float>{0, 3, 1, 4, 2, 5});
  CHECK(floats_of(ep.state_dict().at("buf")) == std::vector<float>{4, 5});
  // Saved back unchanged: one file laid out as before, the config entries verbatim (found by the
  // PyTorch interop tests: a contiguous copy untied tied weights and changed a transposed
  // buffer's strides, and with them torch's matmul results).
  save_archive(ep, dir / "out.pt2");
  CHECK(read_zip_text(dir / "out.pt2") == read_zip_text(dir / "in.pt2"));

  // When the tensors no longer agree about the shared elements, both are saved contiguous: the
  // first keeps the file name, the second gets a new one.
  Program edited = ep.clone();
  edited.state_dict().insert_or_assign(
      "buf", HostTensor::from_bytes(dtype::float32, {2}, floats({9.0f, 9.0f})));
  save_archive(edited, dir / "edited.pt2");
  CHECK(entry_text(dir / "edited.pt2", "m/data/weights/weight_0") ==
        text_of(floats({0, 3, 1, 4, 2, 5})));
  CHECK(entry_text(dir / "edited.pt2", "m/data/weights/weight_1") == text_of(floats({9, 9})));
  const auto config = nlohmann::ordered_json::parse(
      entry_text(dir / "edited.pt2", "m/data/weights/model_weights_config.json"));
  CHECK(config["config"]["w"]["tensor_meta"]["strides"].dump() == R"([{"as_int":2},{"as_int":1}])");
  CHECK(config["config"]["w"]["tensor_meta"]["requires_grad"] == true);
  CHECK(config["config"]["buf"]["path_name"] == "weight_1");
  CHECK(config["config"]["buf"]["tensor_meta"]["storage_offset"].dump() == R"({"as_int":0})");
  const Program back = load_archive(dir / "edited.pt2");
  CHECK(floats_of(back.state_dict().at("w")) == std::vector<float>{0, 3, 1, 4, 2, 5});
  CHECK(floats_of(back.state_dict().at("buf")) == std::vector<float>{9, 9});
}

TEST_CASE("tied and strided payloads keep torch's storage layout when saved", "[archive]") {
  TempDir dir;
  // As torch 2.13 writes a tied embedding / head weight ("emb", "head": one file, identical
  // entries) and a transposed buffer ("proj_t": sizes [3, 2], strides [1, 3]).
  const std::string tied =
      meta_json(R"({"as_int": 2}, {"as_int": 2})", R"({"as_int": 2}, {"as_int": 1})", 0, true);
  const std::string transposed =
      meta_json(R"({"as_int": 3}, {"as_int": 2})", R"({"as_int": 1}, {"as_int": 3})", 0, false);
  auto es =
      pt2_entries(R"({"config": {"emb": )" + payload("weight_0", true, false, tied) +
                      R"(, "head": )" + payload("weight_0", true, false, tied) + R"(, "proj_t": )" +
                      payload("weight_1", false, false, transposed) + "}}",
                  kConstants);
  set_entry(es, "m/data/weights/weight_0", floats({1, 2, 3, 4}));
  set_entry(es, "m/data/weights/weight_1", floats({0, 1, 2, 3, 4, 5}));
  write_zip(dir / "in.pt2", es);
  Program ep = load_archive(dir / "in.pt2");
  REQUIRE(keys(ep.state_dict()) == std::vector<std::string>{"emb", "head", "proj_t"});
  CHECK(floats_of(ep.state_dict().at("head")) == std::vector<float>{1, 2, 3, 4});
  CHECK(floats_of(ep.state_dict().at("proj_t")) == std::vector<float>{0, 3, 1, 4, 2, 5});

  // Unchanged: every entry byte for byte (one shared file, the transposed layout).
  save_archive(ep, dir / "same.pt2");
  CHECK(read_zip_text(dir / "same.pt2") == read_zip_text(dir / "in.pt2"));

  // New values that keep dtype and sizes keep the layout too.
  ep.state_dict().insert_or_assign(
      "proj_t", HostTensor::from_bytes(dtype::float32, {3, 2}, floats({10, 13, 11, 14, 12, 15})));
  create_mutable_buffer(ep, "b_cache", HostTensor::full(dtype::float32, {2}, 0.5));
  save_archive(ep, dir / "out.pt2");
  CHECK(names_of(read_zip_text(dir / "out.pt2")) ==
        std::vector<std::string>{
            "m/data/weights/weight_0", "m/data/weights/weight_1", "m/data/weights/weight_2",
            "m/data/weights/model_weights_config.json", "m/data/constants/tensor_0",
            "m/data/constants/model_constants_config.json", "m/models/model.json",
            "m/data/sample_inputs/model.pt", "m/archive_format", "m/archive_version",
            "m/.data/version", "m/byteorder"});
  CHECK(entry_text(dir / "out.pt2", "m/data/weights/weight_0") == text_of(floats({1, 2, 3, 4})));
  CHECK(entry_text(dir / "out.pt2", "m/data/weights/weight_1") ==
        text_of(floats({10, 11, 12, 13, 14, 15})));
  CHECK(entry_text(dir / "out.pt2", "m/data/weights/weight_2") == text_of(floats({0.5f, 0.5f})));
  const auto in_config = nlohmann::ordered_json::parse(
      entry_text(dir / "in.pt2", "m/data/weights/model_weights_config.json"));
  const auto config = nlohmann::ordered_json::parse(
      entry_text(dir / "out.pt2", "m/data/weights/model_weights_config.json"));
  CHECK(config["config"]["emb"] == in_config["config"]["emb"]);
  CHECK(config["config"]["head"] == in_config["config"]["head"]);
  CHECK(config["config"]["proj_t"] == in_config["config"]["proj_t"]);
  CHECK(config["config"]["cache"]["path_name"] == "weight_2");
  const Program back = load_archive(dir / "out.pt2");
  CHECK(keys(back.state_dict()) == std::vector<std::string>{"emb", "head", "proj_t", "cache"});
  CHECK(floats_of(back.state_dict().at("proj_t")) == std::vector<float>{10, 13, 11, 14, 12, 15});

  // A tensor whose sizes changed leaves the shared file; the other keeps it.
  ep.state_dict().insert_or_assign("head", HostTensor::full(dtype::float32, {3}, 7.0));
  save_archive(ep, dir / "untied.pt2");
  CHECK(entry_text(dir / "untied.pt2", "m/data/weights/weight_0") == text_of(floats({1, 2, 3, 4})));
  const auto untied = nlohmann::ordered_json::parse(
      entry_text(dir / "untied.pt2", "m/data/weights/model_weights_config.json"));
  CHECK(untied["config"]["emb"] == in_config["config"]["emb"]);
  CHECK(untied["config"]["head"]["path_name"] == "weight_2");
  CHECK(entry_text(dir / "untied.pt2", "m/data/weights/weight_2") == text_of(floats({7, 7, 7})));
  CHECK(untied["config"]["cache"]["path_name"] == "weight_3");
  CHECK(floats_of(load_archive(dir / "untied.pt2").state_dict().at("emb")) ==
        std::vector<float>{1, 2, 3, 4});
}

TEST_CASE("records epgraph does not interpret pass through unchanged", "[archive]") {
  TempDir dir;
  // A pickled weight (tensor subclass), a pickled constant, an opaque object and extra files.
  auto es = pt2_entries(
      R"({"config": {"w": )" + payload("weight_0", true, false, kMeta2) + R"(, "sub": )" +
          payload("weight_1", false, true, kMeta2) + "}}",
      R"({"config": {"k": )" + payload("tensor_0", false, false, kMeta2) + R"(, "obj": )" +
          R"({"path_name": "opaque_obj_0", "is_param": false, "use_pickle": true, "tensor_meta": null})" +
          "}}");
  set_entry(es, "m/data/weights/weight_1", bytes_of("PICKLED-SUBCLASS"));
  set_entry(es, "m/data/constants/opaque_obj_0", bytes_of("PICKLED-OBJECT"));
  set_entry(es, "m/extra/notes.txt", bytes_of("hello"));
  write_zip(dir / "in.pt2", es);
  Program ep = load_archive(dir / "in.pt2");
  CHECK(keys(ep.state_dict()) == std::vector<std::string>{"w"});
  CHECK(keys(ep.constants()) == std::vector<std::string>{"k"});
  save_archive(ep, dir / "same.pt2");
  CHECK(read_zip_text(dir / "same.pt2") == read_zip_text(dir / "in.pt2"));
  // After an edit the pickled entries and files are still there, byte for byte.
  create_mutable_buffer(ep, "b_cache", HostTensor::zeros(dtype::float32, {2}));
  save_archive(ep, dir / "out.pt2");
  CHECK(names_of(read_zip_text(dir / "out.pt2")) ==
        std::vector<std::string>{
            "m/data/weights/weight_0",
            "m/data/weights/weight_1",
            "m/data/weights/weight_2",
            "m/data/weights/model_weights_config.json",
            "m/data/constants/tensor_0",
            "m/data/constants/model_constants_config.json",
            "m/models/model.json",
            "m/data/sample_inputs/model.pt",
            "m/archive_format",
            "m/archive_version",
            "m/.data/version",
            "m/byteorder",
            "m/data/constants/opaque_obj_0",
            "m/extra/notes.txt",
        });
  CHECK(entry_text(dir / "out.pt2", "m/data/weights/weight_1") == "PICKLED-SUBCLASS");
  CHECK(entry_text(dir / "out.pt2", "m/data/constants/opaque_obj_0") == "PICKLED-OBJECT");
  CHECK(entry_text(dir / "out.pt2", "m/extra/notes.txt") == "hello");
  const auto config = nlohmann::ordered_json::parse(
      entry_text(dir / "out.pt2", "m/data/weights/model_weights_config.json"));
  std::vector<std::string> fqns;
  for (const auto& item : config["config"].items()) fqns.push_back(item.key());
  CHECK(fqns == std::vector<std::string>{"w", "cache", "sub"});
  CHECK(config["config"]["sub"] ==
        nlohmann::ordered_json::parse(payload("weight_1", false, true, kMeta2)));
  CHECK(entry_text(dir / "out.pt2", "m/data/constants/model_constants_config.json") ==
        entry_text(dir / "in.pt2", "m/data/constants/model_constants_config.json"));
}

TEST_CASE("custom objects load as ScriptObject with the signature's class", "[archive]") {
  TempDir dir;
  Program prog = small_program(2);
  {
    auto guard = prog.graph().inserting_before(prog.graph().find_node("x"));
    // How epgraph::json marks a custom-object value (NodeMeta::serialized).
    prog.graph().placeholder("obj")->mutable_meta().serialized =
        R"({"class_fqn": "__torch__.torch.classes.m.Foo"})";
  }
  prog.graph_signature().input_specs.insert(
      prog.graph_signature().input_specs.begin() + 3,
      InputSpec(InputKind::CUSTOM_OBJ, CustomObjArgument{"obj", "__torch__.torch.classes.m.Foo"},
                "attr"));
  prog.constants().insert("attr", ScriptObject{"__torch__.torch.classes.m.Foo", bytes_of("OBJ")});
  save_archive(prog, dir / "obj.pt2");
  CHECK(entry_text(dir / "obj.pt2", "obj/data/constants/custom_obj_0") == "OBJ");
  const auto config = nlohmann::ordered_json::parse(
      entry_text(dir / "obj.pt2", "obj/data/constants/model_constants_config.json"));
  CHECK(config["config"]["attr"].dump() ==
        R"({"path_name":"custom_obj_0","is_param":false,"use_pickle":true,"tensor_meta":null})");
  const Program back = load_archive(dir / "obj.pt2");
  CHECK(keys(back.constants()) == std::vector<std::string>{"k", "attr"});
  CHECK(std::get<ScriptObject>(back.constants().at("attr")) ==
        ScriptObject{"__torch__.torch.classes.m.Foo", bytes_of("OBJ")});
}

TEST_CASE("legacy archives keep their pickles, epgraph's tensors go next to them", "[archive]") {
  TempDir dir;
  Program prog = small_program(2);
  const std::vector<std::pair<std::string, Bytes>> es = {
      {"serialized_exported_program.json", bytes_of(json::save_exported_program_to_string(prog))},
      {"serialized_state_dict.pt", bytes_of("STATE-PICKLE")},
      {"serialized_constants.pt", bytes_of("CONSTANTS-PICKLE")},
      {"serialized_example_inputs.pt", {}},
      {"version", bytes_of("8.20")}};
  write_zip(dir / "in.ep", es);
  Program ep = load_archive(dir / "in.ep");
  CHECK(ep.state_dict().empty());
  CHECK(ep.constants().empty());
  CHECK(to_string(ep.graph()) == to_string(prog.graph()));
  CHECK_NOTHROW(verify(ep, VerifyOptions{false}));
  REQUIRE(ep.metadata().archive);
  CHECK(ep.metadata().archive->layout == "legacy");
  CHECK(ep.metadata().archive->prefix.empty());
  CHECK(ep.metadata().archive->model_name.empty());
  CHECK(ep.metadata().archive->records.size() == 4);
  save_archive(ep, dir / "same.ep");
  CHECK(read_zip_text(dir / "same.ep") == read_zip_text(dir / "in.ep"));

  create_mutable_buffer(ep, "b_cache", HostTensor::full(dtype::float32, {2}, 7.0));
  save_archive(ep, dir / "out.ep");
  CHECK(names_of(read_zip_text(dir / "out.ep")) == std::vector<std::string>{
                                                       "serialized_exported_program.json",
                                                       "serialized_state_dict.pt",
                                                       "serialized_constants.pt",
                                                       "serialized_example_inputs.pt",
                                                       "version",
                                                       "data/weights/weight_0",
                                                       "data/weights/model_weights_config.json",
                                                   });
  CHECK(entry_text(dir / "out.ep", "serialized_state_dict.pt") == "STATE-PICKLE");
  const Program back = load_archive(dir / "out.ep");
  CHECK(keys(back.state_dict()) == std::vector<std::string>{"cache"});
  CHECK(floats_of(back.state_dict().at("cache")) == std::vector<float>{7.0f, 7.0f});
  CHECK(to_string(back.graph_signature()) == to_string(ep.graph_signature()));
  CHECK_NOTHROW(verify(back, VerifyOptions{false}));
}

TEST_CASE("zip_reader reports unreadable files with the file and entry", "[archive][errors]") {
  TempDir dir;
  const std::string missing = dir / "missing.pt2";
  CHECK_THROWS_AS(load_archive(missing), archive_error);
  CHECK_THROWS_WITH(load_archive(missing), missing + ": no such file");

  const std::string text = dir / "text.pt2";
  std::ofstream(text) << "this is not a zip file";
  CHECK_THROWS_WITH(load_archive(text),
                    text + ": not a zip file (no end of central directory record)");

  // Truncated: the first half of a valid archive (its central directory is gone).
  write_zip(dir / "good.pt2", pt2_entries(kWeights, kConstants));
  std::ifstream good(dir / "good.pt2", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(good)), std::istreambuf_iterator<char>());
  const std::string cut = dir / "cut.pt2";
  std::ofstream(cut, std::ios::binary) << all.substr(0, all.size() / 2);
  CHECK_THROWS_WITH(load_archive(cut),
                    cut + ": not a zip file (no end of central directory record)");
  // Truncated by a few bytes: the end-of-central-directory record is incomplete.
  const std::string cut2 = dir / "cut2.pt2";
  std::ofstream(cut2, std::ios::binary) << all.substr(0, all.size() - 5);
  CHECK_THROWS_WITH(load_archive(cut2),
                    cut2 + ": not a zip file (no end of central directory record)");

  // Corrupt data: one byte of a stored entry changed (its CRC no longer matches).
  const std::string marker = "PICKLE-SAMPLE";
  const std::size_t at = all.find(marker);
  REQUIRE(at != std::string::npos);
  std::string bad = all;
  bad[at] = 'X';
  const std::string corrupt = dir / "corrupt.pt2";
  std::ofstream(corrupt, std::ios::binary) << bad;
  // Pass-through records are read on first access (ArchiveRecord::bytes), which reports it.
  const Program lazy = load_archive(corrupt);
  const ArchiveRecord* sample = nullptr;
  for (const auto& r : lazy.metadata().archive->records) {
    if (r.name == "m/data/sample_inputs/model.pt") sample = &r;
  }
  REQUIRE(sample != nullptr);
  CHECK_THROWS_AS(sample->bytes(), archive_error);
  CHECK_THROWS_WITH(sample->bytes(),
                    corrupt + ": m/data/sample_inputs/model.pt: corrupt data (CRC mismatch)");
  try {
    (void)sample->bytes();
  } catch (const archive_error& e) {
    CHECK(e.archive() == corrupt);
    CHECK(e.entry() == "m/data/sample_inputs/model.pt");
  }
}

TEST_CASE("bad archive layouts are rejected with the exact entry", "[archive][errors]") {
  TempDir dir;
  const std::string f = dir / "bad.pt2";
  auto load_with = [&](std::vector<std::pair<std::string, Bytes>> es) {
    write_zip(f, es);
    (void)load_archive(f);
  };
  auto es = pt2_entries(kWeights, kConstants);

  CHECK_THROWS_WITH(load_with({{"m/readme.txt", bytes_of("x")}}),
                    f + ": neither a PT2 archive (no archive_format entry) nor a legacy "
                        "torch.export archive (no serialized_exported_program.json entry)");
  auto e1 = es;
  set_entry(e1, "m/archive_format", bytes_of("zip"));
  CHECK_THROWS_WITH(load_with(e1), f + ": m/archive_format: expected 'pt2', found 'zip'");
  auto e2 = es;
  set_entry(e2, "m/archive_version", bytes_of("1"));
  CHECK_THROWS_WITH(load_with(e2), f + ": m/archive_version: unsupported archive version '1' "
                                       "(epgraph reads version 0)");
  auto e3 = es;
  set_entry(e3, "m/byteorder", bytes_of("big"));
  CHECK_THROWS_WITH(load_with(e3), f + ": m/byteorder: unsupported byte order 'big' (epgraph "
                                       "reads little-endian archives only)");
  auto e4 = es;
  erase_entry(e4, "m/models/model.json");
  CHECK_THROWS_WITH(load_with(e4), f + ": no model (no entry m/models/<name>.json)");
  auto e5 = es;
  set_entry(e5, "m/models/other.json", bytes_of(program_json()));
  CHECK_NOTHROW(load_with(e5));  // `model`, as torch.export.load (test_fidelity_programs.cpp)
  CHECK_THROWS_WITH(load_archive(f, "another"),
                    f + ": no program 'another' (the archive holds model, other)");
  auto e6 = es;
  erase_entry(e6, "m/data/weights/model_weights_config.json");
  CHECK_THROWS_WITH(load_with(e6), f + ": m/data/weights/model_weights_config.json: entry not "
                                       "found (every PT2 archive model needs its weights config)");
  auto e7 = es;
  erase_entry(e7, "m/data/constants/model_constants_config.json");
  CHECK_THROWS_WITH(load_with(e7),
                    f + ": m/data/constants/model_constants_config.json: entry not found (every "
                        "PT2 archive model needs its constants config)");
  auto e8 = es;
  set_entry(e8, "m/models/model.json", bytes_of("[]"));
  CHECK_THROWS_WITH(load_with(e8), f + ": m/models/model.json: expected an object, got array");
}

TEST_CASE("weight records that disagree with their config are rejected", "[archive][errors]") {
  TempDir dir;
  const std::string f = dir / "bad.pt2";
  auto load_with = [&](std::vector<std::pair<std::string, Bytes>> es) {
    write_zip(f, es);
    (void)load_archive(f);
  };
  const std::string cfg = "m/data/weights/model_weights_config.json";
  auto es = pt2_entries(kWeights, kConstants);

  auto e1 = es;
  set_entry(e1, "m/data/weights/weight_1", floats({3.0f}));
  CHECK_THROWS_AS(load_with(e1), archive_error);
  CHECK_THROWS_WITH(load_with(e1),
                    f + ": m/data/weights/weight_1: weight 'buf' (float32, sizes [2], strides [1], "
                        "storage_offset 0) needs 8 bytes but the entry has 4");
  auto e2 = es;
  set_entry(e2, "m/data/weights/weight_1", bytes_of("12345"));
  CHECK_THROWS_WITH(load_with(e2),
                    f + ": m/data/weights/weight_1: weight 'buf' (float32, sizes [2], strides [1], "
                        "storage_offset 0): the entry has 5 bytes, not a multiple of the element "
                        "size 4");
  auto e3 = es;
  erase_entry(e3, "m/data/weights/weight_1");
  CHECK_THROWS_WITH(load_with(e3), f + ": m/data/weights/weight_1: entry not found (named by "
                                       "'buf' in m/data/weights/model_weights_config.json)");
  auto e4 = es;
  set_entry(e4, "m/data/constants/tensor_0", floats({5.0f}));
  CHECK_THROWS_WITH(load_with(e4), f + ": m/data/constants/tensor_0: constant 'k' (float32, sizes "
                                       "[2], strides [1], storage_offset 0) needs 8 bytes but the "
                                       "entry has 4");
  auto e5 = es;
  set_entry(e5, cfg, bytes_of("{\"config\": "));
  CHECK_THROWS_WITH(load_with(e5), f + ": " + cfg + ": invalid JSON (parse error at byte 12)");
  auto e5n = es;  // a raw NUL ended the text for nlohmann: the rest was dropped silently
  set_entry(e5n, cfg, bytes_of(kWeights + std::string(1, '\0') + "junk"));
  CHECK_THROWS_WITH(load_with(e5n), f + ": " + cfg + ": malformed JSON: NUL byte at byte " +
                                        std::to_string(kWeights.size()));
  auto e5b = es;  // nlohmann throws out_of_range, not parse_error, for this number
  set_entry(e5b, cfg, bytes_of("{\"config\": 1e400}"));
  CHECK_THROWS_WITH(load_with(e5b), f + ": " + cfg +
                                        ": invalid JSON ([json.exception.out_of_range.406] number "
                                        "overflow parsing '1e400')");
  auto e6 = es;
  set_entry(e6, cfg, bytes_of(R"({"config": []})"));
  CHECK_THROWS_WITH(load_with(e6), f + ": " + cfg + ": config: expected an object");
  auto e7 = es;
  set_entry(e7, cfg, bytes_of(R"({"config": {"w": {"path_name": "weight_0", "is_param": true}}})"));
  CHECK_THROWS_WITH(load_with(e7), f + ": " + cfg + ": config['w'].use_pickle: missing");
  auto e8 = es;
  set_entry(e8, cfg,
            bytes_of(R"({"config": {"w": {"path_name": "weight_0", "is_param": true, )"
                     R"("use_pickle": false, "tensor_meta": null}}})"));
  CHECK_THROWS_WITH(load_with(e8),
                    f + ": " + cfg + ": weight 'w' has a raw payload but no tensor_meta");
  auto e9 = es;
  set_entry(e9, cfg,
            bytes_of(R"({"config": {"w": )" +
                     payload("weight_0", true, false, R"({"dtype": 7, "sizes": []})") + "}}"));
  CHECK_THROWS_WITH(load_with(e9), f + ": " + cfg +
                                       ": config['w'].tensor_meta: missing required field "
                                       "'strides'");
  auto e10 = es;
  set_entry(e10, cfg,
            bytes_of(R"({"config": {"w": )" +
                     payload("weight_0", true, false,
                             meta_json(R"({"as_int": 2})", R"({"as_int": 1})", 1, false)) +
                     "}}"));
  CHECK_THROWS_WITH(load_with(e10), f + ": m/data/weights/weight_0: weight 'w' (float32, sizes "
                                        "[2], strides [1], storage_offset 1) needs 12 bytes but "
                                        "the entry has 8");
}

TEST_CASE("save_archive errors leave the destination untouched", "[archive][errors]") {
  TempDir dir;
  const std::string nowhere = dir / "no/such/dir/out.pt2";
  CHECK_THROWS_AS(save_archive(small_program(2), nowhere), archive_error);
  CHECK_THROWS_WITH(save_archive(small_program(2), nowhere),
                    nowhere + ": directory '" + (dir / "no/such/dir") + "' does not exist");

  // A config record kept from the input that is not valid: nothing is written.
  write_zip(dir / "in.pt2", pt2_entries(kWeights, kConstants));
  Program ep = load_archive(dir / "in.pt2");
  for (auto& r : ep.metadata().archive->records) {
    if (r.name == "m/data/weights/model_weights_config.json") {
      r.data = std::make_shared<const Bytes>(bytes_of("{"));
    }
  }
  const std::string out = dir / "out.pt2";
  std::ofstream(out) << "previous";
  CHECK_THROWS_WITH(
      save_archive(ep, out),
      out + ": m/data/weights/model_weights_config.json: invalid JSON (parse error at byte 2)");
  std::ifstream in(out);
  std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(content == "previous");
}
