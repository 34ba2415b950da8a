// infer_meta rules of pooling, padding and upsampling.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include "shapes.hpp"

namespace epgraph {
namespace detail {
namespace infer {

// c10's suggest_memory_format for a pooling input: channels-last when its strides are (and not
// also contiguous), else contiguous; pooling outputs of `sizes` get those strides.
inline TensorMeta pooled_meta(const Context& ctx, const TensorMeta& input, dtype type,
                              Sizes sizes) {
  const auto s = all_concrete(input.sizes);
  const auto st = all_concrete(input.strides);
  if (s && st && s->size() == 4 && is_channels_last(*s, *st) && !is_contiguous(*s, *st)) {
    return formatted_meta(ctx, type, sizes, input.device, MemoryFormat::ChannelsLast, nullptr);
  }
  return contiguous_meta(ctx, type, std::move(sizes), input.device);
}

// Refuses a 2-D pooling input that is not 3-D (C, H, W) or 4-D (N, C, H, W).
inline void check_pool_input(const Context& ctx, const TensorMeta& input, const char* op) {
  if (input.sizes.size() != 3 && input.sizes.size() != 4) {
    ctx.fail(std::string(op) + ": Expected 3D or 4D (batch mode) tensor for input, got " +
             shape_str(input.sizes));
  }
}

// aten.adaptive_avg_pool2d: [N,] C, output_size.
inline NodeValue rule_adaptive_avg_pool2d(const Context& ctx, std::string_view) {
  const TensorMeta& input = ctx.tensor("self");
  check_pool_input(ctx, input, "adaptive_avg_pool2d");
  const Sizes out_size = ctx.sym_list("output_size");
  if (out_size.size() != 2) ctx.fail("adaptive_avg_pool2d: output_size must be 2");
  Sizes shape(input.sizes.begin(), input.sizes.end() - 2);
  shape.insert(shape.end(), out_size.begin(), out_size.end());
  return pooled_meta(ctx, input, input.dtype, std::move(shape));
}

// A 2-D (n = 2) or 3-D (n = 3) pooling parameter given as one or n ints (`fallback` when empty,
// for stride).
inline Ints pool_param(const Context& ctx, const char* name, const Ints& fallback,
                       std::size_t n = 2) {
  Ints v = ctx.has(name) ? ctx.int_list(name) : Ints{};
  if (v.empty()) v = fallback;
  if (v.size() == 1) v.assign(n, v[0]);
  if (v.size() != n) {
    ctx.fail(std::string(name) + " must either be a single int, or a tuple of " +
             (n == 2 ? "two" : "three") + " ints");
  }
  return v;
}

// The output shape of a 2-D (n = 2) or 3-D (n = 3) pooling of `input`: its leading dimensions,
// then torch's pooling_output_shape (aten/src/ATen/native/Pool.h) for each of the last n.
inline Sizes pool_shape(const Context& ctx, const TensorMeta& input, std::size_t n,
                        bool with_dilation) {
  const Ints kernel = pool_param(ctx, "kernel_size", {}, n);
  const Ints stride = pool_param(ctx, "stride", kernel, n);
  const Ints padding = pool_param(ctx, "padding", {0}, n);
  const Ints dilation = with_dilation ? pool_param(ctx, "dilation", {1}, n) : Ints(n, 1);
  const bool ceil_mode = ctx.has("ceil_mode") && ctx.boolean("ceil_mode");
  Sizes shape(input.sizes.begin(), input.sizes.end() - static_cast<std::ptrdiff_t>(n));
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t d = input.sizes.size() - n + i;
    const std::int64_t in =
        ctx.concrete(input.sizes[d], "argument 'self' dimension " + std::to_string(d));
    if (kernel[i] <= 0 || stride[i] <= 0 || dilation[i] <= 0) {
      ctx.fail("kernel_size, stride and dilation must be greater than zero");
    }
    if (padding[i] < 0 || padding[i] > kernel[i] / 2) {
      ctx.fail("pad should be at most half of effective kernel size, but got pad=" +
               std::to_string(padding[i]) + ", kernel_size=" + std::to_string(kernel[i]));
    }
    const std::int64_t span =
        in + 2 * padding[i] - dilation[i] * (kernel[i] - 1) - 1 + (ceil_mode ? stride[i] - 1 : 0);
    std::int64_t o = (span >= 0 ? span / stride[i] : -((-span + stride[i] - 1) / stride[i])) + 1;
    if (ceil_mode && (o - 1) * stride[i] >= in + padding[i]) --o;
    if (o <= 0) {
      ctx.fail("Given input size " + shape_str(input.sizes) + ", the calculated output size of " +
               "spatial dimension " + std::to_string(i) + " is " + std::to_string(o) +
               ", which is too small");
    }
    shape.push_back(o);
  }
  return shape;
}

inline NodeValue pool2d_meta(const Context& ctx, bool with_dilation, bool with_indices) {
  const TensorMeta& input = ctx.tensor("self");
  check_pool_input(ctx, input, with_dilation ? "max_pool2d" : "avg_pool2d");
  Sizes shape = pool_shape(ctx, input, 2, with_dilation);
  TensorMeta out = pooled_meta(ctx, input, input.dtype, shape);
  if (!with_indices) return out;
  TensorMeta indices = pooled_meta(ctx, input, dtype::int64, std::move(shape));
  return NodeValue(NodeValue::List{NodeValue(std::move(out)), NodeValue(std::move(indices))});
}

inline NodeValue rule_max_pool2d(const Context& ctx, std::string_view op) {
  return pool2d_meta(ctx, true, op == "max_pool2d_with_indices");
}

inline NodeValue rule_avg_pool2d(const Context& ctx, std::string_view) {
  return pool2d_meta(ctx, false, false);
}

// Refuses a 3-D pooling input that is not 4-D (C, D, H, W) or 5-D (N, C, D, H, W).
inline void check_pool3d_input(const Context& ctx, const TensorMeta& input, const char* op) {
  if (input.sizes.size() != 4 && input.sizes.size() != 5) {
    ctx.fail(std::string(op) + ": Expected 4D or 5D (batch mode) tensor for input, got " +
             shape_str(input.sizes));
  }
}

// max_pool3d_with_indices: output and int64 indices, channels_last_3d when the input is (and is
// not also contiguous), as torch's suggest_memory_format decides; else contiguous.
inline NodeValue rule_max_pool3d(const Context& ctx, std::string_view) {
  const TensorMeta& input = ctx.tensor("self");
  check_pool3d_input(ctx, input, "max_pool3d_with_indices");
  Sizes shape = pool_shape(ctx, input, 3, true);
  const auto s = all_concrete(input.sizes);
  const auto st = all_concrete(input.strides);
  const bool cl3 =
      s && st && s->size() == 5 && is_channels_last(*s, *st) && !is_contiguous(*s, *st);
  const std::optional<MemoryFormat> format =
      cl3 ? std::optional<MemoryFormat>(MemoryFormat::ChannelsLast3d) : std::nullopt;
  TensorMeta out = formatted_meta(ctx, input.dtype, shape, input.device, format, nullptr);
  TensorMeta indices = formatted_meta(ctx, dtype::int64, shape, input.device, format, nullptr);
  return NodeValue(NodeValue::List{NodeValue(std::move(out)), NodeValue(std::move(indices))});
}

// avg_pool3d (kernel, stride, padding, ceil_mode; count_include_pad and divisor_override do not
// change the shape): contiguous, whatever the input's layout (torch's meta_avg_pool3d).
inline NodeValue rule_avg_pool3d(const Context& ctx, std::string_view) {
  const TensorMeta& input = ctx.tensor("self");
  check_pool3d_input(ctx, input, "avg_pool3d");
  return contiguous_meta(ctx, input.dtype, pool_shape(ctx, input, 3, false), input.device);
}

// _adaptive_avg_pool3d: [N,] C, output_size; contiguous, whatever the input's layout.
inline NodeValue rule_adaptive_avg_pool3d(const Context& ctx, std::string_view) {
  const TensorMeta& input = ctx.tensor("self");
  check_pool3d_input(ctx, input, "adaptive_avg_pool3d");
  const Sizes out_size = ctx.sym_list("output_size");
  if (out_size.size() != 3) ctx.fail("adaptive_avg_pool3d: output_size must be 3");
  Sizes shape(input.sizes.begin(), input.sizes.end() - 3);
  shape.insert(shape.end(), out_size.begin(), out_size.end());
  return contiguous_meta(ctx, input.dtype, std::move(shape), input.device);
}

// The memory format torch's suggest_memory_format gives `input` for a new output of another
// shape (pooling, padding, resampling): channels-last when its strides are (and not also
// contiguous), else contiguous.
inline TensorMeta suggested_meta(const Context& ctx, const TensorMeta& input, dtype type,
                                 Sizes sizes) {
  return pooled_meta(ctx, input, type, std::move(sizes));
}

// constant_pad_nd / pad: pad holds (before, after) pairs from the last dimension backwards;
// negative amounts crop.
inline NodeValue rule_pad(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const Sizes pad = ctx.sym_list(ctx.has("pad") ? "pad" : "padding");
  if (pad.size() % 2 != 0)
    ctx.fail("Length of pad must be even but instead it equals " + std::to_string(pad.size()));
  if (pad.size() / 2 > self.sizes.size()) {
    ctx.fail(
        "Length of pad should be no more than twice the number of dimensions of the input. "
        "Pad length is " +
        std::to_string(pad.size()) + " while the input has " + std::to_string(self.sizes.size()) +
        " dimensions.");
  }
  Sizes shape = self.sizes;
  for (std::size_t i = 0; i < pad.size() / 2; ++i) {
    const std::size_t d = self.sizes.size() - 1 - i;
    const sym::Expr n = ctx.ex(self.sizes[d]) + ctx.ex(pad[2 * i]) + ctx.ex(pad[2 * i + 1]);
    if (ctx.guard_or_false(sym::lt(n, sym::Expr(0), ctx.ranges()))) {
      ctx.fail("The input size " + sym_str(self.sizes[d]) + ", plus negative padding " +
               sym_str(pad[2 * i]) + " and " + sym_str(pad[2 * i + 1]) +
               " resulted in a negative output size, which is invalid. Check dimension " +
               std::to_string(d) + " of your input.");
    }
    shape[d] = ctx.out(n);
  }
  return suggested_meta(ctx, self, self.dtype, std::move(shape));
}

// upsample_nearest2d / upsample_bilinear2d (.vec: output_size or scale_factors; .default:
// output_size): [N, C] + the output size (floor(size * scale)).
inline NodeValue rule_upsample2d(const Context& ctx, std::string_view) {
  const TensorMeta& input = ctx.tensor(ctx.has("input") ? "input" : "self");
  if (input.sizes.size() != 4) {
    ctx.fail("upsample2d expects a 4-D input, got " + shape_str(input.sizes));
  }
  Sizes shape(input.sizes.begin(), input.sizes.begin() + 2);
  const Argument* size_arg = ctx.given_arg("output_size");
  if (size_arg != nullptr && !size_arg->is_none()) {
    const Sizes out = ctx.sym_list("output_size");
    if (out.size() != 2) ctx.fail("upsample2d: output_size must have 2 elements");
    shape.insert(shape.end(), out.begin(), out.end());
  } else {
    const Argument* scales = ctx.given_arg("scale_factors");
    if (scales == nullptr || scales->is_none()) {
      ctx.fail("Must specify exactly one of output_size and scale_factors");
    }
    const ArgumentList* list = scales->list();
    if (list == nullptr || list->size() != 2) {
      ctx.fail("upsample2d: scale_factors must be a list of 2 floats");
    }
    for (std::size_t i = 0; i < 2; ++i) {
      const Argument& f = (*list)[i];
      if (!f.is<double>() && !f.is<std::int64_t>()) {
        ctx.fail("upsample2d: scale_factors must be a list of 2 floats");
      }
      const double scale =
          f.is<double>() ? f.as<double>() : static_cast<double>(f.as<std::int64_t>());
      const std::int64_t in =
          ctx.concrete(input.sizes[2 + i], "argument 'input' dimension " + std::to_string(2 + i));
      shape.push_back(static_cast<std::int64_t>(std::floor(static_cast<double>(in) * scale)));
    }
  }
  return suggested_meta(ctx, input, input.dtype, std::move(shape));
}

// pixel_shuffle (upscale_factor r: [*, C*r*r, H, W] -> [*, C, H*r, W*r]) and pixel_unshuffle
// (downscale_factor r: the inverse), in the layout torch's suggest_memory_format gives the input
// (a 4-D channels-last input stays channels-last; torch's meta_pixel_shuffle).
inline NodeValue rule_pixel_shuffle(const Context& ctx, std::string_view op) {
  const bool up = op == "pixel_shuffle";
  const std::string name(op);
  const TensorMeta& self = ctx.tensor("self");
  const std::int64_t r = ctx.integer(up ? "upscale_factor" : "downscale_factor");
  const std::size_t rank = self.sizes.size();
  if (rank < 3) {
    ctx.fail(name + " expects input to have at least 3 dimensions, but got input with " +
             std::to_string(rank) + " dimension(s)");
  }
  if (r <= 0) {
    ctx.fail(name + " expects a positive " + (up ? "upscale_factor" : "downscale_factor") +
             ", but got " + std::to_string(r));
  }
  const std::int64_t c = ctx.concrete(self.sizes[rank - 3], "argument 'self' dimension -3");
  const std::int64_t h = ctx.concrete(self.sizes[rank - 2], "argument 'self' dimension -2");
  const std::int64_t w = ctx.concrete(self.sizes[rank - 1], "argument 'self' dimension -1");
  const std::int64_t rr = checked_mul(ctx, r, r, "the square of the factor");
  Sizes shape(self.sizes.begin(), self.sizes.end() - 3);
  if (up) {
    if (c % rr != 0) {
      ctx.fail(
          "pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
          "square of upscale_factor, but input.size(-3)=" +
          std::to_string(c) + " is not divisible by " + std::to_string(rr));
    }
    shape.push_back(c / rr);
    shape.push_back(checked_mul(ctx, h, r, "the output height"));
    shape.push_back(checked_mul(ctx, w, r, "the output width"));
  } else {
    if (h % r != 0 || w % r != 0) {
      const bool height = h % r != 0;
      ctx.fail(std::string("pixel_unshuffle expects ") + (height ? "height" : "width") +
               " to be divisible by downscale_factor, but input.size(" + (height ? "-2" : "-1") +
               ")=" + std::to_string(height ? h : w) + " is not divisible by " + std::to_string(r));
    }
    shape.push_back(checked_mul(ctx, c, rr, "the output channels"));
    shape.push_back(h / r);
    shape.push_back(w / r);
  }
  return suggested_meta(ctx, self, self.dtype, std::move(shape));
}

}  // namespace infer
}  // namespace detail
}  // namespace epgraph
