// CompactString: the small-footprint string a Node keeps its name in.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

namespace epgraph::detail {

// A 16-byte string for node names: up to 15 characters are stored inline (FX names such as
// `add_123456` are short), longer ones on the heap. std::string takes 32 bytes; a node name is
// the biggest field of a node, so this halves it. Not part of the public API.
//
// Representation: raw_[15] holds 15 - size for an inline string (so a 15-character string ends
// with a 0 byte), or heap_tag for a heap string whose pointer and size are stored (memcpy'd) in
// raw_[0..8) and raw_[8..12).
class CompactString {
 public:
  CompactString() noexcept { set_inline_size(0); }
  explicit CompactString(std::string_view s) {
    if (s.size() <= max_inline) {
      if (!s.empty()) std::memcpy(raw_, s.data(), s.size());
      set_inline_size(s.size());
      return;
    }
    if (s.size() > UINT32_MAX) throw std::length_error("epgraph: name longer than 4 GiB");
    char* p = std::allocator<char>().allocate(s.size());  // may throw; nothing to undo
    std::memcpy(p, s.data(), s.size());
    const auto size = static_cast<std::uint32_t>(s.size());
    std::memcpy(raw_, &p, sizeof p);
    std::memcpy(raw_ + sizeof p, &size, sizeof size);
    raw_[15] = heap_tag;
  }
  CompactString(const CompactString& other) : CompactString(other.view()) {}
  CompactString(CompactString&& other) noexcept {
    std::memcpy(raw_, other.raw_, sizeof raw_);
    other.set_inline_size(0);
  }
  CompactString& operator=(const CompactString& other) {
    CompactString copy(other);
    swap(copy);
    return *this;
  }
  CompactString& operator=(CompactString&& other) noexcept {
    CompactString moved(std::move(other));
    swap(moved);
    return *this;
  }
  ~CompactString() {
    if (on_heap()) std::allocator<char>().deallocate(heap_data(), heap_size());
  }

  void swap(CompactString& other) noexcept {
    unsigned char tmp[sizeof raw_];
    std::memcpy(tmp, raw_, sizeof raw_);
    std::memcpy(raw_, other.raw_, sizeof raw_);
    std::memcpy(other.raw_, tmp, sizeof raw_);
  }

  [[nodiscard]] std::string_view view() const noexcept {
    if (on_heap()) return {heap_data(), heap_size()};
    return {reinterpret_cast<const char*>(raw_), static_cast<std::size_t>(max_inline - raw_[15])};
  }
  [[nodiscard]] std::string str() const { return std::string(view()); }
  operator std::string_view() const noexcept { return view(); }
  explicit operator std::string() const { return str(); }

  // Concatenation with std::string / C strings, for error messages.
  friend std::string operator+(std::string a, const CompactString& b) { return a.append(b.view()); }
  friend std::string operator+(const char* a, const CompactString& b) {
    return std::string(a).append(b.view());
  }
  friend std::string operator+(const CompactString& a, std::string_view b) {
    return a.str().append(b);
  }
  friend std::string operator+(const CompactString& a, const char* b) { return a.str().append(b); }

 private:
  static constexpr std::size_t max_inline = 15;
  static constexpr unsigned char heap_tag = 0xFF;

  [[nodiscard]] bool on_heap() const noexcept { return raw_[15] == heap_tag; }
  [[nodiscard]] char* heap_data() const noexcept {
    char* p = nullptr;
    std::memcpy(&p, raw_, sizeof p);
    return p;
  }
  [[nodiscard]] std::size_t heap_size() const noexcept {
    std::uint32_t size = 0;
    std::memcpy(&size, raw_ + sizeof(char*), sizeof size);
    return size;
  }
  void set_inline_size(std::size_t size) noexcept {
    raw_[15] = static_cast<unsigned char>(max_inline - size);
    if (size < max_inline) raw_[size] = 0;
  }

  unsigned char raw_[16];
};

static_assert(sizeof(CompactString) == 16);

}  // namespace epgraph::detail
