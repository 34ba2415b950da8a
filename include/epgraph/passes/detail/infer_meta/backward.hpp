// infer_meta rules of the Core ATen backward ops a training export emits: convolution, layer and
// group norm, embedding, and 2-D pooling backward.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <array>

#include "norm.hpp"
#include "pooling.hpp"

namespace epgraph {
namespace detail {
namespace infer {

// The bool[3] output_mask argument.
inline std::array<bool, 3> output_mask(const Context& ctx) {
  const ArgumentList* l = ctx.arg("output_mask").list();
  if (l == nullptr || l->size() != 3) ctx.fail("argument 'output_mask' is not a list of 3 bools");
  std::array<bool, 3> mask{};
  for (std::size_t i = 0; i < 3; ++i) {
    if (!(*l)[i].is<bool>()) ctx.fail("argument 'output_mask' is not a list of 3 bools");
    mask[i] = (*l)[i].as<bool>();
  }
  return mask;
}

// `make()` when the output is asked for, else None.
template <class F>
NodeValue masked(bool on, const F& make) {
  return on ? NodeValue(make()) : NodeValue(None{});
}

// convolution_backward: grad_input and grad_weight of the input's and weight's sizes, channels-last
// (3d) when torch's suggest_memory_format says so of either; grad_bias of bias_sizes; all in
// grad_output's dtype (torch's meta_convolution_backward).
inline NodeValue rule_convolution_backward(const Context& ctx, std::string_view) {
  const TensorMeta& grad = ctx.tensor("grad_output");
  const TensorMeta& input = ctx.tensor("input");
  const TensorMeta& weight = ctx.tensor("weight");
  const std::array<bool, 3> mask = output_mask(ctx);
  const bool channels_last =
      strides_like_channels_last(ctx, input) || strides_like_channels_last(ctx, weight);
  auto like = [&](const Sizes& sizes) {
    if (channels_last && (sizes.size() == 4 || sizes.size() == 5)) {
      return make_meta(grad.dtype, sizes, channels_last_sym_strides(ctx, sizes), grad.device);
    }
    return contiguous_meta(ctx, grad.dtype, sizes, grad.device);
  };
  auto bias = [&] {
    if (ctx.given_arg("bias_sizes") == nullptr) {
      ctx.fail("bias_sizes must be given when output_mask[2] is true");
    }
    return contiguous_meta(ctx, grad.dtype, ctx.sym_list("bias_sizes"), grad.device);
  };
  return NodeValue(NodeValue::List{masked(mask[0], [&] { return like(input.sizes); }),
                                   masked(mask[1], [&] { return like(weight.sizes); }),
                                   masked(mask[2], bias)});
}

// native_layer_norm_backward: grad_input contiguous like input; grad_weight and grad_bias
// contiguous like weight and bias (the normalized shape when absent), in their dtypes.
inline NodeValue rule_layer_norm_backward(const Context& ctx, std::string_view) {
  const TensorMeta& input = ctx.tensor("input");
  const Sizes normalized = ctx.sym_list("normalized_shape");
  check_normalized_shape(ctx, input, normalized);
  const std::array<bool, 3> mask = output_mask(ctx);
  auto grad_input = [&] { return contiguous_meta(ctx, input.dtype, input.sizes, input.device); };
  auto param = [&](const char* name) {
    if (const TensorMeta* p = ctx.opt_tensor(name)) {
      return contiguous_meta(ctx, p->dtype, p->sizes, p->device);
    }
    return contiguous_meta(ctx, input.dtype, normalized, input.device);
  };
  return NodeValue(NodeValue::List{masked(mask[0], grad_input),
                                   masked(mask[1], [&] { return param("weight"); }),
                                   masked(mask[2], [&] { return param("bias"); })});
}

// native_group_norm_backward: grad_input contiguous like input; grad_weight and grad_bias [C].
inline NodeValue rule_group_norm_backward(const Context& ctx, std::string_view) {
  const TensorMeta& input = ctx.tensor("input");
  const std::array<bool, 3> mask = output_mask(ctx);
  const Sizes channels{ctx.sym_of(ctx.arg("C"), "argument 'C'")};
  auto grad_input = [&] { return contiguous_meta(ctx, input.dtype, input.sizes, input.device); };
  auto stat = [&] { return contiguous_meta(ctx, input.dtype, channels, input.device); };
  return NodeValue(
      NodeValue::List{masked(mask[0], grad_input), masked(mask[1], stat), masked(mask[2], stat)});
}

// embedding_dense_backward: [num_weights, grad_output.size(-1)] in grad_output's dtype.
inline NodeValue rule_embedding_dense_backward(const Context& ctx, std::string_view) {
  const TensorMeta& grad = ctx.tensor("grad_output");
  if (grad.sizes.empty()) ctx.fail("grad_output must have at least one dimension");
  const Sizes sizes{ctx.sym_of(ctx.arg("num_weights"), "argument 'num_weights'"),
                    grad.sizes.back()};
  return contiguous_meta(ctx, grad.dtype, sizes, grad.device);
}

// Refuses a gradient whose shape is not the forward op's output shape.
inline void check_grad_shape(const Context& ctx, const char* name, const TensorMeta& grad,
                             const Sizes& expected) {
  bool same = grad.sizes.size() == expected.size();
  for (std::size_t i = 0; same && i < expected.size(); ++i) {
    same = ctx.equal(grad.sizes[i], expected[i]);
  }
  if (!same) {
    ctx.fail(std::string("argument '") + name + "' has shape " + shape_str(grad.sizes) +
             ", but the pooling of self gives " + shape_str(expected));
  }
}

// avg_pool2d_backward / max_pool2d_with_indices_backward: self's shape and dtype in the memory
// format suggest_memory_format gives self, after checking the gradient (and indices) against the
// forward pooling's output shape.
inline NodeValue rule_pool2d_backward(const Context& ctx, std::string_view op) {
  const bool max = op == "max_pool2d_with_indices_backward";
  const TensorMeta& self = ctx.tensor("self");
  const TensorMeta& grad = ctx.tensor("grad_output");
  if (max && grad.dtype != self.dtype) {
    ctx.fail("Expected dtype " + std::string(dtype_name(self.dtype)) +
             " for `gradOutput` but got dtype " + std::string(dtype_name(grad.dtype)));
  }
  const NodeValue forward = pool2d_meta(ctx, max, false);
  const Sizes& pooled = forward.tensor()->sizes;
  check_grad_shape(ctx, "grad_output", grad, pooled);
  if (max) check_grad_shape(ctx, "indices", ctx.tensor("indices"), pooled);
  return pooled_meta(ctx, self, self.dtype, self.sizes);
}

// _adaptive_avg_pool2d_backward: self's shape, channels-last when self is.
inline NodeValue rule_adaptive_avg_pool2d_backward(const Context& ctx, std::string_view) {
  const TensorMeta& grad = ctx.tensor("grad_output");
  const TensorMeta& self = ctx.tensor("self");
  if (grad.sizes.size() != 3 && grad.sizes.size() != 4) {
    ctx.fail("adaptive_avg_pool2d_backward(): Expected 3D or 4D tensor, but got " +
             shape_str(self.sizes));
  }
  if (grad.dtype != self.dtype) {
    ctx.fail("expected dtype " + std::string(dtype_name(self.dtype)) +
             " for `grad_output` but got dtype " + std::string(dtype_name(grad.dtype)));
  }
  return pooled_meta(ctx, self, self.dtype, self.sizes);
}

}  // namespace infer
}  // namespace detail
}  // namespace epgraph
