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

// `dims` stable-sorted by the strides of `strides`, largest first (torch's _sort_dims, which
// leaves the last dimension in place with `exclude_last`).
inline std::vector<std::size_t> fft_sort_dims(const Ints& strides, std::vector<std::size_t> dims,
                                              bool exclude_last) {
  const auto end = dims.end() - (exclude_last && !dims.empty() ? 1 : 0);
  std::stable_sort(dims.begin(), end,
                   [&](std::size_t a, std::size_t b) { return strides[a] > strides[b]; });
  return dims;
}

// The strides of an FFT's output of `out_sizes` (torch's _exec_fft, the CPU/MKL layout): the
// batch dimensions (those not transformed) outermost in the input's stride order, then the
// transformed dimensions in the order of `dims`, each block contiguous.
inline Ints exec_fft_strides(const Ints& in_strides, const Ints& out_sizes,
                             const std::vector<std::size_t>& dims) {
  const std::size_t ndim = out_sizes.size();
  std::vector<bool> transformed(ndim, false);
  for (std::size_t d : dims) transformed[d] = true;
  std::vector<std::size_t> batch;
  for (std::size_t d = 0; d < ndim; ++d) {
    if (!transformed[d]) batch.push_back(d);
  }
  std::stable_sort(batch.begin(), batch.end(),
                   [&](std::size_t a, std::size_t b) { return in_strides[a] > in_strides[b]; });
  std::int64_t batch_size = 1;
  for (std::size_t d : batch) batch_size = wrap_mul(batch_size, out_sizes[d]);
  Ints batched{batch_size};
  for (std::size_t d : dims) batched.push_back(out_sizes[d]);
  const Ints cs = contiguous_strides(batched);
  Ints out(ndim, 0);
  std::int64_t batch_numel = 1;
  for (std::size_t i = batch.size(); i-- > 0;) {
    out[batch[i]] = wrap_mul(batch_numel, cs[0]);
    batch_numel = wrap_mul(batch_numel, out_sizes[batch[i]]);
  }
  for (std::size_t k = 0; k < dims.size(); ++k) out[dims[k]] = cs[1 + k];
  return out;
}

// A tensor of concrete sizes and strides, as the FFT rules compute with.
struct FftTensor {
  dtype type;
  Ints sizes, strides;
};

inline FftTensor fft_tensor(const Context& ctx, const TensorMeta& t, const std::string& what) {
  return FftTensor{t.dtype, ctx.concrete_all(t.sizes, what),
                   ctx.concrete_all(t.strides, what + " strides")};
}

inline TensorMeta fft_meta(const FftTensor& x, const Device& device) {
  return make_meta(x.type, to_sym(x.sizes), to_sym(x.strides), device);
}

// _fft_r2c / _fft_c2c / _fft_c2r of `x` over `dims` (wrapped, not empty).
inline FftTensor fft_r2c(const FftTensor& x, const std::vector<std::size_t>& dims, bool onesided) {
  Ints out_sizes = x.sizes;
  if (onesided) out_sizes[dims.back()] = x.sizes[dims.back()] / 2 + 1;
  Ints st = exec_fft_strides(x.strides, out_sizes, fft_sort_dims(x.strides, dims, true));
  return FftTensor{real_to_complex(x.type), std::move(out_sizes), std::move(st)};
}
inline FftTensor fft_c2c(const FftTensor& x, const std::vector<std::size_t>& dims) {
  return FftTensor{x.type, x.sizes,
                   exec_fft_strides(x.strides, x.sizes, fft_sort_dims(x.strides, dims, false))};
}
inline FftTensor fft_c2r(const FftTensor& x, const std::vector<std::size_t>& dims,
                         std::int64_t last_dim_size) {
  FftTensor in = x;
  if (dims.size() > 1) in = fft_c2c(x, std::vector<std::size_t>(dims.begin(), dims.end() - 1));
  Ints out_sizes = in.sizes;
  out_sizes[dims.back()] = last_dim_size;
  Ints st = exec_fft_strides(in.strides, out_sizes, {dims.back()});
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

// Refuses a transform length below 1 (torch's message).
inline void fft_check_lengths(const Context& ctx, const Ints& lengths) {
  for (std::int64_t n : lengths) {
    if (n < 1) ctx.fail("Invalid number of data points (" + std::to_string(n) + ") specified");
  }
}

// _fft_r2c(self, dim, normalization, onesided), _fft_c2r(self, dim, normalization, last_dim_size)
// and _fft_c2c(self, dim, normalization, forward): the sizes and dtypes of torch's meta functions
// (torch/_meta_registrations.py) and the strides of its CPU path with MKL (torch's CPU wheels).
inline NodeValue rule_fft(const Context& ctx, std::string_view op) {
  const TensorMeta& self = ctx.tensor("self");
  const FftTensor x = fft_tensor(ctx, self, "argument 'self'");
  const std::vector<std::size_t> dims = fft_dims(ctx, x.sizes.size());
  if (op == "_fft_r2c") {
    if (!is_floating(self.dtype)) {
      ctx.fail("_fft_r2c expects a floating-point input, not " +
               std::string(dtype_name(self.dtype)));
    }
    if (dims.empty()) ctx.fail("_fft_r2c needs at least one dimension to transform");
    return fft_meta(fft_r2c(x, dims, ctx.boolean("onesided")), self.device);
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
    return fft_meta(fft_c2c(x, dims), self.device);
  }
  if (dims.empty()) ctx.fail("_fft_c2r needs at least one dimension to transform");
  const std::int64_t last_dim_size = ctx.integer("last_dim_size");
  fft_check_lengths(ctx, {last_dim_size});
  return fft_meta(fft_c2r(x, dims, last_dim_size), self.device);
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
  if (type == self.dtype) return fft_tensor(ctx, self, "argument 'self'");
  const TensorMeta to =
      formatted_meta(ctx, type, self.sizes, self.device, MemoryFormat::PreserveFormat, &self);
  return fft_tensor(ctx, to, "argument 'self'");
}

// resize_fft_input: each dims[i] sliced or padded to lengths[i].
inline FftTensor fft_resize(const Context& ctx, FftTensor x, const std::vector<std::size_t>& dims,
                            const Ints& lengths, const Device& device) {
  bool pad = false;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (x.sizes[dims[i]] < lengths[i]) pad = true;
    if (x.sizes[dims[i]] > lengths[i]) x.sizes[dims[i]] = lengths[i];
  }
  if (!pad) return x;
  Sizes padded = to_sym(x.sizes);
  for (std::size_t i = 0; i < dims.size(); ++i) {
    padded[dims[i]] = std::max(x.sizes[dims[i]], lengths[i]);
  }
  const TensorMeta in = fft_meta(x, device);
  return fft_tensor(ctx, suggested_meta(ctx, in, x.type, padded), "the padded input");
}

// fft_fft, fft_ifft, fft_rfft, fft_irfft, fft_hfft, fft_ihfft (n, dim) and fft_fft2/fftn,
// fft_ifft2/ifftn, fft_rfft2/rfftn, fft_irfft2/irfftn (s, dim).
inline NodeValue rule_fft_function(const Context& ctx, std::string_view op) {
  const TensorMeta& self = ctx.tensor("self");
  const std::size_t rank = self.sizes.size();
  const bool c2r =
      op == "fft_irfft" || op == "fft_hfft" || op == "fft_irfft2" || op == "fft_irfftn";
  const bool r2c_onesided =
      op == "fft_rfft" || op == "fft_ihfft" || op == "fft_rfft2" || op == "fft_rfftn";
  if (r2c_onesided && is_complex(self.dtype)) {
    ctx.fail(std::string(op) + " expects a real input tensor, but got " +
             std::string(dtype_name(self.dtype)));
  }
  // the transformed dimensions and the lengths asked for them (-1: the input's)
  std::vector<std::size_t> dims;
  std::optional<Ints> lengths_arg;
  if (ctx.has("n")) {
    dims.push_back(static_cast<std::size_t>(ctx.wrap_dim(ctx.integer("dim"), rank)));
    if (const Argument* n = ctx.given_arg("n")) {
      lengths_arg = Ints{ctx.integer_of(*n, "argument 'n'")};
    }
  } else {
    if (ctx.given_arg("s") != nullptr) lengths_arg = ctx.int_list("s");
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
      if (k > rank)
        ctx.fail("Got shape with " + std::to_string(k) +
                 " values but input tensor "
                 "only has " +
                 std::to_string(rank) + " dimensions.");
      for (std::size_t i = rank - k; i < rank; ++i) dims.push_back(i);
    }
  }
  if (dims.empty()) ctx.fail(std::string(op) + " must transform at least one axis");
  // fft_fft/fft_ifft of a real input are a two-sided R2C; fftn/fft2 make the input complex
  const bool one_dim = ctx.has("n");
  FftTensor x = fft_promote(ctx, self, c2r || (!one_dim && !r2c_onesided));
  Ints lengths;
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const std::int64_t given = lengths_arg ? (*lengths_arg)[i] : -1;
    lengths.push_back(given == -1 ? x.sizes[dims[i]] : given);
  }
  if (c2r) {
    const std::int64_t last = lengths_arg ? lengths.back() : 2 * (x.sizes[dims.back()] - 1);
    fft_check_lengths(ctx, lengths_arg ? lengths : Ints{last});
    lengths.back() = last / 2 + 1;
    if (lengths_arg) x = fft_resize(ctx, x, dims, lengths, self.device);
    return fft_meta(fft_c2r(x, dims, last), self.device);
  }
  fft_check_lengths(ctx, lengths);
  if (lengths_arg) x = fft_resize(ctx, x, dims, lengths, self.device);
  if (is_complex(x.type)) return fft_meta(fft_c2c(x, dims), self.device);
  return fft_meta(fft_r2c(x, dims, r2c_onesided), self.device);
}

}  // namespace infer
}  // namespace detail
}  // namespace epgraph
