// infer_meta rules of the data-dependent ops, whose sizes or values are new unbacked symbols:
// nonzero and argwhere (the number of elements found), item and _local_scalar_dense (the value).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "elementwise.hpp"
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

// The value torch replaced the unbacked symbol of a data-dependent node with, when its stored
// value `stored` shows one: an integer or an expression without unbacked symbols (torch writes
// `s77` for the item of `torch._check(n == x.shape[0])`). `u` (the new symbol) then gets it as
// its replacement (MetaContext::replace), applied to every value as torch applies its own.
inline void replacement_from_stored(const Context& ctx, const sym::Expr& u, const SymInt* stored) {
  if (stored == nullptr) return;
  const std::vector<std::string> names = u.free_symbols();
  if (names.size() != 1) return;
  sym::Expr value;
  if (const auto* i = std::get_if<std::int64_t>(stored)) {
    value = sym::Expr(*i);
  } else {
    value = ctx.symbols().parse(std::get<SymExpr>(*stored).expr, std::nullopt);
    for (const std::string& s : value.free_symbols()) {
      if (sym::is_unbacked_name(s)) return;
    }
    if (value.is_boolean()) return;
  }
  (void)ctx.symbols().replace(names[0], std::move(value));
}

// The number of elements nonzero finds in `self` (the value of the node `input`): 0 when self
// is statically empty (torch returns an empty result without a symbol), else an unbacked symbol
// in [0, numel] (FakeTensorMode's nonzero, torch/_subclasses/fake_impls.py): the node's stored
// one (`stored`, a size of its stored value) when it is a lone unbacked symbol, shared by every
// nonzero of the same input node (FakeTensor's nonzero_memo).
inline SymInt nonzero_count(const Context& ctx, const TensorMeta& self, const Node* input,
                            const SymInt* stored) {
  sym::Expr numel(1);
  for (const SymInt& s : self.sizes) numel = numel * ctx.ex(s);
  if (numel.as_integer() == std::optional<std::int64_t>(0)) return std::int64_t{0};
  std::optional<std::string> reuse;
  if (const SymExpr* e = stored ? std::get_if<SymExpr>(stored) : nullptr) {
    reuse = lone_unbacked(ctx, *e);
  }
  sym::SymbolRange range{std::int64_t{0}, std::nullopt};
  if (const auto n = numel.as_integer()) {
    range.max_val = *n;
  } else if (const double hi = sym::bounds(numel, ctx.ranges()).hi;
             std::isfinite(hi) && hi < 9.2e18) {
    range.max_val = static_cast<std::int64_t>(hi);
  }
  const sym::Expr u = ctx.symbols().unbacked_symbol(input, "u", true, reuse, range);
  if (!reuse) replacement_from_stored(ctx, u, stored);
  return ctx.out(u);
}

// nonzero / argwhere: int64 [n, rank] with strides [1, n] (torch's meta: column-major), n the
// nonzero_count of `self`.
inline NodeValue rule_nonzero(const Context& ctx) {
  const TensorMeta& self = ctx.tensor("self");
  const TensorMeta* t = ctx.node().meta().val.tensor();
  const SymInt* stored = t && t->sizes.size() == 2 ? &t->sizes[0] : nullptr;
  const SymInt n = nonzero_count(ctx, self, ctx.arg("self").node(), stored);
  return make_meta(dtype::int64, {n, static_cast<std::int64_t>(self.sizes.size())},
                   {std::int64_t{1}, n}, self.device);
}

// where(condition) / nonzero_numpy(self) (nonzero(as_tuple=True)): one int64 [n] per dimension,
// the columns of nonzero's result (stride 1, storage offset i * n).
inline NodeValue rule_nonzero_tuple(const Context& ctx) {
  const char* name = ctx.has("condition") ? "condition" : "self";
  const TensorMeta& self = ctx.tensor(name);
  const NodeValue::List* l = ctx.node().meta().val.elements();
  const TensorMeta* first = l && !l->empty() ? (*l)[0].tensor() : nullptr;
  const SymInt* stored = first && first->sizes.size() == 1 ? &first->sizes[0] : nullptr;
  const SymInt n = nonzero_count(ctx, self, ctx.arg(name).node(), stored);
  NodeValue::List out;
  for (std::size_t i = 0; i < std::max<std::size_t>(self.sizes.size(), 1); ++i) {
    TensorMeta column = make_meta(dtype::int64, {n}, {std::int64_t{1}}, self.device);
    column.storage_offset = ctx.out(ctx.ex(n) * sym::Expr(static_cast<std::int64_t>(i)));
    out.emplace_back(std::move(column));
  }
  return NodeValue(std::move(out));
}

// where: the one-argument overload is nonzero(as_tuple=True), the others elementwise.
inline NodeValue rule_where(const Context& ctx, std::string_view) {
  if (!ctx.has("self")) return rule_nonzero_tuple(ctx);
  return rule_elementwise(ctx, Rule::where);
}

// item / _local_scalar_dense: the value of a one-element tensor, a new unbacked symbol: a SymInt
// u<k> of an integral tensor, a SymBool Eq(u<k>, 1) (u<k> in [0, 1]) of a bool one, a SymFloat
// zuf<k> of a floating one (torch's `_local_scalar_dense` fake impl). Refuses a tensor of
// another number of elements, as torch does. A stored SymInt that shows torch's replacement of
// its symbol (`s77 + 1`) gives the new symbol that replacement (replacement_from_stored).
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
  const sym::Expr u = ctx.symbols().unbacked_symbol(nullptr, "u", true, stored, sym::SymbolRange{});
  if (!stored) {
    if (const SymIntValue* i = v.sym_int()) replacement_from_stored(ctx, u, &i->value);
  }
  return SymIntValue{ctx.out(u)};
}

}  // namespace infer
}  // namespace detail
}  // namespace epgraph
