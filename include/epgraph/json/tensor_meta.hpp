// Reading and writing TensorMeta and SymInt/SymFloat/SymBool records of the schema.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "../detail/string_set.hpp"
#include "../error.hpp"
#include "../ir/symbolic.hpp"
#include "../ir/tensor.hpp"
#include "detail/checked_access.hpp"
#include "detail/tree.hpp"
#include "error.hpp"

namespace epgraph::json {

namespace detail {

// The expression texts one load has already checked with sym::parse: a program with a dynamic
// dimension repeats a few texts (`Symbol('s70', positive=True, integer=True)`, its multiples) in
// most of its tensor values, and parsing each occurrence again was 16% of loading a decoder
// (bench/README.md, "Symbolic sizes on simdjson's path").
using CheckedExprs = epgraph::detail::StringSet;

// A text read from `j` (`text`): nothing to check in the tree; the SimdValue overload
// (simd_value.hpp) throws needs_tree for a text simdjson and nlohmann decode differently.
template <class J>
void check_text(const J& /*j*/, std::string_view /*text*/) noexcept {}

// The SymExpr {"expr_str": ..., "hint": ...} at `p` (the value of an `as_expr` member), its text
// checked the way torch.export.load checks it (sympy.sympify in deserialize_sym_int): text
// sym::parse cannot read is refused, naming `p`.expr_str ("...expr_str: cannot read the symbolic
// expression 's0 +* 2': ..."). A hint is {"as_int": n} (a bare integer is refused: torch never
// wrote one, and its loader fails on it); any other hint member is refused when `int_hint_only`,
// else left out (a SymFloat's or SymBool's hint, which the node record keeps for saving). With
// `checked`, a text found there is not parsed again, and a text that parses is added. J: the
// tree (ordered_json) or simdjson's document (SimdValue), with the same values and errors.
// O(length of the text).
template <class J>
SymExpr sym_expr_from_json_at(const J& value, const Path& p, bool int_hint_only,
                              CheckedExprs* checked = nullptr) {
  static constexpr std::array<std::string_view, 2> keys = {"expr_str", "hint"};
  expect_object(value, p);
  std::array<member_ref<J>, keys.size()> f{};
  const auto& obj = fetch_fields(value, keys, f);
  SymExpr e;
  const Path ep = at_key(p, "expr_str");
  const auto& text = get_string(required(f[0], p, "expr_str"), ep);
  check_text(obj, text);
  e.expr = text;
  if (checked == nullptr || !checked->contains(e.expr)) {
    try {
      (void)sym::parse(e.expr);
    } catch (const value_error& error) {
      throw serialization_error(ep, error.what());
    }
    if (checked != nullptr) (void)checked->insert(e.expr);
  }
  if (const member_ref<J>& hint = f[1]; hint && !hint->is_null()) {
    const Path hp = at_key(p, "hint");
    if (hint->is_number_integer()) {
      // every schema version writes the SymExprHint union; torch.export.load fails on a bare
      // integer (it reads hint.type), so a file with one was not written by torch
      throw serialization_error(hp, "expected a SymExprHint union such as {\"as_int\": " +
                                        std::to_string(get_int(*hint, hp)) +
                                        "}, got a bare integer");
    }
    const auto hm_hv = union_member(*hint, hp);
    if (hm_hv.first == "as_int") {
      e.hint = get_int(*hm_hv.second, at_key(hp, hm_hv.first));
    } else if (int_hint_only) {
      throw serialization_error(
          hp, "unsupported symbolic size hint '" + std::string(hm_hv.first) + "'");
    }
  }
  return e;
}

template <class J>
SymInt sym_int_from_json_at(const J& j, const Path& path, CheckedExprs* checked = nullptr) {
  if (j.is_number_integer()) return get_int(j, path);
  const auto member_value = union_member(j, path);
  const auto& member = member_value.first;
  const Path p = at_key(path, member);
  if (member == "as_int") return get_int(*member_value.second, p);
  if (member == "as_expr") return sym_expr_from_json_at(*member_value.second, p, true, checked);
  unknown_member(path, member);
}

}  // namespace detail

/// Reads a schema `SymInt` union ({"as_int": 3} or {"as_expr": {"expr_str": "s0", "hint": ...}});
/// the legacy form (all members, unused null) and a bare integer (legacy storage_offset) are
/// accepted. Throws serialization_error naming `path` for a wrong type or an unknown member, and
/// naming its `expr_str` for a text that is not a symbolic expression torch writes (sym::parse).
template <class J>
[[nodiscard]] SymInt sym_int_from_json(const J& j, const std::string& path) {
  return detail::sym_int_from_json_at(j, detail::Path(path));
}

/// Writes a SymInt as the schema's union. The tree is built so that destroying it never
/// allocates (see detail/tree.hpp). Throws std::bad_alloc. O(length of the expression).
[[nodiscard]] inline nlohmann::ordered_json sym_int_to_json(const SymInt& s) {
  if (const auto* i = std::get_if<std::int64_t>(&s)) return detail::object_of("as_int", *i);
  const auto& e = std::get<SymExpr>(s);
  nlohmann::ordered_json expr = detail::object_of("expr_str", e.expr, "hint", nullptr);
  if (e.hint) expr["hint"] = detail::object_of("as_int", *e.hint);
  return detail::object_of("as_expr", std::move(expr));
}

namespace detail {

// Whether `d` is a ScalarType value torch 2.13's deserializer maps to a dtype: a known one, not
// 0 (UNKNOWN, which torch refuses with "KeyError: 0"). No allocation. O(1).
[[nodiscard]] inline bool known_scalar_type(std::int64_t d) noexcept {
  return d > 0 && d <= 64 && !dtype_name(static_cast<dtype>(d)).empty();
}

// Whether `l` is a Layout value torch 2.13's deserializer maps to a layout (0..7). O(1).
[[nodiscard]] inline bool known_layout(std::int64_t l) noexcept { return l >= 0 && l <= 7; }

// Whether `e` is a MemoryFormat value torch 2.13's deserializer maps to a memory format (0..4).
// O(1).
[[nodiscard]] inline bool known_memory_format(std::int64_t e) noexcept { return e >= 0 && e <= 4; }

// Throws serialization_error "<path>: unknown ScalarType <d>" unless known_scalar_type(d): the
// one spelling of that refusal, for the reader (TensorMeta.dtype, as_scalar_type) and the
// writer alike. `path` is the dtype's own path. O(1).
inline void check_scalar_type(std::int64_t d, const Path& path) {
  if (!known_scalar_type(d))
    throw serialization_error(path, "unknown ScalarType " + std::to_string(d));
}

// Throws serialization_error "<path>: unknown Layout <l>" unless known_layout(l) (torch's
// deserializer has no entry for it). `path` is the layout's own path. O(1).
inline void check_layout(std::int64_t l, const Path& path) {
  if (!known_layout(l)) throw serialization_error(path, "unknown Layout " + std::to_string(l));
}

// torch's numel check (c10::safe_compute_numel): true when every size is concrete and their
// product, taken in order as unsigned 64-bit integers, overflows at some step or exceeds int64.
// So [0, 2^62, 2^62] passes and [2^62, 2^62, 0] does not, as in torch. No allocation. O(rank).
inline bool numel_overflows(const std::vector<SymInt>& sizes) noexcept {
  std::uint64_t numel = 1;
  bool overflow = false;
  for (const SymInt& x : sizes) {
    const auto* v = std::get_if<std::int64_t>(&x);
    if (v == nullptr) return false;
    const auto size = static_cast<std::uint64_t>(*v);
    if (size != 0 && numel > std::numeric_limits<std::uint64_t>::max() / size) overflow = true;
    numel *= size;  // unsigned: wraps as c10's does; the flag records it
  }
  return overflow || numel > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
}

// The checks torch makes when it builds a value's fake tensor from its metadata
// (`torch.empty_strided(sizes, strides)` and `torch.device` in deserialize_tensor_meta), with
// torch's messages: as many strides as sizes, no negative size ("Trying to create tensor with
// negative dimension -3: [2, -3]", at the size), no negative device index ("Device index must
// not be negative"), no element count beyond int64 ("numel: integer multiplication overflow",
// at the sizes). A storage offset that is negative is refused too, with torch's as_strided
// message: torch's deserializer drops the offset (its fake tensor has offset 0), but epgraph
// keeps it, and no tensor can have a negative one. Symbolic sizes and offsets are not checked.
// The dtype and layout are checked first (check_scalar_type, check_layout), in the order the
// reader meets them, so that a writer calling this refuses with the message a load would give.
// O(rank).
inline void check_tensor_meta(const TensorMeta& m, const Path& path) {
  check_scalar_type(static_cast<std::int64_t>(m.dtype), at_key(path, "dtype"));
  check_layout(static_cast<std::int64_t>(m.layout), at_key(path, "layout"));
  if (m.strides.size() != m.sizes.size()) {
    throw serialization_error(path, "dimensionality of sizes (" + std::to_string(m.sizes.size()) +
                                        ") must match dimensionality of strides (" +
                                        std::to_string(m.strides.size()) + ")");
  }
  for (std::size_t i = 0; i < m.sizes.size(); ++i) {
    const auto* s = std::get_if<std::int64_t>(&m.sizes[i]);
    if (s == nullptr || *s >= 0) continue;
    std::string shown;
    for (const SymInt& x : m.sizes) {
      shown += shown.empty() ? "[" : ", ";
      const auto* v = std::get_if<std::int64_t>(&x);
      shown += v != nullptr ? std::to_string(*v) : std::get<SymExpr>(x).expr;
    }
    throw serialization_error(at_index(at_key(path, "sizes"), i),
                              "Trying to create tensor with negative dimension " +
                                  std::to_string(*s) + ": " + shown + "]");
  }
  if (numel_overflows(m.sizes)) {
    std::string shown;
    for (const SymInt& x : m.sizes) {
      shown += (shown.empty() ? "[" : ", ") + std::to_string(std::get<std::int64_t>(x));
    }
    throw serialization_error(at_key(path, "sizes"),
                              "numel: integer multiplication overflow (sizes " + shown + "])");
  }
  if (m.device.index && *m.device.index < 0) {
    throw serialization_error(at_key(at_key(path, "device"), "index"),
                              "Device index must not be negative");
  }
  if (const auto* o = std::get_if<std::int64_t>(&m.storage_offset); o != nullptr && *o < 0) {
    throw serialization_error(at_key(path, "storage_offset"),
                              "Tensor: invalid storage offset " + std::to_string(*o));
  }
}

// (`checked`: see sym_expr_from_json_at. J: the tree or simdjson's document, as there.) The fields
// are read in one pass and checked in the order below, so both give the same first error.
template <class J>
TensorMeta tensor_meta_from_json_at(const J& j, const Path& path, CheckedExprs* checked = nullptr) {
  static constexpr std::array<std::string_view, 7> keys = {
      "dtype", "sizes", "strides", "requires_grad", "device", "storage_offset", "layout"};
  expect_object(j, path);
  std::array<member_ref<J>, keys.size()> f{};
  (void)fetch_fields(j, keys, f);
  TensorMeta m;
  const Path dp = at_key(path, "dtype");
  const std::int64_t d = get_int(required(f[0], path, "dtype"), dp);
  check_scalar_type(d, dp);
  m.dtype = static_cast<dtype>(d);
  auto sym_ints = [&](const auto& member, std::string_view key, std::vector<SymInt>& out) {
    const Path lp = at_key(path, key);
    const auto& list = expect_array(required(member, path, key), lp);
    out.reserve(list.size());
    for_each_element(list, [&](std::size_t i, const auto& x) {
      out.push_back(sym_int_from_json_at(x, at_index(lp, i), checked));
    });
  };
  sym_ints(f[1], "sizes", m.sizes);
  sym_ints(f[2], "strides", m.strides);
  m.requires_grad = get_bool(required(f[3], path, "requires_grad"), at_key(path, "requires_grad"));
  const Path devp = at_key(path, "device");
  const auto& dev = expect_object(required(f[4], path, "device"), devp);
  static constexpr std::array<std::string_view, 2> device_keys = {"type", "index"};
  std::array<member_ref<J>, device_keys.size()> df{};
  const auto& dev_obj = fetch_fields(dev, device_keys, df);
  const auto& type = get_string(required(df[0], devp, "type"), at_key(devp, "type"));
  check_text(dev_obj, type);
  m.device.type = type;
  if (const member_ref<J>& idx = df[1]; idx && !idx->is_null()) {
    m.device.index = get_int(*idx, at_key(devp, "index"));
  }
  m.storage_offset = sym_int_from_json_at(required(f[5], path, "storage_offset"),
                                          at_key(path, "storage_offset"), checked);
  const Path lp = at_key(path, "layout");
  const std::int64_t l = get_int(required(f[6], path, "layout"), lp);
  check_layout(l, lp);
  m.layout = static_cast<Layout>(l);
  check_tensor_meta(m, path);
  return m;
}

}  // namespace detail

/// Reads a schema `TensorMeta` object ({dtype, sizes, requires_grad, device, strides,
/// storage_offset, layout}) found at JSON path `path` (used in error messages). Accepts the 7.x/8.x
/// forms and the legacy 2.x form (union members written with nulls, bare-integer storage_offset).
/// Throws serialization_error "<path>.<field>: ..." for a missing field, a wrong type, an unknown
/// union member or an unknown dtype/layout value, and "<path>: dimensionality of sizes (2) must
/// match dimensionality of strides (1)", "<path>.storage_offset: Tensor: invalid storage offset
/// -1" for metadata no tensor can have (torch's own messages; see check_tensor_meta). Mirrors
/// `deserialize_tensor_meta` (torch/_export/serde/serialize.py). O(rank).
template <class J>
[[nodiscard]] TensorMeta tensor_meta_from_json(const J& j, std::string_view path) {
  return detail::tensor_meta_from_json_at(j, detail::Path(path));
}

/// Writes a TensorMeta as the schema's `TensorMeta` object, fields in torch's order. O(rank).
/// Mirrors `serialize_tensor_meta` (torch/_export/serde/serialize.py). The tree is built so that
/// destroying it never allocates (see detail/tree.hpp). Throws std::bad_alloc.
[[nodiscard]] inline nlohmann::ordered_json tensor_meta_to_json(const TensorMeta& m) {
  using ojson = nlohmann::ordered_json;
  auto list = [](const auto& values) {
    ojson a = ojson::array();
    detail::JsonDisposer guard(a);
    auto& elements = a.get_ref<ojson::array_t&>();
    elements.reserve(values.size());
    for (const auto& s : values) elements.push_back(sym_int_to_json(s));
    guard.release();
    return a;
  };
  detail::Tree device(detail::object_of("type", m.device.type, "index", nullptr));
  if (m.device.index) (*device)["index"] = *m.device.index;
  detail::Tree sizes(list(m.sizes));
  detail::Tree strides(list(m.strides));
  detail::Tree offset(sym_int_to_json(m.storage_offset));
  return detail::object_of("dtype", static_cast<std::int32_t>(m.dtype), "sizes", sizes.take(),
                           "requires_grad", m.requires_grad, "device", device.take(), "strides",
                           strides.take(), "storage_offset", offset.take(), "layout",
                           static_cast<std::int32_t>(m.layout));
}

}  // namespace epgraph::json
