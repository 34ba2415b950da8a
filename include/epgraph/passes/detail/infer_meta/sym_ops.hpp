// infer_meta rules of getitem, Python operators on SymInts and the SymInt producers
// (sym_size, sym_stride, sym_numel, sym_storage_offset) and the assertion ops.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include "shapes.hpp"

namespace epgraph {
namespace detail {
namespace infer {

inline NodeValue rule_getitem(const Context& ctx) {
  const ArgumentView args = ctx.node().args();
  if (args.size() != 2 || args[0].node() == nullptr || !args[1].is<std::int64_t>()) {
    ctx.fail("expected the arguments (node, int index)");
  }
  const Node* parent = args[0].node();
  const NodeValue& v = parent->meta().val;
  const NodeValue::List* list = v.elements();
  if (list == nullptr) {
    const std::string why = "node '" + std::string(parent->name()) +
                            "' has no tuple metadata: its meta().val is " + v.describe();
    if (!v.has_value()) ctx.cannot(why);
    ctx.fail(why);
  }
  std::int64_t i = args[1].as<std::int64_t>();
  const auto n = static_cast<std::int64_t>(list->size());
  if (i < -n || i >= n) {
    ctx.fail("index " + std::to_string(i) + " is out of range for the " + std::to_string(n) +
             " values of node '" + std::string(parent->name()) + "'");
  }
  if (i < 0) i += n;
  return (*list)[static_cast<std::size_t>(i)];
}

// The Python operator (`operator.add`, ...) a SymInt node applies, or "" for another target.
inline std::string_view python_operator(std::string_view target) noexcept {
  for (std::string_view prefix : {std::string_view("operator."), std::string_view("_operator.")}) {
    if (target.substr(0, prefix.size()) == prefix) {
      const std::string_view fn = target.substr(prefix.size());
      for (std::string_view known : {"add", "sub", "mul", "truediv", "floordiv", "mod", "neg", "eq",
                                     "ne", "lt", "le", "gt", "ge"}) {
        if (fn == known) return fn;
      }
    }
  }
  return {};
}

// The torch or math function on a SymInt/SymFloat a node applies (`torch.sym_float`,
// `math.trunc`, `math.floor`, `math.ceil`), or "" for another target.
inline std::string_view python_number_function(std::string_view target) noexcept {
  if (target == "torch.sym_float") return "sym_float";
  for (std::string_view fn : {"trunc", "floor", "ceil"}) {
    if (target.size() == fn.size() + 5 && target.substr(0, 5) == "math." &&
        target.substr(5) == fn) {
      return fn;
    }
  }
  return {};
}

// The torch or Python function on SymInts/SymBools a node applies: `torch.sym_min`,
// `torch.sym_max`, `torch.sym_not`, `operator.and_`, `operator.or_` (torch.export records
// `a & b` of two SymBools, and torch.sym_min of sizes, as such nodes), or "" for another target.
inline std::string_view python_sym_function(std::string_view target) noexcept {
  for (std::string_view fn : {"sym_min", "sym_max", "sym_not"}) {
    if (target.size() == fn.size() + 6 && target.substr(0, 6) == "torch." &&
        target.substr(6) == fn) {
      return fn;
    }
  }
  for (std::string_view prefix : {std::string_view("operator."), std::string_view("_operator.")}) {
    if (target.substr(0, prefix.size()) != prefix) continue;
    const std::string_view fn = target.substr(prefix.size());
    if (fn == "and_" || fn == "or_") return fn;
  }
  return {};
}

// An operand of Python arithmetic: its expression and whether it is a float (a Python float or
// a SymFloat node) rather than an int or SymInt.
struct PyNumber {
  sym::Expr e;
  bool is_float = false;
};
inline PyNumber py_number(const Context& ctx, const Argument& a, const std::string& what) {
  auto exact = [&](double d) {
    const auto r = sym::detail::exact_double(d);
    if (!r) ctx.fail(what + " is the float " + std::to_string(d) + ", no fraction of 64-bit ints");
    return sym::Expr(*r);
  };
  if (a.is<double>()) return {exact(a.as<double>()), true};
  if (const Node* n = a.node()) {
    if (const SymFloatValue* f = n->meta().val.sym_float()) {
      if (const auto* d = std::get_if<double>(&f->value)) return {exact(*d), true};
      try {
        return {ctx.symbols().parse(std::get<SymExpr>(f->value).expr, std::nullopt), true};
      } catch (const value_error& e) {
        ctx.fail(e.what());
      }
    }
  }
  return {ctx.ex(ctx.sym_of(a, what)), false};
}

// A SymFloat value of `e`: a double when it is a constant.
inline SymFloatValue sym_float_of(const Context& ctx, const sym::Expr& e) {
  if (const auto c = e.constant()) {
    return SymFloatValue{static_cast<double>(c->num()) / static_cast<double>(c->den())};
  }
  SymExpr x;
  x.expr = ctx.symbols().text(e);
  return SymFloatValue{std::move(x)};
}

// Float arithmetic of torch's SymFloat (torch/fx/experimental/sym_node.py): an int operand is
// converted with ToFloat, `/` of two ints is IntTrueDiv and of a float FloatTrueDiv; the result
// is a SymFloat (a double when it folds).
inline NodeValue float_operator(const Context& ctx, std::string_view fn, const PyNumber& a,
                                const PyNumber* b) {
  const sym::Ranges* r = ctx.ranges();
  auto as_float = [&](const PyNumber& x) {
    return x.is_float ? x.e : sym::detail::apply("ToFloat", {x.e}, r);
  };
  if (b == nullptr) return sym_float_of(ctx, -as_float(a));
  if (fn == "truediv") {
    if (b->e.as_integer() == std::int64_t{0}) ctx.fail("division by zero");
    if (!a.is_float && !b->is_float) {
      return sym_float_of(ctx, sym::detail::apply("IntTrueDiv", {a.e, b->e}, r));
    }
    return sym_float_of(ctx, sym::detail::apply("FloatTrueDiv", {as_float(a), as_float(*b)}, r));
  }
  if (fn == "add") return sym_float_of(ctx, as_float(a) + as_float(*b));
  if (fn == "sub") return sym_float_of(ctx, as_float(a) - as_float(*b));
  if (fn == "mul") return sym_float_of(ctx, as_float(a) * as_float(*b));
  ctx.fail("epgraph computes +, -, *, / and negation on SymFloats, not " + std::string(fn));
}

// torch.sym_float (ToFloat of an int: a SymFloat) and math.trunc/floor/ceil (TruncToInt,
// FloorToInt, CeilToInt of a float: a SymInt; an int stays itself), as torch's SymNode methods.
inline NodeValue rule_number_function(const Context& ctx, std::string_view fn) {
  const ArgumentView args = ctx.node().args();
  if (args.size() != 1 || !ctx.node().kwargs().empty()) ctx.fail("expected one argument");
  const PyNumber x = py_number(ctx, args[0], "argument 0");
  const sym::Ranges* r = ctx.ranges();
  try {
    if (fn == "sym_float") {
      return sym_float_of(ctx, x.is_float ? x.e : sym::detail::apply("ToFloat", {x.e}, r));
    }
    if (!x.is_float) return SymIntValue{ctx.out(x.e)};
    const char* name = fn == "trunc" ? "TruncToInt" : fn == "floor" ? "FloorToInt" : "CeilToInt";
    return SymIntValue{ctx.out(sym::detail::apply(name, {x.e}, r))};
  } catch (const value_error& e) {
    ctx.fail(e.what());
  }
}

// operator.add/sub/mul/floordiv/mod/neg and the comparisons on SymInts and ints (with a float
// operand, or truediv: float_operator), as torch's
// SymNode methods compute them (torch/fx/experimental/sym_node.py: `//` is FloorDiv, `%` is Mod
// when both sides are known non-negative and PythonMod otherwise): a SymInt (a concrete int when
// the result folds), or a SymBool for a comparison (folded only by the symbols' assumptions).
inline NodeValue rule_operator(const Context& ctx, std::string_view fn) {
  const ArgumentView args = ctx.node().args();
  const bool unary = fn == "neg";
  if (args.size() != (unary ? 1u : 2u) || !ctx.node().kwargs().empty()) {
    ctx.fail(std::string("expected ") + (unary ? "one argument" : "two arguments"));
  }
  const PyNumber pa = py_number(ctx, args[0], "argument 0");
  if (unary && pa.is_float) return float_operator(ctx, fn, pa, nullptr);
  if (!unary) {
    const PyNumber pb = py_number(ctx, args[1], "argument 1");
    if (pa.is_float || pb.is_float || fn == "truediv") return float_operator(ctx, fn, pa, &pb);
  }
  const sym::Expr a = pa.e;
  if (unary) return SymIntValue{ctx.out(-a)};
  const sym::Expr b = ctx.ex(ctx.sym_of(args[1], "argument 1"));
  const sym::Ranges* r = ctx.ranges();
  auto sym_bool = [&](const sym::Expr& e) {
    if (const auto v = e.as_boolean()) return SymBoolValue{*v};
    SymExpr x;
    x.expr = ctx.symbols().text(e);
    return SymBoolValue{std::move(x)};
  };
  if (fn == "add") return SymIntValue{ctx.out(a + b)};
  if (fn == "sub") return SymIntValue{ctx.out(a - b)};
  if (fn == "mul") return SymIntValue{ctx.out(a * b)};
  if (fn == "floordiv" || fn == "mod") {
    if (b.as_integer() == std::int64_t{0}) ctx.fail("division by zero");
    if (fn == "floordiv") return SymIntValue{ctx.out(sym::floordiv(a, b, r))};
    const bool nonnegative = sym::bounds(a, r).lo >= 0 && sym::bounds(b, r).lo >= 0;
    return SymIntValue{ctx.out(nonnegative ? sym::mod(a, b, r) : sym::python_mod(a, b, r))};
  }
  // torch folds a comparison by the symbols' assumptions only (`s0 >= 2` stays a SymBool
  // although the range constraints say s0 >= 2; `s0 > 0` is true)
  if (fn == "eq") return sym_bool(sym::eq(a, b));
  if (fn == "ne") return sym_bool(sym::ne(a, b));
  if (fn == "lt") return sym_bool(sym::lt(a, b));
  if (fn == "le") return sym_bool(sym::le(a, b));
  if (fn == "gt") return sym_bool(sym::gt(a, b));
  return sym_bool(sym::ge(a, b));
}

// torch.sym_min / torch.sym_max of two ints or SymInts (sympy's Min/Max, folded by the symbols'
// assumptions only, as torch's SymNode.sym_min: `Min(s77, u0)`), torch.sym_not of a SymBool, and
// `&` / `|` of two bools or SymBools (sympy's And/Or). Float operands, and `&` of integers, are
// not computed.
inline NodeValue rule_sym_function(const Context& ctx, std::string_view fn) {
  const ArgumentView args = ctx.node().args();
  const std::size_t arity = fn == "sym_not" ? 1u : 2u;
  if (args.size() != arity || !ctx.node().kwargs().empty()) {
    ctx.fail(std::string("expected ") + (arity == 1 ? "one argument" : "two arguments"));
  }
  auto sym_bool = [&](const sym::Expr& e) {
    if (const auto v = e.as_boolean()) return SymBoolValue{*v};
    SymExpr x;
    x.expr = ctx.symbols().text(e);
    return SymBoolValue{std::move(x)};
  };
  // an operand that is a bool or a SymBool, else nullopt
  auto boolean = [&](const Argument& a) -> std::optional<sym::Expr> {
    if (a.is<bool>()) return sym::Expr::boolean(a.as<bool>());
    const Node* n = a.node();
    const SymBoolValue* b = n != nullptr ? n->meta().val.sym_bool() : nullptr;
    if (b == nullptr) return std::nullopt;
    if (const bool* v = std::get_if<bool>(&b->value)) return sym::Expr::boolean(*v);
    try {
      return ctx.symbols().parse(std::get<SymExpr>(b->value).expr, std::nullopt);
    } catch (const value_error& e) {
      ctx.fail(e.what());
    }
  };
  if (fn == "sym_min" || fn == "sym_max") {
    const PyNumber a = py_number(ctx, args[0], "argument 0");
    const PyNumber b = py_number(ctx, args[1], "argument 1");
    if (a.is_float || b.is_float) ctx.cannot("epgraph computes " + std::string(fn) + " of ints");
    return SymIntValue{ctx.out(fn == "sym_min" ? sym::min({a.e, b.e}) : sym::max({a.e, b.e}))};
  }
  std::vector<sym::Expr> operands;
  for (std::size_t i = 0; i < arity; ++i) {
    std::optional<sym::Expr> e = boolean(args[i]);
    if (!e) {
      ctx.cannot("argument " + std::to_string(i) + " is not a bool or SymBool (epgraph computes " +
                 std::string(fn) + " of SymBools)");
    }
    operands.push_back(std::move(*e));
  }
  if (fn == "sym_not") return sym_bool(sym::logical_not(operands[0]));
  if (fn == "and_") return sym_bool(sym::logical_and(std::move(operands)));
  return sym_bool(sym::logical_or(std::move(operands)));
}

// aten.sym_size.int / aten.sym_stride.int: a SymInt of self.
inline NodeValue rule_sym_size(const Context& ctx, std::string_view op) {
  const TensorMeta& self = ctx.tensor("self");
  if (!ctx.has("dim")) ctx.cannot("epgraph has no shape rule for the list overload");
  const std::size_t rank = self.sizes.size();
  if (rank == 0) ctx.fail("Dimension specified as 0 but tensor has no dimensions");
  const auto d = static_cast<std::size_t>(ctx.wrap_dim(ctx.integer("dim"), rank));
  return SymIntValue{op == "sym_size" ? self.sizes[d] : self.strides[d]};
}

inline NodeValue rule_sym_numel(const Context& ctx, std::string_view) {
  SymInt n = std::int64_t{1};
  for (const SymInt& s : ctx.tensor("self").sizes) n = ctx.mul(n, s, "the element count");
  return SymIntValue{n};
}

inline NodeValue rule_sym_storage_offset(const Context& ctx, std::string_view) {
  return SymIntValue{ctx.tensor("self").storage_offset};
}

inline NodeValue rule_none(const Context&, std::string_view) { return None{}; }

// aten._assert_scalar(cond, msg): None, and a symbolic `cond` (the SymBool value of the node it
// reads, e.g. `u0 <= s77` from `torch._check(n <= x.shape[0])`) becomes an axiom of the context,
// which the nodes after it use (torch's ShapeEnv.defer_runtime_assert). A condition that is a
// constant, or not a SymBool node, teaches nothing.
inline NodeValue rule_assert_scalar(const Context& ctx, std::string_view) {
  const ArgumentView args = ctx.node().args();
  if (args.empty() || args[0].node() == nullptr) return None{};
  const SymBoolValue* b = args[0].node()->meta().val.sym_bool();
  if (b == nullptr) return None{};
  const auto* e = std::get_if<SymExpr>(&b->value);
  if (e == nullptr) return None{};
  (void)ctx.symbols().assume(ctx.ex(*e));
  return None{};
}

}  // namespace infer
}  // namespace detail
}  // namespace epgraph
