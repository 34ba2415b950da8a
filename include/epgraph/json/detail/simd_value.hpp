// The node reader's document adapter for simdjson: an element of simdjson's document seen through
// the part of nlohmann::ordered_json's interface the reader uses.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// Internal to epgraph::json (the reader); empty unless epgraph::json links simdjson.
//
// NodeReader and ArgumentReader are written once, against the value type J, and instantiated for
// ordered_json (the tree) and SimdValue (simdjson's document: no tree is built, bench/README.md,
// json_load). The two agree on every text simdjson_feed accepts, except in two places, where a
// SimdValue throws needs_tree before the reader has changed anything and the caller reads that
// node from its tree instead:
// - an object with a repeated key (the tree keeps the last value at the first key's position,
//   dom.hpp), found by every lookup and walk of an object;
// - a nested graph (as_graph), which NestedGraphs keeps as a tree.
// checked_access.hpp gives the checked accessors for both (field, opt_field, get_string,
// union_member, for_each_member, ...), with the same errors.

#include "../format.hpp"

#if EPGRAPH_JSON_HAS_SIMDJSON

#include <simdjson.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "../error.hpp"
#include "checked_access.hpp"
#include "text.hpp"

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

// Thrown by a SimdValue (and the readers on it) where only the tree gives the node its meaning:
// see above. Not an error: the caller reads the node's tree.
struct needs_tree {};

// An element of simdjson's document (which must outlive it). Cheap to copy. Every member is O(1)
// unless it says otherwise; none allocates.
class SimdValue {
 public:
  using element = simdjson::dom::element;
  using element_type = simdjson::dom::element_type;

  SimdValue() = default;
  explicit SimdValue(element e) noexcept : e_(e) {}
  // The element itself.
  [[nodiscard]] element raw() const noexcept { return e_; }

  [[nodiscard]] element_type type() const noexcept { return e_.type(); }
  [[nodiscard]] bool is_null() const noexcept { return type() == element_type::NULL_VALUE; }
  [[nodiscard]] bool is_object() const noexcept { return type() == element_type::OBJECT; }
  [[nodiscard]] bool is_array() const noexcept { return type() == element_type::ARRAY; }
  [[nodiscard]] bool is_string() const noexcept { return type() == element_type::STRING; }
  [[nodiscard]] bool is_boolean() const noexcept { return type() == element_type::BOOL; }
  // An integer (nlohmann's number_integer or number_unsigned).
  [[nodiscard]] bool is_number_integer() const noexcept {
    return type() == element_type::INT64 || type() == element_type::UINT64;
  }
  // An integer beyond int64's range (simdjson types only those UINT64).
  [[nodiscard]] bool is_number_unsigned() const noexcept { return type() == element_type::UINT64; }
  [[nodiscard]] bool is_number_float() const noexcept { return type() == element_type::DOUBLE; }
  [[nodiscard]] bool is_number() const noexcept { return is_number_integer() || is_number_float(); }
  // nlohmann's name of the type ("number" for both kinds of number).
  [[nodiscard]] const char* type_name() const noexcept {
    switch (type()) {
      case element_type::NULL_VALUE: return "null";
      case element_type::OBJECT: return "object";
      case element_type::ARRAY: return "array";
      case element_type::STRING: return "string";
      case element_type::BOOL: return "boolean";
      default: return "number";
    }
  }

  // The value of a string / boolean / number (the caller checked the type). A number converts as
  // nlohmann's get<T> converts it.
  [[nodiscard]] std::string_view str() const noexcept { return e_.get_string().value_unsafe(); }
  [[nodiscard]] bool boolean() const noexcept { return e_.get_bool().value_unsafe(); }
  [[nodiscard]] std::int64_t int64() const noexcept {
    return type() == element_type::UINT64 ? static_cast<std::int64_t>(uint64())
                                          : e_.get_int64().value_unsafe();
  }
  [[nodiscard]] std::uint64_t uint64() const noexcept {
    return type() == element_type::UINT64 ? e_.get_uint64().value_unsafe()
                                          : static_cast<std::uint64_t>(int64());
  }
  [[nodiscard]] double number() const noexcept {
    switch (type()) {
      case element_type::INT64: return static_cast<double>(e_.get_int64().value_unsafe());
      case element_type::UINT64: return static_cast<double>(e_.get_uint64().value_unsafe());
      default: return e_.get_double().value_unsafe();
    }
  }

  // nlohmann's get<T> for the types the checked accessors ask for.
  template <class T>
  [[nodiscard]] T get() const noexcept {
    if constexpr (std::is_same_v<T, bool>) {
      return boolean();
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
      return int64();
    } else if constexpr (std::is_same_v<T, std::uint64_t>) {
      return uint64();
    } else {
      static_assert(std::is_same_v<T, double>, "get<T>: bool, int64, uint64 or double");
      return number();
    }
  }

  // The number of elements of an array or members of an object.
  [[nodiscard]] std::size_t size() const noexcept {
    return is_array() ? e_.get_array().value_unsafe().size()
                      : e_.get_object().value_unsafe().size();
  }

  // The members `keys` (distinct) of an object in one pass, each into `out` at its key's index
  // (nothing when absent), and the same object with its keys known to be unique, so that
  // find() and for_each_member() on it need not check them again. Throws needs_tree when a key
  // repeats. O(members x N), plus O(members^2) when two or more members are not in `keys`.
  template <std::size_t N>
  [[nodiscard]] SimdValue fetch(const std::array<std::string_view, N>& keys,
                                std::array<std::optional<SimdValue>, N>& out) const {
    const simdjson::dom::object obj = e_.get_object().value_unsafe();
    std::size_t others = 0;
    for (const simdjson::dom::key_value_pair kv : obj) {
      std::size_t k = 0;
      while (k < N && kv.key != keys[k]) ++k;
      if (k == N) {
        ++others;
      } else if (out[k]) {
        throw needs_tree{};
      } else {
        out[k] = SimdValue(kv.value);
      }
    }
    if (others > 1) check_unique_keys(obj);
    SimdValue checked = *this;
    checked.unique_ = true;
    return checked;
  }

  // The member `key` of an object, or nothing. Throws needs_tree when the object repeats `key`.
  // O(members).
  [[nodiscard]] std::optional<SimdValue> find(std::string_view key) const {
    std::optional<SimdValue> found;
    // Held by value: value_unsafe() returns a reference into the temporary result.
    const simdjson::dom::object obj = e_.get_object().value_unsafe();
    for (const simdjson::dom::key_value_pair kv : obj) {
      if (kv.key != key) continue;
      if (found) throw needs_tree{};
      found = SimdValue(kv.value);
      if (unique_) break;
    }
    return found;
  }

  // Calls visit(key, value) for each member of an object in order. Throws needs_tree, before
  // the first call, when a key repeats. O(members^2) (objects here are small).
  template <class Visit>
  void for_each_member(Visit&& visit) const {
    const simdjson::dom::object obj = e_.get_object().value_unsafe();
    if (!unique_ && obj.size() > 1) check_unique_keys(obj);
    for (const simdjson::dom::key_value_pair kv : obj) visit(kv.key, SimdValue(kv.value));
  }

  // Calls visit(index, value) for each element of an array in order. O(elements).
  template <class Visit>
  void for_each_element(Visit&& visit) const {
    const simdjson::dom::array arr = e_.get_array().value_unsafe();
    std::size_t i = 0;
    for (const element x : arr) visit(i++, SimdValue(x));
  }

 private:
  // Throws needs_tree when a key of `obj` repeats. O(members^2).
  static void check_unique_keys(const simdjson::dom::object& obj) {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      for (auto later = it; ++later != obj.end();) {
        if ((*later).key == (*it).key) throw needs_tree{};
      }
    }
  }

  element e_;
  bool unique_ = false;  // the keys were checked (with_unique_keys)
};

// The checked accessors of checked_access.hpp for a SimdValue: the same checks and errors; a
// member is returned by value (std::optional for an optional one), a string as a view into the
// document. Each throws needs_tree where SimdValue's members do.

// check_text (tensor_meta.hpp) for a SimdValue: throws needs_tree for a `text` read from `j`
// that nlohmann decodes differently (simdjson_plain), so that the tree reads it. O(size).
inline void check_text(const SimdValue& /*j*/, std::string_view text) {
  if (!simdjson_plain(text)) throw needs_tree{};
}

// fetch_fields (checked_access.hpp) for a SimdValue: SimdValue::fetch.
template <std::size_t N>
SimdValue fetch_fields(const SimdValue& obj, const std::array<std::string_view, N>& keys,
                       std::array<std::optional<SimdValue>, N>& out) {
  return obj.fetch(keys, out);
}

// A required field of an object. O(members).
inline SimdValue field(const SimdValue& obj, const Path& path, std::string_view key) {
  expect_object(obj, path);
  std::optional<SimdValue> v = obj.find(key);
  if (!v) throw serialization_error(path, "missing required field '" + std::string(key) + "'");
  return *v;
}
// An optional field: nothing when absent (a null value counts as present). O(members).
inline std::optional<SimdValue> opt_field(const SimdValue& obj, const Path& path,
                                          std::string_view key) {
  expect_object(obj, path);
  return obj.find(key);
}
inline std::string_view get_string(const SimdValue& j, const Path& path) {
  if (!j.is_string()) throw serialization_error(path, "expected a string, got " + type_of(j));
  return j.str();
}
// The one member of a union object (the current form or the legacy one, see checked_access.hpp):
// its tag, a view into the document, and its value. O(members^2).
inline std::pair<std::string_view, std::optional<SimdValue>> union_member(const SimdValue& j,
                                                                          const Path& path) {
  expect_object(j, path);
  std::pair<std::string_view, std::optional<SimdValue>> out;
  if (j.size() == 1) {  // the current form: no key to compare
    const simdjson::dom::key_value_pair kv = *j.raw().get_object().value_unsafe().begin();
    if (kv.value.type() == SimdValue::element_type::NULL_VALUE) {
      throw serialization_error(path, "union has no member set");
    }
    out.first = kv.key;
    out.second = SimdValue(kv.value);
    return out;
  }
  j.for_each_member([&](std::string_view key, const SimdValue& value) {
    if (value.is_null()) return;
    if (out.second) {
      throw serialization_error(path, "union has more than one member set ('" +
                                          std::string(out.first) + "' and '" + std::string(key) +
                                          "')");
    }
    out.first = key;
    out.second = value;
  });
  if (!out.second) throw serialization_error(path, "union has no member set");
  return out;
}
template <class Visit>
void for_each_member(const SimdValue& j, Visit&& visit) {
  j.for_each_member(std::forward<Visit>(visit));
}
template <class Visit>
void for_each_element(const SimdValue& j, Visit&& visit) {
  j.for_each_element(std::forward<Visit>(visit));
}

// Writes `j` as ordered_json::dump() writes the tree of the same text. Throws needs_tree for an
// object with a repeated key, nlohmann::json::type_error 316 for invalid UTF-8 (as dump()), and
// std::bad_alloc. O(size of `j`).
inline void write_json(JsonText& out, const SimdValue& j) {
  using element_type = SimdValue::element_type;
  switch (j.type()) {
    case element_type::NULL_VALUE: out.null(); return;
    case element_type::BOOL: out.boolean(j.boolean()); return;
    case element_type::INT64: out.integer(j.int64()); return;
    case element_type::UINT64: out.value(ojson(j.uint64())); return;
    case element_type::DOUBLE: out.value(ojson(j.number())); return;
    case element_type::STRING: out.string(j.str()); return;
    case element_type::ARRAY: {
      out.raw('[');
      j.for_each_element([&](std::size_t i, const SimdValue& x) {
        if (i != 0) out.raw(',');
        write_json(out, x);
      });
      out.raw(']');
      return;
    }
    case element_type::OBJECT: {
      out.raw('{');
      bool first = true;
      j.for_each_member([&](std::string_view key, const SimdValue& x) {
        if (!first) out.raw(',');
        first = false;
        out.key(key);
        write_json(out, x);
      });
      out.raw('}');
      return;
    }
    default: out.value(ojson(j.number())); return;
  }
}

}  // namespace epgraph::json::detail

#endif  // EPGRAPH_JSON_HAS_SIMDJSON
