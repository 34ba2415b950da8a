// Symbols replaced by expressions in every symbolic expression of a node value (specialize's
// fixed symbols, the replacements an asserted equality makes in propagate_meta).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "../../error.hpp"
#include "../../ir/symbolic.hpp"
#include "../../ir/tensor.hpp"
#include "../../ir/value.hpp"
#include "infer_meta/meta_context.hpp"

namespace epgraph {
namespace detail {

// Substitutes `values` (symbol name -> expression) into every expression of a node value, each
// re-simplified (with `ranges` when not null, else with the symbols' assumptions only, as
// sympy's xreplace does) and written in ctx's form: a SymInt with its hint under ctx's hints
// (or the one it had, after keep_hints()),
// a SymBool or SymFloat keeping its hint, a constant as a plain number. `learn` teaches ctx the
// hints of a value's expressions first. The referenced objects must outlive it. Throws
// value_error as sym::parse does, and "Cannot specialize: the size '...' becomes the fraction
// ..." for a size that stops being an integer. O(size of the value * substituted size).
class ValueSubstituter {
 public:
  ValueSubstituter(const MetaContext& ctx,
                   const std::map<std::string, sym::Expr, std::less<>>& values,
                   const sym::Ranges* ranges)
      : ctx_(ctx), values_(values), ranges_(ranges), condition_ranges_(ranges) {}
  // Keeps each SymInt's hint as it was (an expression without one stays without), rather than
  // evaluating the result under ctx's hints: torch's SymNode keeps the hint it was made with, so
  // a size computed through an unbacked symbol has none after the replacement too.
  void keep_hints() noexcept { keep_hints_ = true; }
  // The ranges a SymBool's condition is decided with (default: those of the constructor).
  // specialize passes the backed symbols' ranges only: an unbacked symbol's range comes from
  // the runtime asserts on it, so deciding their conditions with it would remove the checks
  // that make it hold.
  void set_condition_ranges(const sym::Ranges* ranges) noexcept { condition_ranges_ = ranges; }

  // Teaches ctx the symbols' export-time values from every expression with a hint.
  void learn(const NodeValue& v) {
    if (const TensorMeta* t = v.tensor()) {
      for (const SymInt& s : t->sizes) learn(s);
      for (const SymInt& s : t->strides) learn(s);
      learn(t->storage_offset);
    } else if (const NodeValue::List* l = v.elements()) {
      for (const NodeValue& x : *l) learn(x);
    } else if (const SymIntValue* si = v.sym_int()) {
      learn(si->value);
    }
  }

  [[nodiscard]] NodeValue apply(const NodeValue& v) {
    if (const TensorMeta* t = v.tensor()) {
      TensorMeta out = *t;
      for (SymInt& s : out.sizes) s = apply(s);
      for (SymInt& s : out.strides) s = apply(s);
      out.storage_offset = apply(out.storage_offset);
      return NodeValue(std::move(out));
    }
    if (const NodeValue::List* l = v.elements()) {
      NodeValue::List out;
      out.reserve(l->size());
      for (const NodeValue& x : *l) out.push_back(apply(x));
      return NodeValue(std::move(out));
    }
    if (const SymIntValue* si = v.sym_int()) {
      const SymInt r = apply(SymInt(si->value));
      SymIntValue out;
      if (const auto* i = std::get_if<std::int64_t>(&r)) {
        out.value = *i;
      } else {
        out.value = std::get<SymExpr>(r);
      }
      return NodeValue(out);
    }
    if (const SymBoolValue* sb = v.sym_bool()) {
      const auto* e = std::get_if<SymExpr>(&sb->value);
      if (e == nullptr) return v;
      const sym::Expr x =
          sym::substitute(ctx_.parse(e->expr, std::nullopt), values_, condition_ranges_);
      SymBoolValue out;
      if (const auto b = x.as_boolean()) {
        out.value = *b;
      } else {
        out.value = SymExpr{ctx_.text(x), e->hint};
      }
      return NodeValue(out);
    }
    if (const SymFloatValue* sf = v.sym_float()) {
      const auto* e = std::get_if<SymExpr>(&sf->value);
      if (e == nullptr) return v;
      const sym::Expr x = sym::substitute(ctx_.parse(e->expr, std::nullopt), values_, ranges_);
      SymFloatValue out;
      if (const auto c = x.constant()) {
        out.value = static_cast<double>(c->num()) / static_cast<double>(c->den());
      } else {
        out.value = SymExpr{ctx_.text(x), e->hint};
      }
      return NodeValue(out);
    }
    return v;
  }

  [[nodiscard]] SymInt apply(const SymInt& s) {
    const auto* e = std::get_if<SymExpr>(&s);
    if (e == nullptr) return s;
    const sym::Expr x = sym::substitute(ctx_.parse(e->expr, std::nullopt), values_, ranges_);
    if (x.is_constant() && !x.as_integer()) {
      throw value_error("Cannot specialize: the size '" + e->expr + "' becomes the fraction " +
                        sym::str(x));
    }
    if (keep_hints_ && !x.as_integer()) return SymExpr{ctx_.text(x), e->hint};
    return ctx_.render(x);  // in the form of the text just read
  }

 private:
  void learn(const SymInt& s) {
    if (const auto* e = std::get_if<SymExpr>(&s)) (void)ctx_.parse(e->expr, e->hint);
  }

  const MetaContext& ctx_;
  const std::map<std::string, sym::Expr, std::less<>>& values_;
  const sym::Ranges* ranges_;
  const sym::Ranges* condition_ranges_;
  bool keep_hints_ = false;
};

}  // namespace detail
}  // namespace epgraph
