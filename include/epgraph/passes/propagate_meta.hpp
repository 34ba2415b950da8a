// Whole-program metadata propagation: every node's `meta().val` recomputed (or checked) in graph
// order from the placeholders' values with infer_meta, as torch's FakeTensorProp / ShapeProp do.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
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
#include "detail/nested_meta.hpp"
#include "detail/substitute.hpp"
#include "infer_meta.hpp"
#include "same_value.hpp"

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
  std::size_t nodes = 0;     ///< call_function nodes of the program's graph and nested graphs
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

// A node whose stored value propagate_meta replaced, with the value before: moved back on an
// error, and always in check_only. `scope`: the target of the nested graph it is in (a key of
// the program's NestedGraphs, stable), or nullptr for the program's graph.
struct Replaced {
  const Node* node;
  NodeMeta* meta;
  NodeValue before;
  const std::string* scope;
};

// A node's name as reports give it: `add`, or `true_graph_0.add` in a nested graph.
inline std::string scoped_name(const std::string* scope, const Node& n) {
  return scope == nullptr ? std::string(n.name()) : *scope + "." + std::string(n.name());
}

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

// Runs infer_meta over a graph and the nested graphs its higher-order ops call, into the
// nodes' values, keeping each replaced value in `replaced` (the caller restores them).
class Propagator {
 public:
  Propagator(const NestedGraphs& nested, const MetaContext& symbols, MetaMode mode,
             MetaReport& report, std::vector<Replaced>& replaced)
      : nested_(nested), symbols_(symbols), mode_(mode), report_(report), replaced_(replaced) {}

  // Every call_function node of `g` in order (`scope`: see Replaced).
  void run_graph(Graph& g, const std::string* scope) {
    for (Node& n : g.nodes()) {
      if (n.op() != OpCode::call_function) continue;
      ++report_.nodes;
      const NodeValue& stored = std::as_const(n).meta().val;
      if (mode_ == MetaMode::fill_unset && stored.has_value()) continue;
      std::optional<NodeValue> computed = compute_value(n, scope);
      if (!computed) continue;
      ++report_.computed;
      if (!stored.has_value() && computed->is_none()) {
        // an op without outputs (`_assert_tensor_metadata`): torch's file has no value to keep
        // for it, so its unset value is the None it computes
        ++report_.equal;
        continue;
      }
      store(n, std::move(*computed), scope);
    }
  }

 private:
  // `value` into `n`'s meta().val, the value before kept in replaced_.
  void store(Node& n, NodeValue value, const std::string* scope) {
    NodeMeta& meta = n.mutable_meta();  // may allocate: before anything is moved
    replaced_.push_back(Replaced{&n, &meta, NodeValue{}, scope});
    replaced_.back().before = std::move(meta.val);
    meta.val = std::move(value);
  }

  // The value infer_meta (or, for a higher-order op, the nested graph it calls) computes for
  // `n`. In check_only a node it cannot compute (no rule, or a stored value that cannot be read)
  // or whose op refuses its arguments is listed in report.uncomputed / report.invalid, and nullopt
  // returned; the other modes throw.
  std::optional<NodeValue> compute_value(const Node& n, const std::string* scope) {
    if (mode_ != MetaMode::check_only) return value_of(n);
    const NodeValue& stored = n.meta().val;
    const std::string name = scoped_name(scope, n);
    if (std::string why = symbols_.unreadable(stored); !why.empty()) {
      report_.invalid.push_back(
          MetaDifference{name,
                         std::string(n.target()),
                         stored,
                         {},
                         "Node '" + name + "' (" + std::string(n.target()) +
                             ") has a stored value epgraph cannot read: " + std::move(why)});
      return std::nullopt;
    }
    try {
      return value_of(n);
    } catch (const unsupported_meta_error& e) {
      report_.uncomputed.push_back(
          MetaDifference{name, std::string(n.target()), stored, {}, e.what()});
    } catch (const value_error& e) {
      report_.invalid.push_back(
          MetaDifference{name, std::string(n.target()), stored, {}, e.what()});
    }
    return std::nullopt;
  }

  NodeValue value_of(const Node& n) {
    const NestedOp op = nested_op_of(n.target());
    if (op == NestedOp::none) return infer_meta(n, symbols_);
    const infer::Context ctx(n, nullptr, symbols_);
    auto run = [&](const Node& attr, const std::vector<NodeValue>& operands) {
      return run_nested(ctx, attr, operands);
    };
    return nested_op_value(op, ctx, symbols_, run);
  }

  // The nested graph the get_attr node `attr` reads, run with its placeholders bound to
  // `operands`: its outputs' values. A graph is run once per propagation; a later call with the
  // same operand values gets the same outputs.
  NodeValue::List run_nested(const infer::Context& ctx, const Node& attr,
                             const std::vector<NodeValue>& operands) {
    const std::string target(attr.target());
    const auto it = nested_.find(target);
    if (it == nested_.end() || !attr.meta().serialized.empty()) {
      if (!attr.meta().serialized.empty()) {
        ctx.cannot("its nested graph '" + target +
                   "' is kept as the record of the file it was read from: "
                   "epgraph::json::materialize_nested_graphs(program) makes those of the "
                   "program's graph Graphs (one nested in another stays a record)");
      }
      ctx.fail("the program has no nested graph '" + target + "' (node '" +
               std::string(attr.name()) + "')");
    }
    Graph& g = *it->second;
    const std::vector<Node*> inputs = g.find_nodes(OpCode::placeholder);
    if (inputs.size() != operands.size()) {
      ctx.fail("the nested graph '" + target + "' has " + std::to_string(inputs.size()) +
               " inputs and the node gives it " + std::to_string(operands.size()));
    }
    std::vector<NodeValue> bound;
    bound.reserve(operands.size());
    for (const NodeValue& v : operands) {
      const TensorMeta* t = v.tensor();
      if (t == nullptr || !t->requires_grad) {
        bound.push_back(v);
        continue;
      }
      // torch traces a nested graph on detached copies of the operands: its placeholders'
      // values never require grad (a parameter passed to a cond branch included)
      TensorMeta copy = *t;
      copy.requires_grad = false;
      bound.emplace_back(std::move(copy));
    }
    if (const auto first = entered_.find(&g); first != entered_.end()) {
      if (first->second.empty()) ctx.fail("the nested graph '" + target + "' calls itself");
      for (std::size_t i = 0; i < inputs.size(); ++i) {
        if (!same_value(inputs[i]->meta().val, bound[i], symbols_)) {
          ctx.cannot("it calls the nested graph '" + target + "' with input " + std::to_string(i) +
                     " " + value_text(bound[i]) + ", which node '" + first->second +
                     "' called with " + value_text(inputs[i]->meta().val) +
                     ": epgraph keeps one value per node");
        }
      }
      return outputs(ctx, g, target);
    }
    entered_.emplace(&g, std::string());  // running: a call from inside is a cycle
    const std::string* scope = &it->first;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      if (mode_ == MetaMode::fill_unset && inputs[i]->meta().val.has_value()) continue;
      store(*inputs[i], std::move(bound[i]), scope);
    }
    run_graph(g, scope);
    entered_[&g] = std::string(ctx.node().name());
    return outputs(ctx, g, target);
  }

  // The values of the outputs of the nested graph `g`.
  static NodeValue::List outputs(const infer::Context& ctx, const Graph& g,
                                 const std::string& target) {
    const Node* out = g.output_node();
    if (out == nullptr || out->args().empty()) {
      ctx.fail("the nested graph '" + target + "' has no output node");
    }
    NodeValue::List values;
    const Argument& a = out->args()[0];
    const ArgumentList* list = a.list();
    const std::size_t count = list != nullptr ? list->size() : 1;
    for (std::size_t i = 0; i < count; ++i) {
      const Argument& r = list != nullptr ? (*list)[i] : a;
      if (r.is_none()) {
        values.emplace_back(None{});
      } else if (const Node* n = r.node(); n != nullptr && n->meta().val.has_value()) {
        values.push_back(n->meta().val);
      } else {
        ctx.cannot("output " + std::to_string(i) + " of the nested graph '" + target +
                   "' has no value");
      }
    }
    return values;
  }

  const NestedGraphs& nested_;
  const MetaContext& symbols_;
  MetaMode mode_;
  MetaReport& report_;
  std::vector<Replaced>& replaced_;
  // The nested graphs run so far, with the node that ran them ("" while running).
  std::map<const Graph*, std::string> entered_;
};

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
/// Nested graphs: the higher-order ops `cond`, `while_loop`, `map_impl`, `invoke_subgraph` and
/// `wrap_with_set_grad_enabled` run the nested graphs they call (the program's nested_graphs(),
/// read through the op's get_attr arguments) with the graphs' placeholders bound to the
/// operands' values, and take their values from the graphs' outputs as torch's FakeTensorMode
/// implementations do (torch/_higher_order_ops/): cond's two branches must give the same values
/// (torch merges differing sizes into new unbacked symbols: unsupported_meta_error) and its
/// predicate be a bool, a SymBool or a one-element boolean tensor (value_error otherwise, as for
/// a wrap_with_set_grad_enabled flag that is not a bool), while_loop's
/// body must give its carried inputs' dtypes and sizes (value_error otherwise) and carry tensors
/// only, map_impl's body runs on the first slice of `xs` and its outputs get the batch size in
/// front. Every node of a nested graph counts in the report, named `<graph>.<node>`
/// (`true_graph_0.add`); a placeholder bound to a value other than its stored one is listed in
/// differences (not counted in nodes). A graph is run once: a second call with other operand
/// values (invoke_subgraph) is unsupported_meta_error, a graph calling itself value_error.
/// `wrap_with_autocast` has no rule (autocast changes the ops' dtypes).
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
/// names it likewise); unsupported_meta_error "... (torch.ops.higher_order.cond): its nested
/// graph 'true_graph_0' is kept as the record of the file it was read from:
/// epgraph::json::materialize_nested_graphs(program) makes those of the program's graph Graphs
/// (one nested in another stays a record)" for a higher-order op whose graph the program does not
/// own; value_error for a higher-order op whose nested graph does not fit it (see
/// below). std::bad_alloc. Strong guarantee: on any error every node has its value back (values
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
    detail::propagate::Propagator(program.nested_graphs(), symbols, mode, report, replaced)
        .run_graph(program.graph(), nullptr);
    detail::propagate::apply_solved_equalities(symbols, replaced);
    for (const Replaced& r : replaced) {
      // a nested graph's placeholder, bound to its operand's value, counts only when it differs
      const bool counted = r.node->op() == OpCode::call_function;
      if (same_value(r.before, r.meta->val, symbols)) {
        if (counted) ++report.equal;
      } else {
        report.differences.push_back(
            MetaDifference{detail::propagate::scoped_name(r.scope, *r.node),
                           std::string(r.node->target()), r.before, r.meta->val, ""});
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
