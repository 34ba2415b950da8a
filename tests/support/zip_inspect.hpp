// Zip files for the lazy-archive tests: entries rewritten with a chosen compression method, and
// one entry's compression method, size and bytes read back (libzip directly, not epgraph).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <zip.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>

#include "archive_files.hpp"

namespace epgraph_test {

// Rewrites `file` with `entries`, in order: an entry for which `deflate(name)` is true
// deflate-compressed (level 9), the others stored.
template <typename Deflate>
void write_zip_compressed(const std::string& file, const ZipEntries& entries, Deflate deflate) {
  std::filesystem::remove(file);
  int code = 0;
  zip_t* z = zip_open(file.c_str(), ZIP_CREATE | ZIP_EXCL, &code);
  REQUIRE(z != nullptr);
  for (const auto& [name, data] : entries) {
    zip_source_t* src = zip_source_buffer(z, data.data(), data.size(), 0);
    REQUIRE(src != nullptr);
    const zip_int64_t i = zip_file_add(z, name.c_str(), src, ZIP_FL_ENC_UTF_8);
    REQUIRE(i >= 0);
    REQUIRE(zip_set_file_compression(z, static_cast<zip_uint64_t>(i),
                                     deflate(name) ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 9) == 0);
  }
  REQUIRE(zip_close(z) == 0);
}

// Whether `name` is a weight or constant payload entry (data/weights/weight_*,
// data/constants/tensor_*).
inline bool is_payload_entry(const std::string& name) {
  return name.find("/weight_") != std::string::npos || name.find("/tensor_") != std::string::npos;
}

// The compression method and compressed size of entry `name` of `file`.
inline std::pair<int, std::uint64_t> method_of(const std::string& file, const std::string& name) {
  int code = 0;
  zip_t* z = zip_open(file.c_str(), ZIP_RDONLY, &code);
  REQUIRE(z != nullptr);
  zip_stat_t st;
  zip_stat_init(&st);
  const int rc = zip_stat(z, name.c_str(), 0, &st);
  zip_discard(z);
  REQUIRE(rc == 0);
  return {st.comp_method, st.comp_size};
}

// The whole of `file`, as bytes in a string.
inline std::string file_bytes(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The bytes of entry `name` of `file` (fails the test when there is none).
inline std::string entry_of(const std::string& file, const std::string& name) {
  for (const auto& [n, data] : read_zip(file)) {
    if (n == name) return text_of(data);
  }
  FAIL("no entry " << name);
  return "";
}

}  // namespace epgraph_test
