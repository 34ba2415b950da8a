// infer_meta rules of the FFT primitives (_fft_r2c, _fft_c2r, _fft_c2c) and of torch.fft's
// functions, which torch.export's default IR keeps whole (fft_rfft, fft_fft2, ...).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <algorithm>

#include "pooling.hpp"
#include "shapes.hpp"

namespace epgraph {
namespace detail {
namespace infer {

// stride a > stride b, decided as torch's sort of SymInt keys does (the bounds, then the hints: a
// guard on backed symbols); an unbacked one is data-dependent in torch too.
inline bool fft_stride_gt(const Context& ctx, const SymInt& a, const SymInt& b) {
  const auto* x = std::get_if<std::int64_t>(&a);
  const auto* y = std::get_if<std::int64_t>(&b);
  if (x != nullptr && y != nullptr) return *x > *y;
  const std::optional<bool> v = ctx.decide(sym::gt(ctx.ex(a), ctx.ex(b), ctx.ranges()));
  if (!v) {
    ctx.cannot("the order of the strides " + sym_str(a) + " and " + sym_str(b) +
               " cannot be decided (torch's sort of them is data-dependent)");
  }
  return *v;
}

// `dims` stable-sorted by the strides of `strides`, largest first (torch's _sort_dims, which
// leaves the last dimension in place with `exclude_last`).
inline std::vector<std::size_t> fft_sort_dims(const Context& ctx, const Sizes& strides,
                                              std::vector<std::size_t> dims, bool exclude_last) {
  const auto end = dims.end() - (exclude_last && !dims.empty() ? 1 : 0);
  std::stable_sort(dims.begin(), end, [&](std::size_t a, std::size_t b) {
    return fft_stride_gt(ctx, strides[a], strides[b]);
  });
  return dims;
}

// The strides of an FFT's output of `out_sizes` (torch's _exec_fft, the CPU/MKL layout): the
// batch dimensions (those not transformed) outermost in the input's stride order, then the
// transformed dimensions in the order of `dims`, each block contiguous (the batched output is
// resized contiguous, so a symbolic size keeps the Max(1, n) torch writes for it).
inline Sizes exec_fft_strides(const Context& ctx, const Sizes& in_strides, const Sizes& out_sizes,
                              const std::vector<std::size_t>& dims) {
  const std::size_t ndim = out_sizes.size();
  std::vector<bool> transformed(ndim, false);
  for (std::size_t d : dims) transformed[d] = true;
  std::vector<std::size_t> batch;
  for (std::size_t d = 0; d < ndim; ++d) {
    if (!transformed[d]) batch.push_back(d);
  }
  std::stable_sort(batch.begin(), batch.end(), [&](std::size_t a, std::size_t b) {
    return fft_stride_gt(ctx, in_strides[a], in_strides[b]);
  });
  try {
    sym::Expr batch_size(1);
    for (std::size_t d : batch) batch_size = batch_size * ctx.ex(out_sizes[d]);
    Sizes batched{ctx.out(batch_size)};
    for (std::size_t d : dims) batched.push_back(out_sizes[d]);
    const Sizes cs = contiguous_sym_strides(ctx, batched);
    Sizes out(ndim, std::int64_t{0});
    const sym::Expr outer = ctx.ex(cs[0]);
    sym::Expr batch_numel(1);
    for (std::size_t i = batch.size(); i-- > 0;) {
      out[batch[i]] = ctx.out(batch_numel * outer);
      batch_numel = batch_numel * ctx.ex(out_sizes[batch[i]]);
    }
    for (std::size_t k = 0; k < dims.size(); ++k) out[dims[k]] = cs[1 + k];
    return out;
  } catch (const unsupported_meta_error&) {
    throw;
  } catch (const value_error& e) {  // the arithmetic overflowed
    ctx.fail(std::string("the FFT's output strides: ") + e.what());
  }
}

// A tensor's dtype, sizes and strides, as the FFT rules compute with (sizes may be symbolic).
struct FftTensor {
  dtype type;
  Sizes sizes, strides;
};

// The sizes are read first, so that their symbols' hints decide the strides' order (a stride
// such as s0*s1 carries only its own hint).
inline FftTensor fft_tensor(const Context& ctx, const TensorMeta& t) {
  for (const SymInt& s : t.sizes) (void)ctx.ex(s);
  return FftTensor{t.dtype, t.sizes, t.strides};
}

inline TensorMeta fft_meta(const FftTensor& x, const Device& device) {
  return make_meta(x.type, x.sizes, x.strides, device);
}

// _fft_r2c / _fft_c2c / _fft_c2r of `x` over `dims` (wrapped, not empty).
inline FftTensor fft_r2c(const Context& ctx, const FftTensor& x,
                         const std::vector<std::size_t>& dims, bool onesided) {
  Sizes out_sizes = x.sizes;
  if (onesided) {
    const SymInt& n = x.sizes[dims.back()];
    if (const auto* v = std::get_if<std::int64_t>(&n)) {
      out_sizes[dims.back()] = *v / 2 + 1;
    } else {
      out_sizes[dims.back()] =
          ctx.out(sym::floordiv(ctx.ex(n), sym::Expr(2), ctx.ranges()) + sym::Expr(1));
    }
  }
  Sizes st = exec_fft_strides(ctx, x.strides, out_sizes, fft_sort_dims(ctx, x.strides, dims, true));
  return FftTensor{real_to_complex(x.type), std::move(out_sizes), std::move(st)};
}
inline FftTensor fft_c2c(const Context& ctx, const FftTensor& x,
                         const std::vector<std::size_t>& dims) {
  return FftTensor{
      x.type, x.sizes,
      exec_fft_strides(ctx, x.strides, x.sizes, fft_sort_dims(ctx, x.strides, dims, false))};
}
inline FftTensor fft_c2r(const Context& ctx, const FftTensor& x,
                         const std::vector<std::size_t>& dims, const SymInt& last_dim_size) {
  FftTensor in = x;
  if (dims.size() > 1) {
    in = fft_c2c(ctx, x, std::vector<std::size_t>(dims.begin(), dims.end() - 1));
  }
  Sizes out_sizes = in.sizes;
  out_sizes[dims.back()] = last_dim_size;
  Sizes st = exec_fft_strides(ctx, in.strides, out_sizes, {dims.back()});
  return FftTensor{complex_to_real(x.type), std::move(out_sizes), std::move(st)};
}

// The `dim` argument of an FFT primitive, wrapped; at least one dimension.
inline std::vector<std::size_t> fft_dims(const Context& ctx, std::size_t rank) {
  std::vector<std::size_t> dims;
  for (std::int64_t d : ctx.int_list("dim")) {
    dims.push_back(static_cast<std::size_t>(ctx.wrap_dim(d, rank)));
  }
  return dims;
}

// Refuses a transform length below 1 (torch's message); a symbolic one is refused when its
// bounds or hints say so (torch's check is a guard).
inline void fft_check_lengths(const Context& ctx, const Sizes& lengths) {
  for (const SymInt& n : lengths) {
    if (const auto* v = std::get_if<std::int64_t>(&n)) {
      if (*v < 1) ctx.fail("Invalid number of data points (" + std::to_string(*v) + ") specified");
    } else if (ctx.guard_or_false(sym::lt(ctx.ex(n), sym::Expr(1), ctx.ranges()))) {
      ctx.fail("Invalid number of data points (" + sym_str(n) + ") specified");
    }
  }
}

// _fft_r2c(self, dim, normalization, onesided), _fft_c2r(self, dim, normalization, last_dim_size)
// and _fft_c2c(self, dim, normalization, forward): the sizes and dtypes of torch's meta functions
// (torch/_meta_registrations.py) and the strides of its CPU path with MKL (torch's CPU wheels).
inline NodeValue rule_fft(const Context& ctx, std::string_view op) {
  const TensorMeta& self = ctx.tensor("self");
  const FftTensor x = fft_tensor(ctx, self);
  const std::vector<std::size_t> dims = fft_dims(ctx, x.sizes.size());
  if (op == "_fft_r2c") {
    if (!is_floating(self.dtype)) {
      ctx.fail("_fft_r2c expects a floating-point input, not " +
               std::string(dtype_name(self.dtype)));
    }
    if (dims.empty()) ctx.fail("_fft_r2c needs at least one dimension to transform");
    return fft_meta(fft_r2c(ctx, x, dims, ctx.boolean("onesided")), self.device);
  }
  if (!is_complex(self.dtype)) {
    ctx.fail(std::string(op) + " expects a complex input, not " +
             std::string(dtype_name(self.dtype)));
  }
  if (op == "_fft_c2c") {
    if (dims.empty()) {  // a clone
      return formatted_meta(ctx, self.dtype, self.sizes, self.device, MemoryFormat::PreserveFormat,
                            &self);
    }
    return fft_meta(fft_c2c(ctx, x, dims), self.device);
  }
  if (dims.empty()) ctx.fail("_fft_c2r needs at least one dimension to transform");
  const SymInt last_dim_size = ctx.sym_of(ctx.arg("last_dim_size"), "argument 'last_dim_size'");
  fft_check_lengths(ctx, {last_dim_size});
  return fft_meta(fft_c2r(ctx, x, dims, last_dim_size), self.device);
}

// --- torch.fft's functions (aten/src/ATen/native/SpectralOps.cpp), kept whole in torch.export's
// default IR: the input promoted (an integer one to float32, to complex where required),
// resized to the requested lengths (a slice where shorter, one constant_pad_nd where longer),
// then one primitive.

inline FftTensor fft_promote(const Context& ctx, const TensorMeta& self, bool require_complex) {
  dtype type = self.dtype;
  if (!is_complex(type)) {
    if (!is_floating(type)) type = dtype::float32;
    if (type != dtype::float32 && type != dtype::float64) {
      ctx.fail("Unsupported dtype " + std::string(dtype_name(type)));
    }
    if (require_complex) type = real_to_complex(type);
  }
  if (type == self.dtype) return fft_tensor(ctx, self);
  return fft_tensor(
      ctx, formatted_meta(ctx, type, self.sizes, self.device, MemoryFormat::PreserveFormat, &self));
}

// a < b for sizes, decided as torch's guards do (the bounds, then the hints).
inline bool fft_size_lt(const Context& ctx, const SymInt& a, const SymInt& b) {
  const auto* x = std::get_if<std::int64_t>(&a);
  const auto* y = std::get_if<std::int64_t>(&b);
  if (x != nullptr && y != nullptr) return *x < *y;
  const std::optional<bool> v = ctx.decide(sym::lt(ctx.ex(a), ctx.ex(b), ctx.ranges()));
  if (!v) {
    ctx.cannot("whether the FFT length " + sym_str(b) + " pads or trims the size " + sym_str(a) +
               " cannot be decided (data-dependent in torch too)");
  }
  return *v;
}

// resize_fft_input: each dims[i] sliced or padded to lengths[i].
inline FftTensor fft_resize(const Context& ctx, FftTensor x, const std::vector<std::size_t>& dims,
                            const Sizes& lengths, const Device& device) {
  bool pad = false;
  std::vector<bool> longer(dims.size(), false);
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const SymInt size = x.sizes[dims[i]];
    longer[i] = fft_size_lt(ctx, size, lengths[i]);
    pad = pad || longer[i];
    if (fft_size_lt(ctx, lengths[i], size)) x.sizes[dims[i]] = lengths[i];  // a slice
  }
  if (!pad) return x;
  // one constant_pad_nd: size + (length - size) on the longer dimensions
  Sizes padded = x.sizes;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (longer[i]) padded[dims[i]] = lengths[i];
  }
  return fft_tensor(ctx, suggested_meta(ctx, fft_meta(x, device), x.type, padded));
}

// fft_fft, fft_ifft, fft_rfft, fft_irfft, fft_hfft, fft_ihfft (n, dim) and fft_fft2/fftn,
// fft_ifft2/ifftn, fft_rfft2/rfftn, fft_irfft2/irfftn (s, dim). Lengths may be symbolic.
inline NodeValue rule_fft_function(const Context& ctx, std::string_view op) {
  const TensorMeta& self = ctx.tensor("self");
  const std::size_t rank = self.sizes.size();
  // fft_hfft2/hfftn are irfft2/irfftn of the conjugate (the same _fft_c2c then _fft_c2r, and a
  // conj view changes no layout); fft_ihfft2/ihfftn transform the last dimension first (below).
  const bool c2r = op == "fft_irfft" || op == "fft_hfft" || op == "fft_irfft2" ||
                   op == "fft_irfftn" || op == "fft_hfft2" || op == "fft_hfftn";
  const bool ihfftn = op == "fft_ihfft2" || op == "fft_ihfftn";
  const bool r2c_onesided =
      op == "fft_rfft" || op == "fft_ihfft" || op == "fft_rfft2" || op == "fft_rfftn" || ihfftn;
  if (r2c_onesided && is_complex(self.dtype)) {
    ctx.fail(std::string(op) + " expects a real input tensor, but got " +
             std::string(dtype_name(self.dtype)));
  }
  // the transformed dimensions and the lengths asked for them (-1: the input's)
  std::vector<std::size_t> dims;
  std::optional<Sizes> lengths_arg;
  if (ctx.has("n")) {
    dims.push_back(static_cast<std::size_t>(ctx.wrap_dim(ctx.integer("dim"), rank)));
    if (const Argument* n = ctx.given_arg("n")) {
      lengths_arg = Sizes{ctx.sym_of(*n, "argument 'n'")};
    }
  } else {
    if (ctx.given_arg("s") != nullptr) lengths_arg = ctx.sym_list("s");
    if (ctx.given_arg("dim") != nullptr) {
      for (std::int64_t v : ctx.int_list("dim")) {
        dims.push_back(static_cast<std::size_t>(ctx.wrap_dim(v, rank)));
      }
      std::vector<std::size_t> sorted = dims;
      std::sort(sorted.begin(), sorted.end());
      if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
        ctx.fail("FFT dims must be unique");
      }
      if (lengths_arg && lengths_arg->size() != dims.size()) {
        ctx.fail("When given, dim and shape arguments must have the same length");
      }
    } else {
      const std::size_t k = lengths_arg ? lengths_arg->size() : rank;
      if (k > rank) {
        ctx.fail("Got shape with " + std::to_string(k) + " values but input tensor only has " +
                 std::to_string(rank) + " dimensions.");
      }
      for (std::size_t i = rank - k; i < rank; ++i) dims.push_back(i);
    }
  }
  if (dims.empty()) ctx.fail(std::string(op) + " must transform at least one axis");
  // fft_fft/fft_ifft of a real input are a two-sided R2C; fftn/fft2 make the input complex
  const bool one_dim = ctx.has("n");
  FftTensor x = fft_promote(ctx, self, c2r || (!one_dim && !r2c_onesided));
  const sym::Ranges* r = ctx.ranges();
  Sizes lengths;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const SymInt given = lengths_arg ? (*lengths_arg)[i] : SymInt{std::int64_t{-1}};
    const auto* v = std::get_if<std::int64_t>(&given);
    lengths.push_back(v != nullptr && *v == -1 ? x.sizes[dims[i]] : given);
  }
  if (c2r) {
    // the output's last length: given, or 2 * (n - 1); the input keeps last / 2 + 1 of it
    SymInt last, kept;
    try {
      last = lengths_arg ? lengths.back()
                         : ctx.out(sym::Expr(2) * (ctx.ex(x.sizes[dims.back()]) - sym::Expr(1)));
      kept = ctx.out(sym::floordiv(ctx.ex(last), sym::Expr(2), r) + sym::Expr(1));
    } catch (const unsupported_meta_error&) {
      throw;
    } catch (const value_error& e) {  // the arithmetic overflowed
      ctx.fail(std::string(op) + "'s output length: " + e.what());
    }
    fft_check_lengths(ctx, lengths_arg ? lengths : Sizes{last});
    lengths.back() = kept;
    if (lengths_arg) x = fft_resize(ctx, x, dims, lengths, self.device);
    return fft_meta(fft_c2r(ctx, x, dims, last), self.device);
  }
  fft_check_lengths(ctx, lengths);
  if (lengths_arg) x = fft_resize(ctx, x, dims, lengths, self.device);
  if (ihfftn) {
    // torch's fft_ihfftn: a onesided _fft_r2c of the last dimension, conj_physical (its output
    // keeps the dense r2c result's strides), then an inverse _fft_c2c of the other dimensions
    FftTensor t = fft_r2c(ctx, x, {dims.back()}, true);
    if (dims.size() > 1)
      t = fft_c2c(ctx, t, std::vector<std::size_t>(dims.begin(), dims.end() - 1));
    return fft_meta(t, self.device);
  }
  if (is_complex(x.type)) return fft_meta(fft_c2c(ctx, x, dims), self.device);
  return fft_meta(fft_r2c(ctx, x, dims, r2c_onesided), self.device);
}

// fft_fftshift / fft_ifftshift (SpectralOps.cpp): a roll of `self` over `dim` (every dimension
// when not given), whose result is a new contiguous tensor of self's shape and dtype.
inline NodeValue rule_fftshift(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  if (ctx.given_arg("dim") != nullptr) {
    for (std::int64_t d : ctx.int_list("dim")) (void)ctx.wrap_dim(d, self.sizes.size());
  }
  return contiguous_meta(ctx, self.dtype, self.sizes, self.device);
}

// fft_fftfreq(n) / fft_rfftfreq(n) (SpectralOps.cpp): an arange of n (rfftfreq: n // 2 + 1)
// values, contiguous, float32 unless dtype says (a floating or complex one). n is an `int` in
// torch's schema (torch specializes a symbolic one), so it must be concrete here.
inline NodeValue rule_fftfreq(const Context& ctx, std::string_view op) {
  const std::int64_t n = ctx.integer("n");
  const dtype type = ctx.opt_dtype("dtype").value_or(dtype::float32);
  const std::string name = op == "fft_rfftfreq" ? "rfftfreq" : "fftfreq";
  if (!is_floating(type) && !is_complex(type)) {
    ctx.fail(name + " requires a floating point or complex dtype");
  }
  const std::int64_t size = op == "fft_rfftfreq" ? n / 2 + 1 : n;
  if (size < 0) {
    ctx.fail("Trying to create tensor with negative dimension " + std::to_string(size) + ": [" +
             std::to_string(size) + "]");
  }
  return contiguous_meta(ctx, type, Sizes{SymInt{size}},
                         ctx.opt_device("device").value_or(Device{}));
}

// stft.default (aten/src/ATen/native/SpectralOps.cpp; torch.export's default IR keeps it whole,
// after torch.stft's center padding): the input ([L] or [B, L]) cut into frames of n_fft samples
// every hop_length (an as_strided view), times the window, one _fft_r2c (or _fft_c2c for a
// complex input or window) over the frame, transposed to [B, n_freq, n_frames] and
// view_as_real'd unless return_complex. n_frames = 1 + (L - n_fft) / hop_length, or with
// align_to_window and a window shorter than n_fft 1 + (L - win_length) / hop_length. L may be
// symbolic. torch's messages; torch prefixes them with a description of the call.
// `self` is the input after stft.center's padding, `align` whether frames start at the window
// (stft.default's align_to_window).
inline NodeValue stft_frames(const Context& ctx, const TensorMeta& self, bool align_to_window) {
  const sym::Ranges* r = ctx.ranges();
  const std::size_t rank = self.sizes.size();
  const TensorMeta* window = ctx.opt_tensor("window");
  const std::optional<bool> return_complex =
      ctx.given_arg("return_complex") ? std::optional<bool>(ctx.boolean("return_complex"))
                                      : std::nullopt;
  if (!return_complex && !is_complex(self.dtype) &&
      (window == nullptr || !is_complex(window->dtype))) {
    ctx.fail(
        "stft requires the return_complex parameter be given for real inputs, and will further "
        "require that return_complex=True in a future PyTorch release.");
  }
  if (rank != 1 && rank != 2) ctx.fail("stft: expected a 1D or 2D tensor");
  if (!is_floating(self.dtype) && !is_complex(self.dtype)) {
    ctx.fail("stft: expected a tensor of floating point or complex values");
  }
  const std::int64_t n_fft = ctx.integer("n_fft");
  const std::int64_t hop = ctx.opt_integer("hop_length").value_or(n_fft / 4);
  const std::int64_t win_length = ctx.opt_integer("win_length").value_or(n_fft);
  const SymInt& length = self.sizes[rank - 1];
  const sym::Expr len = ctx.ex(length);
  if (n_fft <= 0 || ctx.guard_or_false(sym::gt(sym::Expr(n_fft), len, r))) {
    ctx.fail("stft: expected 0 < n_fft < " + sym_str(length) +
             ", but got n_fft=" + std::to_string(n_fft));
  }
  if (hop <= 0)
    ctx.fail("stft: expected hop_length > 0, but got hop_length=" + std::to_string(hop));
  if (win_length <= 0 || win_length > n_fft) {
    ctx.fail("stft: expected 0 < win_length <= n_fft, but got win_length=" +
             std::to_string(win_length));
  }
  if (window != nullptr &&
      (window->sizes.size() != 1 || !ctx.equal(window->sizes[0], SymInt{win_length}))) {
    ctx.fail("stft: expected a 1D window tensor of size equal to win_length=" +
             std::to_string(win_length) + ", but got window with size " + shape_str(window->sizes));
  }
  const bool align = align_to_window && win_length < n_fft;
  const std::int64_t frame = align ? win_length : n_fft;
  // the frames [B, n_frames, n_fft] of the input's last dimension
  const SymInt batch = rank == 2 ? self.sizes[0] : SymInt{std::int64_t{1}};
  const SymInt in_stride = self.strides[rank - 1];
  const SymInt batch_stride = rank == 2 ? self.strides[0] : ctx.mul(length, in_stride, "a stride");
  SymInt n_frames;
  try {
    n_frames = ctx.out(sym::Expr(1) + sym::floordiv(len - sym::Expr(frame), sym::Expr(hop), r));
  } catch (const unsupported_meta_error&) {
    throw;
  } catch (const value_error& e) {
    ctx.fail(std::string("stft's number of frames: ") + e.what());
  }
  TensorMeta frames = make_meta(
      self.dtype, {batch, n_frames, SymInt{n_fft}},
      {batch_stride, ctx.mul(in_stride, SymInt{hop}, "a stride"), in_stride}, self.device);
  if (window != nullptr) {
    const dtype type =
        ctx.result_type({Context::tensor_operand(frames), Context::tensor_operand(*window)});
    TensorMeta padded_window = *window;  // a shorter window is zero-padded to n_fft, contiguous
    padded_window.sizes = {SymInt{n_fft}};
    padded_window.strides = {SymInt{std::int64_t{1}}};
    frames = elementwise_meta(ctx, type, {&frames, &padded_window});
  }
  const bool complex_fft = is_complex(frames.dtype);
  const bool onesided =
      ctx.given_arg("onesided") != nullptr ? ctx.boolean("onesided") : !complex_fft;
  FftTensor out;
  if (complex_fft) {
    if (onesided) ctx.fail("Cannot have onesided output if window or input is complex");
    out = fft_c2c(ctx, fft_tensor(ctx, frames), {2});
  } else {
    out = fft_r2c(ctx, fft_tensor(ctx, frames), {2}, onesided);
  }
  std::swap(out.sizes[1], out.sizes[2]);  // transpose_(1, 2)
  std::swap(out.strides[1], out.strides[2]);
  if (rank == 1) {  // squeeze_(0)
    out.sizes.erase(out.sizes.begin());
    out.strides.erase(out.strides.begin());
  }
  TensorMeta result = fft_meta(out, self.device);
  if (return_complex.value_or(true)) return result;
  // view_as_real: a last dimension of 2, strides in units of the real dtype
  result.dtype = complex_to_real(result.dtype);
  for (SymInt& st : result.strides) st = ctx.mul(st, SymInt{std::int64_t{2}}, "a stride");
  result.sizes.emplace_back(std::int64_t{2});
  result.strides.emplace_back(std::int64_t{1});
  return result;
}

// stft.default and stft.center. torch.export runs torch._refs.stft for stft.center (its Python
// dispatcher kernel): with center, the input is padded by n_fft / 2 on both sides (aten.pad in
// pad_mode: a new contiguous tensor), and with align_to_window (center=False only) by
// (n_fft - win_length) / 2, then framed as stft.default frames an unaligned input.
inline NodeValue rule_stft(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const bool align = ctx.given_arg("align_to_window") != nullptr && ctx.boolean("align_to_window");
  if (ctx.node().target() == "torch.ops.aten.stft.default") return stft_frames(ctx, self, align);
  const bool center = ctx.boolean("center");
  if (center && ctx.given_arg("align_to_window") != nullptr) {
    ctx.fail("stft only supports align_to_window for center = False.");
  }
  const std::int64_t n_fft = ctx.integer("n_fft");
  const std::int64_t win_length = ctx.opt_integer("win_length").value_or(n_fft);
  const std::int64_t pad =
      center ? n_fft / 2 : (align && win_length < n_fft ? (n_fft - win_length) / 2 : 0);
  const std::size_t rank = self.sizes.size();
  if (pad == 0 || rank < 1 || rank > 2) return stft_frames(ctx, self, false);
  const std::string mode = ctx.string("pad_mode");
  const SymInt& length = self.sizes[rank - 1];
  const sym::Expr len = ctx.ex(length);
  // reflect needs pad < length, circular pad <= length (torch's checks of the padded view
  // [1, B, L], as guards)
  if (mode == "reflect" && ctx.guard_or_false(sym::ge(sym::Expr(pad), len, ctx.ranges()))) {
    const std::string p = std::to_string(pad);
    ctx.fail(
        "Argument #4: Padding size should be less than the corresponding input dimension, but "
        "got: padding (" +
        p + ", " + p + ") at dimension 2 of input [1, " +
        (rank == 2 ? sym_str(self.sizes[0]) : std::string("1")) + ", " + sym_str(length) + "]");
  }
  if (mode == "circular" && ctx.guard_or_false(sym::gt(sym::Expr(pad), len, ctx.ranges()))) {
    ctx.fail("Padding value causes wrapping around more than once.");
  }
  if (mode != "reflect" && mode != "constant" && mode != "replicate" && mode != "circular") {
    ctx.fail("Unrecognised padding mode " + mode);
  }
  Sizes sizes = self.sizes;
  try {
    sizes[rank - 1] = ctx.out(len + sym::Expr(2 * pad));
  } catch (const unsupported_meta_error&) {
    throw;
  } catch (const value_error& e) {  // the arithmetic overflowed
    ctx.fail(std::string("stft's padded length: ") + e.what());
  }
  return stft_frames(ctx, contiguous_meta(ctx, self.dtype, std::move(sizes), self.device), false);
}

// istft.default as torch.export computes its value: the Python reference torch._refs.istft
// (registered for CompositeImplicitAutograd, which export's Python dispatcher runs; the C++
// kernel gives the same sizes). The input [F, N] or [B, F, N] (F frequencies, N frames) is
// transposed to [B, N, F], inverse-transformed over F (fft_ifft with return_complex, else
// fft_irfft of the onesided half), multiplied by the window [n_fft] (ones of the real dtype when
// not given; a shorter one zero-padded), overlap-added into [B, L] with L = n_fft + hop * (N - 1)
// (unfold_backward: a new contiguous tensor), narrowed to [start, end) (start = n_fft / 2 when
// centered; end = start + length, or L - n_fft / 2 when centered, or L) and divided by the
// window envelope: a contiguous [B, end - start] (squeezed for a 2-D input). N may be symbolic.
// One message differs from torch's on purpose: torch's check that the input is complex prints
// its device message (and fails evaluating it when no window is given); epgraph prints the C++
// kernel's.
// istft's arguments as they are used (hop and win_length with their defaults).
struct IstftArgs {
  const TensorMeta& self;
  const TensorMeta* window;
  std::int64_t n_fft, hop, win_length;
  bool onesided;
};

// istft's checks, in torch._refs.istft's order (its messages, see rule_istft); returns the
// arguments with `onesided` decided (given, or whether the frequencies are fewer than n_fft).
inline IstftArgs istft_args(const Context& ctx) {
  const TensorMeta& self = ctx.tensor("self");
  const std::int64_t n_fft = ctx.integer("n_fft");
  IstftArgs a{self,
              ctx.opt_tensor("window"),
              n_fft,
              ctx.opt_integer("hop_length").value_or(n_fft / 4),
              ctx.opt_integer("win_length").value_or(n_fft),
              false};
  if (!is_complex(self.dtype)) {
    ctx.fail(
        "istft requires a complex-valued input tensor matching the output from stft with "
        "return_complex=True.");
  }
  const std::size_t rank = self.sizes.size();
  if (rank != 2 && rank != 3) {
    ctx.fail("istft expected a tensor with 2 or 3 dimensions, but got " + std::to_string(rank));
  }
  for (const SymInt& s : self.sizes) {
    if (ctx.guard_or_false(sym::eq(ctx.ex(s), sym::Expr(0), ctx.ranges()))) {
      ctx.fail("istft input tensor cannot be empty");
    }
  }
  const SymInt fft_size = self.sizes[rank - 2];
  a.onesided = ctx.given_arg("onesided") != nullptr ? ctx.boolean("onesided")
                                                    : !ctx.equal(fft_size, SymInt{n_fft});
  if (a.onesided && !ctx.equal(fft_size, SymInt{n_fft / 2 + 1})) {
    ctx.fail(
        "istft expected the frequency dimension (3rd to the last) of the input tensor to match "
        "n_fft / 2 + 1 when onesided=True, but got " +
        sym_str(fft_size));
  }
  if (!a.onesided && !ctx.equal(fft_size, SymInt{n_fft})) {
    ctx.fail(
        "istft expected the frequency dimension (3rd to the last) of the input tensor to match "
        "n_fft when onesided=False, but got " +
        sym_str(fft_size));
  }
  if (a.hop <= 0 || a.hop > a.win_length) ctx.fail("istft expected 0 < hop_length <= win_length");
  if (a.win_length <= 0 || a.win_length > n_fft) {
    ctx.fail("istft expected 0 < win_length <= n_fft");
  }
  if (a.window != nullptr &&
      (a.window->sizes.size() != 1 || !ctx.equal(a.window->sizes[0], SymInt{a.win_length}))) {
    ctx.fail("Invalid window shape. window has to be 1D and length of `win_length`");
  }
  return a;
}

// The frames [B, N, n_fft] after the inverse transform (fft_ifft with return_complex, else
// fft_irfft of the onesided half) of the input transposed to [B, N, F].
inline FftTensor istft_frames(const Context& ctx, const IstftArgs& a) {
  const TensorMeta& self = a.self;
  // [B, N, F]: unsqueeze(0) (stride F * stride[0]) of a 2-D input, then transpose(1, 2)
  FftTensor x = fft_tensor(ctx, self);
  if (self.sizes.size() == 2) {
    x.sizes.insert(x.sizes.begin(), SymInt{std::int64_t{1}});
    x.strides.insert(x.strides.begin(), ctx.mul(self.sizes[0], self.strides[0], "a stride"));
  }
  std::swap(x.sizes[1], x.sizes[2]);
  std::swap(x.strides[1], x.strides[2]);
  if (ctx.boolean("return_complex")) {
    if (a.onesided) ctx.fail("cannot have onesided output if window or input is complex");
    return fft_c2c(ctx, x, {2});
  }
  if (a.window != nullptr && is_complex(a.window->dtype)) {
    ctx.fail("Complex windows are incompatible with return_complex=False");
  }
  if (!a.onesided) x.sizes[2] = SymInt{a.n_fft / 2 + 1};  // narrow(-1, 0, n_fft / 2 + 1)
  // fft_irfft without n: 2 * (F - 1) points
  const SymInt points = ctx.out(sym::Expr(2) * (ctx.ex(x.sizes[2]) - sym::Expr(1)));
  x = fft_c2r(ctx, x, {2}, points);
  if (!ctx.equal(points, SymInt{a.n_fft})) {
    ctx.fail("Expected input.size(2) == n_fft, got " + sym_str(points) +
             " != " + std::to_string(a.n_fft));
  }
  return x;
}

// The samples kept of the overlap-added signal of L = n_fft + hop * (N - 1): from start
// (n_fft / 2 when centered, else 0) to end (start + length, or L - n_fft / 2 when centered, or
// L), max(0, end - start) (a guard in torch). N may be symbolic.
inline SymInt istft_kept_length(const Context& ctx, const IstftArgs& a, const SymInt& n_frames) {
  const std::int64_t start = ctx.boolean("center") ? a.n_fft / 2 : 0;
  const std::optional<std::int64_t> length = ctx.opt_integer("length");
  try {
    const sym::Expr len = sym::Expr(a.n_fft) + sym::Expr(a.hop) * (ctx.ex(n_frames) - sym::Expr(1));
    sym::Expr end = len;
    if (length) {
      end = sym::Expr(start + *length);
    } else if (start != 0) {
      end = len - sym::Expr(a.n_fft / 2);
    }
    const sym::Expr kept = end - sym::Expr(start);
    return ctx.guard_or_false(sym::lt(kept, sym::Expr(0), ctx.ranges())) ? SymInt{std::int64_t{0}}
                                                                         : ctx.out(kept);
  } catch (const unsupported_meta_error&) {
    throw;
  } catch (const value_error& e) {  // the arithmetic overflowed
    ctx.fail(std::string("istft's signal length: ") + e.what());
  }
}

inline NodeValue rule_istft(const Context& ctx, std::string_view) {
  const IstftArgs a = istft_args(ctx);
  const TensorMeta& self = a.self;
  const FftTensor x = istft_frames(ctx, a);
  // the frames times the window viewed as [1, 1, n_fft] (ones of the real dtype when not given)
  const dtype window_type = a.window != nullptr ? a.window->dtype : complex_to_real(self.dtype);
  const TensorMeta window_view =
      make_meta(window_type, {SymInt{std::int64_t{1}}, SymInt{std::int64_t{1}}, SymInt{a.n_fft}},
                {SymInt{a.n_fft}, SymInt{a.n_fft}, SymInt{std::int64_t{1}}}, self.device);
  const dtype y_type = ctx.result_type(
      {Context::tensor_operand(fft_meta(x, self.device)), Context::tensor_operand(window_view)});
  // overlap-added, narrowed and divided by the window envelope (whose dtype y_type already
  // promotes with); an end past L is zero-padded (torch warns): a new contiguous [B, kept]
  const SymInt span = istft_kept_length(ctx, a, self.sizes.back());
  return contiguous_meta(
      ctx, y_type, self.sizes.size() == 2 ? Sizes{span} : Sizes{x.sizes[0], span}, self.device);
}

}  // namespace infer
}  // namespace detail
}  // namespace epgraph
