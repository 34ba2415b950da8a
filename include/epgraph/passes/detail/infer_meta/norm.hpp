// infer_meta rules of normalization (batch, layer, group norm) and dropout.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include "elementwise.hpp"
#include "shapes.hpp"

namespace epgraph {
namespace detail {
namespace infer {

inline NodeValue rule_batch_norm(const Context& ctx) {
  const TensorMeta& input = ctx.tensor("input");
  TensorMeta out = formatted_meta(ctx, input.dtype, input.sizes, input.device,
                                  MemoryFormat::PreserveFormat, &input);
  const TensorMeta empty =
      make_meta(input.dtype, {std::int64_t{0}}, {std::int64_t{1}}, input.device);
  return NodeValue(NodeValue::List{NodeValue(std::move(out)), NodeValue(empty), NodeValue(empty)});
}

// The normalized_shape check of layer_norm and native_layer_norm (torch's
// _check_layer_norm_inputs).
inline void check_normalized_shape(const Context& ctx, const TensorMeta& input,
                                   const Sizes& normalized) {
  const std::size_t rank = input.sizes.size();
  bool ok = normalized.size() <= rank && !normalized.empty();
  for (std::size_t i = 0; ok && i < normalized.size(); ++i) {
    ok = ctx.equal(normalized[i], input.sizes[rank - normalized.size() + i]);
  }
  if (!ok) {
    ctx.fail("Given normalized_shape=" + shape_str(normalized) +
             ", expected input with shape [*, " + shape_str(normalized).substr(1) +
             ", but got input of size" + shape_str(input.sizes));
  }
}

inline NodeValue rule_layer_norm(const Context& ctx) {
  const TensorMeta& input = ctx.tensor("input");
  const Sizes normalized = ctx.sym_list("normalized_shape");
  check_normalized_shape(ctx, input, normalized);
  const std::size_t rank = input.sizes.size();
  TensorMeta out = contiguous_meta(ctx, input.dtype, input.sizes, input.device);
  Sizes stat(input.sizes.begin(),
             input.sizes.end() - static_cast<std::ptrdiff_t>(normalized.size()));
  stat.resize(rank, std::int64_t{1});
  TensorMeta mean = contiguous_meta(ctx, input.dtype, stat, input.device);
  return NodeValue(NodeValue::List{NodeValue(std::move(out)), NodeValue(mean), NodeValue(mean)});
}

// aten.layer_norm: input's shape, contiguous.
inline NodeValue rule_layer_norm_op(const Context& ctx, std::string_view) {
  const TensorMeta& input = ctx.tensor("input");
  check_normalized_shape(ctx, input, ctx.sym_list("normalized_shape"));
  return contiguous_meta(ctx, input.dtype, input.sizes, input.device);
}

// aten.batch_norm: input's shape and memory format (preserve).
inline NodeValue rule_batch_norm_op(const Context& ctx, std::string_view) {
  return preserved_like(ctx, "input");
}

// aten.dropout: with train=False the input itself (its strides and offset); with train=True
// input * mask, an elementwise result.
inline NodeValue rule_dropout(const Context& ctx, std::string_view) {
  const TensorMeta& input = ctx.tensor("input");
  if (!ctx.boolean("train")) {
    TensorMeta out = input;
    out.requires_grad = false;
    return out;
  }
  return elementwise_meta(ctx, input.dtype, {&input});
}

// native_batch_norm, _native_batch_norm_legit(.no_stats), _native_batch_norm_legit_functional:
// the output is empty_like(input); save_mean and save_invstd are [C] in the input's dtype when
// training, else [0]; the functional form also returns the new running_mean and running_var
// (shaped and typed like them).
inline NodeValue rule_batch_norm_stats(const Context& ctx, std::string_view op) {
  const TensorMeta& input = ctx.tensor("input");
  if (input.sizes.size() < 2) {
    ctx.fail("batch_norm expects an input of at least 2 dimensions, got " + shape_str(input.sizes));
  }
  const bool training = ctx.boolean("training");
  NodeValue::List out;
  out.emplace_back(formatted_meta(ctx, input.dtype, input.sizes, input.device,
                                  MemoryFormat::PreserveFormat, &input));
  const Sizes stat = training ? Sizes{input.sizes[1]} : Sizes{std::int64_t{0}};
  const TensorMeta save = contiguous_meta(ctx, input.dtype, stat, input.device);
  out.emplace_back(save);
  out.emplace_back(save);
  if (op == "_native_batch_norm_legit_functional") {
    for (const char* name : {"running_mean", "running_var"}) {
      const TensorMeta& r = ctx.tensor(name);
      out.emplace_back(contiguous_meta(ctx, r.dtype, r.sizes, r.device));
    }
  }
  return NodeValue(std::move(out));
}

// native_group_norm: (empty_like(input), mean [N, group], rstd [N, group]); group_norm: the
// first of these.
inline NodeValue rule_group_norm(const Context& ctx, std::string_view op) {
  const TensorMeta& input = ctx.tensor("input");
  if (input.sizes.size() < 2) {
    ctx.fail("group_norm expects an input of at least 2 dimensions, got " + shape_str(input.sizes));
  }
  TensorMeta out = formatted_meta(ctx, input.dtype, input.sizes, input.device,
                                  MemoryFormat::PreserveFormat, &input);
  const std::int64_t groups = ctx.integer(op == "group_norm" ? "num_groups" : "group");
  const auto* channels = std::get_if<std::int64_t>(&input.sizes[1]);
  if (groups <= 0 || (channels != nullptr && *channels % groups != 0)) {
    ctx.fail(
        "Expected number of channels in input to be divisible by num_groups, but got input "
        "of shape " +
        shape_str(input.sizes) + " and num_groups=" + std::to_string(groups));
  }
  if (op == "group_norm") return out;
  const TensorMeta stat =
      contiguous_meta(ctx, input.dtype, {input.sizes[0], SymInt{groups}}, input.device);
  return NodeValue(NodeValue::List{NodeValue(std::move(out)), NodeValue(stat), NodeValue(stat)});
}

// aten.instance_norm: torch runs batch_norm on input.contiguous() viewed as [1, N*C, ...] and
// views the result back, so the output is a new contiguous tensor of the input's shape and dtype.
inline NodeValue rule_instance_norm(const Context& ctx, std::string_view) {
  const TensorMeta& input = ctx.tensor("input");
  if (input.sizes.size() < 2) {
    ctx.fail("instance_norm expects an input of at least 2 dimensions, got " +
             shape_str(input.sizes));
  }
  if (!ctx.boolean("use_input_stats") &&
      (ctx.given_arg("running_mean") == nullptr || ctx.given_arg("running_var") == nullptr)) {
    ctx.fail("Expected running_mean and running_var to be defined when use_input_stats is false");
  }
  return contiguous_meta(ctx, input.dtype, input.sizes, input.device);
}

// native_dropout: (empty_like(input), a bool mask like it).
inline NodeValue rule_native_dropout(const Context& ctx, std::string_view) {
  const TensorMeta& input = ctx.tensor("input");
  TensorMeta out = formatted_meta(ctx, input.dtype, input.sizes, input.device,
                                  MemoryFormat::PreserveFormat, &input);
  TensorMeta mask = out;
  mask.dtype = dtype::bool_;
  return NodeValue(NodeValue::List{NodeValue(std::move(out)), NodeValue(std::move(mask))});
}

}  // namespace infer
}  // namespace detail
}  // namespace epgraph
