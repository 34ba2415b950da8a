// zip_writer: an archive that is its one source with entries dropped, rewritten or appended is
// written as that source edited in place (libzip copies the unchanged entries without a CRC
// pass); any other archive is written new. Both give the same entries, order, bytes and methods.
// SPDX-License-Identifier: BSD-3-Clause
#include <zip.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <epgraph/archive/archive.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "../support/archive_files.hpp"
#include "../support/zip_inspect.hpp"

namespace {
using epgraph::archive::archive_error;
using epgraph::archive::zip_reader;
using epgraph::archive::zip_writer;
using epgraph_test::bytes_of;
using epgraph_test::entry_of;
using epgraph_test::file_bytes;
using epgraph_test::method_of;
using epgraph_test::TempDir;
namespace fs = std::filesystem;

constexpr std::time_t kFixedTime = 315576000;  // zip_writer's entry time, 1980-01-01 12:00 UTC

// Writes `file`: a (stored), b (deflated), c (stored), d (deflated); entry a carries the comment
// "kept", which only the in-place route keeps (a new archive's entries have no comment).
void write_source(const std::string& file) {
  epgraph_test::write_zip_compressed(
      file,
      {{"a", bytes_of("alpha")},
       {"b", bytes_of(std::string(300, 'b'))},
       {"c", bytes_of("gamma")},
       {"d", bytes_of(std::string(400, 'd'))}},
      [](const std::string& name) { return name == "b" || name == "d"; });
  int code = 0;
  zip_t* z = zip_open(file.c_str(), 0, &code);
  REQUIRE(z != nullptr);
  REQUIRE(zip_file_set_comment(z, 0, "kept", 4, 0) == 0);
  REQUIRE(zip_close(z) == 0);
}

struct entry_facts {
  std::string name;
  int method = 0;
  std::time_t mtime = 0;
  std::string comment;
};

// Every entry of `file` in order: name, compression method, time, comment.
std::vector<entry_facts> facts_of(const std::string& file) {
  int code = 0;
  zip_t* z = zip_open(file.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code);
  REQUIRE(z != nullptr);
  std::vector<entry_facts> out;
  for (zip_int64_t i = 0; i < zip_get_num_entries(z, 0); ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    REQUIRE(zip_stat_index(z, static_cast<zip_uint64_t>(i), 0, &st) == 0);
    zip_uint32_t len = 0;
    const char* c = zip_file_get_comment(z, static_cast<zip_uint64_t>(i), &len, 0);
    out.push_back({st.name, st.comp_method, st.mtime, c ? std::string(c, len) : ""});
  }
  zip_discard(z);
  return out;
}

std::vector<std::string> names_of(const std::vector<entry_facts>& facts) {
  std::vector<std::string> names;
  for (const auto& f : facts) names.push_back(f.name);
  return names;
}

std::shared_ptr<const std::vector<std::byte>> shared_bytes(const std::string& s) {
  return std::make_shared<const std::vector<std::byte>>(bytes_of(s));
}
}  // namespace

TEST_CASE("zip_writer: dropped, rewritten and new entries edit the one source in place",
          "[archive][zip]") {
  TempDir dir;
  const std::string in = dir / "in.zip";
  write_source(in);
  const auto source = std::make_shared<const zip_reader>(in);
  const std::string out = dir / "out.zip";
  zip_writer w(out);
  w.add_copy("a", source, 0);
  w.add("b", shared_bytes("new b"));  // rewritten in its place
  w.add_copy("d", source, 3);         // c is dropped
  w.add("e", shared_bytes("epsilon"));
  w.commit();
  const auto facts = facts_of(out);
  CHECK(names_of(facts) == std::vector<std::string>{"a", "b", "d", "e"});
  CHECK(facts[0].comment == "kept");  // a's header is the source's: the archive was edited
  CHECK(facts[0].method == ZIP_CM_STORE);
  CHECK(facts[1].method == ZIP_CM_STORE);
  CHECK(facts[2].method == ZIP_CM_DEFLATE);
  CHECK(method_of(out, "d") == method_of(in, "d"));  // the compressed bytes as they were
  CHECK(facts[3].method == ZIP_CM_STORE);
  for (const auto& f : facts) CHECK(f.mtime == kFixedTime);
  CHECK(entry_of(out, "a") == "alpha");
  CHECK(entry_of(out, "b") == "new b");
  CHECK(entry_of(out, "d") == std::string(400, 'd'));
  CHECK(entry_of(out, "e") == "epsilon");
}

TEST_CASE("zip_writer: other orders, renames and several sources write a new archive",
          "[archive][zip]") {
  TempDir dir;
  const std::string in = dir / "in.zip";
  write_source(in);
  const auto source = std::make_shared<const zip_reader>(in);
  SECTION("copies in another order") {
    const std::string out = dir / "reordered.zip";
    zip_writer w(out);
    w.add_copy("d", source, 3);
    w.add_copy("a", source, 0);
    w.add("z", shared_bytes("zeta"));
    w.commit();
    const auto facts = facts_of(out);
    CHECK(names_of(facts) == std::vector<std::string>{"d", "a", "z"});
    CHECK(facts[1].comment.empty());  // a new archive
    CHECK(facts[0].method == ZIP_CM_DEFLATE);
    CHECK(method_of(out, "d") == method_of(in, "d"));
    CHECK(entry_of(out, "a") == "alpha");
  }
  SECTION("a new entry before a kept one") {
    const std::string out = dir / "inserted.zip";
    zip_writer w(out);
    w.add("new", shared_bytes("n"));
    w.add_copy("a", source, 0);
    w.add("b", shared_bytes("B"));
    w.commit();
    const auto facts = facts_of(out);
    CHECK(names_of(facts) == std::vector<std::string>{"new", "a", "b"});
    CHECK(facts[1].comment.empty());
    CHECK(entry_of(out, "b") == "B");
  }
  SECTION("a copy under another name") {
    const std::string out = dir / "renamed.zip";
    zip_writer w(out);
    w.add_copy("a2", source, 0);
    w.add("b", shared_bytes("B"));
    w.commit();
    const auto facts = facts_of(out);
    CHECK(names_of(facts) == std::vector<std::string>{"a2", "b"});
    CHECK(facts[0].comment.empty());
    CHECK(entry_of(out, "a2") == "alpha");
  }
  SECTION("copies from two sources") {
    const std::string in2 = dir / "in2.zip";
    write_source(in2);
    const auto source2 = std::make_shared<const zip_reader>(in2);
    const std::string out = dir / "two.zip";
    zip_writer w(out);
    w.add_copy("a", source, 0);
    w.add("b", shared_bytes("B"));
    w.add_copy("c", source2, 2);
    w.commit();
    const auto facts = facts_of(out);
    CHECK(names_of(facts) == std::vector<std::string>{"a", "b", "c"});
    CHECK(facts[0].comment.empty());
    CHECK(entry_of(out, "c") == "gamma");
  }
  SECTION("only copies (libzip would write nothing for an unchanged archive)") {
    const std::string out = dir / "copies.zip";
    zip_writer w(out);
    w.add_copy("a", source, 0);
    w.add_copy("b", source, 1);
    w.commit();
    const auto facts = facts_of(out);
    CHECK(names_of(facts) == std::vector<std::string>{"a", "b"});
    CHECK(facts[0].comment.empty());
    CHECK(entry_of(out, "b") == std::string(300, 'b'));
  }
}

TEST_CASE("zip_writer: editing in place onto the source path replaces it, the reader reads on",
          "[archive][zip]") {
  TempDir dir;
  const std::string in = dir / "in.zip";
  write_source(in);
  const auto source = std::make_shared<const zip_reader>(in);
  zip_writer w(in);
  w.add_copy("a", source, 0);
  w.add("c", shared_bytes("new c"));
  w.commit();
  const auto facts = facts_of(in);
  CHECK(names_of(facts) == std::vector<std::string>{"a", "c"});
  CHECK(facts[0].comment == "kept");
  CHECK(entry_of(in, "c") == "new c");
  // The reader keeps the file it opened (renamed over, not rewritten).
  CHECK(epgraph_test::text_of(source->read(2)) == "gamma");
  CHECK_NOTHROW(source->check_unchanged(""));
  std::vector<std::string> leftovers;
  for (const auto& e : fs::directory_iterator(dir.path)) leftovers.push_back(e.path().string());
  CHECK(leftovers == std::vector<std::string>{in});
}

TEST_CASE("zip_writer: a failed in-place edit leaves the destination untouched", "[archive][zip]") {
  TempDir dir;
  const std::string in = dir / "in.zip";
  write_source(in);
  const auto source = std::make_shared<const zip_reader>(in);
  fs::create_directory(dir / "sub");
  const std::string out = dir / "sub/out.zip";
  zip_writer w(out);
  w.add_copy("a", source, 0);
  w.add("b", shared_bytes("B"));
  fs::remove(dir / "sub");  // the temporary file cannot be created
  try {
    w.commit();
    FAIL("no error");
  } catch (const archive_error& e) {
    CHECK(e.archive() == out);
    CHECK(std::string(e.what()) ==
          out + ": Failure to create temporary file: No such file or directory");
  }
  CHECK_FALSE(fs::exists(dir / "sub"));
  CHECK(file_bytes(in).size() == fs::file_size(in));
  CHECK(epgraph_test::text_of(source->read(0)) == "alpha");
}
