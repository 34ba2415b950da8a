// Shared pieces of the JSON reader and writer: enum names, field names, value kinds.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// Checked access to parsed JSON values with exact error paths. Internal to epgraph::json.

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../../detail/strings.hpp"
#include "../error.hpp"

namespace epgraph::json::detail {

using ojson = nlohmann::ordered_json;

// A JSON path ("graph_module.graph.nodes[3].inputs[0]") that is spelled out only when an error
// names it: the reader descends into every value with one, and building the text eagerly was
// costly (bench/README.md, json_load). A Path is a text or a key or index below a parent Path that
// must outlive it (name child paths of temporaries before keeping them); the text and keys it views
// must outlive it too. Converts to the std::string it spells.
class Path {
 public:
  Path(const char* text) : text_(text) {}         // NOLINT: implicit, like a string
  Path(const std::string& text) : text_(text) {}  // NOLINT
  Path(std::string_view text) : text_(text) {}    // NOLINT
  operator std::string() const { return str(); }  // NOLINT

  [[nodiscard]] std::string str() const {
    std::string out;
    append_to(out);
    return out;
  }

 private:
  friend Path at_key(const Path& parent, std::string_view key);
  friend Path at_index(const Path& parent, std::size_t i);
  enum class Kind : unsigned char { text, key, index };
  Path(const Path* parent, Kind kind, std::string_view key, std::size_t index)
      : parent_(parent), kind_(kind), text_(key), index_(index) {}

  void append_to(std::string& out) const {
    if (parent_ != nullptr) parent_->append_to(out);
    switch (kind_) {
      case Kind::text: out.append(text_); break;
      case Kind::key:
        if (!out.empty()) out.push_back('.');
        out.append(text_);
        break;
      case Kind::index: out.append("[").append(std::to_string(index_)).append("]"); break;
    }
  }

  const Path* parent_ = nullptr;
  Kind kind_ = Kind::text;
  std::string_view text_;
  std::size_t index_ = 0;
};

// `path.key` (just `key` under the empty path).
inline Path at_key(const Path& parent, std::string_view key) {
  return Path(&parent, Path::Kind::key, key, 0);
}
// `path[i]`.
inline Path at_index(const Path& parent, std::size_t i) {
  return Path(&parent, Path::Kind::index, {}, i);
}

template <class J>
std::string type_of(const J& j) {
  if (j.is_number_integer()) return "integer";
  if (j.is_number_float()) return "number";
  return j.type_name();
}

template <class J>
const J& expect_object(const J& j, const Path& path) {
  if (!j.is_object()) throw serialization_error(path, "expected an object, got " + type_of(j));
  return j;
}
template <class J>
const J& expect_array(const J& j, const Path& path) {
  if (!j.is_array()) throw serialization_error(path, "expected an array, got " + type_of(j));
  return j;
}

// A required field of an object.
template <class J>
const J& field(const J& obj, const Path& path, std::string_view key) {
  expect_object(obj, path);
  auto it = obj.find(key);
  if (it == obj.end()) {
    throw serialization_error(path, "missing required field '" + std::string(key) + "'");
  }
  return *it;
}
// An optional field: nullptr when absent (a null value counts as present).
template <class J>
const J* opt_field(const J& obj, const Path& path, std::string_view key) {
  expect_object(obj, path);
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

template <class J>
std::int64_t get_int(const J& j, const Path& path) {
  if (j.is_number_integer()) {
    if (j.is_number_unsigned() &&
        j.template get<std::uint64_t>() >
            static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
      throw serialization_error(path, "integer out of int64 range");
    }
    return j.template get<std::int64_t>();
  }
  if (j.is_number_float()) {
    // JSON has one number type: an integer beyond uint64 (2**64) reaches here as a float
    const double d = j.template get<double>();
    if (d == std::floor(d) && std::abs(d) >= 9.2e18) {
      throw serialization_error(path, "integer out of int64 range");
    }
  }
  throw serialization_error(path, "expected an integer, got " + type_of(j));
}
template <class J>
const std::string& get_string(const J& j, const Path& path) {
  if (!j.is_string()) throw serialization_error(path, "expected a string, got " + type_of(j));
  return j.template get_ref<const std::string&>();
}
// A float: a JSON number or torch's "Infinity" / "-Infinity" / "NaN" strings.
template <class J>
double get_float(const J& j, const Path& path) {
  if (j.is_number()) return j.template get<double>();
  if (j.is_string()) {
    const std::string_view s = get_string(j, path);
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
  }
  throw serialization_error(path, "expected a number, got " + type_of(j));
}
template <class J>
bool get_bool(const J& j, const Path& path) {
  if (!j.is_boolean()) throw serialization_error(path, "expected a boolean, got " + type_of(j));
  return j.template get<bool>();
}

// The one member of a union object: its tag (a view of the key in `j`, valid while `j` is) and
// its value. Accepts the current form (one member) and the legacy form (every member present,
// the unused ones null).
template <class J>
std::pair<std::string_view, const J*> union_member(const J& j, const Path& path) {
  expect_object(j, path);
  const J* value = nullptr;
  std::string_view key;
  for (auto it = j.begin(); it != j.end(); ++it) {
    if (it.value().is_null()) continue;
    if (value != nullptr) {
      throw serialization_error(path, "union has more than one member set ('" + std::string(key) +
                                          "' and '" + it.key() + "')");
    }
    key = it.key();
    value = &it.value();
  }
  if (value == nullptr) throw serialization_error(path, "union has no member set");
  return {key, value};
}

// Calls visit(key, value) for each member of the object `j` in order (key a std::string_view).
// The SimdValue overload (simd_value.hpp) has the same contract.
template <class Visit>
void for_each_member(const ojson& j, Visit&& visit) {
  for (auto it = j.begin(); it != j.end(); ++it) visit(std::string_view(it.key()), it.value());
}
// Calls visit(index, value) for each element of the array `j` in order.
template <class Visit>
void for_each_element(const ojson& j, Visit&& visit) {
  std::size_t i = 0;
  for (const ojson& x : j) visit(i++, x);
}

// The members `keys` (distinct) of the object `obj`, each into `out` at its key's index (nullptr
// when absent); returns the object, to be read further. The SimdValue overload (simd_value.hpp)
// reads them in one pass and returns the object with its keys checked. O(members x N).
template <std::size_t N>
const ojson& fetch_fields(const ojson& obj, const std::array<std::string_view, N>& keys,
                          std::array<const ojson*, N>& out) {
  for (std::size_t k = 0; k < N; ++k) {
    const auto it = obj.find(keys[k]);
    out[k] = it == obj.end() ? nullptr : &*it;
  }
  return obj;
}
// A member fetch_fields gave: the value; throws serialization_error at `path` when it is absent.
template <class Ref>
decltype(auto) required(const Ref& member, const Path& path, std::string_view key) {
  if (!member) throw serialization_error(path, "missing required field '" + std::string(key) + "'");
  return *member;
}

// What opt_field returns for a J: a pointer into the tree, or a SimdValue in an std::optional
// (also the member of union_member's result).
template <class J>
using member_ref =
    decltype(opt_field(std::declval<const J&>(), std::declval<const Path&>(), std::string_view()));

[[noreturn]] inline void unknown_member(const Path& path, std::string_view member) {
  throw serialization_error(path, "unknown union member '" + std::string(member) + "'");
}

// torch writes infinite and NaN floats as strings.
inline ojson float_to_json(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

// Node targets of Python's `operator` module: torch writes `_operator.mul` (the function's
// __module__), torch.fx prints and epgraph keeps `operator.mul` (Node._pretty_print_target in
// torch/fx/node.py), the spelling of the getitem nodes epgraph creates.
inline constexpr std::string_view kSerializedOperatorModule = "_operator.";
inline constexpr std::string_view kOperatorModule = "operator.";

inline std::string target_from_json(std::string_view serialized) {
  if (serialized.substr(0, kSerializedOperatorModule.size()) == kSerializedOperatorModule) {
    serialized.remove_prefix(kSerializedOperatorModule.size());
    return std::string(kOperatorModule) + std::string(serialized);
  }
  return std::string(serialized);
}
inline std::string target_to_json(std::string_view target) {
  if (target.substr(0, kOperatorModule.size()) == kOperatorModule) {
    target.remove_prefix(kOperatorModule.size());
    return std::string(kSerializedOperatorModule) + std::string(target);
  }
  return std::string(target);
}

// An operator passed as an argument (`as_operator`, e.g. with_effects' op): torch writes
// `torch.ops.aten._print.default` / `torch.ops.higher_order.print`; torch.fx prints the operator
// object, `str(op)`: `aten._print.default` / `print`. epgraph keeps the printed form.
inline constexpr std::string_view kOpsPrefix = "torch.ops.";
inline constexpr std::string_view kHigherOrderPrefix = "torch.ops.higher_order.";

inline std::string operator_arg_from_json(const std::string& serialized) {
  if (::epgraph::detail::starts_with(serialized, kHigherOrderPrefix)) {
    return serialized.substr(kHigherOrderPrefix.size());
  }
  if (::epgraph::detail::starts_with(serialized, kOpsPrefix))
    return serialized.substr(kOpsPrefix.size());
  return serialized;
}
// Inverse of operator_arg_from_json: `original` is the string read from the file (or empty), kept
// when it still names `shown`; otherwise a name without a dot is a higher-order operator, one
// starting with `torch.` is written as is, anything else gets `torch.ops.`.
inline std::string operator_arg_to_json(const std::string& shown, const std::string& original) {
  if (!original.empty() && operator_arg_from_json(original) == shown) return original;
  if (::epgraph::detail::starts_with(shown, "torch.")) return shown;
  if (shown.find('.') == std::string::npos) return std::string(kHigherOrderPrefix) + shown;
  return std::string(kOpsPrefix) + shown;
}

}  // namespace epgraph::json::detail
