// Parsing JSON text with simdjson into the events of an OrderedDomBuilder (nlohmann's SAX calls).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// Internal to epgraph::json; present only when the target links simdjson
// (EPGRAPH_JSON_HAS_SIMDJSON, see CMakeLists.txt).
//
// The reader is written once, against the nlohmann::ordered_json tree an OrderedDomBuilder
// builds (dom.hpp: duplicate keys resolved as ordered_json::parse resolves them, the last value
// at the first position, and a watched object streamed to its sink). Two backends feed that
// builder: nlohmann's SAX parser and this file, which parses with simdjson's DOM parser and
// replays its tape as the same calls in the same order. simdjson is used only when it reads the
// text exactly as nlohmann would; otherwise simdjson_feed returns false and the caller parses
// with nlohmann, so values and error messages are nlohmann's on every text:
// - any text simdjson refuses (malformed text, an integer beyond 64 bits, which nlohmann reads
//   as a float, a number beyond a double's range, a UTF-8 byte order mark, nesting deeper than
//   simdjson's limit): nlohmann parses it and gives the value or its parse error;
// - a string holding a UTF-16 surrogate code point (an escaped lone surrogate, which nlohmann
//   refuses);
// - nesting deeper than the builder's limit (nlohmann then finds the first of a syntax error and
//   the limit, as it does alone).

// Empty unless epgraph::json links simdjson (so that it compiles on its own without it).
#if defined(EPGRAPH_JSON_HAS_SIMDJSON) && EPGRAPH_JSON_HAS_SIMDJSON

#include <simdjson.h>

#include <cstdint>
#include <new>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "../tensor.hpp"
#include "dom.hpp"

namespace epgraph::json::detail {

// A string nlohmann reads as simdjson does: no UTF-16 surrogate (U+D800..U+DFFF, whose UTF-8
// encoding starts with 0xED followed by 0xA0..0xBF), which only an escape can produce (simdjson
// validates the raw text's UTF-8). No allocation. O(size of `s`).
inline bool simdjson_plain(std::string_view s) noexcept {
  for (std::size_t i = 0; i + 1 < s.size(); ++i) {
    if (static_cast<unsigned char>(s[i]) == 0xED && static_cast<unsigned char>(s[i + 1]) >= 0xA0) {
      return false;
    }
  }
  return true;
}

// Takes members of the object an OrderedDomBuilder watches straight from simdjson's document,
// before the builder would build them as a tree for its MemberSink.
class SimdjsonMemberSink {
 public:
  SimdjsonMemberSink() = default;
  SimdjsonMemberSink(const SimdjsonMemberSink&) = delete;
  SimdjsonMemberSink& operator=(const SimdjsonMemberSink&) = delete;
  virtual ~SimdjsonMemberSink() = default;
  // Takes the member `key`: `value` (a key without surrogates, see simdjson_plain) and returns
  // true, or returns false having done nothing (the member then goes to the builder as usual).
  virtual bool member(std::string_view key, const simdjson::dom::element& value) = 0;
};

// `e` as an integer when nlohmann reads it as one that get_int accepts without an error (any
// value simdjson types INT64; UINT64 is beyond int64, which get_int refuses). No allocation. O(1).
inline bool simdjson_int(const simdjson::dom::element& e, std::int64_t& out) noexcept {
  if (e.type() != simdjson::dom::element_type::INT64) return false;
  out = e.get_int64().value_unsafe();
  return true;
}

// `e` as the SymInt sym_int_from_json_at reads without an error when it is a plain integer or
// {"as_int": <integer>}; false for every other form (symbolic, legacy with null members, bad).
// No allocation. O(1).
inline bool simdjson_sym_int(const simdjson::dom::element& e, SymInt& out) noexcept {
  std::int64_t v = 0;
  if (simdjson_int(e, v)) {
    out = v;
    return true;
  }
  if (e.type() != simdjson::dom::element_type::OBJECT) return false;
  const simdjson::dom::object obj = e.get_object().value_unsafe();
  auto it = obj.begin();
  if (it == obj.end()) return false;
  const simdjson::dom::key_value_pair kv = *it;
  if (kv.key != "as_int" || !simdjson_int(kv.value, v) || ++it != obj.end()) return false;
  out = v;
  return true;
}

// A list of sizes or strides `e` as simdjson_sym_int reads each element. Throws std::bad_alloc.
// O(length).
inline bool simdjson_sym_ints(const simdjson::dom::element& e, std::vector<SymInt>& out) {
  if (e.type() != simdjson::dom::element_type::ARRAY) return false;
  const simdjson::dom::array arr = e.get_array().value_unsafe();
  out.reserve(arr.size());
  for (const simdjson::dom::element x : arr) {
    SymInt s;
    if (!simdjson_sym_int(x, s)) return false;
    out.push_back(std::move(s));
  }
  return true;
}

// A tensor's device {"type": <string>, "index": <null or integer>} ("index" may be absent), as
// tensor_meta_from_json_at reads it without an error; false for any other form (a missing or
// repeated key, another key, another type, a string with a surrogate). Throws std::bad_alloc.
// O(1).
inline bool simdjson_device(const simdjson::dom::element& e, Device& out) {
  if (e.type() != simdjson::dom::element_type::OBJECT) return false;
  bool type = false;
  bool index = false;
  // Held by value: value_unsafe() returns a reference into the temporary result.
  const simdjson::dom::object obj = e.get_object().value_unsafe();
  for (const simdjson::dom::key_value_pair kv : obj) {
    if (kv.key == "type" && !type) {
      if (kv.value.type() != simdjson::dom::element_type::STRING) return false;
      const std::string_view t = kv.value.get_string().value_unsafe();
      if (!simdjson_plain(t)) return false;
      out.type.assign(t.data(), t.size());
      type = true;
    } else if (kv.key == "index" && !index) {
      std::int64_t v = 0;
      if (simdjson_int(kv.value, v)) {
        out.index = v;
      } else if (kv.value.type() != simdjson::dom::element_type::NULL_VALUE) {
        return false;
      }
      index = true;
    } else {
      return false;
    }
  }
  return type;
}

// The TensorMeta that tensor_meta_from_json_at reads from the tree of `e`, when `e` has exactly
// the seven fields of schema 7.x/8.x (any order, none twice) in their usual forms and the value
// is one tensor_meta_from_json_at accepts; false otherwise (then `out` is unspecified and the
// caller reads the tree, which gives the value or the error). Never throws an error of its own;
// throws std::bad_alloc. O(rank).
inline bool simdjson_tensor_meta(const simdjson::dom::element& e, TensorMeta& out) {
  if (e.type() != simdjson::dom::element_type::OBJECT) return false;
  enum : unsigned {
    k_dtype = 1,
    k_sizes = 2,
    k_requires_grad = 4,
    k_device = 8,
    k_strides = 16,
    k_storage_offset = 32,
    k_layout = 64,
  };
  unsigned seen = 0;
  std::int64_t d = 0;
  std::int64_t l = 0;
  // Held by value: value_unsafe() returns a reference into the temporary result.
  const simdjson::dom::object obj = e.get_object().value_unsafe();
  for (const simdjson::dom::key_value_pair kv : obj) {
    const std::string_view k = kv.key;
    unsigned bit = 0;
    bool ok = false;
    if (k == "dtype") {
      bit = k_dtype;
      ok = simdjson_int(kv.value, d);
    } else if (k == "sizes") {
      bit = k_sizes;
      ok = simdjson_sym_ints(kv.value, out.sizes);
    } else if (k == "requires_grad") {
      bit = k_requires_grad;
      ok = kv.value.type() == simdjson::dom::element_type::BOOL;
      if (ok) out.requires_grad = kv.value.get_bool().value_unsafe();
    } else if (k == "device") {
      bit = k_device;
      ok = simdjson_device(kv.value, out.device);
    } else if (k == "strides") {
      bit = k_strides;
      ok = simdjson_sym_ints(kv.value, out.strides);
    } else if (k == "storage_offset") {
      bit = k_storage_offset;
      ok = simdjson_sym_int(kv.value, out.storage_offset);
    } else if (k == "layout") {
      bit = k_layout;
      ok = simdjson_int(kv.value, l);
    }
    if (!ok || (seen & bit) != 0) return false;
    seen |= bit;
  }
  if (seen != 127u) return false;
  // The checks of tensor_meta_from_json_at and check_tensor_meta (their errors come from the
  // tree's reading).
  if (d < 0 || d > 64 || dtype_name(static_cast<dtype>(d)).empty()) return false;
  if (l < 0 || l > 7) return false;
  if (out.strides.size() != out.sizes.size()) return false;
  const auto* offset = std::get_if<std::int64_t>(&out.storage_offset);
  if (offset == nullptr || *offset < 0) return false;
  out.dtype = static_cast<dtype>(d);
  out.layout = static_cast<Layout>(l);
  return true;
}

class SimdjsonFeeder {
 public:
  // Parses `text` and feeds its values to `builder`. Returns true when the builder holds the
  // document; false when nlohmann must parse the text instead (see above): the builder and
  // whatever it fed a watched object's sink (and `direct`) are then to be discarded by the
  // caller. `direct`, when given, is offered each member of the object the builder watches
  // before the builder gets it. Throws std::bad_alloc (also when simdjson cannot allocate) and
  // what the builder's sink and `direct` throw. O(size of the text).
  [[nodiscard]] bool feed(std::string_view text, OrderedDomBuilder& builder,
                          SimdjsonMemberSink* direct = nullptr) {
    simdjson::dom::element root;
    const simdjson::error_code error = parser_.parse(text.data(), text.size()).get(root);
    // simdjson allocates without throwing; its failure is reported as the allocation failure.
    if (error == simdjson::MEMALLOC) throw std::bad_alloc();
    if (error != simdjson::SUCCESS) return false;
    direct_ = direct;
    try {
      return element(root, builder);
    } catch (const nesting_too_deep&) {
      return false;
    }
  }

 private:
  static bool plain(std::string_view s) noexcept { return simdjson_plain(s); }

  // Feeds `e` and its children to `b`; false when nlohmann must parse the text (see above).
  // Throws what `b` and direct_ throw. O(size of `e`).
  bool element(const simdjson::dom::element& e, OrderedDomBuilder& b) {
    switch (e.type()) {
      case simdjson::dom::element_type::OBJECT: {
        const simdjson::dom::object obj = e.get_object().value_unsafe();
        (void)b.start_object(obj.size());
        const bool offer = direct_ != nullptr && b.in_watched();
        for (const simdjson::dom::key_value_pair kv : obj) {
          if (!plain(kv.key)) return false;
          if (offer && direct_->member(kv.key, kv.value)) continue;
          scratch_.assign(kv.key.data(), kv.key.size());
          (void)b.key(scratch_);
          if (!element(kv.value, b)) return false;
        }
        (void)b.end_object();
        return true;
      }
      case simdjson::dom::element_type::ARRAY: {
        const simdjson::dom::array arr = e.get_array().value_unsafe();
        (void)b.start_array(arr.size());
        for (const simdjson::dom::element x : arr) {
          if (!element(x, b)) return false;
        }
        (void)b.end_array();
        return true;
      }
      case simdjson::dom::element_type::STRING: {
        const std::string_view s = e.get_string().value_unsafe();
        if (!plain(s)) return false;
        scratch_.assign(s.data(), s.size());
        (void)b.string(scratch_);
        return true;
      }
      case simdjson::dom::element_type::INT64: {
        // nlohmann reads a number without a sign as unsigned, one with a sign as signed.
        const std::int64_t v = e.get_int64().value_unsafe();
        // (`-0` reads as 0 either way: the same value, dumped as `0`.)
        if (v >= 0) {
          (void)b.number_unsigned(static_cast<std::uint64_t>(v));
        } else {
          (void)b.number_integer(v);
        }
        return true;
      }
      case simdjson::dom::element_type::UINT64:
        (void)b.number_unsigned(e.get_uint64().value_unsafe());
        return true;
      case simdjson::dom::element_type::DOUBLE:
        (void)b.number_float(e.get_double().value_unsafe(), scratch_);
        return true;
      case simdjson::dom::element_type::BOOL:
        (void)b.boolean(e.get_bool().value_unsafe());
        return true;
      case simdjson::dom::element_type::NULL_VALUE: (void)b.null(); return true;
    }
    return false;
  }

  simdjson::dom::parser parser_;
  std::string scratch_;
  SimdjsonMemberSink* direct_ = nullptr;
};

}  // namespace epgraph::json::detail

#endif  // EPGRAPH_JSON_HAS_SIMDJSON
