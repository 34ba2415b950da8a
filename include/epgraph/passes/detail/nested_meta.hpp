// The values of the higher-order ops that call nested graphs (cond, while_loop, map_impl,
// invoke_subgraph, wrap_with_set_grad_enabled), computed from the values of the nested graphs'
// outputs, as the ops' FakeTensorMode implementations in torch/_higher_order_ops compute them.
// Used by propagate_meta, which runs the nested graphs.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../../ir/argument.hpp"
#include "../../ir/node.hpp"
#include "../../ir/value.hpp"
#include "../same_value.hpp"
#include "infer_meta/shapes.hpp"

namespace epgraph {
namespace detail {
namespace propagate {

// The higher-order ops propagate_meta enters.
enum class NestedOp { none, cond, while_loop, map_impl, invoke_subgraph, set_grad_enabled };

// The higher-order op `target` names (`torch.ops.higher_order.cond`), or NestedOp::none.
inline NestedOp nested_op_of(std::string_view target) noexcept {
  constexpr std::string_view prefix = "torch.ops.higher_order.";
  if (target.substr(0, prefix.size()) != prefix) return NestedOp::none;
  const std::string_view op = target.substr(prefix.size());
  if (op == "cond") return NestedOp::cond;
  if (op == "while_loop") return NestedOp::while_loop;
  if (op == "map_impl") return NestedOp::map_impl;
  if (op == "invoke_subgraph") return NestedOp::invoke_subgraph;
  if (op == "wrap_with_set_grad_enabled") return NestedOp::set_grad_enabled;
  return NestedOp::none;
}

// The get_attr node argument `i` of `ctx`'s node names (the nested graph it calls).
inline const Node& graph_argument(const infer::Context& ctx, std::size_t i, std::string_view what) {
  const ArgumentView args = ctx.node().args();
  const Node* g = i < args.size() ? args[i].node() : nullptr;
  if (g == nullptr || g->op() != OpCode::get_attr) {
    ctx.fail("argument " + std::to_string(i) + " (" + std::string(what) +
             ") is not a get_attr node reading a nested graph");
  }
  return *g;
}

// The value an operand of a higher-order op has: its node's value (set), or an int constant.
inline NodeValue operand_value(const infer::Context& ctx, const Argument& a,
                               std::string_view what) {
  if (const Node* n = a.node()) {
    if (!n->meta().val.has_value()) {
      ctx.cannot(std::string(what) + " (node '" + std::string(n->name()) +
                 "') has no value: its meta().val is unset");
    }
    return n->meta().val;
  }
  if (a.is<std::int64_t>()) return SymIntValue{SymInt{a.as<std::int64_t>()}};
  ctx.cannot(std::string(what) + " is not a node");
}

// The values of the operands in the list argument `i` (cond's operands, map's xs).
inline std::vector<NodeValue> operand_list(const infer::Context& ctx, std::size_t i,
                                           std::string_view what) {
  const ArgumentView args = ctx.node().args();
  const ArgumentList* list = i < args.size() ? args[i].list() : nullptr;
  if (list == nullptr)
    ctx.fail("argument " + std::to_string(i) + " (" + std::string(what) +
             ") is not a list of nodes");
  std::vector<NodeValue> out;
  out.reserve(list->size());
  for (std::size_t k = 0; k < list->size(); ++k) {
    out.push_back(
        operand_value(ctx, (*list)[k], std::string(what) + "[" + std::to_string(k) + "]"));
  }
  return out;
}

// The values of the operands from argument `from` on (invoke_subgraph's *operands).
inline std::vector<NodeValue> operand_tail(const infer::Context& ctx, std::size_t from) {
  const ArgumentView args = ctx.node().args();
  std::vector<NodeValue> out;
  for (std::size_t k = from; k < args.size(); ++k) {
    out.push_back(operand_value(ctx, args[k], "operand " + std::to_string(k - from)));
  }
  return out;
}

// A tensor value `what` must be, for map's and while_loop's rules.
inline const TensorMeta& tensor_value(const infer::Context& ctx, const NodeValue& v,
                                      const std::string& what) {
  const TensorMeta* t = v.tensor();
  if (t == nullptr) ctx.cannot(what + " is not a tensor: " + value_text(v));
  return *t;
}

// cond: both branches run on the operands; their outputs must agree. torch (cond.py,
// _merge_output) gives outputs whose sizes differ new unbacked sizes; epgraph does not.
// cond's predicate: a bool, a SymBool, or a boolean tensor of one element (torch's cond:
// "Expected pred to be bool or single-element bool tensor").
inline void check_predicate(const infer::Context& ctx) {
  const Argument& pred = ctx.node().args()[0];
  if (pred.is<bool>()) return;
  const Node* n = pred.node();
  const NodeValue* v = n != nullptr ? &n->meta().val : nullptr;
  if (v != nullptr && !v->has_value()) {
    ctx.cannot("the predicate (node '" + std::string(n->name()) +
               "') has no value: its meta().val is unset");
  }
  if (v != nullptr && v->sym_bool() != nullptr) return;
  if (const TensorMeta* t = v != nullptr ? v->tensor() : nullptr) {
    bool one = true;
    for (const SymInt& s : t->sizes) one = one && s == SymInt{std::int64_t{1}};
    if (t->dtype == dtype::bool_ && one) return;
  }
  ctx.fail("the predicate must be a bool, a SymBool or a boolean tensor of one element, not " +
           (v != nullptr ? value_text(*v) : std::string("a constant of another type")));
}

template <class Run>
NodeValue cond_value(const infer::Context& ctx, const MetaContext& symbols, Run& run) {
  if (ctx.node().args().size() != 4) ctx.fail("expected (pred, true_fn, false_fn, operands)");
  check_predicate(ctx);
  const Node& true_fn = graph_argument(ctx, 1, "true_fn");
  const Node& false_fn = graph_argument(ctx, 2, "false_fn");
  const std::vector<NodeValue> operands = operand_list(ctx, 3, "operands");
  NodeValue::List t = run(true_fn, operands);
  const NodeValue::List f = run(false_fn, operands);
  if (t.size() != f.size()) {
    ctx.fail("the true branch '" + std::string(true_fn.target()) + "' returns " +
             std::to_string(t.size()) + " values and the false branch '" +
             std::string(false_fn.target()) + "' " + std::to_string(f.size()));
  }
  for (std::size_t i = 0; i < t.size(); ++i) {
    if (!same_value(t[i], f[i], symbols)) {
      ctx.cannot("output " + std::to_string(i) + " differs between the branches (true: " +
                 value_text(t[i]) + "; false: " + value_text(f[i]) +
                 "): torch merges such outputs into new unbacked sizes, which epgraph does not");
    }
  }
  return NodeValue(std::move(t));
}

// while_loop: cond_fn and body_fn run on carried_inputs + additional_inputs; the body's outputs
// must match the carried inputs (torch's check_meta_consistency), and are the loop's values.
template <class Run>
NodeValue while_loop_value(const infer::Context& ctx, const MetaContext& symbols, Run& run) {
  const Node& cond_fn = graph_argument(ctx, 0, "cond_fn");
  const Node& body_fn = graph_argument(ctx, 1, "body_fn");
  std::vector<NodeValue> operands = operand_list(ctx, 2, "carried_inputs");
  const std::size_t carried = operands.size();
  for (NodeValue& v : operand_list(ctx, 3, "additional_inputs")) operands.push_back(std::move(v));
  for (const std::pair<std::string, Argument>& kv : ctx.node().kwargs()) {
    const Argument& value = kv.second;
    if (kv.first == "stack_output" && !(value.is<bool>() && !value.as<bool>())) {
      ctx.cannot("stack_output=True (the loop's iteration count is a new unbacked size)");
    }
  }
  for (std::size_t i = 0; i < carried; ++i) {
    (void)tensor_value(ctx, operands[i], "carried input " + std::to_string(i));
  }
  const NodeValue::List c = run(cond_fn, operands);
  const TensorMeta* pred = c.size() == 1 ? c[0].tensor() : nullptr;
  if (pred == nullptr || pred->dtype != dtype::bool_ || !pred->sizes.empty()) {
    ctx.fail("cond_fn '" + std::string(cond_fn.target()) +
             "' must return one boolean scalar tensor");
  }
  NodeValue::List body = run(body_fn, operands);
  if (body.size() != carried) {
    ctx.fail("body_fn '" + std::string(body_fn.target()) + "' returns " +
             std::to_string(body.size()) + " values for " + std::to_string(carried) +
             " carried inputs");
  }
  for (std::size_t i = 0; i < carried; ++i) {
    const TensorMeta& in = *operands[i].tensor();
    const TensorMeta& out = tensor_value(ctx, body[i], "body output " + std::to_string(i));
    if (in.dtype != out.dtype || in.device != out.device ||
        !same_sizes(in.sizes, out.sizes, symbols)) {
      ctx.fail("body output " + std::to_string(i) + " (" + value_text(body[i]) +
               ") does not match carried input " + std::to_string(i) + " (" +
               value_text(operands[i]) + ")");
    }
  }
  return NodeValue(std::move(body));
}

// map_impl: f runs on the first slice of each xs (select_copy(x, 0, 0): contiguous) and the
// pos_args; each output gets the batch size in front, contiguous (map.py, _broadcast_to_batch).
template <class Run>
NodeValue map_value(const infer::Context& ctx, Run& run) {
  const Node& f = graph_argument(ctx, 0, "f");
  std::vector<NodeValue> operands = operand_list(ctx, 1, "xs");
  if (operands.empty()) ctx.fail("xs is empty");
  SymInt batch = std::int64_t{0};
  for (std::size_t i = 0; i < operands.size(); ++i) {
    TensorMeta slice = tensor_value(ctx, operands[i], "xs[" + std::to_string(i) + "]");
    if (slice.sizes.empty()) ctx.fail("xs[" + std::to_string(i) + "] is a scalar tensor");
    if (i == 0) batch = slice.sizes.front();
    slice.sizes.erase(slice.sizes.begin());
    slice.strides = infer::contiguous_sym_strides(ctx, slice.sizes);
    slice.storage_offset = std::int64_t{0};
    operands[i] = NodeValue(std::move(slice));
  }
  for (NodeValue& v : operand_list(ctx, 2, "pos_args")) operands.push_back(std::move(v));
  NodeValue::List out = run(f, operands);
  for (std::size_t i = 0; i < out.size(); ++i) {
    TensorMeta t = tensor_value(ctx, out[i], "output " + std::to_string(i) + " of f");
    t.sizes.insert(t.sizes.begin(), batch);
    t.strides = infer::contiguous_sym_strides(ctx, t.sizes);
    t.storage_offset = std::int64_t{0};
    out[i] = NodeValue(std::move(t));
  }
  return NodeValue(std::move(out));
}

// The value of the higher-order op `op` at `ctx`'s node. `run(get_attr node, operand values)`
// runs the nested graph that node reads with its placeholders bound to the values and returns
// its outputs' values. Throws what infer_meta throws: unsupported_meta_error where epgraph cannot
// compute it, value_error where torch would refuse the call.
template <class Run>
NodeValue nested_op_value(NestedOp op, const infer::Context& ctx, const MetaContext& symbols,
                          Run& run) {
  switch (op) {
    case NestedOp::cond: return cond_value(ctx, symbols, run);
    case NestedOp::while_loop: return while_loop_value(ctx, symbols, run);
    case NestedOp::map_impl: return map_value(ctx, run);
    case NestedOp::invoke_subgraph:  // (subgraph, identifier, *operands)
      return NodeValue(run(graph_argument(ctx, 0, "subgraph"), operand_tail(ctx, 2)));
    case NestedOp::set_grad_enabled:  // (enabled, graph, *args)
      if (ctx.node().args().empty() || !ctx.node().args()[0].is<bool>()) {
        ctx.fail("argument 0 (enabled) must be a bool");
      }
      return NodeValue(run(graph_argument(ctx, 1, "graph"), operand_tail(ctx, 2)));
    case NestedOp::none: break;
  }
  ctx.cannot("epgraph has no shape rule for it; set meta().val yourself");
}

}  // namespace propagate
}  // namespace detail
}  // namespace epgraph
