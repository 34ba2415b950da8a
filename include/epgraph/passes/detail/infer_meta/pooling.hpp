// infer_meta rules of pooling, padding, upsampling, grid sampling and im2col/col2im.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include "../../../detail/strings.hpp"
#include "shapes.hpp"

namespace epgraph {
namespace detail {
namespace infer {

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

// A new output of `sizes` in the memory format torch's suggest_memory_format
// (torch._prims_common's, which the pooling metas and constant_pad_nd's reference use) gives
// `input`: channels-last (3d) for a 4-D (5-D) input whose strides are like channels-last, even
// when it is also contiguous; else contiguous.
inline TensorMeta pooled_meta(const Context& ctx, const TensorMeta& input, dtype type,
                              Sizes sizes) {
  if (sizes.size() == input.sizes.size() && strides_like_channels_last(ctx, input)) {
    Sizes strides = channels_last_sym_strides(ctx, sizes);
    return make_meta(type, std::move(sizes), std::move(strides), input.device);
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

// torch's pooling_output_shape (aten/src/ATen/native/Pool.h) of one spatial dimension of size
// `in`: symbolic sizes give FloorDiv expressions; ceil_mode's correction is decided as torch's
// guard decides it (the bounds, else the hints). `too_small` is set when the size is not > 0.
inline sym::Expr pooled_length(const Context& ctx, const SymInt& in_size, std::int64_t kernel,
                               std::int64_t stride, std::int64_t padding, std::int64_t dilation,
                               bool ceil_mode, std::size_t spatial_dim, bool& too_small) {
  try {
    const sym::Expr in = ctx.ex(in_size);
    const sym::Expr s(stride);
    const sym::Expr span = in + sym::Expr(2 * padding) -
                           sym::Expr(dilation) * sym::Expr(kernel - 1) - sym::Expr(1) +
                           sym::Expr(ceil_mode ? stride - 1 : 0);
    sym::Expr o = sym::floordiv(span, s, ctx.ranges()) + sym::Expr(1);
    if (ceil_mode && ctx.guard_or_false(
                         sym::ge((o - sym::Expr(1)) * s, in + sym::Expr(padding), ctx.ranges()))) {
      o = o - sym::Expr(1);
    }
    too_small = !ctx.guard_or_true(sym::gt(o, sym::Expr(0), ctx.ranges()));
    return o;
  } catch (const value_error& e) {
    ctx.fail("the output size of spatial dimension " + std::to_string(spatial_dim) + ": " +
             e.what());
  }
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
    if (kernel[i] <= 0 || stride[i] <= 0 || dilation[i] <= 0) {
      ctx.fail("kernel_size, stride and dilation must be greater than zero");
    }
    if (padding[i] < 0 || padding[i] > kernel[i] / 2) {
      ctx.fail("pad should be at most half of effective kernel size, but got pad=" +
               std::to_string(padding[i]) + ", kernel_size=" + std::to_string(kernel[i]));
    }
    bool too_small = false;
    const sym::Expr o = pooled_length(ctx, input.sizes[d], kernel[i], stride[i], padding[i],
                                      dilation[i], ceil_mode, i, too_small);
    if (too_small) {
      ctx.fail("Given input size " + shape_str(input.sizes) + ", the calculated output size of " +
               "spatial dimension " + std::to_string(i) + " is " + sym_str(ctx.out(o)) +
               ", which is too small");
    }
    shape.push_back(ctx.out(o));
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

// max_pool3d_with_indices: output and int64 indices in the layout suggest_memory_format gives
// the input (see pooled_meta); max_pool3d: the output only.
// max_pool3d.default is torch's max_pool3d_with_indices' first output (CompositeImplicit).
inline NodeValue rule_max_pool3d(const Context& ctx, std::string_view op) {
  const TensorMeta& input = ctx.tensor("self");
  check_pool3d_input(ctx, input, "max_pool3d_with_indices");
  Sizes shape = pool_shape(ctx, input, 3, true);
  TensorMeta out = pooled_meta(ctx, input, input.dtype, shape);
  if (op == "max_pool3d") return out;
  TensorMeta indices = pooled_meta(ctx, input, dtype::int64, std::move(shape));
  return NodeValue(NodeValue::List{NodeValue(std::move(out)), NodeValue(std::move(indices))});
}

// One max_pool1d parameter: an int list of size 1 (or empty, for stride: the kernel size), > 0
// unless it is the padding; torch's check_max_pool1d messages.
inline std::int64_t pool1d_param(const Context& ctx, const char* name, std::int64_t fallback,
                                 const char* allowed) {
  const Ints v = ctx.has(name) ? ctx.int_list(name) : Ints{};
  if (v.empty()) return fallback;
  if (v.size() != 1) {
    ctx.fail(std::string("max_pool1d() ") + name + " must be " + allowed +
             " of size 1 but got size " + std::to_string(v.size()));
  }
  return v[0];
}

// max_pool1d: on fake tensors torch runs it as max_pool2d_with_indices of the input unsqueezed at
// -2, squeezed back, so the output takes the layout suggest_memory_format gives that 4-D view
// (a [N, C, L] input with channels innermost keeps them innermost); else contiguous. torch's
// check_max_pool1d checks and messages (aten/src/ATen/native/MaxPooling.cpp).
inline NodeValue rule_max_pool1d(const Context& ctx, std::string_view) {
  const TensorMeta& input = ctx.tensor("self");
  const std::size_t rank = input.sizes.size();
  if (rank != 2 && rank != 3) {
    ctx.fail(
        "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
        "for input, but got:" +
        shape_str(input.sizes));
  }
  const char* list = "an int, list of ints or tuple of ints";
  const std::int64_t kernel = pool1d_param(ctx, "kernel_size", 0, list);
  const std::int64_t stride =
      pool1d_param(ctx, "stride", kernel, "None, an int, list of ints, or tuple of ints");
  const std::int64_t padding = pool1d_param(ctx, "padding", 0, list);
  const std::int64_t dilation = pool1d_param(ctx, "dilation", 1, list);
  if (kernel <= 0) {
    ctx.fail("max_pool1d() kernel_size must be greater than zero, but got " +
             std::to_string(kernel));
  }
  if (stride <= 0) {
    ctx.fail("max_pool1d() stride must be greater than zero, but got " + std::to_string(stride));
  }
  if (padding < 0) {
    ctx.fail("max_pool1d() padding must be non-negative, but got " + std::to_string(padding));
  }
  if (padding > kernel / 2) {
    ctx.fail("max_pool1d() padding should be at most half of kernel size, but got padding=" +
             std::to_string(padding) + " and kernel_size=" + std::to_string(kernel));
  }
  if (dilation <= 0) {
    ctx.fail("max_pool1d() dilation must be greater than zero, but got " +
             std::to_string(dilation));
  }
  const bool ceil_mode = ctx.has("ceil_mode") && ctx.boolean("ceil_mode");
  bool too_small = false;
  const sym::Expr o = pooled_length(ctx, input.sizes.back(), kernel, stride, padding, dilation,
                                    ceil_mode, 0, too_small);
  if (too_small) {
    ctx.fail("max_pool1d() Invalid computed output size: " + sym_str(ctx.out(o)));
  }
  // the 4-D (3-D) view max_pool2d_with_indices sees: unsqueeze(-2) gives the new dimension the
  // stride size * stride of the last one
  TensorMeta view = input;
  view.sizes.insert(view.sizes.end() - 1, SymInt(std::int64_t{1}));
  view.strides.insert(view.strides.end() - 1,
                      ctx.out(ctx.ex(input.sizes.back()) * ctx.ex(input.strides.back())));
  Sizes shape(view.sizes.begin(), view.sizes.end() - 1);
  shape.push_back(ctx.out(o));
  TensorMeta out = pooled_meta(ctx, view, input.dtype, std::move(shape));
  out.sizes.erase(out.sizes.end() - 2);
  out.strides.erase(out.strides.end() - 2);
  return out;
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
// shape (pooling, padding, pixel_unshuffle): see pooled_meta.
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
  // The 3-D nearest and the anti-aliased metas write channels-last strides in every case; but
  // torch.export computes a 3-D nearest .vec with its Python decomposition (an index, then
  // contiguous(memory_format)), which keeps them.
  const bool vec = ends_with(ctx.node().target(), ".vec");
  const bool always_restrided =
      ((op == "upsample_nearest3d" || op == "_upsample_nearest_exact3d") && !vec) ||
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

// grid_sampler, grid_sampler_2d, grid_sampler_3d (input [N, C, *in], grid [N, *out, k]):
// [N, C, *out] in the input's dtype, contiguous whatever the layouts; the checks and messages of
// torch's grid_sampler checks (aten/src/ATen/native/GridSamplerUtils.h). torch's fake tensors
// take the grid's dtype from a decomposition where eager refuses a different one, so epgraph
// refuses it.
inline NodeValue rule_grid_sampler(const Context& ctx, std::string_view op) {
  const TensorMeta& input = ctx.tensor("input");
  const TensorMeta& grid = ctx.tensor("grid");
  const std::string sizes = "input with sizes " + shape_str(input.sizes) + " and grid with sizes " +
                            shape_str(grid.sizes);
  const std::size_t rank = input.sizes.size();
  if (rank == 0 || grid.sizes.empty() || !ctx.equal(input.sizes[0], grid.sizes[0])) {
    ctx.fail("grid_sampler(): expected grid and input to have same batch size, but got " + sizes);
  }
  if (rank < 2 || !ctx.equal(grid.sizes.back(), static_cast<std::int64_t>(rank - 2))) {
    ctx.fail("grid_sampler(): expected grid to have size " +
             std::to_string(rank < 2 ? 0 : rank - 2) +
             " in last dimension, but got grid with sizes " + shape_str(grid.sizes));
  }
  for (std::size_t i = 2; i < rank; ++i) {
    if (ctx.guard_or_false(sym::eq(ctx.ex(input.sizes[i]), sym::Expr(0), ctx.ranges()))) {
      ctx.fail(
          "grid_sampler(): expected input to have non-empty spatial dimensions, but input "
          "has sizes " +
          shape_str(input.sizes) + " with dimension " + std::to_string(i) + " being empty");
    }
  }
  const std::size_t want = op == "grid_sampler_2d" ? 4 : op == "grid_sampler_3d" ? 5 : 0;
  if ((want != 0 && rank != want) || (want == 0 && rank != 4 && rank != 5) ||
      grid.sizes.size() != rank) {
    ctx.fail(std::string("grid_sampler(): expected ") +
             (want == 4   ? "4D"
              : want == 5 ? "5D"
                          : "4D or 5D") +
             " input and grid with same number of dimensions, but got " + sizes);
  }
  if (rank == 5 && ctx.integer("interpolation_mode") == 2) {
    ctx.fail("grid_sampler(): bicubic interpolation only supports 4D input");
  }
  if (grid.dtype != input.dtype) {
    ctx.fail("grid_sampler(): expected input and grid to have the same dtype, but input has " +
             std::string(dtype_name(input.dtype)) + " and grid has " +
             std::string(dtype_name(grid.dtype)));
  }
  Sizes shape{input.sizes[0], input.sizes[1]};
  shape.insert(shape.end(), grid.sizes.begin() + 1, grid.sizes.end() - 1);
  return contiguous_meta(ctx, input.dtype, std::move(shape), input.device);
}

// A parameter of im2col/col2im: two ints (`prefix` starts torch's message: "im2col(): " or "").
inline Ints fold_param(const Context& ctx, const char* name, const char* what,
                       const std::string& prefix) {
  Ints v = ctx.int_list(name);
  if (v.size() != 2) ctx.fail(prefix + "only 2D " + what + " supported");
  return v;
}

inline std::string ints_str(const Ints& v) {
  std::string out = "[";
  for (std::size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + std::to_string(v[i]);
  return out + "]";
}

// The kernel_size, dilation, padding and stride of im2col/col2im with torch's checks
struct FoldParams {
  Ints kernel, dilation, padding, stride;
};
// (torch's im2col checks dilation where it means padding, so it lets a negative padding pass)
inline FoldParams fold_params(const Context& ctx, const std::string& prefix, bool check_padding) {
  FoldParams f{fold_param(ctx, "kernel_size", "kernel", prefix),
               fold_param(ctx, "dilation", "dilation", prefix),
               fold_param(ctx, "padding", "padding", prefix),
               fold_param(ctx, "stride", "stride", prefix)};
  auto positive = [&](const Ints& v, const char* name, bool strict) {
    for (std::int64_t x : v) {
      if (strict ? x <= 0 : x < 0) {
        ctx.fail(std::string(name) + " should be greater than zero, but got " + ints_str(v));
      }
    }
  };
  positive(f.kernel, "kernel_size", true);
  positive(f.dilation, "dilation", true);
  if (check_padding) positive(f.padding, "padding", false);
  positive(f.stride, "stride", true);
  return f;
}

// The number of sliding blocks along spatial dimension i of size `in`:
// (in + 2 * padding - dilation * (kernel - 1) - 1) // stride + 1.
inline sym::Expr sliding_blocks(const Context& ctx, const sym::Expr& in, const FoldParams& f,
                                std::size_t i) {
  try {
    const sym::Expr span = in + sym::Expr(2 * f.padding[i]) -
                           sym::Expr(f.dilation[i]) * sym::Expr(f.kernel[i] - 1) - sym::Expr(1);
    return sym::floordiv(span, sym::Expr(f.stride[i]), ctx.ranges()) + sym::Expr(1);
  } catch (const value_error& e) {
    ctx.fail("the number of sliding blocks: " + std::string(e.what()));
  }
}

// im2col (F.unfold; self [N,] C, H, W): [N,] C * kh * kw, L with L the number of sliding blocks,
// contiguous; torch's im2col decomposition's checks and messages.
inline NodeValue rule_im2col(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const FoldParams f = fold_params(ctx, "im2col(): ", false);
  const std::size_t rank = self.sizes.size();
  bool empty = false;
  for (std::size_t i = rank >= 3 ? rank - 3 : 0; i < rank; ++i) {
    empty = empty || ctx.guard_or_false(sym::eq(ctx.ex(self.sizes[i]), sym::Expr(0), ctx.ranges()));
  }
  if ((rank != 3 && rank != 4) || empty) {
    std::string shape = shape_str(self.sizes);
    shape = "(" + shape.substr(1, shape.size() - 2) + (rank == 1 ? ",)" : ")");
    ctx.fail(
        "Expected 3D or 4D (batch mode) tensor for input with possible 0 batch size and "
        "non-zero dimensions, but got: " +
        shape);
  }
  const sym::Expr rows = sliding_blocks(ctx, ctx.ex(self.sizes[rank - 2]), f, 0);
  const sym::Expr cols = sliding_blocks(ctx, ctx.ex(self.sizes[rank - 1]), f, 1);
  const sym::Expr zero(0);
  if (!ctx.guard_or_true(sym::gt(rows, zero, ctx.ranges())) ||
      !ctx.guard_or_true(sym::gt(cols, zero, ctx.ranges()))) {
    ctx.fail("Given an input with spatial size (" + sym_str(self.sizes[rank - 2]) + ", " +
             sym_str(self.sizes[rank - 1]) + "), kernel_size=" + ints_str(f.kernel) +
             ", dilation=" + ints_str(f.dilation) + ", padding=" + ints_str(f.padding) +
             ", stride=" + ints_str(f.stride) +
             ", the calculated shape of the array of sliding blocks is (" + sym_str(ctx.out(rows)) +
             ", " + sym_str(ctx.out(cols)) + "), but its components must be at least one.");
  }
  Sizes shape(self.sizes.begin(), self.sizes.end() - 3);
  shape.push_back(ctx.mul(self.sizes[rank - 3],
                          checked_mul(ctx, f.kernel[0], f.kernel[1], "the kernel size"),
                          "the output channels"));
  try {
    shape.push_back(ctx.out(rows * cols));
  } catch (const value_error& e) {
    ctx.fail("the number of sliding blocks: " + std::string(e.what()));
  }
  // the strides of the decomposition's reshape of [N, C, kh, kw, rows, cols]: the blocks'
  // stride Max(1, rows)*Max(1, cols), each Max kept as torch's Max keeps it (by the symbols'
  // assumptions only)
  Sizes strides(shape.size(), std::int64_t{1});
  if (const auto c = all_concrete(shape)) {
    strides = to_sym(contiguous_strides(*c));
  } else {
    try {
      const sym::Expr blocks = sym::max({rows, sym::Expr(1)}) * sym::max({cols, sym::Expr(1)});
      strides[shape.size() - 2] = ctx.out(blocks);
      if (shape.size() == 3) {
        strides[0] = ctx.out(sym::max({ctx.ex(shape[1]), sym::Expr(1)}) * blocks);
      }
    } catch (const value_error& e) {
      ctx.fail("the strides: " + std::string(e.what()));
    }
  }
  return make_meta(self.dtype, std::move(shape), std::move(strides), self.device);
}

// col2im (F.fold; self [N,] C * kh * kw, L, output_size): [N,] C, *output_size, contiguous;
// torch's col2im decomposition's checks and messages.
inline NodeValue rule_col2im(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const Ints out_size = ctx.int_list("output_size");
  if (out_size.size() != 2) ctx.fail("only 2D output_size supported");
  const FoldParams f = fold_params(ctx, "", true);
  for (std::int64_t x : out_size) {
    if (x <= 0) ctx.fail("output_size should be greater than zero, but got " + ints_str(out_size));
  }
  const std::size_t rank = self.sizes.size();
  bool empty = false;
  for (std::size_t i = rank >= 2 ? rank - 2 : 0; i < rank; ++i) {
    empty = empty || ctx.guard_or_false(sym::eq(ctx.ex(self.sizes[i]), sym::Expr(0), ctx.ranges()));
  }
  if ((rank != 2 && rank != 3) || empty) {
    std::string shape = shape_str(self.sizes);
    shape = "(" + shape.substr(1, shape.size() - 2) + (rank == 1 ? ",)" : ")");
    ctx.fail(
        "Expected 2D or 3D (batch mode) tensor for input with possible 0 batch size and "
        "non-zero dimensions, but got: " +
        shape);
  }
  const std::int64_t k = checked_mul(ctx, f.kernel[0], f.kernel[1], "the kernel size");
  const sym::Expr cols = ctx.ex(self.sizes[rank - 2]);
  if (!ctx.guard_or_true(
          sym::eq(sym::mod(cols, sym::Expr(k), ctx.ranges()), sym::Expr(0), ctx.ranges()))) {
    ctx.fail(
        "Expected size of input's first non-batch dimension to be divisible by the product "
        "of kernel_size, but got input.shape[-2] = " +
        sym_str(self.sizes[rank - 2]) + " and kernel_size=" + ints_str(f.kernel));
  }
  const sym::Expr blocks = sliding_blocks(ctx, sym::Expr(out_size[0]), f, 0) *
                           sliding_blocks(ctx, sym::Expr(out_size[1]), f, 1);
  const std::int64_t length = blocks.as_integer().value_or(0);
  if (!ctx.equal(self.sizes[rank - 1], length) || length <= 0) {
    ctx.fail("Given output_size=" + ints_str(out_size) + ", kernel_size=" + ints_str(f.kernel) +
             ", dilation=" + ints_str(f.dilation) + ", padding=" + ints_str(f.padding) +
             ", stride=" + ints_str(f.stride) + ", expected input.size(-1) to be " +
             std::to_string(length) + " but got " + sym_str(self.sizes[rank - 1]) + ".");
  }
  Sizes shape(self.sizes.begin(), self.sizes.end() - 2);
  try {
    shape.push_back(ctx.out(sym::floordiv(cols, sym::Expr(k), ctx.ranges())));
  } catch (const value_error& e) {
    ctx.fail("the output channels: " + std::string(e.what()));
  }
  shape.push_back(out_size[0]);
  shape.push_back(out_size[1]);
  return contiguous_meta(ctx, self.dtype, std::move(shape), self.device);
}

}  // namespace infer
}  // namespace detail
}  // namespace epgraph
