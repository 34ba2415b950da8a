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
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>
#include <mutex>
#include <new>
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
      // A stored entry's data are its bytes: a directory whose two sizes differ is corrupt (a
      // raw copy would carry the wrong size on, and torch fails reading the entry).
      if (e.stored && e.compressed_size != e.size) {
        throw archive_error(path_, e.name,
                            "inconsistent sizes in the zip directory (a stored entry of " +
                                std::to_string(e.size) + " bytes with " +
                                std::to_string(e.compressed_size) + " bytes of data)");
      }
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

  /// Reads entry `index` (< entries().size()) through to its end, 64 KiB at a time, and checks
  /// that its data match their CRC and declared size; keeps nothing. What a raw copy does not do
  /// (it passes the bytes on as they are, like `cp`): `pt2_edit validate --data` calls it for
  /// every entry. Throws archive_error "<file>: <entry>: <problem>" as read() does. O(entry
  /// size) time, O(1) memory (one 64 KiB buffer).
  void check_data(std::size_t index) const {
    std::vector<char> buffer(std::size_t{1} << 16);
    read_through(index, [&](zip_file_t* f, const zip_entry& e) {
      std::uint64_t got = 0;
      while (const std::uint64_t r = read_some(f, buffer.data(), buffer.size(), e)) got += r;
      return got;
    });
  }

  /// The uncompressed bytes of entry `index` (< entries().size()), CRC-checked. Throws
  /// archive_error "<file>: <entry>: <problem>" where problem is "corrupt data (CRC mismatch)",
  /// "truncated data (premature end of file)", "unsupported compression method", "the entry
  /// has <n> bytes but only <m> could be read", or libzip's text. O(entry size); memory grows
  /// with the bytes actually read, never with the size the directory declares.
  [[nodiscard]] std::vector<std::byte> read(std::size_t index) const {
    std::vector<std::byte> data;
    read_through(index, [&](zip_file_t* f, const zip_entry& e) {
      // The declared size is not trusted for allocation beyond what the file can hold (a corrupt
      // or hostile directory can claim terabytes): a stored entry is reserved at once when the
      // file is large enough, otherwise the buffer grows with the data actually read, doubling.
      if (e.stored && e.size <= size_) data.reserve(static_cast<std::size_t>(e.size));
      std::uint64_t got = 0;
      while (got < e.size) {
        const std::uint64_t room = std::max<std::uint64_t>(got, std::uint64_t{1} << 16);
        const std::uint64_t chunk = std::min<std::uint64_t>(e.size - got, room);
        data.resize(static_cast<std::size_t>(got + chunk));
        const std::uint64_t r = read_some(f, data.data() + got, chunk, e);
        got += r;
        if (r == 0) break;
      }
      data.resize(static_cast<std::size_t>(got));
      return got;
    });
    return data;
  }

 private:
  // zip_fread of up to `n` bytes of the open entry `f` (entry `e`) into `out`: the number of
  // bytes read, 0 at the end of the data. Throws archive_error with libzip's problem.
  std::uint64_t read_some(zip_file_t* f, void* out, std::uint64_t n, const zip_entry& e) const {
    const zip_int64_t r = zip_fread(f, out, n);
    if (r < 0) {
      throw archive_error(path_, e.name,
                          detail::zip_problem(zip_error_code_zip(zip_file_get_error(f))));
    }
    return static_cast<std::uint64_t>(r);
  }

  // The steps every read of entry `index` takes, under the reader's lock: opens it, lets
  // `body(file, entry)` read its data (returning the number of bytes read), checks that number
  // against the declared size, reads on to the end (libzip checks the CRC when a read reaches
  // it) and closes the entry. Throws archive_error "<file>: <entry>: <problem>".
  template <class Body>
  void read_through(std::size_t index, Body&& body) const {
    const zip_entry& e = entries_.at(index);
    const std::lock_guard<std::mutex> lock(*mutex_);
    detail::zip_file_handle f(zip_fopen_index(zip_.get(), index, 0));
    if (!f) {
      throw archive_error(path_, e.name,
                          detail::zip_problem(zip_error_code_zip(zip_get_error(zip_.get()))));
    }
    const std::uint64_t got = body(f.get(), e);
    if (got != e.size) {
      throw archive_error(path_, e.name,
                          "the entry has " + std::to_string(e.size) + " bytes but only " +
                              std::to_string(got) + " could be read");
    }
    std::byte probe{};
    (void)read_some(f.get(), &probe, 1, e);
    const int rc = zip_fclose(f.release());
    if (rc != 0) throw archive_error(path_, e.name, detail::zip_problem(rc));
  }

  static std::int64_t mtime_of(const struct stat& st) noexcept {
    return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 +
           static_cast<std::int64_t>(st.st_mtim.tv_nsec);
  }

  friend class zip_writer;  // reads the file through fd_ for an in-place copy (commit)

  std::string path_;
  detail::fd_handle fd_;
  std::uint64_t size_ = 0;
  std::int64_t mtime_ns_ = 0;
  std::unique_ptr<std::mutex> mutex_ = std::make_unique<std::mutex>();
  detail::zip_handle zip_;
  std::vector<zip_entry> entries_;
  std::unordered_map<std::string, std::size_t> index_;
};

namespace detail {

// A libzip source (zip_source_function_create) that reads one file and writes another: reads are
// pread() calls on a descriptor of the opened input (`fd`, `size` bytes: the file the reader
// opened, whatever is renamed over its path since), writes go to `out`, a libzip file source of
// the output path (a temporary file renamed over the path at commit). libzip edits an archive it
// opened from such a source into the output file, copying its unchanged entries as they are.
// libzip moves data in 8 KiB pieces; sequential reads are served from a read-ahead buffer that
// doubles up to 1 MiB while they stay sequential, and writes are gathered into 1 MiB blocks, so
// the kernel sees few large reads and writes. It never removes a file: ZIP_SOURCE_REMOVE is
// refused.
class split_source {
 public:
  // Returns a new source owning `out` (freed with it), or null with `error` set (`out` is then
  // freed too). `keep` stays alive as long as the source (it owns `fd`).
  static zip_source_t* create(int fd, std::uint64_t size, std::time_t mtime,
                              std::shared_ptr<const void> keep, zip_source_t* out,
                              zip_error_t* error) {
    std::unique_ptr<split_source> self;
    try {
      self = std::make_unique<split_source>(fd, size, mtime, std::move(keep), out);  // owns `out`
    } catch (const std::bad_alloc&) {
      if (!self) zip_source_free(out);
      zip_error_set(error, ZIP_ER_MEMORY, 0);
      return nullptr;
    }
    zip_source_t* src = zip_source_function_create(&split_source::callback, self.get(), error);
    if (src != nullptr) (void)self.release();  // libzip owns it: freed by ZIP_SOURCE_FREE
    return src;
  }

  // Use create(). Takes `out` (freed by the destructor) once the buffers are allocated; throws
  // std::bad_alloc before that, leaving `out` to the caller.
  split_source(int fd, std::uint64_t size, std::time_t mtime, std::shared_ptr<const void> keep,
               zip_source_t* out)
      : fd_(fd),
        size_(size),
        mtime_(mtime),
        keep_(std::move(keep)),
        read_buf_(std::make_unique<char[]>(kBlock)),
        write_buf_(std::make_unique<char[]>(kBlock)) {
    out_ = out;
    zip_error_init(&error_);
  }
  split_source(const split_source&) = delete;
  split_source& operator=(const split_source&) = delete;
  ~split_source() {
    zip_source_free(out_);
    zip_error_fini(&error_);
  }

 private:
  static constexpr std::size_t kBlock = std::size_t{1} << 20;

  zip_int64_t fail(int code, int sys) noexcept {
    zip_error_set(&error_, code, sys);
    return -1;
  }
  zip_int64_t fail_from_out() noexcept {
    zip_error_t* e = zip_source_error(out_);
    return fail(zip_error_code_zip(e), zip_error_code_system(e));
  }

  // Reads up to `len` bytes at `at` (fewer only at the end of the file), -1 on error.
  zip_int64_t pread_full(char* data, std::uint64_t len, std::uint64_t at) noexcept {
    std::uint64_t got = 0;
    while (got < len) {
      const ssize_t r = ::pread(fd_, data + got, static_cast<std::size_t>(len - got),
                                static_cast<off_t>(at + got));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) return fail(ZIP_ER_READ, errno);
      if (r == 0) break;  // the file is shorter than it was: libzip reports the missing bytes
      got += static_cast<std::uint64_t>(r);
    }
    return static_cast<zip_int64_t>(got);
  }

  zip_int64_t read(void* data, zip_uint64_t len) noexcept {
    auto* dst = static_cast<char*>(data);
    const std::uint64_t want = std::min<std::uint64_t>(len, size_ - std::min(offset_, size_));
    if (want == 0) return 0;
    const bool sequential = offset_ == last_end_;
    last_end_ = offset_ + want;
    if (offset_ >= buf_at_ && offset_ + want <= buf_at_ + buf_len_) {  // already read ahead
      std::memcpy(dst, read_buf_.get() + (offset_ - buf_at_), static_cast<std::size_t>(want));
      offset_ += want;
      return static_cast<zip_int64_t>(want);
    }
    window_ = sequential ? std::min<std::uint64_t>(window_ * 2, kBlock) : 0;
    if (window_ < want * 2) {  // not (yet) a long sequential read: straight into `data`
      if (window_ == 0 && sequential) window_ = want;
      const zip_int64_t r = pread_full(dst, want, offset_);
      if (r > 0) offset_ += static_cast<std::uint64_t>(r);
      return r;
    }
    const std::uint64_t ahead = std::min<std::uint64_t>(window_, size_ - offset_);
    const zip_int64_t r = pread_full(read_buf_.get(), ahead, offset_);
    if (r < 0) return r;
    buf_at_ = offset_;
    buf_len_ = static_cast<std::uint64_t>(r);
    const std::uint64_t n = std::min<std::uint64_t>(want, buf_len_);
    std::memcpy(dst, read_buf_.get(), static_cast<std::size_t>(n));
    offset_ += n;
    return static_cast<zip_int64_t>(n);
  }

  // Hands the gathered bytes to `out`. False (error set) on failure.
  bool flush() noexcept {
    if (pending_ == 0) return true;
    const zip_int64_t n = zip_source_write(out_, write_buf_.get(), pending_);
    if (n < 0) return fail_from_out(), false;
    if (static_cast<std::uint64_t>(n) != pending_) return fail(ZIP_ER_WRITE, 0), false;
    pending_ = 0;
    return true;
  }

  zip_int64_t write(const void* data, zip_uint64_t len) noexcept {
    if (pending_ + len > kBlock && !flush()) return -1;
    if (len >= kBlock) {
      const zip_int64_t n = zip_source_write(out_, data, len);
      return n < 0 ? fail_from_out() : n;
    }
    std::memcpy(write_buf_.get() + pending_, data, static_cast<std::size_t>(len));
    pending_ += len;
    return static_cast<zip_int64_t>(len);
  }

  zip_int64_t handle(void* data, zip_uint64_t len, zip_source_cmd_t cmd) noexcept {
    switch (cmd) {
      case ZIP_SOURCE_OPEN: offset_ = 0; return 0;
      case ZIP_SOURCE_READ: return read(data, len);
      case ZIP_SOURCE_CLOSE: return 0;
      case ZIP_SOURCE_SEEK: {
        const zip_int64_t at = zip_source_seek_compute_offset(offset_, size_, data, len, &error_);
        if (at < 0) return -1;
        offset_ = static_cast<std::uint64_t>(at);
        return 0;
      }
      case ZIP_SOURCE_TELL: return static_cast<zip_int64_t>(offset_);
      case ZIP_SOURCE_STAT: {
        auto* st = ZIP_SOURCE_GET_ARGS(zip_stat_t, data, len, &error_);
        if (st == nullptr) return -1;
        zip_stat_init(st);
        st->size = size_;
        st->mtime = mtime_;
        st->valid = ZIP_STAT_SIZE | ZIP_STAT_MTIME;
        return sizeof(zip_stat_t);
      }
      case ZIP_SOURCE_ERROR: return zip_error_to_data(&error_, data, len);
      case ZIP_SOURCE_ACCEPT_EMPTY: return 0;  // a file: empty is not an archive
      case ZIP_SOURCE_BEGIN_WRITE:
        pending_ = 0;
        return zip_source_begin_write(out_) < 0 ? fail_from_out() : 0;
      case ZIP_SOURCE_WRITE: return write(data, len);
      case ZIP_SOURCE_COMMIT_WRITE:
        if (!flush()) return -1;
        return zip_source_commit_write(out_) < 0 ? fail_from_out() : 0;
      case ZIP_SOURCE_ROLLBACK_WRITE:
        pending_ = 0;
        zip_source_rollback_write(out_);
        return 0;
      case ZIP_SOURCE_SEEK_WRITE: {
        auto* args = ZIP_SOURCE_GET_ARGS(zip_source_args_seek_t, data, len, &error_);
        if (args == nullptr || !flush()) return -1;
        return zip_source_seek_write(out_, args->offset, args->whence) < 0 ? fail_from_out() : 0;
      }
      case ZIP_SOURCE_TELL_WRITE: {
        const zip_int64_t at = zip_source_tell_write(out_);
        return at < 0 ? fail_from_out() : at + static_cast<zip_int64_t>(pending_);
      }
      case ZIP_SOURCE_REMOVE: return fail(ZIP_ER_REMOVE, 0);  // never deletes a file
      case ZIP_SOURCE_SUPPORTS:
        return zip_source_make_command_bitmap(
            ZIP_SOURCE_OPEN, ZIP_SOURCE_READ, ZIP_SOURCE_CLOSE, ZIP_SOURCE_SEEK, ZIP_SOURCE_TELL,
            ZIP_SOURCE_STAT, ZIP_SOURCE_ERROR, ZIP_SOURCE_FREE, ZIP_SOURCE_SUPPORTS,
            ZIP_SOURCE_ACCEPT_EMPTY, ZIP_SOURCE_BEGIN_WRITE, ZIP_SOURCE_WRITE,
            ZIP_SOURCE_COMMIT_WRITE, ZIP_SOURCE_ROLLBACK_WRITE, ZIP_SOURCE_SEEK_WRITE,
            ZIP_SOURCE_TELL_WRITE, ZIP_SOURCE_REMOVE, -1);
      default: return fail(ZIP_ER_OPNOTSUPP, 0);
    }
  }

  static zip_int64_t callback(void* self, void* data, zip_uint64_t len, zip_source_cmd_t cmd) {
    auto* s = static_cast<split_source*>(self);
    if (cmd == ZIP_SOURCE_FREE) {
      std::unique_ptr<split_source> owned(s);  // frees it (and `out`)
      return 0;
    }
    return s->handle(data, len, cmd);
  }

  int fd_;
  std::uint64_t size_;
  std::time_t mtime_;
  std::shared_ptr<const void> keep_;
  zip_source_t* out_ = nullptr;
  zip_error_t error_;
  std::uint64_t offset_ = 0;    // read position
  std::uint64_t last_end_ = 0;  // where the previous read ended
  std::uint64_t window_ = 0;    // read-ahead size, doubling while reads stay sequential
  std::unique_ptr<char[]> read_buf_;
  std::uint64_t buf_at_ = 0, buf_len_ = 0;  // file range held by read_buf_
  std::unique_ptr<char[]> write_buf_;
  std::uint64_t pending_ = 0;  // bytes gathered in write_buf_
};

}  // namespace detail

/// A zip file being written (libzip `zip_open(..., ZIP_CREATE | ZIP_TRUNCATE)`): entries are
/// added in order, all stored (uncompressed) with the fixed time 1980-01-01, and nothing touches
/// the destination until commit(), which writes a temporary file and renames it over `file`
/// (libzip's `zip_close`). Destroying an uncommitted writer leaves the destination untouched.
/// When the copied entries all come from one source archive, each under its own name, and the
/// entries as added are that archive's in its order with some dropped or rewritten and new ones
/// last, commit writes the source archive edited that way instead (same entries, same order,
/// same bytes and methods), which lets libzip copy the unchanged entries without its CRC pass.
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
    plan_.push_back(planned{name, data, nullptr, 0});
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
    plan_.push_back(planned{name, nullptr, source, index});
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
  ///
  /// When the archive can be written as its one source edited in place (see the class), libzip
  /// opens the source file (through the reader's descriptor) and writes it to the destination
  /// with the dropped entries deleted and the rewritten ones replaced: the copied entries' bytes
  /// go through as they are, without a CRC check (like `cp`; reading them reports a corrupt
  /// one), so the CRC message above comes only from other archives (copies from several
  /// sources, renamed or reordered ones). The entries, their order, bytes, methods and times are
  /// those of the new-archive route; unchanged entries keep the source's other header fields.
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
    if (detail::zip_handle edited = edit_in_place()) {
      if (zip_close(edited.get()) != 0) throw archive_error(path_, "", zip_strerror(edited.get()));
      (void)edited.release();  // zip_close freed it
    } else {
      if (zip_close(zip_.get()) != 0) {
        // libzip names only the file it writes ("CRC error"); the corrupt data are a source's.
        if (zip_error_code_zip(zip_get_error(zip_.get())) == ZIP_ER_CRC) throw_corrupt_copy();
        throw archive_error(path_, "", zip_strerror(zip_.get()));
      }
      (void)zip_.release();  // zip_close freed it
    }
    zip_.reset();  // discarded unwritten when the archive was edited in place; else null already
    locks.clear();
    plan_.clear();
    keep_.clear();
    copied_.clear();
    sources_.clear();
  }

 private:
  static constexpr std::time_t kFixedTime = 315576000;  // 1980-01-01 12:00 UTC

  // One entry as added: bytes (`data`), or entry `index` of `source`.
  struct planned {
    std::string name;
    std::shared_ptr<const std::vector<std::byte>> data;
    std::shared_ptr<const zip_reader> source;
    std::size_t index = 0;
  };

  // The index in `source` each planned entry takes when the archive is `source` edited in place
  // (libzip keeps the entries of an opened archive in their order, drops deleted ones, appends
  // added ones), or nothing when that would not give the planned order and contents: every copy
  // must be its source entry under the same name, from one source, in the source's order, with
  // the byte entries of names the source has in their place and the new names last.
  static std::optional<std::vector<std::optional<std::size_t>>> in_place_slots(
      const std::vector<planned>& plan, const zip_reader& source) {
    std::vector<std::optional<std::size_t>> slots;
    slots.reserve(plan.size());
    std::optional<std::size_t> last;
    bool appended = false, written = false;
    for (const planned& p : plan) {
      std::optional<std::size_t> at;
      if (p.source) {
        if (p.source.get() != &source || source.entries().at(p.index).name != p.name) {
          return std::nullopt;
        }
        at = p.index;
      } else {
        written = true;
        at = source.find(p.name);
      }
      if (at) {
        if (appended || (last && *at <= *last)) return std::nullopt;
        last = at;
      } else {
        appended = true;
      }
      slots.push_back(at);
    }
    if (!written) return std::nullopt;  // libzip writes nothing for an archive without changes
    return slots;
  }

  // When every copied entry comes from one source and the planned archive is that source with
  // entries deleted, replaced and appended (in_place_slots), returns the source opened through a
  // split_source onto `path_` and so edited, ready for zip_close; else (or when libzip refuses
  // a step: the new-archive route then reports it) null. zip_close copies the unchanged entries
  // of an opened archive as they are (local header, then the stored or compressed bytes), without
  // the CRC pass it gives the data of an added entry, so their data are not checked either.
  // Callers hold the source's lock.
  detail::zip_handle edit_in_place() const {
    if (sources_.size() != 1) return nullptr;
    const zip_reader& source = *sources_.front();
    const auto slots = in_place_slots(plan_, source);
    if (!slots) return nullptr;
    zip_error_t error;
    zip_error_init(&error);
    zip_source_t* out = zip_source_file_create(path_.c_str(), 0, -1, &error);
    zip_source_t* src =
        out == nullptr
            ? nullptr
            : detail::split_source::create(source.fd_.get(), source.size_,
                                           static_cast<std::time_t>(source.mtime_ns_ / 1000000000),
                                           sources_.front(), out, &error);
    zip_error_fini(&error);
    if (src == nullptr) return nullptr;
    zip_error_init(&error);
    detail::zip_handle edited(zip_open_from_source(src, 0, &error));
    zip_error_fini(&error);
    if (!edited) {
      zip_source_free(src);
      return nullptr;
    }
    zip_t* z = edited.get();
    if (zip_get_num_entries(z, 0) != static_cast<zip_int64_t>(source.entries().size())) {
      return nullptr;
    }
    std::vector<bool> kept(source.entries().size(), false);
    for (std::size_t i = 0; i < plan_.size(); ++i) {
      const planned& p = plan_[i];
      zip_int64_t idx = -1;
      if ((*slots)[i]) {
        idx = static_cast<zip_int64_t>(*(*slots)[i]);
        kept[static_cast<std::size_t>(idx)] = true;
      }
      if (p.data) {
        zip_source_t* data = zip_source_buffer(z, p.data->data(), p.data->size(), 0);
        if (data == nullptr) return nullptr;
        const zip_int64_t r =
            idx >= 0
                ? (zip_file_replace(z, static_cast<zip_uint64_t>(idx), data, 0) == 0 ? idx : -1)
                : zip_file_add(z, p.name.c_str(), data, ZIP_FL_ENC_UTF_8);
        if (r < 0) {
          zip_source_free(data);
          return nullptr;
        }
        idx = r;
        if (zip_set_file_compression(z, static_cast<zip_uint64_t>(idx), ZIP_CM_STORE, 0) != 0) {
          return nullptr;
        }
      }
      if (zip_file_set_mtime(z, static_cast<zip_uint64_t>(idx), kFixedTime, 0) != 0) {
        return nullptr;
      }
    }
    for (std::size_t i = 0; i < kept.size(); ++i) {
      if (!kept[i] && zip_delete(z, static_cast<zip_uint64_t>(i)) != 0) return nullptr;
    }
    return edited;
  }

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
  std::vector<planned> plan_;  // every entry in order
  detail::zip_handle zip_;
  std::unordered_set<std::string> names_;
};

}  // namespace epgraph::archive
