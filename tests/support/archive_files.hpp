// Files for the archive tests: a scratch directory removed at the end, zip files written and read
// entry by entry (through epgraph's libzip wrapper), bytes <-> text, and the shared fidelity cases.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <epgraph/archive/zip.hpp>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#ifndef EPGRAPH_SOURCE_DIR
#define EPGRAPH_SOURCE_DIR "."
#endif

namespace epgraph_test {

using Bytes = std::vector<std::byte>;
using ZipEntries = std::vector<std::pair<std::string, Bytes>>;

// A fresh directory (per process and object), removed with its contents at the end of the test.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    static std::atomic<int> counter{0};
    path = std::filesystem::temp_directory_path() /
           ("epgraph_archive_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  // The path of `name` inside the directory.
  [[nodiscard]] std::string operator/(const std::string& name) const {
    return (path / name).string();
  }
};

inline Bytes bytes_of(const std::string& s) {
  Bytes b(s.size());
  if (!s.empty()) std::memcpy(b.data(), s.data(), s.size());
  return b;
}
inline std::string text_of(const Bytes& b) {
  return std::string(reinterpret_cast<const char*>(b.data()), b.size());
}

// Every entry of a zip file: name and bytes, in order.
inline ZipEntries read_zip(const std::string& file) {
  epgraph::archive::zip_reader r(file);
  ZipEntries out;
  for (std::size_t i = 0; i < r.entries().size(); ++i) {
    out.emplace_back(r.entries()[i].name, r.read(i));
  }
  return out;
}

// Writes a zip file of stored entries, in order.
inline void write_zip(const std::string& file, const ZipEntries& entries) {
  epgraph::archive::zip_writer w(file);
  for (const auto& [name, data] : entries) w.add(name, std::make_shared<const Bytes>(data));
  w.commit();
}

// The path of ../shared/cases/fidelity/<name> (EPGRAPH_SHARED_DIR overrides ../shared), or ""
// when it is absent (tests then skip).
inline std::string shared_case(const char* name) {
#ifdef EPGRAPH_SHARED_DIR
  const std::filesystem::path root(EPGRAPH_SHARED_DIR);
#else
  const std::filesystem::path root = std::filesystem::path(EPGRAPH_SOURCE_DIR) / ".." / "shared";
#endif
  const std::filesystem::path p = root / "cases" / "fidelity" / name;
  return std::filesystem::exists(p) ? p.string() : std::string();
}

}  // namespace epgraph_test
