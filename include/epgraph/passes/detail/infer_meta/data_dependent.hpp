// infer_meta rules of the data-dependent ops, whose sizes or values are new unbacked symbols:
// nonzero and argwhere (the number of elements found), item and _local_scalar_dense (the value).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cmath>
#include <limits>

#include "shapes.hpp"

namespace epgraph {
namespace detail {
namespace infer {

// The name of `s` when it is one symbol that is not a backed size (`u0`, `zuf0`; not `s0`), the
// form of an unbacked symbol torch stores: the node's stored value is reused so that a program
// torch wrote is checked against its own symbols.
inline std::optional<std::string> lone_unbacked(const Context& ctx, const SymExpr& s) {
  const sym::Expr e = ctx.symbols().parse(s.expr, std::nullopt);
  const std::vector<std::string> names = e.free_symbols();
  if (names.size() != 1 || names[0].empty() || names[0][0] == 's') return std::nullopt;
  if (sym::str(e) != names[0]) return std::nullopt;  // an expression of it, not the symbol
  return names[0];
}

// nonzero / argwhere: int64 [n, rank] with strides [1, n] (torch's meta: column-major), n an
// unbacked symbol in [0, numel] (FakeTensorMode's nonzero, torch/_subclasses/fake_impls.py);
// two calls on the same input node share n, as FakeTensor's nonzero_memo makes them.
inline NodeValue rule_nonzero(const Context& ctx) {
  const TensorMeta& self = ctx.tensor("self");
  std::optional<std::string> stored;
  if (const TensorMeta* t = ctx.node().meta().val.tensor(); t && t->sizes.size() == 2) {
    if (const SymExpr* e = std::get_if<SymExpr>(&t->sizes[0])) stored = lone_unbacked(ctx, *e);
  }
  sym::Expr numel(1);
  for (const SymInt& s : self.sizes) numel = numel * ctx.ex(s);
  sym::SymbolRange range{std::int64_t{0}, std::nullopt};
  if (const auto n = numel.as_integer()) {
    range.max_val = *n;
  } else if (const double hi = sym::bounds(numel, ctx.ranges()).hi;
             std::isfinite(hi) && hi < 9.2e18) {
    range.max_val = static_cast<std::int64_t>(hi);
  }
  const Node* input = ctx.arg("self").node();
  const sym::Expr n = ctx.symbols().unbacked_symbol(input, "u", true, stored, range);
  const SymInt size = ctx.out(n);
  return make_meta(dtype::int64, {size, static_cast<std::int64_t>(self.sizes.size())},
                   {std::int64_t{1}, size}, self.device);
}

// item / _local_scalar_dense: the value of a one-element tensor, a new unbacked symbol: a SymInt
// u<k> of an integral tensor, a SymBool Eq(u<k>, 1) (u<k> in [0, 1]) of a bool one, a SymFloat
// zuf<k> of a floating one (torch's `_local_scalar_dense` fake impl). Refuses a tensor of
// another number of elements, as torch does.
inline NodeValue rule_item(const Context& ctx) {
  const TensorMeta& self = ctx.tensor("self");
  sym::Expr numel(1);
  for (const SymInt& s : self.sizes) numel = numel * ctx.ex(s);
  if (const auto n = numel.as_integer(); n && *n != 1) {
    ctx.fail("a Tensor with " + std::to_string(*n) + " elements cannot be converted to Scalar");
  }
  if (is_complex(self.dtype)) ctx.cannot("epgraph has no symbolic complex numbers");
  const NodeValue& v = ctx.node().meta().val;
  std::optional<std::string> stored;
  const bool floating = is_floating(self.dtype);
  const bool boolean = self.dtype == dtype::bool_;
  if (const SymIntValue* i = v.sym_int(); i && !floating && !boolean) {
    if (const SymExpr* e = std::get_if<SymExpr>(&i->value)) stored = lone_unbacked(ctx, *e);
  } else if (const SymFloatValue* f = v.sym_float(); f && floating) {
    if (const SymExpr* e = std::get_if<SymExpr>(&f->value)) stored = lone_unbacked(ctx, *e);
  } else if (const SymBoolValue* b = v.sym_bool(); b && boolean) {
    if (const SymExpr* e = std::get_if<SymExpr>(&b->value)) {
      const std::vector<std::string> names =
          ctx.symbols().parse(e->expr, std::nullopt).free_symbols();
      if (names.size() == 1 && !names[0].empty() && names[0][0] != 's') stored = names[0];
    }
  }
  if (floating) {
    const sym::Expr z =
        ctx.symbols().unbacked_symbol(nullptr, "zuf", false, stored, sym::SymbolRange{});
    SymExpr x;
    x.expr = ctx.symbols().text(z);
    return SymFloatValue{std::move(x)};
  }
  if (boolean) {
    const sym::Expr u = ctx.symbols().unbacked_symbol(
        nullptr, "u", true, stored, sym::SymbolRange{std::int64_t{0}, std::int64_t{1}});
    SymExpr x;
    x.expr = ctx.symbols().text(sym::eq(u, sym::Expr(1), ctx.ranges()));
    return SymBoolValue{std::move(x)};
  }
  return SymIntValue{
      ctx.out(ctx.symbols().unbacked_symbol(nullptr, "u", true, stored, sym::SymbolRange{}))};
}

}  // namespace infer
}  // namespace detail
}  // namespace epgraph
