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

#include "dom.hpp"

namespace epgraph::json::detail {

class SimdjsonFeeder {
 public:
  // Parses `text` and feeds its values to `builder`. Returns true when the builder holds the
  // document; false when nlohmann must parse the text instead (see above): the builder and
  // whatever it fed a watched object's sink are then to be discarded by the caller. Throws
  // std::bad_alloc (also when simdjson cannot allocate) and what the builder's sink throws.
  // O(size of the text).
  [[nodiscard]] bool feed(std::string_view text, OrderedDomBuilder& builder) {
    simdjson::dom::element root;
    const simdjson::error_code error = parser_.parse(text.data(), text.size()).get(root);
    // simdjson allocates without throwing; its failure is reported as the allocation failure.
    if (error == simdjson::MEMALLOC) throw std::bad_alloc();
    if (error != simdjson::SUCCESS) return false;
    try {
      return element(root, builder);
    } catch (const nesting_too_deep&) {
      return false;
    }
  }

 private:
  // A string nlohmann reads as simdjson does: no UTF-16 surrogate (U+D800..U+DFFF, whose UTF-8
  // encoding starts with 0xED followed by 0xA0..0xBF), which only an escape can produce (simdjson
  // validates the raw text's UTF-8).
  static bool plain(std::string_view s) noexcept {
    for (std::size_t i = 0; i + 1 < s.size(); ++i) {
      if (static_cast<unsigned char>(s[i]) == 0xED &&
          static_cast<unsigned char>(s[i + 1]) >= 0xA0) {
        return false;
      }
    }
    return true;
  }

  bool element(const simdjson::dom::element& e, OrderedDomBuilder& b) {
    switch (e.type()) {
      case simdjson::dom::element_type::OBJECT: {
        const simdjson::dom::object obj = e.get_object().value_unsafe();
        (void)b.start_object(obj.size());
        for (const simdjson::dom::key_value_pair kv : obj) {
          if (!plain(kv.key)) return false;
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
};

}  // namespace epgraph::json::detail

#endif  // EPGRAPH_JSON_HAS_SIMDJSON
