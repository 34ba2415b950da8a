// Static-shape specialization: a dynamic program's symbols fixed to values, the SymInt nodes and
// runtime asserts that become constant folded away, every value recomputed with propagate_meta.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "../error.hpp"
#include "../ir/argument.hpp"
#include "../ir/graph.hpp"
#include "../ir/names.hpp"
#include "../ir/node.hpp"
#include "../ir/symbolic.hpp"
#include "../ir/tensor.hpp"
#include "../ir/value.hpp"
#include "../program/exported_program.hpp"
#include "detail/substitute.hpp"
#include "infer_meta.hpp"
#include "propagate_meta.hpp"

namespace epgraph {

/// One symbol specialize() fixed: its name, the value, and the range constraint it had.
struct SpecializedSymbol {
  std::string symbol;                   ///< `s70`
  std::int64_t value = 0;               ///< the value it now has
  std::optional<std::int64_t> min_val;  ///< its range constraint's lower bound (unset: unbounded)
  std::optional<std::int64_t> max_val;  ///< its range constraint's upper bound (unset: unbounded)
  friend bool operator==(const SpecializedSymbol& a, const SpecializedSymbol& b) {
    return a.symbol == b.symbol && a.value == b.value && a.min_val == b.min_val &&
           a.max_val == b.max_val;
  }
};

/// The range constraints of `constraints` whose symbol specialize() can fix: the input-size
/// symbols (`s70`), not a data-dependent one (`u0`, see sym::is_unbacked_name) nor a derived
/// dimension's expression key (`2*s70`). In the program's order; the entries are copies.
/// Arguments: a program's `metadata().range_constraints`. Throws std::bad_alloc only.
/// O(constraints * length of a key).
/// Mirrors: the symbols torch.export's `dynamic_shapes` makes for input dimensions (the backed
/// `s<k>` of ShapeEnv, torch/fx/experimental/symbolic_shapes.py), the ones `Dim.STATIC` would fix.
[[nodiscard]] inline std::vector<RangeConstraint> specializable_symbols(
    const std::vector<RangeConstraint>& constraints) {
  std::vector<RangeConstraint> out;
  for (const RangeConstraint& r : constraints) {
    if (detail::infer::is_identifier(r.symbol) && !sym::is_unbacked_name(r.symbol)) {
      out.push_back(r);
    }
  }
  return out;
}

/// What specialize() did.
struct SpecializeReport {
  /// The symbols fixed, in the order they were given.
  std::vector<SpecializedSymbol> symbols;
  /// The nodes producing a SymInt or SymBool that became a constant (`sym_size_int`,
  /// `operator.mul` of sizes, a comparison), whose uses now hold the constant and which were
  /// erased, in graph order.
  std::vector<std::string> folded;
  /// The constant nodes kept because the graph's output returns them (their value is concrete).
  std::vector<std::string> kept_for_output;
  /// The `cond` nodes whose predicate became a constant, replaced by the branch it takes (the
  /// branch's nodes copied in its place), in graph order: "cond (true_graph_0)".
  std::vector<std::string> conds_inlined;
  /// The runtime asserts (`_assert_scalar`, `sym_constrain_range_for_size`,
  /// `sym_constrain_range`) whose condition became constant true, erased, in graph order.
  std::vector<std::string> asserts_removed;
  /// The keys of the range constraints dropped (the symbols fixed, and expression keys that
  /// became constant), in the program's order.
  std::vector<std::string> constraints_dropped;
  /// The nodes whose value was recomputed with infer_meta after the substitution
  /// (propagate_meta), and of them the ones whose recomputed value differs from the substituted
  /// one (it then replaced it).
  std::size_t recomputed = 0;
  std::size_t recomputed_changed = 0;
  /// The nodes counted in `recomputed_changed`, by name, in graph order: where epgraph's shape
  /// rules disagree with the value torch stored (after substitution), which one of the two
  /// gets wrong (`pt2_edit specialize` refuses to write such a result).
  std::vector<std::string> changed;
  /// The call_function nodes whose value was not recomputed (no shape rule for the op, e.g.
  /// `scaled_dot_product_attention`): they keep the substituted value, by name, in graph order.
  std::vector<std::string> substituted_only;
  /// The values (nodes) that still hold a symbolic expression (over symbols not fixed).
  std::size_t symbolic_values = 0;
};

namespace detail {
namespace specialize {

// `[2, 64]` as torch prints a ValueRanges (an absent bound is int_oo).
inline std::string range_text(const std::optional<std::int64_t>& lo,
                              const std::optional<std::int64_t>& hi) {
  return "[" + (lo ? std::to_string(*lo) : std::string("-int_oo")) + ", " +
         (hi ? std::to_string(*hi) : std::string("int_oo")) + "]";
}

inline bool is_assert_scalar(std::string_view t) {
  return t == "torch.ops.aten._assert_scalar.default";
}
inline bool is_constrain_range(std::string_view t) {
  return t == "torch.ops.aten.sym_constrain_range_for_size.default" ||
         t == "torch.ops.aten.sym_constrain_range.default";
}

// Whether a value still holds a symbolic expression.
inline bool is_symbolic(const NodeValue& v) {
  if (const TensorMeta* t = v.tensor()) {
    auto sym = [](const SymInt& s) { return std::holds_alternative<SymExpr>(s); };
    for (const SymInt& s : t->sizes) {
      if (sym(s)) return true;
    }
    for (const SymInt& s : t->strides) {
      if (sym(s)) return true;
    }
    return sym(t->storage_offset);
  }
  if (const NodeValue::List* l = v.elements()) {
    for (const NodeValue& x : *l) {
      if (is_symbolic(x)) return true;
    }
    return false;
  }
  if (const SymIntValue* s = v.sym_int()) return std::holds_alternative<SymExpr>(s->value);
  if (const SymBoolValue* s = v.sym_bool()) return std::holds_alternative<SymExpr>(s->value);
  if (const SymFloatValue* s = v.sym_float()) return std::holds_alternative<SymExpr>(s->value);
  return false;
}

// The constant a folded node stands for in its users' arguments.
inline std::optional<Argument> constant_of(const Node& n) {
  const NodeValue& v = n.meta().val;
  if (const SymIntValue* s = v.sym_int()) {
    if (const auto* i = std::get_if<std::int64_t>(&s->value)) return Argument(*i);
  }
  if (const SymBoolValue* s = v.sym_bool()) {
    if (const auto* b = std::get_if<bool>(&s->value)) return Argument(*b);
  }
  return std::nullopt;
}

// `a` with every use of a node in `constants` replaced by its constant (lists recursively).
inline Argument replace_constants(const Argument& a, const std::map<const Node*, Argument>& c,
                                  bool& changed) {
  if (const Node* n = a.node()) {
    auto it = c.find(n);
    if (it == c.end()) return a;
    changed = true;
    return it->second;
  }
  if (const ArgumentList* l = a.list()) {
    ArgumentList out;
    out.reserve(l->size());
    for (const Argument& x : *l) out.push_back(replace_constants(x, c, changed));
    return Argument(std::move(out));
  }
  return a;
}

// The argument `name` of a node (positional `index`, else the keyword), or nullptr.
inline const Argument* argument_of(const Node& n, std::size_t index, std::string_view name) {
  if (index < n.args().size()) return &n.args()[index];
  for (const auto& kv : n.kwargs()) {
    if (kv.first == name) return &kv.second;
  }
  return nullptr;
}

// The constant value of an argument (an int/bool, or a node whose value is a constant).
inline std::optional<Argument> constant_argument(const Argument* a) {
  if (a == nullptr) return std::nullopt;
  if (const Node* n = a->node()) return constant_of(*n);
  if (a->is<std::int64_t>() || a->is<bool>()) return *a;
  return std::nullopt;
}

using Values = std::map<std::string, sym::Expr, std::less<>>;

// Step 1: `dims` as a symbol -> value map, each checked against `constraints` (see specialize's
// errors); fills report.symbols. Throws value_error.
inline Values checked_values(const std::vector<RangeConstraint>& constraints,
                             const std::vector<std::pair<std::string, std::int64_t>>& dims,
                             SpecializeReport& report) {
  if (dims.empty()) throw value_error("specialize needs at least one symbol to fix");
  Values values;
  // The symbols specialize can fix, for messages: the input-size symbols of the constraints.
  std::string known;
  for (const RangeConstraint& r : specializable_symbols(constraints)) {
    known += (known.empty() ? "" : ", ") + r.symbol;
  }
  const std::string its = known.empty() ? std::string("it has none") : "its symbols: " + known;
  for (const auto& [symbol, value] : dims) {
    if (!detail::infer::is_identifier(symbol)) {
      throw value_error("Cannot specialize '" + symbol +
                        "': it is an expression (a derived dimension), not a symbol; fix the "
                        "symbols it is made of (" +
                        its + ")");
    }
    if (sym::is_unbacked_name(symbol)) {
      throw value_error("Cannot specialize '" + symbol +
                        "': it is a data-dependent (unbacked) symbol, whose value a tensor's "
                        "data gives at run time, not an input size (" +
                        its + ")");
    }
    const RangeConstraint* found = nullptr;
    for (const RangeConstraint& r : constraints) {
      if (r.symbol == symbol) found = &r;
    }
    if (found == nullptr) {
      throw value_error("Cannot specialize '" + symbol +
                        "': it is not a symbol of the program's range_constraints (" + its + ")");
    }
    if (values.count(symbol) != 0) {
      throw value_error("Cannot specialize '" + symbol + "': the value is given twice");
    }
    if ((found->min_val && value < *found->min_val) ||
        (found->max_val && value > *found->max_val)) {
      throw value_error("Cannot specialize " + symbol + " to " + std::to_string(value) +
                        ": outside its range constraint " +
                        range_text(found->min_val, found->max_val));
    }
    values.emplace(symbol, sym::Expr(value));
    report.symbols.push_back(SpecializedSymbol{symbol, value, found->min_val, found->max_val});
  }
  return values;
}

// "s0 to 16, s1 to 4": the fixed symbols, for messages.
inline std::string fixing_text(const SpecializeReport& report) {
  std::string fixing;
  for (const SpecializedSymbol& s : report.symbols) {
    fixing += (fixing.empty() ? "" : ", ") + s.symbol + " to " + std::to_string(s.value);
  }
  return fixing;
}

// Step 5's split: the constraints that stay (not a fixed symbol, not a key expression that became
// constant; a key epgraph cannot read stays as it is), the remaining symbols' ranges into
// `ranges`, the dropped keys into report.constraints_dropped.
inline std::vector<RangeConstraint> remaining_constraints(
    const std::vector<RangeConstraint>& constraints, const Values& values, sym::Ranges& ranges,
    SpecializeReport& report) {
  std::vector<RangeConstraint> kept;
  for (const RangeConstraint& r : constraints) {
    bool drop = values.count(r.symbol) != 0;
    if (!drop && !detail::infer::is_identifier(r.symbol)) {
      try {
        drop = sym::substitute(sym::parse(r.symbol), values).is_constant();
      } catch (const value_error&) {
        drop = false;  // a key epgraph cannot read is kept as it is
      }
    }
    if (drop) {
      report.constraints_dropped.push_back(r.symbol);
      continue;
    }
    kept.push_back(r);
    if (detail::infer::is_identifier(r.symbol)) {
      ranges[r.symbol] = sym::SymbolRange{r.min_val, r.max_val};
    }
  }
  return kept;
}

// Step 2: the values substituted into every node's meta().val.
inline void substitute_values(Graph& g, const Values& values, const sym::Ranges& ranges,
                              const SpecializeReport& report) {
  MetaContext ctx(ranges);
  ValueSubstituter subst(ctx, values, &ranges);
  // Conditions (the SymBools runtime asserts check) are decided with the backed symbols' ranges
  // only, which torch checks on the inputs: an unbacked symbol's range (u0 in [1, 100]) is what
  // the asserts on it establish (`torch._check(k >= 1)`), so `u0 >= 1` must stay an assert.
  sym::Ranges backed;
  for (const auto& [symbol, range] : ranges) {
    if (!sym::is_unbacked_name(symbol)) backed.emplace(symbol, range);
  }
  subst.set_condition_ranges(&backed);
  for (const Node& n : g.nodes()) subst.learn(n.meta().val);
  for (const SpecializedSymbol& s : report.symbols) ctx.set_hint(s.symbol, s.value);
  for (Node& n : g.nodes()) {
    if (!n.meta().val.has_value()) continue;
    NodeValue v;
    try {
      v = subst.apply(n.meta().val);
    } catch (const value_error& e) {
      // Which node and which of its serialized fields holds the expression (the message quotes
      // the expression's text).
      const NodeValue& old = n.meta().val;
      const char* field = old.sym_float()  ? "its SymFloat value (sym_float_values entry)"
                          : old.sym_int()  ? "its SymInt value (sym_int_values entry)"
                          : old.sym_bool() ? "its SymBool value (sym_bool_values entry)"
                                           : "the sizes, strides or offset of its tensor value "
                                             "(tensor_values entry)";
      throw value_error("Cannot specialize node '" + std::string(n.name()) + "', " + field + ": " +
                        e.what());
    }
    n.mutable_meta().val = std::move(v);
  }
}

// Step 3: the runtime asserts whose condition is now constant, checked (value_error naming the
// first that fails) and erased; their names into report.asserts_removed.
inline void remove_constant_asserts(Graph& g, SpecializeReport& report) {
  std::vector<Node*> asserts;
  auto fails = [&](const Node& n, const std::string& why) {
    return value_error("Cannot specialize " + fixing_text(report) + ": the runtime assert '" +
                       std::string(n.name()) + "' (" + std::string(n.target()) + ") fails: " + why);
  };
  for (Node& n : g.nodes()) {
    if (n.op() != OpCode::call_function) continue;
    const std::string_view t = n.target();
    if (is_assert_scalar(t)) {
      const std::optional<Argument> cond = constant_argument(argument_of(n, 0, "self"));
      if (!cond) continue;
      const bool ok = cond->is<bool>() ? cond->as<bool>() : cond->as<std::int64_t>() != 0;
      if (!ok) {
        const Argument* msg = argument_of(n, 1, "assert_msg");
        throw fails(n, msg && msg->is<std::string>() ? msg->as<std::string>()
                                                     : std::string("its condition is False"));
      }
      asserts.push_back(&n);
    } else if (is_constrain_range(t)) {
      const std::optional<Argument> size = constant_argument(argument_of(n, 0, "size"));
      if (!size || !size->is<std::int64_t>()) continue;
      const std::int64_t v = size->as<std::int64_t>();
      auto bound = [&](std::size_t index, const char* name) -> std::optional<std::int64_t> {
        const Argument* a = argument_of(n, index, name);
        if (a && a->is<std::int64_t>()) return a->as<std::int64_t>();
        return std::nullopt;
      };
      // torch's positional form is (size, min, max); the exporter writes them as keywords
      const std::optional<std::int64_t> lo = bound(1, "min");
      const std::optional<std::int64_t> hi = bound(2, "max");
      if ((lo && v < *lo) || (hi && v > *hi)) {
        throw fails(n, std::to_string(v) + " is outside " + range_text(lo, hi));
      }
      asserts.push_back(&n);
    }
  }
  for (Node* n : asserts) {
    report.asserts_removed.emplace_back(n->name());
    g.erase_node(n);
  }
}

// Step 4: every pure call_function node whose value is a constant SymInt / SymBool replaced by
// the constant in its users' arguments and erased (report.folded), unless something still reads
// it (the output: report.kept_for_output).
inline void fold_constant_symbols(Graph& g, SpecializeReport& report) {
  std::map<const Node*, Argument> constants;
  std::vector<Node*> folded;
  for (Node& n : g.nodes()) {
    if (n.op() != OpCode::call_function || n.is_impure()) continue;
    if (std::optional<Argument> c = constant_of(n)) {
      constants.emplace(&n, std::move(*c));
      folded.push_back(&n);
    }
  }
  for (Node& n : g.nodes()) {
    if (n.op() == OpCode::output || n.op() == OpCode::placeholder) continue;
    bool changed = false;
    ArgumentList args;
    args.reserve(n.args().size());
    for (const Argument& a : n.args()) args.push_back(replace_constants(a, constants, changed));
    Kwargs kwargs;
    kwargs.reserve(n.kwargs().size());
    for (const auto& kv : n.kwargs()) {
      kwargs.emplace_back(kv.first, replace_constants(kv.second, constants, changed));
    }
    if (!changed) continue;
    n.set_args(std::move(args));
    n.set_kwargs(std::move(kwargs));
  }
  std::vector<bool> erased(folded.size(), false);
  std::vector<std::string> folded_names;
  folded_names.reserve(folded.size());
  for (const Node* n : folded) folded_names.emplace_back(n->name());
  for (std::size_t i = folded.size(); i-- > 0;) {
    if (folded[i]->users().empty()) {
      g.erase_node(folded[i]);
      erased[i] = true;
    }
  }
  for (std::size_t i = 0; i < folded.size(); ++i) {
    (erased[i] ? report.folded : report.kept_for_output).push_back(std::move(folded_names[i]));
  }
}

// Whether `text` names the symbol `name` (`s77` in `Symbol('s77', ...)` or `s77*2`, not in
// `s770`).
inline bool names_symbol(std::string_view text, std::string_view name) {
  for (std::size_t at = text.find(name); at != std::string_view::npos;
       at = text.find(name, at + 1)) {
    const std::size_t end = at + name.size();
    const bool starts = at == 0 || !is_ident_char(text[at - 1]);
    const bool ends = end == text.size() || !is_ident_char(text[end]);
    if (starts && ends) return true;
  }
  return false;
}

// Step 1b: a nested graph kept as a record (one inside a nested graph: a cond in a cond's branch,
// which json::materialize_nested_graphs leaves as it is) is not entered, so values in it that use
// a symbol being fixed would keep it after its range constraint is dropped: refused, naming it.
template <class Tensor>
void check_records(const ExportedProgram<Tensor>& program, const Values& values) {
  auto check = [&](const Graph& g, const std::string& where) {
    for (const Node& n : g.nodes()) {
      const std::string& record = n.meta().serialized;
      if (n.op() != OpCode::get_attr || record.find("\"graph\"") == std::string::npos) continue;
      for (const auto& entry : values) {
        if (!names_symbol(record, entry.first)) continue;
        throw value_error("Cannot specialize " + entry.first + ": the nested graph '" +
                          std::string(n.target()) + "' that get_attr node '" +
                          std::string(n.name()) + "' of " + where +
                          " reads is kept as the record of the file it was read from (a nested "
                          "graph inside another, or a program not given to "
                          "epgraph::json::materialize_nested_graphs) and its values use " +
                          entry.first + "; epgraph does not enter it");
      }
    }
  };
  check(program.graph(), "the program's graph");
  for (const auto& [target, nested] : program.nested_graphs()) {
    check(*nested, "nested graph '" + target + "'");
  }
}

// The getitem users of `cond` by index, or an empty vector when a user is something else (the
// cond is then left as it is).
inline std::vector<std::pair<Node*, std::size_t>> getitem_users(Graph& g, const Node& cond,
                                                                std::size_t outputs) {
  std::vector<std::pair<Node*, std::size_t>> out;
  for (const Node* u : cond.users()) {
    const ArgumentView a = u->args();
    if (u->target() != "operator.getitem" || a.size() != 2 || a[0].node() != &cond ||
        !a[1].is<std::int64_t>() || a[1].as<std::int64_t>() < 0 ||
        static_cast<std::size_t>(a[1].as<std::int64_t>()) >= outputs) {
      return {};
    }
    out.emplace_back(g.writable(u), static_cast<std::size_t>(a[1].as<std::int64_t>()));
  }
  return out;
}

// Step 4b: a `cond` whose predicate became a constant (step 4 wrote True or False into its
// argument) is replaced by the branch it takes: the branch's nodes are copied before it
// (Graph::graph_copy, its placeholders standing for the operands), each getitem of the cond
// replaced by the copy of the branch's output, and the cond, its get_attr nodes and the nested
// graphs nothing reads any more erased. torch.export does the same for a predicate it decides
// while tracing (torch.cond with a Python bool calls the branch, torch/_higher_order_ops/cond.py),
// so the result is what exporting with the static size gives; ExecuTorch's emitter refuses a
// cond whose predicate is not a tensor. A cond whose branch is kept as a record, or whose users
// are not all getitem nodes, is left as it is.
template <class Tensor>
void inline_constant_conds(ExportedProgram<Tensor>& work, SpecializeReport& report) {
  Graph& g = work.graph();
  std::vector<Node*> conds;
  for (Node& n : g.nodes()) {
    if (n.op() == OpCode::call_function && n.target() == "torch.ops.higher_order.cond" &&
        n.args().size() == 4 && n.args()[0].is<bool>() && n.args()[3].list() != nullptr) {
      conds.push_back(&n);
    }
  }
  std::vector<std::string> targets;  // of the get_attr nodes erased
  for (Node* c : conds) {
    const Node* attr = c->args()[c->args()[0].as<bool>() ? 1 : 2].node();
    const Graph* branch =
        attr != nullptr && attr->op() == OpCode::get_attr && attr->meta().serialized.empty()
            ? work.nested_graph(attr->target())
            : nullptr;
    if (branch == nullptr || branch->output_node() == nullptr) continue;
    const ArgumentList& operands = *c->args()[3].list();
    std::unordered_map<const Node*, Node*> remap;
    std::size_t inputs = 0;
    for (const Node& n : branch->nodes()) {
      if (n.op() != OpCode::placeholder) continue;
      if (inputs < operands.size() && operands[inputs].node() != nullptr) {
        remap.emplace(&n, g.writable(operands[inputs].node()));
      }
      ++inputs;
    }
    const ArgumentList* outs =
        branch->output_node()->args().empty() ? nullptr : branch->output_node()->args()[0].list();
    if (inputs != operands.size() || remap.size() != inputs || outs == nullptr) continue;
    const std::vector<std::pair<Node*, std::size_t>> items = getitem_users(g, *c, outs->size());
    if (items.empty() && !c->users().empty()) continue;
    Argument copied;
    {
      const auto at = g.inserting_before(c);
      copied = g.graph_copy(*branch, remap);
    }
    for (const auto& [item, index] : items) {
      item->replace_all_uses_with(g.writable(copied.list()->at(index).node()));
      g.erase_node(item);
    }
    report.conds_inlined.push_back(std::string(c->name()) + " (" + std::string(attr->target()) +
                                   ")");
    std::vector<Node*> attrs;
    for (std::size_t k : {std::size_t{1}, std::size_t{2}}) {
      if (const Node* a = c->args()[k].node()) attrs.push_back(g.writable(a));
    }
    g.erase_node(c);
    for (Node* a : attrs) {
      if (a->op() != OpCode::get_attr || !a->users().empty()) continue;
      targets.emplace_back(a->target());
      g.erase_node(a);
    }
  }
  for (const std::string& t : targets) {
    bool read = false;
    for (const Node& n : g.nodes()) read = read || (n.op() == OpCode::get_attr && n.target() == t);
    for (const auto& entry : work.nested_graphs()) {
      for (const Node& n : entry.second->nodes()) {
        read = read || (n.op() == OpCode::get_attr && n.target() == t);
      }
    }
    if (!read) (void)work.remove_nested_graph(t);
  }
}

// Step 6: every value the rules can compute recomputed (propagate_meta's check, then the
// differences written); the counts into the report.
template <class Tensor>
void recompute_values(ExportedProgram<Tensor>& work, SpecializeReport& report) {
  const MetaReport meta = propagate_meta(work, MetaMode::check_only);
  if (!meta.invalid.empty()) {
    // an op that refuses its arguments (a cond given fewer operands than its branch has inputs,
    // a while_loop body giving back fewer values than it carries): torch would fail to run it
    throw value_error("Cannot specialize: node '" + meta.invalid.front().node +
                      "' is invalid: " + meta.invalid.front().reason);
  }
  report.recomputed = meta.computed;
  report.recomputed_changed = meta.differences.size();
  for (const MetaDifference& d : meta.differences) {
    // a node of a nested graph the program owns is named `<graph>.<node>` (node names have no
    // dot)
    Node* n = nullptr;
    const std::size_t dot = d.node.find('.');
    if (dot == std::string::npos) {
      n = work.graph().find_node(d.node);
    } else if (Graph* nested = work.nested_graph(std::string_view(d.node).substr(0, dot))) {
      n = nested->find_node(std::string_view(d.node).substr(dot + 1));
    }
    if (n != nullptr) n->mutable_meta().val = d.computed;
    report.changed.push_back(d.node);
  }
  for (const MetaDifference& d : meta.uncomputed) report.substituted_only.push_back(d.node);
  auto count = [&](const Graph& g) {
    for (const Node& n : g.nodes()) {
      if (is_symbolic(n.meta().val)) ++report.symbolic_values;
    }
  };
  count(work.graph());
  for (const auto& entry : work.nested_graphs()) count(*entry.second);
}

}  // namespace specialize
}  // namespace detail

/// Fixes symbols of a dynamic program to values: a static-shape program, for backends without
/// dynamic shapes. In order:
/// 1. every symbol of `dims` must be a key of the program's `range_constraints` and its value lie
///    in that range;
/// 2. the values are substituted into every node's `meta().val` (tensor sizes, strides and
///    storage offsets; SymInt, SymBool and SymFloat values), expressions re-simplified under the
///    remaining symbols' ranges (`2*s0` becomes 32, `s0*s1` becomes `16*s1` with its hint);
/// 3. every runtime assert whose condition became constant is checked and erased
///    (`_assert_scalar` of a SymBool, `sym_constrain_range_for_size` / `sym_constrain_range` of a
///    SymInt against its `min`/`max`); a condition is decided with the input-size symbols' ranges
///    only, never with an unbacked symbol's (u0's range is what the asserts on it establish:
///    `u0 >= 1` stays an assert);
/// 4. every call_function node whose value became a constant SymInt or SymBool (`sym_size.int`,
///    `sym_numel`, `operator.mul` of sizes, comparisons) is folded: its uses in other nodes'
///    arguments hold the constant (as torch writes a concrete SymInt: `arange(sym_size_int)`
///    becomes `arange(16)`, `view(x, [2, sym_size_int, 4, 8])` becomes `view(x, [2, 16, 4, 8])`)
///    and the node is erased; one the graph's output returns is kept (its value is concrete);
/// 4b. every `cond` whose predicate became constant is replaced by the branch it takes (its nodes
///    copied in its place, the untaken branch and the get_attr nodes dropped: what torch.export
///    gives for a predicate it decides while tracing; report.conds_inlined);
/// 5. the range constraints of the fixed symbols, and those whose key is an expression that
///    became constant, are dropped;
/// 6. every call_function node's value is recomputed from the placeholders with
///    propagate_meta's rules (a node whose op has no rule, e.g. `scaled_dot_product_attention`,
///    keeps its substituted value, which is what torch's ShapeEnv substitution gives).
///
/// Arguments: `program`; `dims`: (symbol, value) pairs, in the order reported (`{{"s70", 16}}`).
///
/// Returns the SpecializeReport (symbols, folded nodes, asserts removed, constraints dropped,
/// recomputed counts, the values still symbolic when not every symbol was fixed).
///
/// Errors, each a value_error with the program unchanged:
/// - "specialize needs at least one symbol to fix" for empty `dims`;
/// - "Cannot specialize 's9': it is not a symbol of the program's range_constraints (its
///   symbols: s0, s1)" (or "(it has none)");
/// - "Cannot specialize 'u0': it is a data-dependent (unbacked) symbol, whose value a tensor's
///   data gives at run time, not an input size (its symbols: s0, s1)";
/// - "Cannot specialize '2*s0': it is an expression (a derived dimension), not a symbol; fix the
///   symbols it is made of (its symbols: s0, s1)" for a range_constraints key that is an
///   expression (it is dropped when its symbols are fixed);
/// - "Cannot specialize 's0': the value is given twice";
/// - "Cannot specialize s0 to 1: outside its range constraint [2, 100]";
/// - "Cannot specialize s0 to 5: the runtime assert 'assert_1'
///   (torch.ops.aten._assert_scalar.default) fails: <its message>" when a condition becomes
///   false (for sym_constrain_range*: "... fails: 5 is outside [6, 10]");
/// - "Cannot specialize node 'truediv', its SymFloat value (sym_float_values entry): <what
///   sym::parse throws, quoting the expression>" for an expression it cannot read (the field
///   named: a SymInt/SymFloat/SymBool value or a tensor's sizes/strides/offset), and for a size
///   that becomes a fraction;
/// - "Cannot specialize s0: the nested graph 'true_graph_0' that get_attr node 'true_graph_0' of
///   nested graph 'true_graph_0' reads is kept as the record of the file it was read from (...)
///   and its values use s0; epgraph does not enter it" (a cond inside a cond's branch: its values
///   would keep the symbol whose range constraint is dropped);
/// - "Cannot specialize: node 'cond' is invalid: <propagate_meta's reason>" when recomputing the
///   values finds an op that refuses its arguments (a cond giving its branch fewer operands than
///   it has inputs: torch would fail to run the result);
/// and std::bad_alloc (a node whose value cannot be recomputed keeps its substituted value and is
/// listed in `substituted_only`). Strong guarantee: the work is done on a copy of the graph,
/// signature and metadata, swapped in (no-throw) only on success. On success the program holds a
/// new Graph object: Node pointers and references taken before the call are invalid afterwards
/// (names are kept, so find_node finds the nodes that remain). The nested graphs the program
/// owns (nested_graphs(): built in C++, or read from a file and made Graphs by
/// epgraph::json::materialize_nested_graphs) are kept and get steps 2 and 6 (a `sym_size` node in
/// a nested graph keeps its node, with a constant value); nested graphs kept as records (the
/// get_attr nodes of `cond`/`map`/`invoke_subgraph` of a program read from a file and not
/// materialized, or a nested graph inside another) are not entered: one whose record uses a
/// symbol being fixed is refused (see Errors), the others are kept as they are.
///
/// SymFloat expressions (`Float('1.5', precision=53)`, `ToFloat`, `IntTrueDiv`, `FloatTrueDiv`,
/// `TruncToInt`/`FloorToInt`/`CeilToInt`) are read and evaluated in float64, as
/// torch/utils/_sympy/functions.py evaluates them.
///
/// Complexity: O(nodes + size of the arguments and values), times the size of the symbolic
/// expressions (each distinct text parsed once), plus a copy of the graph.
///
/// Mirrors: no torch function does this on an ExportedProgram; in Python the way is to export
/// again with that dimension static (`torch.export.Dim.STATIC`, or no entry in `dynamic_shapes`;
/// torch/export/dynamic_shapes.py). The substitution is what torch's `ShapeEnv` does when a
/// symbol is specialized (`ShapeEnv._set_replacement` and `ShapeEnv.simplify` with its
/// `replacements`, torch/fx/experimental/symbolic_shapes.py), and a constant SymInt argument is
/// written as a plain int, as torch.export's tracer writes a concrete SymInt.
template <class Tensor>
SpecializeReport specialize(ExportedProgram<Tensor>& program,
                            const std::vector<std::pair<std::string, std::int64_t>>& dims) {
  namespace sp = detail::specialize;
  SpecializeReport report;
  // 1. the symbols and their values, checked against the range constraints
  const sp::Values values = sp::checked_values(program.metadata().range_constraints, dims, report);
  sp::check_records(program, values);

  // The copy the work is done on (state_dict and constants are not needed and move in at the end).
  ProgramMetadata metadata = program.metadata();
  ExportedProgram<Tensor> work(std::as_const(program).graph().clone(),
                               std::as_const(program).graph_signature(), {}, {},
                               std::move(metadata));
  // The nested graphs the program owns (outline_partition's), copied so that they are kept and
  // specialized too (work's empty set replaced them on commit, and they were lost).
  for (const auto& [target, nested] : program.nested_graphs()) {
    (void)work.add_nested_graph(target, nested->clone());
  }
  Graph& g = work.graph();
  sym::Ranges ranges;
  std::vector<RangeConstraint> kept =
      sp::remaining_constraints(program.metadata().range_constraints, values, ranges, report);

  sp::substitute_values(g, values, ranges, report);  // 2.
  for (const auto& entry : program.nested_graphs()) {
    sp::substitute_values(*work.nested_graph(entry.first), values, ranges, report);
  }
  sp::remove_constant_asserts(g, report);               // 3.
  sp::fold_constant_symbols(g, report);                 // 4.
  sp::inline_constant_conds(work, report);              // 4b.
  work.metadata().range_constraints = std::move(kept);  // 5.
  sp::recompute_values(work, report);                   // 6.

  // commit (no-throw)
  work.state_dict().swap(program.state_dict());
  work.constants().swap(program.constants());
  program.swap(work);
  return report;
}

}  // namespace epgraph
