// What a call_function target says about a node's purity (Node::is_impure,
// Graph::eliminate_dead_code): side-effectful targets, schemas that write, wrapped operators.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <algorithm>
#include <iterator>
#include <string_view>

#include "../../detail/strings.hpp"
#include "../../ops/detail/impure_targets.hpp"
#include "../../ops/registry.hpp"
#include "../argument.hpp"
#include "../node.hpp"

namespace epgraph {

namespace detail {

// What a call_function target says about the node's purity (Node::is_impure).
inline constexpr int pure_target = 0;
inline constexpr int impure_target = 1;
inline constexpr int impure_if_wrapped_op_is = 2;  // auto_functionalized: ask its first argument
inline constexpr int unknown_operator = 3;  // torch.ops.<ns>.<op>.<overload> without a schema

// One of torch.fx.node._side_effectful_functions (as FX targets). O(log table).
inline bool is_side_effectful_target(std::string_view target) noexcept {
  return std::binary_search(std::begin(side_effectful_targets), std::end(side_effectful_targets),
                            target);
}

// The purity of call_function target `target` (see Node::is_impure). May throw value_error when
// a lazily registered schema does not parse. O(log registry + length).
inline int target_impurity(std::string_view target) {
  if (is_side_effectful_target(target)) return impure_target;
  if (std::binary_search(std::begin(random_targets), std::end(random_targets), target)) {
    return impure_target;
  }
  if (starts_with(target, "torch.ops.aten._assert") ||
      starts_with(target, "torch.ops.aten.sym_constrain_range") ||
      target == "torch.ops.higher_order.with_effects") {
    return impure_target;
  }
  if (target == "torch.ops.higher_order.auto_functionalized" ||
      target == "torch.ops.higher_order.auto_functionalized_v2") {
    return impure_if_wrapped_op_is;
  }
  if (const FunctionSchema* s = global_registry().find_target(target)) {
    if (s->is_mutable() || (s->returns.empty() && !s->is_varret)) return impure_target;
    return pure_target;
  }
  // An operator nobody registered (a custom op: a .pt2 never carries its schema) may mutate its
  // arguments or return nothing; higher-order operators are judged by their own rules above.
  if (starts_with(target, "torch.ops.") && !starts_with(target, "torch.ops.higher_order.")) {
    return unknown_operator;
  }
  return pure_target;
}

// Whether a node of purity `kind` is impure under `unknown`.
inline bool impure_kind(int kind, UnknownOperators unknown) noexcept {
  return kind == impure_target || (kind == unknown_operator && unknown == UnknownOperators::impure);
}

// auto_functionalized(op, ...): FX calls it impure when `op` is side-effectful.
inline bool wrapped_op_is_impure(ArgumentView args) {
  if (args.size() == 0) return false;
  const std::string* op = args[0].is<std::string>() ? &args[0].as<std::string>() : nullptr;
  return op != nullptr && is_side_effectful_target(*op);
}

struct edit_access;  // edit.hpp: the edits' early prefetch of the graph's tables

}  // namespace detail

}  // namespace epgraph
