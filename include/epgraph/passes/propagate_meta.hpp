// Whole-program metadata propagation: every node's `meta().val` recomputed (or checked) in graph
// order from the placeholders' values with infer_meta, as torch's FakeTensorProp / ShapeProp do.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "../error.hpp"
#include "../ir/graph.hpp"
#include "../ir/node.hpp"
#include "../ir/symbolic.hpp"
#include "../ir/value.hpp"
#include "../program/exported_program.hpp"
#include "detail/substitute.hpp"
#include "infer_meta.hpp"

namespace epgraph {

/// What propagate_meta does with the values it computes.
enum class MetaMode {
  fill_unset,     ///< compute only the call_function nodes whose value is unset; keep the rest
  recompute_all,  ///< recompute every call_function node's value from the placeholders'
  check_only,     ///< recompute every value as recompute_all would, compare, change nothing
};

/// One node whose stored value is not the one propagate_meta computes (check_only), or that it
/// could not compute (check_only: `computed` unset and `reason` the error).
struct MetaDifference {
  std::string node;    ///< the node's name
  std::string target;  ///< its target (`torch.ops.aten.add.Tensor`)
  NodeValue stored;    ///< its `meta().val` before the call
  NodeValue computed;  ///< what propagate_meta computes (unset when it cannot)
  std::string reason;  ///< why it could not compute it, else ""
};

/// What propagate_meta did.
struct MetaReport {
  std::size_t nodes = 0;     ///< call_function nodes of the program's graph
  std::size_t computed = 0;  ///< of them, the ones whose value was computed
  std::size_t equal = 0;     ///< of the computed ones, those equal to the stored value
  /// Nodes whose stored value differs from the computed one, in graph order (check_only and
  /// recompute_all; in recompute_all they are the nodes whose value changed, an unset stored
  /// value included).
  std::vector<MetaDifference> differences;
  /// check_only: the nodes whose value could not be computed (infer_meta threw
  /// unsupported_meta_error: no rule for the op, an input without a value, a symbolic size the
  /// rule needs concrete), in graph order, with the reason; their stored value is used downstream.
  std::vector<MetaDifference> uncomputed;
  /// check_only: the nodes whose op refuses its arguments as torch's meta function would (an
  /// einsum equation that does not fit its operands, a view of incompatible strides), and the
  /// nodes whose stored value has a symbolic expression epgraph cannot read (placeholders and
  /// get_attr nodes first, then call_function nodes in graph order): the program is wrong. With
  /// the reason (torch's message, or the field and the text); their stored value is used
  /// downstream.
  std::vector<MetaDifference> invalid;
};

/// The MetaContext of `program`: the bounds of its `range_constraints` whose key is one symbol
/// (`s0`; keys that are expressions, `2*s0`, carry no bound of their own and are skipped), no
/// hints (infer_meta learns them from the values it reads), the srepr form until a value in the
/// str form is read. Throws std::bad_alloc. O(constraints * log constraints).
/// Mirrors: the ShapeEnv torch.export.load rebuilds from `range_constraints`
/// (torch/_export/serde/serialize.py, `symbol_name_to_range`).
template <class Tensor>
[[nodiscard]] MetaContext meta_context_of(const ExportedProgram<Tensor>& program) {
  sym::Ranges ranges;
  for (const RangeConstraint& r : program.metadata().range_constraints) {
    if (!detail::infer::is_identifier(r.symbol)) continue;
    ranges[r.symbol] = sym::SymbolRange{r.min_val, r.max_val};
  }
  return MetaContext(std::move(ranges));
}

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

namespace detail {
namespace propagate {

// A node whose stored value propagate_meta replaced, with the value before: moved back on an
// error, and always in check_only.
struct Replaced {
  const Node* node;
  NodeMeta* meta;
  NodeValue before;
};

// The values propagation starts from (placeholders, get_attr nodes) must be readable; every
// stored value is read here first, so that a new unbacked symbol takes a name none of them uses.
// An unreadable one throws value_error, or in check_only is listed in report.invalid.
inline void check_start_values(const Graph& graph, const MetaContext& symbols, MetaMode mode,
                               MetaReport& report) {
  for (const Node& n : graph.nodes()) {
    const std::string why = symbols.unreadable(n.meta().val);
    if (why.empty() || (n.op() != OpCode::placeholder && n.op() != OpCode::get_attr)) continue;
    std::string message = "Node '" + std::string(n.name()) + "' (" + std::string(op_name(n.op())) +
                          ") has a value epgraph cannot read: " + why;
    if (mode != MetaMode::check_only) throw value_error(std::move(message));
    report.invalid.push_back(MetaDifference{
        std::string(n.name()), std::string(n.target()), n.meta().val, {}, std::move(message)});
  }
}

// The value infer_meta computes for `n`. In check_only a node it cannot compute (no rule, or a
// stored value that cannot be read) or whose op refuses its arguments is listed in
// report.uncomputed / report.invalid, and nullopt returned; the other modes throw.
inline std::optional<NodeValue> compute_value(const Node& n, const MetaContext& symbols,
                                              MetaMode mode, MetaReport& report) {
  if (mode != MetaMode::check_only) return infer_meta(n, symbols);
  const NodeValue& stored = n.meta().val;
  if (std::string why = symbols.unreadable(stored); !why.empty()) {
    report.invalid.push_back(
        MetaDifference{std::string(n.name()),
                       std::string(n.target()),
                       stored,
                       {},
                       "Node '" + std::string(n.name()) + "' (" + std::string(n.target()) +
                           ") has a stored value epgraph cannot read: " + std::move(why)});
    return std::nullopt;
  }
  try {
    return infer_meta(n, symbols);
  } catch (const unsupported_meta_error& e) {
    report.uncomputed.push_back(
        MetaDifference{std::string(n.name()), std::string(n.target()), stored, {}, e.what()});
  } catch (const value_error& e) {
    report.invalid.push_back(
        MetaDifference{std::string(n.name()), std::string(n.target()), stored, {}, e.what()});
  }
  return std::nullopt;
}

// An asserted equality that solved an unbacked symbol (`Eq(u0, s77)`: u0 -> s77) applies to
// every value computed, before it as after it, as torch prints every SymInt through its
// ShapeEnv's replacements (`s77 >= 2` for the `u0 >= 2` asserted first, True for the equality
// itself). Substituted with the assumptions only, as sympy's xreplace does.
inline void apply_solved_equalities(const MetaContext& symbols, std::vector<Replaced>& replaced) {
  const sym::Ranges& ranges = symbols.ranges();
  if (ranges.replacements.empty()) return;
  detail::ValueSubstituter subst(symbols, ranges.replacements, nullptr);
  subst.keep_hints();  // a size computed through u0 has no hint in torch's file either
  for (Replaced& r : replaced) r.meta->val = subst.apply(r.meta->val);
}

// The unbacked symbols made for the new values get their bounds in `program`'s
// range_constraints, as torch records them; a replaced one is gone from every value, and from
// torch's range_constraints. Strong guarantee (the new list is built, then swapped in).
template <class Tensor>
void add_new_symbols(ExportedProgram<Tensor>& program, const MetaContext& symbols) {
  if (symbols.new_symbols().empty()) return;
  std::vector<RangeConstraint> constraints = program.metadata().range_constraints;
  for (const auto& [name, range] : symbols.new_symbols()) {
    if (symbols.ranges().replacements.count(name) != 0) continue;
    constraints.push_back(RangeConstraint{name, range.min_val, range.max_val});
  }
  program.metadata().range_constraints.swap(constraints);  // no-throw
}

}  // namespace propagate
}  // namespace detail

/// Recomputes (or checks) the value of every call_function node of `program`'s graph in graph
/// order with infer_meta, each from the values its inputs have at that point: the placeholders'
/// stored values (user inputs, parameters, buffers, constants, tokens, custom objects: kept as
/// they are), the get_attr nodes' stored values, and the values computed for the nodes before it.
/// The symbols' bounds come from the program's `range_constraints` (meta_context_of) and their
/// hints from the values read. Each `_assert_scalar` adds its condition to the axioms (see
/// sym::add_axiom); an equality that solves an unbacked symbol (`torch._check(n ==
/// x.shape[0])`: `Eq(u0, s77)`) replaces it in every value computed, before the assert and after
/// it, as torch prints every SymInt through its ShapeEnv's replacements (sizes made through u0
/// keep no hint, as torch's do), and a replaced symbol is not added to range_constraints.
///
/// Arguments: `program`; `mode`:
/// - MetaMode::fill_unset computes only the nodes whose value is unset (the others keep theirs
///   and are not counted as computed);
/// - MetaMode::recompute_all replaces every call_function node's value by the computed one;
/// - MetaMode::check_only computes every value as recompute_all would and compares it with the
///   stored one, changing nothing: report.differences lists each node whose stored value differs
///   (both values), report.uncomputed each node it cannot compute (no rule for its op, or an input
///   without a value; its stored value is used for the nodes below it), report.invalid each node
///   whose op refuses its arguments (the program is wrong; its stored value is used below it).
///
/// Returns the MetaReport (nodes, computed, equal; differences: the nodes whose value differs, in
/// recompute_all the ones it changed).
///
/// Errors (fill_unset and recompute_all): what infer_meta throws for a node it must compute,
/// e.g. unsupported_meta_error "Cannot infer the metadata of node 'conv'
/// (torch.ops.aten.conv2d.default): epgraph has no shape rule for it; set meta().val yourself"
/// for an op without a rule, and "Cannot infer the metadata of node 'add' (torch.ops.aten.add.
/// Tensor): argument 'self' (node 'x') has no tensor metadata: its meta().val is unset" for an
/// input without a value; value_error with torch's message for an op that refuses its
/// arguments, and value_error "Node 'x' (placeholder) has a value epgraph cannot read:
/// sizes[0]: cannot read the symbolic expression 's0 +* 2': ..." for a placeholder or get_attr
/// node whose value has an expression sym::parse cannot read (a node reading such a value
/// names it likewise). Nested
/// graphs (the branches of `cond`, the body of `map`) are not entered: a higher-order op has no
/// rule. std::bad_alloc. Strong guarantee: on any error every node has its value back (values
/// are computed into the nodes one by one, the replaced ones kept, and moved back, which cannot
/// fail); check_only always moves them back.
///
/// Complexity: O(nodes + size of the arguments and values), plus the size of the symbolic
/// expressions (each distinct expression text is parsed once) and a schema lookup per node.
///
/// Mirrors: torch.fx.passes.fake_tensor_prop.FakeTensorProp (torch/fx/passes/fake_tensor_prop.py)
/// and torch.fx.passes.shape_prop.ShapeProp, which run every node on fake inputs and store
/// `meta["val"]`; check_only is what torch has no function for (`ep.validate()` checks the
/// signature, not the values).
template <class Tensor>
MetaReport propagate_meta(ExportedProgram<Tensor>& program, MetaMode mode) {
  using detail::propagate::Replaced;
  const MetaContext symbols = meta_context_of(program);
  MetaReport report;
  detail::propagate::check_start_values(program.graph(), symbols, mode, report);
  std::vector<Replaced> replaced;
  replaced.reserve(program.graph().size());
  auto restore = [&]() noexcept {
    for (auto it = replaced.rbegin(); it != replaced.rend(); ++it) {
      it->meta->val = std::move(it->before);
    }
  };
  try {
    for (Node& n : program.graph().nodes()) {
      if (n.op() != OpCode::call_function) continue;
      ++report.nodes;
      const NodeValue& stored = std::as_const(n).meta().val;
      if (mode == MetaMode::fill_unset && stored.has_value()) continue;
      std::optional<NodeValue> computed =
          detail::propagate::compute_value(n, symbols, mode, report);
      if (!computed) continue;
      ++report.computed;
      if (!stored.has_value() && computed->is_none()) {
        // an op without outputs (`_assert_tensor_metadata`): torch's file has no value to keep
        // for it, so its unset value is the None it computes
        ++report.equal;
        continue;
      }
      NodeMeta& meta = n.mutable_meta();  // may allocate: before anything is moved
      replaced.push_back(Replaced{&n, &meta, NodeValue{}});
      replaced.back().before = std::move(meta.val);
      meta.val = std::move(*computed);
    }
    detail::propagate::apply_solved_equalities(symbols, replaced);
    for (const Replaced& r : replaced) {
      if (same_value(r.before, r.meta->val, symbols)) {
        ++report.equal;
      } else {
        report.differences.push_back(MetaDifference{
            std::string(r.node->name()), std::string(r.node->target()), r.before, r.meta->val, ""});
      }
    }
    if (mode != MetaMode::check_only) detail::propagate::add_new_symbols(program, symbols);
  } catch (...) {
    restore();
    throw;
  }
  if (mode == MetaMode::check_only) restore();
  return report;
}

}  // namespace epgraph
