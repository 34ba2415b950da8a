// zip_reader and zip_writer: thin RAII wrappers over libzip.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

/// Thin RAII wrappers over libzip (https://libzip.org, `#include <zip.h>`, link `-lzip`): read
/// every entry of a zip file, write a zip file of stored (uncompressed) entries and of entries
/// copied raw from another zip file. Used by pt2_archive.hpp; usable on their own. POSIX only
/// (the reader keeps a file descriptor to notice the file changing underneath).

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zip.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "archive_error.hpp"

namespace epgraph::archive {

namespace detail {

struct zip_closer {
  void operator()(zip_t* z) const noexcept {
    if (z) zip_discard(z);
  }
};
using zip_handle = std::unique_ptr<zip_t, zip_closer>;

struct zip_file_closer {
  void operator()(zip_file_t* f) const noexcept {
    if (f) zip_fclose(f);
  }
};
using zip_file_handle = std::unique_ptr<zip_file_t, zip_file_closer>;

// A file descriptor closed on destruction.
class fd_handle {
 public:
  explicit fd_handle(int fd = -1) noexcept : fd_(fd) {}
  fd_handle(const fd_handle&) = delete;
  fd_handle& operator=(const fd_handle&) = delete;
  fd_handle(fd_handle&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  fd_handle& operator=(fd_handle&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  ~fd_handle() { reset(); }
  [[nodiscard]] int get() const noexcept { return fd_; }
  int release() noexcept { return std::exchange(fd_, -1); }
  void reset() noexcept {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

// Our wording for the libzip error codes a reader meets; libzip's own text otherwise.
inline std::string zip_problem(int code) {
  switch (code) {
    case ZIP_ER_NOENT: return "no such file";
    case ZIP_ER_OPEN: return "cannot open the file";
    case ZIP_ER_NOZIP: return "not a zip file (no end of central directory record)";
    case ZIP_ER_INCONS: return "corrupt zip file (inconsistent central directory)";
    case ZIP_ER_CRC: return "corrupt data (CRC mismatch)";
    case ZIP_ER_EOF: return "truncated data (premature end of file)";
    case ZIP_ER_COMPNOTSUPP: return "unsupported compression method";
    case ZIP_ER_ENCRNOTSUPP:
    case ZIP_ER_NOPASSWD: return "encrypted entries are not supported";
    case ZIP_ER_MULTIDISK: return "multi-disk zip files are not supported";
    default: {
      zip_error_t e;
      zip_error_init_with_code(&e, code);
      std::string text = zip_error_strerror(&e);
      zip_error_fini(&e);
      return text;
    }
  }
}

}  // namespace detail

/// One entry of a zip file as listed by its central directory.
struct zip_entry {
  /// Entry name, bytes as stored (no encoding conversion).
  std::string name;
  /// Uncompressed size in bytes.
  std::uint64_t size = 0;
  /// True when the entry is stored (not compressed).
  bool stored = true;
  /// Size of the entry's data in the file (== size when stored).
  std::uint64_t compressed_size = 0;
};

/// A zip file opened for reading (`open` then libzip `zip_fdopen(..., ZIP_CHECKCONS)`). Lists the
/// entries on construction; reads an entry's bytes on demand (reads are serialized by a mutex, so
/// one reader may be shared between threads). Keeps the file open: it goes on reading the file it
/// opened even when another file is renamed over the path, and check_unchanged tells when the
/// file itself was rewritten. Movable, not copyable; closes the file on destruction.
class zip_reader {
 public:
  /// Opens `file` and lists its entries. Throws archive_error "<file>: <problem>" where problem
  /// is "no such file", "cannot open the file" (also for a directory or other non-regular file),
  /// "not a zip file (no end of central directory record)" (also for a file truncated before its
  /// central directory), "corrupt zip file (inconsistent central directory)", or libzip's text for
  /// other failures; and archive_error
  /// "<file>: <entry>: the entry appears twice in the archive" for a duplicate name.
  /// O(number of entries).
  explicit zip_reader(const std::filesystem::path& file) : path_(file.string()) {
    // Opened through our own descriptor (libzip gets a duplicate): the file's identity (size,
    // modification time) is recorded now and compared before later reads, and the data stay
    // those of this file even when another file is renamed over its path.
    fd_ = detail::fd_handle(::open(path_.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd_.get() < 0) {
      throw archive_error(path_, "",
                          detail::zip_problem(errno == ENOENT ? ZIP_ER_NOENT : ZIP_ER_OPEN));
    }
    struct stat file_stat {};
    if (::fstat(fd_.get(), &file_stat) != 0 || !S_ISREG(file_stat.st_mode)) {
      throw archive_error(path_, "", detail::zip_problem(ZIP_ER_OPEN));
    }
    size_ = static_cast<std::uint64_t>(file_stat.st_size);
    mtime_ns_ = mtime_of(file_stat);
    detail::fd_handle dup(::fcntl(fd_.get(), F_DUPFD_CLOEXEC, 0));
    if (dup.get() < 0) throw archive_error(path_, "", detail::zip_problem(ZIP_ER_OPEN));
    int code = 0;
    zip_.reset(zip_fdopen(dup.get(), ZIP_CHECKCONS, &code));
    if (!zip_) throw archive_error(path_, "", detail::zip_problem(code));
    (void)dup.release();  // libzip owns it now
    const zip_int64_t n = zip_get_num_entries(zip_.get(), 0);
    if (n < 0) throw archive_error(path_, "", zip_strerror(zip_.get()));
    entries_.reserve(static_cast<std::size_t>(n));
    for (zip_uint64_t i = 0; i < static_cast<zip_uint64_t>(n); ++i) {
      zip_stat_t st;
      zip_stat_init(&st);
      if (zip_stat_index(zip_.get(), i, ZIP_FL_ENC_RAW, &st) != 0 || !(st.valid & ZIP_STAT_NAME) ||
          !(st.valid & ZIP_STAT_SIZE)) {
        throw archive_error(path_, "", zip_strerror(zip_.get()));
      }
      zip_entry e;
      e.name = st.name;
      e.size = st.size;
      e.stored = !(st.valid & ZIP_STAT_COMP_METHOD) || st.comp_method == ZIP_CM_STORE;
      e.compressed_size = (st.valid & ZIP_STAT_COMP_SIZE) ? st.comp_size : st.size;
      if (!index_.emplace(e.name, entries_.size()).second) {
        throw archive_error(path_, e.name, "the entry appears twice in the archive");
      }
      entries_.push_back(std::move(e));
    }
  }

  /// The path as given.
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  /// Size in bytes of the file when it was opened.
  [[nodiscard]] std::uint64_t file_size() const noexcept { return size_; }
  /// Modification time (ns since the epoch) of the file when it was opened.
  [[nodiscard]] std::int64_t file_mtime_ns() const noexcept { return mtime_ns_; }

  /// Throws archive_error "<file>: <entry>: the archive changed on disk since it was opened
  /// (size <a> -> <b>, ...): load it again" when the opened file's size or modification time
  /// differ from those recorded when it was opened (the file was rewritten in place; a file
  /// renamed over the path does not count: the reader keeps reading the file it opened).
  /// `entry` names the entry about to be read (may be empty). O(1) (one fstat).
  void check_unchanged(const std::string& entry) const {
    struct stat st {};
    if (::fstat(fd_.get(), &st) != 0) {
      throw archive_error(path_, entry, "cannot inspect the archive file (fstat failed)");
    }
    const auto size = static_cast<std::uint64_t>(st.st_size);
    const std::int64_t mtime = mtime_of(st);
    if (size != size_ || mtime != mtime_ns_) {
      throw archive_error(path_, entry,
                          "the archive changed on disk since it was opened (size " +
                              std::to_string(size_) + " -> " + std::to_string(size) + ", mtime " +
                              std::to_string(mtime_ns_) + " -> " + std::to_string(mtime) +
                              " ns): load it again");
    }
  }

  /// The mutex that serializes reads of this reader (libzip archives are not thread-safe):
  /// read() and readers of the underlying archive (zip_writer::add_copy at commit) lock it.
  [[nodiscard]] std::mutex& mutex() const noexcept { return *mutex_; }

  /// The libzip archive (for zip_writer::add_copy). Not null.
  [[nodiscard]] zip_t* handle() const noexcept { return zip_.get(); }
  /// Every entry, in central-directory order.
  [[nodiscard]] const std::vector<zip_entry>& entries() const noexcept { return entries_; }
  /// Index of the entry called `name`, or nothing. O(1) on average.
  [[nodiscard]] std::optional<std::size_t> find(std::string_view name) const {
    auto it = index_.find(std::string(name));
    if (it == index_.end()) return std::nullopt;
    return it->second;
  }

  /// The uncompressed bytes of entry `index` (< entries().size()), CRC-checked. Throws
  /// archive_error "<file>: <entry>: <problem>" where problem is "corrupt data (CRC mismatch)",
  /// "truncated data (premature end of file)", "unsupported compression method", "the entry
  /// has <n> bytes but only <m> could be read", or libzip's text. O(entry size); memory grows
  /// with the bytes actually read, never with the size the directory declares.
  [[nodiscard]] std::vector<std::byte> read(std::size_t index) const {
    const zip_entry& e = entries_.at(index);
    const std::lock_guard<std::mutex> lock(*mutex_);
    detail::zip_file_handle f(zip_fopen_index(zip_.get(), index, 0));
    if (!f)
      throw archive_error(path_, e.name,
                          detail::zip_problem(zip_error_code_zip(zip_get_error(zip_.get()))));
    // The declared size is not trusted for allocation beyond what the file can hold (a corrupt
    // or hostile directory can claim terabytes): a stored entry is reserved at once when the file
    // is large enough, otherwise the buffer grows with the data actually read, doubling.
    std::vector<std::byte> data;
    if (e.stored && e.size <= size_) data.reserve(static_cast<std::size_t>(e.size));
    std::uint64_t got = 0;
    while (got < e.size) {
      const std::uint64_t room = std::max<std::uint64_t>(got, std::uint64_t{1} << 16);
      const std::uint64_t chunk = std::min<std::uint64_t>(e.size - got, room);
      data.resize(static_cast<std::size_t>(got + chunk));
      const zip_int64_t r = zip_fread(f.get(), data.data() + got, chunk);
      if (r < 0) {
        throw archive_error(path_, e.name,
                            detail::zip_problem(zip_error_code_zip(zip_file_get_error(f.get()))));
      }
      got += static_cast<std::uint64_t>(r);
      if (r == 0) break;
    }
    data.resize(static_cast<std::size_t>(got));
    if (got != e.size) {
      throw archive_error(path_, e.name,
                          "the entry has " + std::to_string(e.size) + " bytes but only " +
                              std::to_string(got) + " could be read");
    }
    // libzip checks the CRC when the end of the data is reached by a read.
    std::byte probe{};
    const zip_int64_t r = zip_fread(f.get(), &probe, 1);
    if (r < 0) {
      throw archive_error(path_, e.name,
                          detail::zip_problem(zip_error_code_zip(zip_file_get_error(f.get()))));
    }
    const int rc = zip_fclose(f.release());
    if (rc != 0) throw archive_error(path_, e.name, detail::zip_problem(rc));
    return data;
  }

 private:
  static std::int64_t mtime_of(const struct stat& st) noexcept {
    return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 +
           static_cast<std::int64_t>(st.st_mtim.tv_nsec);
  }

  std::string path_;
  detail::fd_handle fd_;
  std::uint64_t size_ = 0;
  std::int64_t mtime_ns_ = 0;
  std::unique_ptr<std::mutex> mutex_ = std::make_unique<std::mutex>();
  detail::zip_handle zip_;
  std::vector<zip_entry> entries_;
  std::unordered_map<std::string, std::size_t> index_;
};

/// A zip file being written (libzip `zip_open(..., ZIP_CREATE | ZIP_TRUNCATE)`): entries are
/// added in order, all stored (uncompressed) with the fixed time 1980-01-01, and nothing touches
/// the destination until commit(), which writes a temporary file and renames it over `file`
/// (libzip's `zip_close`). Destroying an uncommitted writer leaves the destination untouched.
/// Movable, not copyable.
class zip_writer {
 public:
  /// Prepares to write `file`. Throws archive_error "<file>: directory '<dir>' does not exist"
  /// when the parent directory is missing, or "<file>: <libzip text>" when libzip refuses.
  explicit zip_writer(const std::filesystem::path& file) : path_(file.string()) {
    const std::filesystem::path dir = file.has_parent_path() ? file.parent_path() : ".";
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) {
      throw archive_error(path_, "", "directory '" + dir.string() + "' does not exist");
    }
    int code = 0;
    zip_.reset(zip_open(path_.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code));
    if (!zip_) throw archive_error(path_, "", detail::zip_problem(code));
  }

  /// Appends a stored entry `name` holding `data` (not null; kept alive by the writer until
  /// commit). Throws archive_error "<file>: <name>: the entry appears twice in the archive" for a
  /// repeated name, or "<file>: <name>: <libzip text>". O(1) (the bytes are not copied).
  void add(const std::string& name, std::shared_ptr<const std::vector<std::byte>> data) {
    if (!names_.emplace(name).second) {
      throw archive_error(path_, name, "the entry appears twice in the archive");
    }
    zip_source_t* src = zip_source_buffer(zip_.get(), data->data(), data->size(), 0);
    if (!src) throw archive_error(path_, name, zip_strerror(zip_.get()));
    const zip_int64_t idx = zip_file_add(zip_.get(), name.c_str(), src, ZIP_FL_ENC_UTF_8);
    if (idx < 0) {
      zip_source_free(src);
      throw archive_error(path_, name, zip_strerror(zip_.get()));
    }
    keep_.push_back(std::move(data));
    const auto u = static_cast<zip_uint64_t>(idx);
    if (zip_set_file_compression(zip_.get(), u, ZIP_CM_STORE, 0) != 0 ||
        zip_file_set_mtime(zip_.get(), u, kFixedTime, 0) != 0) {
      throw archive_error(path_, name, zip_strerror(zip_.get()));
    }
  }

  /// Appends an entry `name` whose data are entry `index` of `source`, copied raw at commit:
  /// the stored or compressed bytes as they are in the source file (same compression method and
  /// CRC, no decompression, never a whole entry in memory; libzip `zip_source_zip` with
  /// ZIP_FL_COMPRESSED). `source` is kept open until commit, which first checks that its file has
  /// not changed (zip_reader::check_unchanged) and locks its mutex while copying. Throws
  /// archive_error "<file>: <name>: the entry appears twice in the archive" for a repeated name,
  /// or "<file>: <name>: <libzip text>"; `index` must be < source->entries().size(). O(1).
  void add_copy(const std::string& name, std::shared_ptr<const zip_reader> source,
                std::size_t index) {
    if (!names_.emplace(name).second) {
      throw archive_error(path_, name, "the entry appears twice in the archive");
    }
    zip_source_t* src =
        zip_source_zip(zip_.get(), source->handle(), index, ZIP_FL_COMPRESSED, 0, -1);
    if (!src) {
      names_.erase(name);
      throw archive_error(path_, name, zip_strerror(zip_.get()));
    }
    const zip_int64_t idx = zip_file_add(zip_.get(), name.c_str(), src, ZIP_FL_ENC_UTF_8);
    if (idx < 0) {
      zip_source_free(src);
      throw archive_error(path_, name, zip_strerror(zip_.get()));
    }
    copied_.emplace_back(index, source);
    if (std::find(sources_.begin(), sources_.end(), source) == sources_.end()) {
      sources_.push_back(std::move(source));
    }
    // A stored source stays stored; a compressed one keeps its method (ZIP_CM_DEFAULT takes the
    // source's method, so the data are not recompressed).
    const auto u = static_cast<zip_uint64_t>(idx);
    const zip_int32_t method =
        copied_.back().second->entries().at(index).stored ? ZIP_CM_STORE : ZIP_CM_DEFAULT;
    if (zip_set_file_compression(zip_.get(), u, method, 0) != 0 ||
        zip_file_set_mtime(zip_.get(), u, kFixedTime, 0) != 0) {
      throw archive_error(path_, name, zip_strerror(zip_.get()));
    }
  }

  /// Writes the archive (temporary file in the destination's directory, then rename: libzip's
  /// `zip_close`). Throws archive_error "<source file>: <source entry>: the archive changed on
  /// disk since it was opened ..." when the source of a copied entry changed, "<source file>:
  /// <source entry>: corrupt data (CRC mismatch); <file> was not written" when the data of an
  /// entry copied raw do not match their CRC, or "<file>: <libzip text>" on other failures,
  /// leaving the destination untouched. Call at most once. O(bytes written) (a CRC failure
  /// re-reads the copied entries to name the corrupt one).
  void commit() {
    for (const auto& [index, source] : copied_) {
      source->check_unchanged(source->entries().at(index).name);
    }
    // Lock every source in one global order (by address) so that two commits cannot deadlock.
    std::vector<const zip_reader*> order;
    for (const auto& s : sources_) order.push_back(s.get());
    std::sort(order.begin(), order.end());
    std::vector<std::unique_lock<std::mutex>> locks;
    for (const zip_reader* s : order) locks.emplace_back(s->mutex());
    if (zip_close(zip_.get()) != 0) {
      // libzip names only the file it writes ("CRC error"); the corrupt data are a source's.
      if (zip_error_code_zip(zip_get_error(zip_.get())) == ZIP_ER_CRC) throw_corrupt_copy();
      throw archive_error(path_, "", zip_strerror(zip_.get()));
    }
    (void)zip_.release();  // zip_close freed it
    locks.clear();
    keep_.clear();
    copied_.clear();
    sources_.clear();
  }

 private:
  static constexpr std::time_t kFixedTime = 315576000;  // 1980-01-01 12:00 UTC

  // After zip_close failed with a CRC error: reads every copied entry through libzip (which
  // checks the CRC at its end, 64 KiB at a time) and throws naming the first whose data do not
  // match, or naming the written file when none is found. Callers hold the sources' locks.
  [[noreturn]] void throw_corrupt_copy() const {
    std::vector<char> buffer(std::size_t{1} << 16);
    for (const auto& [index, source] : copied_) {
      zip_file_t* f = zip_fopen_index(source->handle(), static_cast<zip_uint64_t>(index), 0);
      if (f == nullptr) continue;
      zip_int64_t n = 0;
      while ((n = zip_fread(f, buffer.data(), buffer.size())) > 0) {
      }
      zip_fclose(f);
      if (n < 0) {
        throw archive_error(source->path(), source->entries().at(index).name,
                            detail::zip_problem(ZIP_ER_CRC) + "; " + path_ + " was not written");
      }
    }
    throw archive_error(path_, "", detail::zip_problem(ZIP_ER_CRC));
  }

  std::string path_;
  // Declared before zip_ so that they outlive it: libzip reads them until zip_close / discard.
  std::vector<std::shared_ptr<const std::vector<std::byte>>> keep_;
  std::vector<std::pair<std::size_t, std::shared_ptr<const zip_reader>>> copied_;
  std::vector<std::shared_ptr<const zip_reader>> sources_;
  detail::zip_handle zip_;
  std::unordered_set<std::string> names_;
};

}  // namespace epgraph::archive
