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

#include <array>
#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "../../ir/tensor.hpp"
#include "../tensor_meta.hpp"
#include "dom.hpp"
#include "simd_value.hpp"

namespace epgraph::json::detail {

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

class SimdjsonFeeder {
 public:
  // Parses `text` and feeds its values to `builder`. Returns true when the builder holds the
  // document; false when nlohmann must parse the text instead (see above): the builder and
  // whatever it fed a watched object's sink (and `direct`) are then to be discarded by the
  // caller. `direct`, when given, is offered each member of the object the builder watches
  // before the builder gets it. Throws std::bad_alloc (also when simdjson cannot allocate) and
  // what the builder's sink and `direct` throw. O(size of the text).
  //
  // With `keep_nodes`, the `nodes` array of the object holding the watched one (the graph whose
  // tensor_values `direct` takes) is not fed: the builder gets an empty array in its place, and
  // nodes() gives simdjson's array, valid until the next feed or the feeder's end (the
  // reader takes each node from it, see GraphReader). Its strings and nesting are checked as
  // feeding them would check them, so the result (true or false) is the same either way.
  [[nodiscard]] bool feed(std::string_view text, OrderedDomBuilder& builder,
                          SimdjsonMemberSink* direct = nullptr, bool keep_nodes = false) {
    nodes_.reset();
    nodes_twice_ = false;
    simdjson::dom::element root;
    const simdjson::error_code error = parser_.parse(text.data(), text.size()).get(root);
    // simdjson allocates without throwing; its failure is reported as the allocation failure.
    if (error == simdjson::MEMALLOC) throw std::bad_alloc();
    if (error != simdjson::SUCCESS) return false;
    direct_ = direct;
    keep_nodes_ = keep_nodes;
    try {
      return element(root, builder);
    } catch (const nesting_too_deep&) {
      return false;
    }
  }

  // The `nodes` array kept by the last feed (see feed), or nullptr when there was none or when
  // the graph object had it twice (the builder's tree then holds empty arrays, and the caller
  // must parse again: nodes_twice()). No allocation. O(1).
  [[nodiscard]] const simdjson::dom::array* nodes() const noexcept {
    return nodes_ && !nodes_twice_ ? &*nodes_ : nullptr;
  }
  [[nodiscard]] bool nodes_twice() const noexcept { return nodes_twice_; }

  // The tree the builder of a feed would have built for `e` (an element of the document the
  // last feed parsed, checked by that feed), built with `b` (no watch; cleared before and
  // after). Throws std::bad_alloc. O(size of `e`).
  [[nodiscard]] ojson tree(const simdjson::dom::element& e, OrderedDomBuilder& b) {
    b.clear();
    SimdjsonMemberSink* const direct = direct_;
    direct_ = nullptr;
    const bool keep = keep_nodes_;
    keep_nodes_ = false;
    const bool fed = element(e, b);
    direct_ = direct;
    keep_nodes_ = keep;
    (void)fed;  // true: the last feed checked `e`'s strings
    ojson out = b.take();
    b.clear();
    return out;
  }

 private:
  // Checks `e` as element() would feed it at `depth` open containers: false for a string or key
  // with a surrogate; throws nesting_too_deep past `limit` (0: none). No allocation.
  // O(size of `e`).
  static bool check(const simdjson::dom::element& e, std::size_t depth, std::size_t limit) {
    switch (e.type()) {
      case simdjson::dom::element_type::OBJECT: {
        if (limit != 0 && depth >= limit) throw nesting_too_deep{};
        // Held by value: value_unsafe() returns a reference into the temporary result.
        const simdjson::dom::object obj = e.get_object().value_unsafe();
        for (const simdjson::dom::key_value_pair kv : obj) {
          if (!plain(kv.key) || !check(kv.value, depth + 1, limit)) return false;
        }
        return true;
      }
      case simdjson::dom::element_type::ARRAY: {
        if (limit != 0 && depth >= limit) throw nesting_too_deep{};
        const simdjson::dom::array arr = e.get_array().value_unsafe();
        for (const simdjson::dom::element x : arr) {
          if (!check(x, depth + 1, limit)) return false;
        }
        return true;
      }
      case simdjson::dom::element_type::STRING: return plain(e.get_string().value_unsafe());
      default: return true;
    }
  }

  static bool plain(std::string_view s) noexcept { return simdjson_plain(s); }

  // Feeds `e` and its children to `b`; false when nlohmann must parse the text (see above).
  // Throws what `b` and direct_ throw. O(size of `e`).
  bool element(const simdjson::dom::element& e, OrderedDomBuilder& b) {
    switch (e.type()) {
      case simdjson::dom::element_type::OBJECT: {
        const simdjson::dom::object obj = e.get_object().value_unsafe();
        (void)b.start_object(obj.size());
        const bool offer = direct_ != nullptr && b.in_watched();
        const bool graph = keep_nodes_ && b.in_watched_parent();
        for (const simdjson::dom::key_value_pair kv : obj) {
          if (!plain(kv.key)) return false;
          if (offer && direct_->member(kv.key, kv.value)) continue;
          if (graph && kv.key == "nodes" && kv.value.type() == simdjson::dom::element_type::ARRAY) {
            if (!check(kv.value, b.depth(), b.depth_limit())) return false;
            nodes_twice_ = nodes_twice_ || nodes_.has_value();
            nodes_ = kv.value.get_array().value_unsafe();
            scratch_.assign(kv.key.data(), kv.key.size());
            (void)b.key(scratch_);
            (void)b.start_array(0);
            (void)b.end_array();
            continue;
          }
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
  bool keep_nodes_ = false;
  std::optional<simdjson::dom::array> nodes_;
  bool nodes_twice_ = false;
};

}  // namespace epgraph::json::detail

#endif  // EPGRAPH_JSON_HAS_SIMDJSON
