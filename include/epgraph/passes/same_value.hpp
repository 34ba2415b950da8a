// Comparing node values as torch compares them (symbolic sizes as expressions, under the
// program's symbol bounds) and printing them for reports: what propagate_meta's check uses.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "../error.hpp"
#include "../ir/symbolic.hpp"
#include "../ir/value.hpp"
#include "infer_meta.hpp"

namespace epgraph {

namespace detail {
namespace propagate {

// A size in the form a message shows it: the str form of its expression (with the hint).
inline std::string size_text(const SymInt& s) {
  if (const auto* v = std::get_if<std::int64_t>(&s)) return std::to_string(*v);
  const SymExpr& e = std::get<SymExpr>(s);
  std::string text = e.expr;
  try {
    text = sym::str(sym::parse(e.expr));
  } catch (const value_error&) {
    // shown as written
  }
  return e.hint ? text + "{" + std::to_string(*e.hint) + "}" : text;
}
inline std::string sizes_text(const std::vector<SymInt>& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + size_text(v[i]);
  return out + "]";
}

// Two sizes are the same when they are the same integer, or expressions that parse to the same
// canonical form (torch compares sympy expressions, not their text), each simplified under the
// symbols' bounds and axioms first: torch writes Min(16, 16*s27) for a stride its value-range
// analysis knows to be 16 (s27 >= 1). Hints must agree when both sides have one; a missing hint
// is no difference (torch writes none for a size it computed through an unbacked symbol, e.g.
// `s77` for cat([x[:u0], x[u0:]]), where epgraph knows s77's). Floor divisions are compared in
// sym::floordiv_normal_form: torch keeps (2*s6 + 1)//4 for rfft(x[:, ::2]) where epgraph
// computes s6//2.
inline bool same_size(const SymInt& a, const SymInt& b, const MetaContext& symbols) {
  if (a.index() == 0 && b.index() == 0) {
    return std::get<std::int64_t>(a) == std::get<std::int64_t>(b);
  }
  // An expression and an integer: the same when the expression is that constant under the
  // bounds (torch keeps the stride Min(16, 16*s27) where epgraph computes 16).
  if (a.index() != b.index()) {
    const SymExpr& x = std::get<SymExpr>(a.index() == 0 ? b : a);
    const std::int64_t n = std::get<std::int64_t>(a.index() == 0 ? a : b);
    try {
      const sym::Expr e = sym::simplify(symbols.parse(x.expr, std::nullopt), symbols.ranges());
      return e.as_integer() == std::optional<std::int64_t>(n);
    } catch (const value_error&) {
      return false;
    }
  }
  const SymExpr& x = std::get<SymExpr>(a);
  const SymExpr& y = std::get<SymExpr>(b);
  if (x.hint && y.hint && *x.hint != *y.hint) return false;
  if (x.expr == y.expr) return true;
  try {
    const sym::Expr ex = symbols.parse(x.expr, std::nullopt);
    const sym::Expr ey = symbols.parse(y.expr, std::nullopt);
    if (ex == ey) return true;
    const sym::Expr sx = sym::simplify(ex, symbols.ranges());
    const sym::Expr sy = sym::simplify(ey, symbols.ranges());
    // (2*s0 + 1)//4 as torch keeps it and s0//2 as epgraph computes it are the same size
    return sx == sy || sym::floordiv_normal_form(sx) == sym::floordiv_normal_form(sy);
  } catch (const value_error&) {
    return false;
  }
}
inline bool same_sizes(const std::vector<SymInt>& a, const std::vector<SymInt>& b,
                       const MetaContext& symbols) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (!same_size(a[i], b[i], symbols)) return false;
  }
  return true;
}
inline bool same_expr(const SymExpr& x, const SymExpr& y, const MetaContext& symbols) {
  return same_size(SymInt{x}, SymInt{y}, symbols);
}

}  // namespace propagate
}  // namespace detail

/// Whether two node values are the same as torch would compare them: equal, with symbolic sizes
/// and SymInt/SymBool expressions compared as expressions (canonical form and hint), not text.
/// `symbols` caches the parsed expressions. O(size of the values).
[[nodiscard]] inline bool same_value(const NodeValue& a, const NodeValue& b,
                                     const MetaContext& symbols) {
  using detail::propagate::same_expr;
  using detail::propagate::same_size;
  using detail::propagate::same_sizes;
  if (a.variant().index() != b.variant().index()) return false;
  if (const TensorMeta* x = a.tensor()) {
    const TensorMeta* y = b.tensor();
    return x->dtype == y->dtype && x->device == y->device && x->layout == y->layout &&
           x->requires_grad == y->requires_grad && same_sizes(x->sizes, y->sizes, symbols) &&
           same_sizes(x->strides, y->strides, symbols) &&
           same_size(x->storage_offset, y->storage_offset, symbols);
  }
  if (const NodeValue::List* x = a.elements()) {
    const NodeValue::List* y = b.elements();
    if (x->size() != y->size()) return false;
    for (std::size_t i = 0; i < x->size(); ++i) {
      if (!same_value((*x)[i], (*y)[i], symbols)) return false;
    }
    return true;
  }
  if (const SymIntValue* x = a.sym_int()) return same_size(x->value, b.sym_int()->value, symbols);
  if (const SymBoolValue* x = a.sym_bool()) {
    const SymBoolValue* y = b.sym_bool();
    if (x->value.index() != y->value.index()) {
      // a constant and an expression: the same when the expression folds to it (torch stores
      // the True its value ranges prove for Piecewise(...) <= 1)
      const bool constant = std::get<bool>(x->value.index() == 0 ? x->value : y->value);
      const SymExpr& e = std::get<SymExpr>(x->value.index() == 0 ? y->value : x->value);
      try {
        return sym::simplify(symbols.parse(e.expr, std::nullopt), symbols.ranges()).as_boolean() ==
               std::optional<bool>(constant);
      } catch (const value_error&) {
        return false;
      }
    }
    if (x->value.index() == 0) return x->value == y->value;
    return same_expr(std::get<SymExpr>(x->value), std::get<SymExpr>(y->value), symbols);
  }
  if (const SymFloatValue* x = a.sym_float()) {
    // expressions compare parsed (torch writes 2.0*zuf0 as Mul(Float('2.0', precision=53), ...),
    // epgraph as Mul(Integer(2), ...)); a double and an expression differ
    const SymFloatValue* y = b.sym_float();
    if (x->value.index() != y->value.index()) return false;
    if (x->value.index() == 0) return x->value == y->value;
    return same_expr(std::get<SymExpr>(x->value), std::get<SymExpr>(y->value), symbols);
  }
  return a == b;
}

/// A node value in one line, for reports: `float32[2, s0{8}] stride [s0{8}, 1] offset 0` (a
/// symbolic size in sympy's str form with its hint in braces), `SymInt 2*s0{16}`, `SymBool
/// s0 > 4`, `(float32[2] stride [1] offset 0, None)`, `unset`. O(size of the value).
[[nodiscard]] inline std::string value_text(const NodeValue& v) {
  using detail::propagate::size_text;
  using detail::propagate::sizes_text;
  if (const TensorMeta* t = v.tensor()) {
    std::string out = std::string(dtype_name(t->dtype)) + sizes_text(t->sizes) + " stride " +
                      sizes_text(t->strides) + " offset " + size_text(t->storage_offset);
    if (t->device != Device{}) out += " device " + t->device.str();
    if (t->requires_grad) out += " requires_grad";
    return out;
  }
  if (const NodeValue::List* l = v.elements()) {
    std::string out = "(";
    for (std::size_t i = 0; i < l->size(); ++i) out += (i ? ", " : "") + value_text((*l)[i]);
    return out + ")";
  }
  if (const SymIntValue* s = v.sym_int()) return "SymInt " + size_text(s->value);
  if (const SymBoolValue* s = v.sym_bool()) {
    if (const bool* b = std::get_if<bool>(&s->value)) return *b ? "SymBool True" : "SymBool False";
    return "SymBool " + size_text(SymInt{std::get<SymExpr>(s->value)});
  }
  if (const SymFloatValue* s = v.sym_float()) {
    if (const double* d = std::get_if<double>(&s->value)) return "SymFloat " + std::to_string(*d);
    return "SymFloat " + size_text(SymInt{std::get<SymExpr>(s->value)});
  }
  return v.describe();
}

}  // namespace epgraph
