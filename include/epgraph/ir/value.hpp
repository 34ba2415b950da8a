// NodeValue: what FX keeps in a node's meta["val"] (tensor, tuple/list, SymInt/SymFloat/SymBool,
// None), as metadata without data.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "argument.hpp"
#include "tensor.hpp"

namespace epgraph {

/// A SymInt value (schema `SymInt`: `as_int` or `as_expr`): an integer a node produces, concrete
/// or symbolic (`sym_size` of a dynamic dimension: `SymExpr{"s0", 4}`).
struct SymIntValue {
  std::variant<std::int64_t, SymExpr> value = std::int64_t{0};
  friend bool operator==(const SymIntValue& a, const SymIntValue& b) { return a.value == b.value; }
  friend bool operator!=(const SymIntValue& a, const SymIntValue& b) { return !(a == b); }
};
/// A SymFloat value (schema `SymFloat`: `as_float` or `as_expr`).
struct SymFloatValue {
  std::variant<double, SymExpr> value = 0.0;
  friend bool operator==(const SymFloatValue& a, const SymFloatValue& b) {
    return a.value == b.value;
  }
  friend bool operator!=(const SymFloatValue& a, const SymFloatValue& b) { return !(a == b); }
};
/// A SymBool value (schema `SymBool`: `as_bool` or `as_expr`).
struct SymBoolValue {
  std::variant<bool, SymExpr> value = false;
  friend bool operator==(const SymBoolValue& a, const SymBoolValue& b) {
    return a.value == b.value;
  }
  friend bool operator!=(const SymBoolValue& a, const SymBoolValue& b) { return !(a == b); }
};

/// FX's `node.meta["val"]` without data: unset (the key is absent), None, one tensor's metadata
/// (a fake tensor), a SymInt/SymFloat/SymBool (also a plain int/float/bool a node produces), or a
/// tuple/list of values (a multi-output op such as `aten.native_batch_norm`, read through
/// `operator.getitem`; a `Tensor[]` result such as `aten.split`). The kind is the held
/// alternative. Copyable (deep copy), equality-comparable.
class NodeValue {
 public:
  /// A tuple or list of values.
  using List = std::vector<NodeValue>;
  using Variant = std::variant<std::monostate, None, TensorMeta, SymIntValue, SymFloatValue,
                               SymBoolValue, List>;

  /// Unset: `"val" not in node.meta`.
  NodeValue() noexcept = default;
  /// One tensor's metadata. Throws std::bad_alloc.
  NodeValue(TensorMeta t) : v_(std::move(t)) {}
  /// None (e.g. an undefined optional output of a multi-output op).
  NodeValue(None) noexcept : v_(None{}) {}
  /// A SymInt (or int) value.
  NodeValue(SymIntValue s) : v_(std::move(s)) {}
  /// A SymFloat (or float) value.
  NodeValue(SymFloatValue s) : v_(std::move(s)) {}
  /// A SymBool (or bool) value.
  NodeValue(SymBoolValue s) : v_(std::move(s)) {}
  /// A tuple or list of values. Throws std::bad_alloc.
  NodeValue(List l) : v_(std::move(l)) {}

  /// True unless unset. O(1).
  [[nodiscard]] bool has_value() const noexcept { return v_.index() != 0; }
  /// The tensor metadata when the value is one tensor, else nullptr. O(1).
  [[nodiscard]] const TensorMeta* tensor() const noexcept { return std::get_if<TensorMeta>(&v_); }
  /// The tensor metadata when the value is one tensor, else nullptr (writable). O(1).
  [[nodiscard]] TensorMeta* tensor() noexcept { return std::get_if<TensorMeta>(&v_); }
  /// The elements when the value is a tuple/list, else nullptr. O(1).
  [[nodiscard]] const List* elements() const noexcept { return std::get_if<List>(&v_); }
  /// True when the value is None. O(1).
  [[nodiscard]] bool is_none() const noexcept { return std::holds_alternative<None>(v_); }
  /// The SymInt when the value is one, else nullptr. O(1).
  [[nodiscard]] const SymIntValue* sym_int() const noexcept {
    return std::get_if<SymIntValue>(&v_);
  }
  /// The SymFloat when the value is one, else nullptr. O(1).
  [[nodiscard]] const SymFloatValue* sym_float() const noexcept {
    return std::get_if<SymFloatValue>(&v_);
  }
  /// The SymBool when the value is one, else nullptr. O(1).
  [[nodiscard]] const SymBoolValue* sym_bool() const noexcept {
    return std::get_if<SymBoolValue>(&v_);
  }
  /// True for a SymInt, SymFloat or SymBool. O(1).
  [[nodiscard]] bool is_symbolic_scalar() const noexcept {
    return sym_int() != nullptr || sym_float() != nullptr || sym_bool() != nullptr;
  }
  /// The held alternative, for std::visit. O(1).
  [[nodiscard]] const Variant& variant() const noexcept { return v_; }
  /// Makes the value unset. O(size).
  void reset() noexcept { v_.emplace<std::monostate>(); }

  /// What the value is, in words ("unset", "None", "a tensor", "a SymInt", "a SymFloat",
  /// "a SymBool", "a tuple of 3 values"), for error messages. O(1).
  [[nodiscard]] std::string describe() const {
    switch (v_.index()) {
      case 0: return "unset";
      case 1: return "None";
      case 2: return "a tensor";
      case 3: return "a SymInt";
      case 4: return "a SymFloat";
      case 5: return "a SymBool";
      default: return "a tuple of " + std::to_string(elements()->size()) + " values";
    }
  }

  friend bool operator==(const NodeValue& a, const NodeValue& b) { return a.v_ == b.v_; }
  friend bool operator!=(const NodeValue& a, const NodeValue& b) { return !(a == b); }

 private:
  Variant v_;
};

/// Calls `visit(expr, field)` for each symbolic expression of `v`, in order, until one call
/// returns a non-empty string, and returns that string (else ""). `field` names where the
/// expression is: "sizes[0]", "strides[1]", "storage_offset", "SymInt", "SymFloat", "SymBool",
/// prefixed by "[i] " for an element of a list. `visit` is called as
/// `std::string(const SymExpr&, const std::string&)`. Throws what `visit` throws, and
/// std::bad_alloc. O(size of v).
template <class Visit>
[[nodiscard]] std::string find_in_sym_exprs(const NodeValue& v, const Visit& visit) {
  auto one = [&](const SymExpr* e, const std::string& field) -> std::string {
    return e == nullptr ? std::string() : visit(*e, field);
  };
  auto list = [&](const std::vector<SymInt>& sizes, const char* field) -> std::string {
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      std::string why =
          one(std::get_if<SymExpr>(&sizes[i]), std::string(field) + "[" + std::to_string(i) + "]");
      if (!why.empty()) return why;
    }
    return {};
  };
  if (const TensorMeta* t = v.tensor()) {
    std::string why = list(t->sizes, "sizes");
    if (why.empty()) why = list(t->strides, "strides");
    if (why.empty()) why = one(std::get_if<SymExpr>(&t->storage_offset), "storage_offset");
    return why;
  }
  if (const NodeValue::List* l = v.elements()) {
    for (std::size_t i = 0; i < l->size(); ++i) {
      const std::string why = find_in_sym_exprs((*l)[i], visit);
      if (!why.empty()) return "[" + std::to_string(i) + "] " + why;
    }
    return {};
  }
  if (const SymIntValue* x = v.sym_int()) return one(std::get_if<SymExpr>(&x->value), "SymInt");
  if (const SymFloatValue* x = v.sym_float()) {
    return one(std::get_if<SymExpr>(&x->value), "SymFloat");
  }
  if (const SymBoolValue* x = v.sym_bool()) return one(std::get_if<SymExpr>(&x->value), "SymBool");
  return {};
}

}  // namespace epgraph
