// archive_error: an archive cannot be read or written, naming the file and entry.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <string>
#include <utility>

#include "../error.hpp"

namespace epgraph::archive {

/// An archive (.pt2 / .ep zip file) cannot be read or written: the file is missing, truncated or
/// not a zip file, an entry is corrupt or missing, a record disagrees with its metadata, or the
/// output cannot be created. Mirrors the RuntimeError / AssertionError / ValueError raised by
/// torch.export.load and torch.export.save (torch/export/pt2_archive/_package.py).
///
/// `what()` is "<archive>: <entry>: <problem>", or "<archive>: <problem>" when no single entry is
/// at fault; `archive()` is the archive's path as given, `entry()` the entry name ("" if none).
class archive_error : public runtime_error {
 public:
  /// Builds the error; `entry` may be empty.
  archive_error(std::string archive, std::string entry, const std::string& problem)
      : runtime_error(compose(archive, entry, problem)),
        archive_(std::move(archive)),
        entry_(std::move(entry)) {}

  /// The archive's path, as given to load_archive / save_archive.
  [[nodiscard]] const std::string& archive() const noexcept { return archive_; }
  /// The full name of the entry at fault (with any root folder), or "".
  [[nodiscard]] const std::string& entry() const noexcept { return entry_; }

 private:
  static std::string compose(const std::string& archive, const std::string& entry,
                             const std::string& problem) {
    return entry.empty() ? archive + ": " + problem : archive + ": " + entry + ": " + problem;
  }
  std::string archive_;
  std::string entry_;
};

}  // namespace epgraph::archive
