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

// The members of the object `e` under `keys`, each into `out` at its key's index, and the bit
// (1 << index) of each set in `seen`; false when `e` is no object, or has another key or one
// key twice. No allocation. O(members x N).
template <std::size_t N>
bool simdjson_fields(const simdjson::dom::element& e, const std::array<std::string_view, N>& keys,
                     std::array<simdjson::dom::element, N>& out, unsigned& seen) noexcept {
  static_assert(N < 32, "one bit per key");
  seen = 0;
  if (e.type() != simdjson::dom::element_type::OBJECT) return false;
  // Held by value: value_unsafe() returns a reference into the temporary result.
  const simdjson::dom::object obj = e.get_object().value_unsafe();
  for (const simdjson::dom::key_value_pair kv : obj) {
    std::size_t k = 0;
    while (k < N && kv.key != keys[k]) ++k;
    if (k == N || (seen & (1u << k)) != 0) return false;
    seen |= 1u << k;
    out[k] = kv.value;
  }
  return true;
}

// The SymExpr {"expr_str": <string>, "hint": <null or {"as_int": <integer>}>} (the
// hint may be absent; no other key, none twice) of `e`, as sym_expr_from_json_at reads it for
// a size without an error: its text one sym::parse reads (looked up in `checked`, or parsed
// and added there); false for any other form or a text sym::parse refuses (the tree's reading
// then gives the error). Throws std::bad_alloc. O(length of the text) the first time.
inline bool simdjson_sym_expr(const simdjson::dom::element& e, SymExpr& out,
                              CheckedExprs& checked) {
  static constexpr std::array<std::string_view, 2> keys = {"expr_str", "hint"};
  std::array<simdjson::dom::element, 2> f;
  unsigned seen = 0;
  if (!simdjson_fields(e, keys, f, seen) || (seen & 1u) == 0 ||
      f[0].type() != simdjson::dom::element_type::STRING) {
    return false;
  }
  const std::string_view text = f[0].get_string().value_unsafe();
  if (!simdjson_plain(text)) return false;
  std::optional<std::int64_t> hint;
  if ((seen & 2u) != 0 && f[1].type() != simdjson::dom::element_type::NULL_VALUE) {
    std::int64_t v = 0;
    if (f[1].type() != simdjson::dom::element_type::OBJECT) return false;
    const simdjson::dom::object obj = f[1].get_object().value_unsafe();
    auto it = obj.begin();
    if (it == obj.end()) return false;
    const simdjson::dom::key_value_pair kv = *it;
    if (kv.key != "as_int" || !simdjson_int(kv.value, v) || ++it != obj.end()) return false;
    hint = v;
  }
  if (!checked.contains(text)) {
    try {
      (void)sym::parse(text);
    } catch (const value_error&) {
      return false;
    }
    (void)checked.insert(text);
  }
  out = SymExpr{std::string(text), hint};
  return true;
}

// `e` as the SymInt sym_int_from_json_at reads without an error when it is a plain integer,
// {"as_int": <integer>} or {"as_expr": <a SymExpr simdjson_sym_expr reads>}; false for every
// other form (legacy with null members, bad). Throws std::bad_alloc (an expression's text).
// O(1) for an integer.
inline bool simdjson_sym_int(const simdjson::dom::element& e, SymInt& out, CheckedExprs& checked) {
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
  if (++it != obj.end()) return false;
  if (kv.key == "as_int") {
    if (!simdjson_int(kv.value, v)) return false;
    out = v;
    return true;
  }
  if (kv.key != "as_expr") return false;
  SymExpr x;
  if (!simdjson_sym_expr(kv.value, x, checked)) return false;
  out = std::move(x);
  return true;
}

// A list of sizes or strides `e` as simdjson_sym_int reads each element. Throws std::bad_alloc.
// O(length).
inline bool simdjson_sym_ints(const simdjson::dom::element& e, std::vector<SymInt>& out,
                              CheckedExprs& checked) {
  if (e.type() != simdjson::dom::element_type::ARRAY) return false;
  const simdjson::dom::array arr = e.get_array().value_unsafe();
  out.reserve(arr.size());
  for (const simdjson::dom::element x : arr) {
    SymInt s;
    if (!simdjson_sym_int(x, s, checked)) return false;
    out.push_back(std::move(s));
  }
  return true;
}

// A tensor's device {"type": <string>, "index": <null or integer>} ("index" may be absent), as
// tensor_meta_from_json_at reads it without an error; false for any other form (a missing or
// repeated key, another key, another type, a string with a surrogate). Throws std::bad_alloc.
// O(1).
inline bool simdjson_device(const simdjson::dom::element& e, Device& out) {
  static constexpr std::array<std::string_view, 2> keys = {"type", "index"};
  std::array<simdjson::dom::element, 2> f;
  unsigned seen = 0;
  if (!simdjson_fields(e, keys, f, seen) || (seen & 1u) == 0 ||
      f[0].type() != simdjson::dom::element_type::STRING) {
    return false;
  }
  const std::string_view t = f[0].get_string().value_unsafe();
  if (!simdjson_plain(t)) return false;
  if ((seen & 2u) != 0) {
    std::int64_t v = 0;
    if (simdjson_int(f[1], v)) {
      out.index = v;
    } else if (f[1].type() != simdjson::dom::element_type::NULL_VALUE) {
      return false;
    }
  }
  out.type.assign(t.data(), t.size());
  return true;
}

// The TensorMeta that tensor_meta_from_json_at reads from the tree of `e`, when `e` has exactly
// the seven fields of schema 7.x/8.x (any order, none twice) in their usual forms and the value
// is one tensor_meta_from_json_at accepts; false otherwise (then `out` is unspecified and the
// caller reads the tree, which gives the value or the error). Symbolic sizes, strides and
// offsets are read too, their texts checked once per `checked`. Never throws an error of its
// own; throws std::bad_alloc. O(rank).
inline bool simdjson_tensor_meta(const simdjson::dom::element& e, TensorMeta& out,
                                 CheckedExprs& checked) {
  static constexpr std::array<std::string_view, 7> keys = {
      "dtype", "sizes", "requires_grad", "device", "strides", "storage_offset", "layout"};
  std::array<simdjson::dom::element, 7> f;
  unsigned seen = 0;
  std::int64_t d = 0;
  std::int64_t l = 0;
  if (!simdjson_fields(e, keys, f, seen) || seen != 127u || !simdjson_int(f[0], d) ||
      !simdjson_sym_ints(f[1], out.sizes, checked) ||
      f[2].type() != simdjson::dom::element_type::BOOL || !simdjson_device(f[3], out.device) ||
      !simdjson_sym_ints(f[4], out.strides, checked) ||
      !simdjson_sym_int(f[5], out.storage_offset, checked) || !simdjson_int(f[6], l)) {
    return false;
  }
  out.requires_grad = f[2].get_bool().value_unsafe();
  // The checks of tensor_meta_from_json_at and check_tensor_meta (their errors come from the
  // tree's reading).
  if (!known_scalar_type(d)) return false;
  for (const SymInt& s : out.sizes) {
    const auto* v = std::get_if<std::int64_t>(&s);
    if (v != nullptr && *v < 0) return false;  // (a symbolic size is not checked)
  }
  if (numel_overflows(out.sizes)) return false;
  if (out.device.index && *out.device.index < 0) return false;
  if (!known_layout(l)) return false;
  if (out.strides.size() != out.sizes.size()) return false;
  const auto* offset = std::get_if<std::int64_t>(&out.storage_offset);
  if (offset != nullptr && *offset < 0) return false;
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
