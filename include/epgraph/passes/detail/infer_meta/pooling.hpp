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

// torch's suggest_memory_format for a new output like `input`
// (torch._prims_common.are_strides_like_channels_last_or_false): a 4-D (5-D) input whose
// strides grow in the channels-last order C, W, H, N (C, W, H, D, N), channels-last even when
// also contiguous; sizes and strides may be symbolic (the hints decide, an undecidable relation
// counts against channels-last).
inline bool strides_like_channels_last(const Context& ctx, const TensorMeta& input) {
  const std::size_t rank = input.sizes.size();
  if ((rank != 4 && rank != 5) || input.strides.size() != rank) return false;
  const std::vector<std::size_t> order =
      rank == 4 ? std::vector<std::size_t>{1, 3, 2, 0} : std::vector<std::size_t>{1, 4, 3, 2, 0};
  const sym::Ranges* r = ctx.ranges();
  const sym::Expr zero(0);
  if (ctx.guard_or_true(sym::eq(ctx.ex(input.strides[1]), zero, r))) return false;
  sym::Expr min(0);
  for (std::size_t d : order) {
    const sym::Expr size = ctx.ex(input.sizes[d]);
    const sym::Expr stride = ctx.ex(input.strides[d]);
    if (ctx.guard_or_true(sym::eq(size, zero, r))) return false;
    if (ctx.guard_or_true(sym::lt(stride, min, r))) return false;
    if (d == 0 && min == ctx.ex(input.strides[1])) return false;
    min = stride * size;
  }
  return true;
}

// The channels-last strides of `sizes` (4-D: C, W, H, N innermost first; 5-D: C, W, H, D, N),
// each the product of the sizes inside it, as torch's make_channels_last_strides_for writes them.
inline Sizes channels_last_sym_strides(const Context& ctx, const Sizes& sizes) {
  if (auto c = all_concrete(sizes)) return to_sym(channels_last_strides(*c));
  const std::vector<std::size_t> order = sizes.size() == 4
                                             ? std::vector<std::size_t>{1, 3, 2, 0}
                                             : std::vector<std::size_t>{1, 4, 3, 2, 0};
  Sizes out(sizes.size(), std::int64_t{1});
  sym::Expr multiplier(1);
  for (std::size_t d : order) {
    out[d] = ctx.out(multiplier);
    try {
      multiplier = multiplier * ctx.ex(sizes[d]);
    } catch (const value_error& e) {
      ctx.fail("cannot write the channels-last strides of the symbolic shape " + shape_str(sizes) +
               ": " + e.what());
    }
  }
  return out;
}

// c10's channels-last contiguity of a 4-D or 5-D shape (size-1 dimensions skipped), the sizes
// and strides possibly symbolic (compared by their canonical form and the bounds).
inline bool channels_last_contiguous(const Context& ctx, const Sizes& sizes, const Sizes& strides) {
  const std::vector<std::size_t> order = sizes.size() == 4
                                             ? std::vector<std::size_t>{1, 3, 2, 0}
                                             : std::vector<std::size_t>{1, 4, 3, 2, 0};
  SymInt expected = std::int64_t{1};
  for (std::size_t d : order) {
    if (ctx.is_one(sizes[d])) continue;
    if (!ctx.equal(strides[d], expected)) return false;
    expected = ctx.mul(expected, sizes[d], "the channels-last stride");
  }
  return true;
}

// One output size of upsampling `in` by `scale`, as torch's upsample_compute_output_size
// computes it: `in * int(scale)` for an integral scale, else `sym_int(in * scale)`, the float64
// product truncated (symbolic: TruncToInt(scale*ToFloat(in))).
inline SymInt upsampled_size(const Context& ctx, const SymInt& in, double scale) {
  const std::string what = "the upsampled size";
  if (!std::isfinite(scale)) ctx.fail("scale_factors must be finite, got " + std::to_string(scale));
  if (std::trunc(scale) == scale) {
    if (std::fabs(scale) >= 9.2e18) ctx.fail(what + " overflows int64");
    return ctx.mul(in, static_cast<std::int64_t>(scale), what);
  }
  if (const auto* v = std::get_if<std::int64_t>(&in)) {
    const double product = std::trunc(static_cast<double>(*v) * scale);
    if (!(std::fabs(product) < 9.2e18)) ctx.fail(what + " overflows int64");
    return static_cast<std::int64_t>(product);
  }
  const auto exact = sym::detail::exact_double(scale);
  if (!exact) ctx.fail("the scale " + std::to_string(scale) + " is no fraction of 64-bit integers");
  try {
    const sym::Expr as_float = sym::detail::apply("ToFloat", {ctx.ex(in)}, ctx.ranges());
    return ctx.out(sym::detail::apply("TruncToInt", {sym::Expr(*exact) * as_float}, ctx.ranges()));
  } catch (const value_error& e) {
    ctx.fail(what + ": " + e.what());
  }
}

// upsample_nearest{1,2,3}d, _upsample_nearest_exact{1,2,3}d, upsample_linear1d,
// upsample_bilinear2d, upsample_bicubic2d, _upsample_bilinear2d_aa, _upsample_bicubic2d_aa and
// upsample_trilinear3d (the op's suffix gives n spatial dimensions), .vec (output_size or
// scale_factors) and .default (output_size): [N, C] + the output size, the input's dtype, in the
// memory format suggest_memory_format gives the input (channels-last for a 2-D or 3-D input with
// channels-last strides, else contiguous), as torch's upsample metas (upsample_common_check).
inline NodeValue rule_upsample(const Context& ctx, std::string_view op) {
  // the spatial rank: the digit before the last "d" of "..._2d" / "..._2d_aa"
  const std::size_t d = op.rfind('d');
  const char digit = d != std::string_view::npos && d > 0 ? op[d - 1] : '0';
  if (digit < '1' || digit > '3') ctx.fail("not an upsample op");
  const auto n = static_cast<std::size_t>(digit - '0');
  const TensorMeta& input = ctx.tensor(ctx.has("input") ? "input" : "self");
  const Argument* size_arg = ctx.given_arg("output_size");
  const Argument* scales = ctx.given_arg("scale_factors");
  if ((size_arg == nullptr) == (scales == nullptr)) {
    ctx.fail("Must specify exactly one of output_size and scale_factors");
  }
  if (input.sizes.size() != n + 2) {
    ctx.fail("It is expected input_size equals to " + std::to_string(n + 2) + ", but got size " +
             std::to_string(input.sizes.size()));
  }
  Sizes out;
  if (size_arg != nullptr) {
    out = ctx.sym_list("output_size");
  } else {
    const ArgumentList* list = scales->list();
    if (list == nullptr) ctx.fail("argument 'scale_factors' is not a list of floats");
    for (std::size_t i = 0; i < list->size(); ++i) {
      const Argument& f = (*list)[i];
      if (!f.is<double>() && !f.is<std::int64_t>()) {
        const Node* node = f.node();
        ctx.fail("element " + std::to_string(i) + " of argument 'scale_factors' is not a " +
                 (node != nullptr ? "constant float (node '" + std::string(node->name()) +
                                        "'); epgraph computes upsampling with constant scales only"
                                  : std::string("float")));
      }
      const double scale =
          f.is<double>() ? f.as<double>() : static_cast<double>(f.as<std::int64_t>());
      if (i < n) out.push_back(upsampled_size(ctx, input.sizes[2 + i], scale));
    }
    if (list->size() != n) out.resize(list->size(), std::int64_t{0});
  }
  if (out.size() != n) {
    ctx.fail("It is expected output_size equals to " + std::to_string(n) + ", but got size " +
             std::to_string(out.size()));
  }
  const sym::Expr zero(0);
  bool positive = true;
  for (std::size_t i = 0; i < n; ++i) {
    positive =
        positive && ctx.guard_or_true(sym::gt(ctx.ex(input.sizes[2 + i]), zero, ctx.ranges()));
    positive = positive && ctx.guard_or_true(sym::gt(ctx.ex(out[i]), zero, ctx.ranges()));
  }
  if (!positive) {
    ctx.fail("Input and output sizes should be greater than 0, but got input size " +
             shape_str(input.sizes) + " and output size " + shape_str(out));
  }
  if (ctx.guard_or_false(sym::eq(ctx.ex(input.sizes[1]), zero, ctx.ranges()))) {
    ctx.fail("Non-empty " + std::to_string(n + 2) +
             "D data tensor expected but got a tensor with sizes " + shape_str(input.sizes));
  }
  Sizes shape(input.sizes.begin(), input.sizes.begin() + 2);
  shape.insert(shape.end(), out.begin(), out.end());
  TensorMeta contiguous = contiguous_meta(ctx, input.dtype, shape, input.device);
  if (n == 1 || !strides_like_channels_last(ctx, input)) return contiguous;
  // Most metas make a contiguous output and then ask for channels-last contiguity, which
  // contiguous strides may already have (one channel, or 1x1 spatial sizes): then they stay.
  // The 3-D nearest and the anti-aliased metas write channels-last strides in every case.
  const bool always_restrided = op == "upsample_nearest3d" || op == "_upsample_nearest_exact3d" ||
                                op == "_upsample_bilinear2d_aa" || op == "_upsample_bicubic2d_aa";
  if (!always_restrided && channels_last_contiguous(ctx, contiguous.sizes, contiguous.strides)) {
    return contiguous;
  }
  Sizes strides = channels_last_sym_strides(ctx, shape);
  return make_meta(input.dtype, std::move(shape), std::move(strides), input.device);
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
