// Tests for lazy pass-through records: load_archive reads no record bytes, save_archive copies
// unchanged records (and renamed unchanged tensors) raw, changed records are written, a source
// changed on disk is refused by name, failures change nothing.
// SPDX-License-Identifier: BSD-3-Clause
#include <zip.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <epgraph/archive/archive.hpp>
#include <epgraph/json/json.hpp>
#include <epgraph/program/edit.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "../support/archive_files.hpp"
#include "../support/archive_programs.hpp"
#include "../support/zip_inspect.hpp"

namespace {
using epgraph::ArchiveRecord;
using epgraph::HostTensor;
using epgraph::archive::archive_error;
using epgraph::archive::load_archive;
using epgraph::archive::save_archive;
using Program = epgraph::ExportedProgram<HostTensor>;
using epgraph_test::Bytes;
using epgraph_test::entry_of;
using epgraph_test::file_bytes;
using epgraph_test::method_of;
using epgraph_test::TempDir;

const std::string kSample = "in/data/sample_inputs/model.pt";
const std::string kNotes = "in/extra/notes.bin";  // an entry epgraph does not know
const std::string kRecordsWeight = "in/data/weights/weight_0";

// Rewrites `file` with the same entries plus kNotes; the payloads, kSample and kNotes deflated,
// the others stored.
void add_notes_and_deflate(const std::string& file) {
  epgraph_test::ZipEntries entries = epgraph_test::read_zip(file);
  entries.emplace_back(kNotes, epgraph_test::bytes_of(std::string(4096, 'n') + "end"));
  epgraph_test::write_zip_compressed(file, entries, [](const std::string& name) {
    return name == kSample || name == kNotes || epgraph_test::is_payload_entry(name);
  });
}

// `dir`/in.pt2: small_program(4) saved, plus kNotes, payloads and records deflated.
std::string archive_with_records(const TempDir& dir) {
  const std::string in = dir / "in.pt2";
  save_archive(epgraph_test::small_program(4), in);
  add_notes_and_deflate(in);
  return in;
}

ArchiveRecord& record(Program& ep, const std::string& name) {
  for (auto& r : ep.metadata().archive->records) {
    if (r.name == name) return r;
  }
  FAIL("no record " << name);
  return ep.metadata().archive->records.front();
}

}  // namespace

TEST_CASE("lazy records: load reads no record, the first bytes() call reads it",
          "[archive][lazy]") {
  TempDir dir;
  const std::string in = archive_with_records(dir);
  Program ep = load_archive(in);
  REQUIRE(ep.metadata().archive);
  std::set<std::string> names;
  for (const ArchiveRecord& r : ep.metadata().archive->records) {
    names.insert(r.name);
    INFO(r.name);
    CHECK_FALSE(r.is_loaded());
    CHECK(r.data == nullptr);
    CHECK(r.source != nullptr);
    CHECK(r.is_unchanged_from_source());
  }
  CHECK(names.count(kSample) == 1);
  CHECK(names.count(kNotes) == 1);
  CHECK(names.count("in/archive_format") == 1);
  const ArchiveRecord& notes = record(ep, kNotes);
  CHECK(epgraph_test::text_of(notes.bytes()) == entry_of(in, kNotes));
  CHECK(notes.is_loaded());
  CHECK(notes.is_unchanged_from_source());              // reading is not a change
  CHECK(notes.shared_bytes() == notes.shared_bytes());  // read once, kept
  CHECK_FALSE(record(ep, kSample).is_loaded());

  // Copies of an unread record share its source and compare equal without reading it.
  const ArchiveRecord copy = record(ep, kSample);
  CHECK(copy == record(ep, kSample));
  CHECK_FALSE(copy.is_loaded());
  CHECK_FALSE(record(ep, kSample).is_loaded());
  // A record made in code holds its bytes.
  const ArchiveRecord made("x/y", std::make_shared<const Bytes>(epgraph_test::bytes_of("abc")));
  CHECK(made.is_loaded());
  CHECK_FALSE(made.is_unchanged_from_source());
  CHECK(epgraph_test::text_of(made.bytes()) == "abc");
  CHECK(made != copy);
}

TEST_CASE("lazy records: save copies unchanged records raw (bytes and compression kept)",
          "[archive][lazy]") {
  TempDir dir;
  const std::string in = archive_with_records(dir);
  Program ep = load_archive(in);
  (void)record(ep, kSample).bytes();  // a record that was read is still copied raw
  const std::string out = dir / "out.pt2";
  save_archive(ep, out);
  for (const std::string& name : {kNotes, kSample, std::string("in/archive_format")}) {
    INFO(name);
    CHECK(entry_of(out, name) == entry_of(in, name));
    CHECK(method_of(out, name) == method_of(in, name));
  }
  CHECK(method_of(out, kNotes).first == ZIP_CM_DEFLATE);
  CHECK_FALSE(record(ep, kNotes).is_loaded());  // never read, not even by the save
  // The copy loads with the same records.
  Program back = load_archive(out);
  CHECK(record(back, kNotes) == record(ep, kNotes));
  CHECK(epgraph_test::text_of(record(back, kNotes).bytes()) == std::string(4096, 'n') + "end");
}

TEST_CASE("lazy records: a changed record is written from its new bytes", "[archive][lazy]") {
  TempDir dir;
  const std::string in = archive_with_records(dir);
  Program ep = load_archive(in);
  record(ep, kNotes).data = std::make_shared<const Bytes>(epgraph_test::bytes_of("changed"));
  CHECK_FALSE(record(ep, kNotes).is_unchanged_from_source());
  CHECK(epgraph_test::text_of(record(ep, kNotes).bytes()) == "changed");
  const std::string out = dir / "out.pt2";
  save_archive(ep, out);
  CHECK(entry_of(out, kNotes) == "changed");
  CHECK(method_of(out, kNotes).first == ZIP_CM_STORE);  // written by epgraph: stored
  CHECK(method_of(out, kSample) == method_of(in, kSample));
  // Saved over its own source: the new file holds the change, the other records their bytes.
  save_archive(ep, in);
  CHECK(entry_of(in, kNotes) == "changed");
  CHECK(entry_of(in, kSample) == entry_of(out, kSample));
}

TEST_CASE("lazy records: a source rewritten in place is refused by name, failures change nothing",
          "[archive][lazy]") {
  TempDir dir;
  const std::string in = archive_with_records(dir);
  Program ep = load_archive(in);
  (void)record(ep, kSample).bytes();  // read before the change: kept in memory
  {                                   // rewrite in place (same inode), a different size
    std::ofstream f(in, std::ios::binary | std::ios::app);
    f << "trailing junk";
  }
  const ArchiveRecord& notes = record(ep, kNotes);
  try {
    (void)notes.bytes();
    FAIL("no error");
  } catch (const archive_error& e) {
    CHECK(e.archive() == in);
    CHECK(e.entry() == kNotes);
    CHECK(std::string(e.what()).find(in + ": " + kNotes +
                                     ": the archive changed on disk since it was opened (size ") ==
          0);
  }
  CHECK_FALSE(notes.is_loaded());
  CHECK(notes.is_unchanged_from_source());
  CHECK(record(ep, kSample).is_loaded());
  // A save (which would copy the record from the changed file) refuses and leaves both the
  // destination and the program's records as they were.
  std::vector<std::pair<bool, const void*>> before;
  for (const auto& r : ep.metadata().archive->records)
    before.emplace_back(r.is_loaded(), r.data.get());
  const std::string out = dir / "out.pt2";
  std::ofstream(out) << "previous";
  CHECK_THROWS_AS(save_archive(ep, out), archive_error);
  CHECK(file_bytes(out) == "previous");
  std::vector<std::pair<bool, const void*>> after;
  for (const auto& r : ep.metadata().archive->records)
    after.emplace_back(r.is_loaded(), r.data.get());
  CHECK(after == before);
}

TEST_CASE("lazy records: a renamed unchanged tensor is copied raw under its new name",
          "[archive][lazy]") {
  TempDir dir;
  const std::string in = archive_with_records(dir);
  Program ep = load_archive(in);
  // Rename the parameter `w` to `w_renamed` (state_dict key and input spec target).
  HostTensor w = ep.state_dict().at("w");
  REQUIRE_FALSE(w.is_loaded());
  REQUIRE(ep.state_dict().erase("w"));
  ep.state_dict().insert("w_renamed", w);
  for (auto& s : ep.graph_signature().input_specs) {
    if (s.target() && *s.target() == "w") {
      s = epgraph::InputSpec(s.kind(), s.arg(), std::string("w_renamed"));
    }
  }
  const std::string out = dir / "out.pt2";
  save_archive(ep, out);
  CHECK_FALSE(ep.state_dict().at("w_renamed").is_loaded());  // bytes never read
  const auto config = nlohmann::ordered_json::parse(
      entry_of(out, "in/data/weights/model_weights_config.json"))["config"];
  REQUIRE(config.contains("w_renamed"));
  CHECK_FALSE(config.contains("w"));
  const std::string entry =
      "in/data/weights/" + config["w_renamed"]["path_name"].get<std::string>();
  CHECK(entry_of(out, entry) == entry_of(in, kRecordsWeight));
  CHECK(method_of(out, entry) ==
        method_of(in, kRecordsWeight));  // compressed bytes copied as they are
  CHECK(method_of(out, entry).first == ZIP_CM_DEFLATE);
  Program back = load_archive(out);
  CHECK(epgraph_test::floats_of(back.state_dict().at("w_renamed")) ==
        std::vector<float>{1, 2, 3, 4});

  // A renamed tensor that was changed is written from its bytes (stored).
  Program ep2 = load_archive(in);
  HostTensor w2 = ep2.state_dict().at("w");
  w2.data()[3] = std::byte{0x40};  // 1.0f -> 2.0f
  REQUIRE(ep2.state_dict().erase("w"));
  ep2.state_dict().insert("w_renamed", w2);
  for (auto& s : ep2.graph_signature().input_specs) {
    if (s.target() && *s.target() == "w") {
      s = epgraph::InputSpec(s.kind(), s.arg(), std::string("w_renamed"));
    }
  }
  const std::string out2 = dir / "out2.pt2";
  save_archive(ep2, out2);
  const auto config2 = nlohmann::ordered_json::parse(
      entry_of(out2, "in/data/weights/model_weights_config.json"))["config"];
  const std::string entry2 =
      "in/data/weights/" + config2["w_renamed"]["path_name"].get<std::string>();
  CHECK(method_of(out2, entry2).first == ZIP_CM_STORE);
  CHECK(entry_of(out2, entry2) != entry_of(in, kRecordsWeight));
}

TEST_CASE("lazy records: a corrupt entry copied raw is named with its source file",
          "[archive][lazy]") {
  // Regression: libzip checks the CRC of a stored entry it copies into a new archive only while
  // writing, and its message named the file being written ("out.pt2: CRC error"), not the source
  // or the entry. (A save that edits the source in place copies the entry unchecked: see below.)
  TempDir dir;
  const std::string in = dir / "in.pt2";
  save_archive(epgraph_test::small_program(4), in);  // every entry stored
  // Flip one byte of weight "w" (float32 1, 2, 3, 4), in place, before loading.
  std::string bytes = file_bytes(in);
  const Bytes w = epgraph_test::floats({1, 2, 3, 4});
  const std::string pattern(reinterpret_cast<const char*>(w.data()), w.size());
  const std::size_t at = bytes.find(pattern);
  REQUIRE(at != std::string::npos);
  REQUIRE(bytes.find(pattern, at + 1) == std::string::npos);
  bytes[at + 1] = static_cast<char>(bytes[at + 1] ^ 0x55);
  {
    std::ofstream f(in, std::ios::binary | std::ios::trunc);
    f << bytes;
  }
  Program ep = load_archive(in);  // lazy: the weight is not read
  // A new buffer's file goes before the weights config, where the input has none: the archive
  // is written new, and the copy is checked.
  epgraph::create_mutable_buffer(ep, "b_kv", HostTensor::full(epgraph::dtype::float32, {4}, 2.0));
  const std::string out = dir / "out.pt2";
  std::ofstream(out) << "previous";
  try {
    save_archive(ep, out);
    FAIL("no error");
  } catch (const archive_error& e) {
    CHECK(e.archive() == in);
    CHECK(e.entry() == kRecordsWeight);
    CHECK(std::string(e.what()) == in + ": " + kRecordsWeight + ": corrupt data (CRC mismatch); " +
                                       out + " was not written");
  }
  CHECK(file_bytes(out) == "previous");
  CHECK_FALSE(ep.state_dict().at("w").is_loaded());
}

TEST_CASE("lazy records: a save that edits the source in place copies a corrupt entry as it is",
          "[archive][lazy]") {
  // The entries of an unchanged layout are written as the source archive edited in place
  // (zip_writer), where libzip copies unchanged entries without a CRC pass, like `cp`: the
  // corrupt bytes arrive as they were, and reading them from the copy reports them.
  TempDir dir;
  const std::string in = dir / "in.pt2";
  save_archive(epgraph_test::small_program(4), in);
  std::string bytes = file_bytes(in);
  const Bytes w = epgraph_test::floats({1, 2, 3, 4});
  const std::size_t at = bytes.find(std::string(reinterpret_cast<const char*>(w.data()), w.size()));
  REQUIRE(at != std::string::npos);
  bytes[at + 1] = static_cast<char>(bytes[at + 1] ^ 0x55);
  {
    std::ofstream f(in, std::ios::binary | std::ios::trunc);
    f << bytes;
  }
  const Program ep = load_archive(in);
  const std::string out = dir / "out.pt2";
  save_archive(ep, out);
  CHECK(file_bytes(out).find(bytes.substr(at, w.size())) != std::string::npos);
  const Program back = load_archive(out);
  CHECK_THROWS_WITH(back.state_dict().at("w").bytes(),
                    out + ": " + kRecordsWeight + ": corrupt data (CRC mismatch)");
}

TEST_CASE("zip_reader::check_data names the corrupt entry that a raw copy passes on",
          "[archive][lazy]") {
  // A raw copy (and loading, which reads weights lazily) passes a corrupt entry on unread, like
  // cp; check_data (pt2_edit validate --data) reads every byte and checks the CRC and size.
  TempDir dir;
  const std::string in = dir / "in.pt2";
  save_archive(epgraph_test::small_program(4), in);
  {
    const epgraph::archive::zip_reader good(in);
    REQUIRE(good.entries().size() > 3);
    for (std::size_t i = 0; i < good.entries().size(); ++i) good.check_data(i);
  }
  std::string bytes = file_bytes(in);
  const Bytes w = epgraph_test::floats({1, 2, 3, 4});
  const std::size_t at = bytes.find(std::string(reinterpret_cast<const char*>(w.data()), w.size()));
  REQUIRE(at != std::string::npos);
  bytes[at + 2] = static_cast<char>(bytes[at + 2] ^ 0x01);
  {
    std::ofstream f(in, std::ios::binary | std::ios::trunc);
    f << bytes;
  }
  const epgraph::archive::zip_reader bad(in);
  std::vector<std::string> failed;
  for (std::size_t i = 0; i < bad.entries().size(); ++i) {
    try {
      bad.check_data(i);
    } catch (const archive_error& e) {
      failed.push_back(e.what());
    }
  }
  CHECK(failed ==
        std::vector<std::string>{in + ": " + kRecordsWeight + ": corrupt data (CRC mismatch)"});
}

TEST_CASE("zip_reader: a stored entry whose directory sizes differ is refused when opened",
          "[archive][lazy]") {
  // Regression (new-user run): a stored entry whose central-directory size was patched to
  // 0xFFFFFFF0 opened, validated and was copied raw with the wrong size, which torch then failed
  // to read. A stored entry's compressed and uncompressed sizes must be equal.
  TempDir dir;
  const std::string in = dir / "in.pt2";
  save_archive(epgraph_test::small_program(4), in);
  std::string bytes = file_bytes(in);
  // Both records of kRecordsWeight say 0xFFFFFFF0 bytes (where torch's writer leaves the local
  // header's sizes to a data descriptor, libzip's consistency check has only the directory's): the
  // central directory's (signature PK\1\2, uncompressed size at +24, name at +46) and the local
  // header's (PK\3\4, uncompressed size at +22, name at +30).
  const auto patch_size = [&](std::size_t name_at, std::size_t name_offset, const char* signature,
                              std::size_t size_offset) {
    const std::size_t header = name_at - name_offset;
    REQUIRE(bytes.compare(header, 4, signature) == 0);
    const char huge[4] = {'\xf0', '\xff', '\xff', '\xff'};
    bytes.replace(header + size_offset, 4, huge, 4);
  };
  patch_size(bytes.rfind(kRecordsWeight), 46, "PK\x01\x02", 24);
  patch_size(bytes.find(kRecordsWeight), 30, "PK\x03\x04", 22);
  {
    std::ofstream f(in, std::ios::binary | std::ios::trunc);
    f << bytes;
  }
  CHECK_THROWS_WITH(epgraph::archive::zip_reader(in),
                    in + ": " + kRecordsWeight +
                        ": inconsistent sizes in the zip directory (a stored entry of 4294967280 "
                        "bytes with 16 bytes of data)");
  CHECK_THROWS_WITH(load_archive(in),
                    in + ": " + kRecordsWeight +
                        ": inconsistent sizes in the zip directory (a stored entry of 4294967280 "
                        "bytes with 16 bytes of data)");
}
