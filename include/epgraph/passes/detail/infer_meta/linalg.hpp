// infer_meta rules of the matmul family, convolution, scaled_dot_product_attention and the
// pairwise distances (cdist, pdist).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include "shapes.hpp"

namespace epgraph {
namespace detail {
namespace infer {

inline void check_inner(const Context& ctx, const SymInt& a, const SymInt& b, const Sizes& sa,
                        const Sizes& sb) {
  if (!ctx.equal(a, b)) {
    auto flat = [](const Sizes& s) {
      std::string out;
      for (std::size_t i = 0; i < s.size(); ++i) out += (i ? "x" : "") + sym_str(s[i]);
      return out;
    };
    ctx.fail("mat1 and mat2 shapes cannot be multiplied (" + flat(sa) + " and " + flat(sb) + ")");
  }
}

inline TensorMeta rule_linear(const Context& ctx) {
  const TensorMeta& input = ctx.tensor("input");
  const TensorMeta& weight = ctx.tensor("weight");
  if (weight.sizes.size() != 2 || input.sizes.empty()) {
    ctx.fail("linear needs a 2-D weight and an input of at least 1 dimension, got " +
             shape_str(input.sizes) + " and " + shape_str(weight.sizes));
  }
  // torch folds the leading dimensions of the input into mat1's rows
  const Sizes leading(input.sizes.begin(), input.sizes.end() - 1);
  SymInt rows = std::int64_t{1};
  if (auto c = all_concrete(leading)) {
    std::int64_t n = 1;
    for (std::int64_t v : *c) n *= v;
    rows = n;
  } else {
    rows = leading.front();
  }
  check_inner(ctx, input.sizes.back(), weight.sizes[1], Sizes{rows, input.sizes.back()},
              Sizes{weight.sizes[1], weight.sizes[0]});
  Sizes shape(input.sizes.begin(), input.sizes.end() - 1);
  shape.push_back(weight.sizes[0]);
  return contiguous_meta(ctx, input.dtype, std::move(shape), input.device);
}

inline TensorMeta rule_mm(const Context& ctx, std::string_view a_name, std::string_view b_name,
                          std::size_t rank) {
  const TensorMeta& a = ctx.tensor(a_name);
  const TensorMeta& b = ctx.tensor(b_name);
  if (a.sizes.size() != rank || b.sizes.size() != rank) {
    ctx.fail("expected " + std::to_string(rank) + "-D tensors, got " + shape_str(a.sizes) +
             " and " + shape_str(b.sizes));
  }
  if (rank == 3 && !ctx.equal(a.sizes[0], b.sizes[0])) {
    ctx.fail("batch1 and batch2 must have same number of batches, got " + sym_str(a.sizes[0]) +
             " and " + sym_str(b.sizes[0]));
  }
  check_inner(ctx, a.sizes[rank - 1], b.sizes[rank - 2], a.sizes, b.sizes);
  Sizes shape(a.sizes.begin(), a.sizes.end() - 1);
  shape.push_back(b.sizes[rank - 1]);
  return contiguous_meta(ctx, a.dtype, std::move(shape), a.device);
}

inline TensorMeta rule_matmul(const Context& ctx) {
  const TensorMeta& a = ctx.tensor("self");
  const TensorMeta& b = ctx.tensor("other");
  const std::size_t ra = a.sizes.size(), rb = b.sizes.size();
  if (ra == 0 || rb == 0) {
    ctx.fail("both arguments to matmul need to be at least 1D, but they are " + std::to_string(ra) +
             "D and " + std::to_string(rb) + "D");
  }
  const SymInt& ka = a.sizes.back();
  const SymInt& kb = rb == 1 ? b.sizes[0] : b.sizes[rb - 2];
  if (!ctx.equal(ka, kb)) {
    if (ra == 1 && rb == 1) {
      ctx.fail("inconsistent tensor size, expected tensor [" + sym_str(ka) + "] and src [" +
               sym_str(kb) + "] to have the same number of elements, but got " + sym_str(ka) +
               " and " + sym_str(kb) + " elements respectively");
    }
    check_inner(ctx, ka, kb, a.sizes, b.sizes);
  }
  Sizes shape;
  if (ra == 1 && rb == 1) {
    // dot: a scalar
  } else if (rb == 1) {
    shape.assign(a.sizes.begin(), a.sizes.end() - 1);
  } else if (ra == 1) {
    shape.assign(b.sizes.begin(), b.sizes.end() - 2);
    shape.push_back(b.sizes.back());
  } else {
    const Sizes ba(a.sizes.begin(), a.sizes.end() - 2);
    const Sizes bb(b.sizes.begin(), b.sizes.end() - 2);
    shape = broadcast(ctx, {&ba, &bb});
    shape.push_back(a.sizes[ra - 2]);
    shape.push_back(b.sizes.back());
  }
  return contiguous_meta(ctx, a.dtype, std::move(shape), a.device);
}

inline TensorMeta rule_addmm(const Context& ctx, bool batched) {
  TensorMeta out = batched ? rule_mm(ctx, "batch1", "batch2", 3) : rule_mm(ctx, "mat1", "mat2", 2);
  const TensorMeta& self = ctx.tensor("self");
  const Sizes b = broadcast(ctx, {&self.sizes, &out.sizes});
  if (b.size() != out.sizes.size()) {
    ctx.fail("self of shape " + shape_str(self.sizes) + " does not broadcast to the result's " +
             shape_str(out.sizes));
  }
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (!ctx.equal(b[i], out.sizes[i])) {
      ctx.fail("self of shape " + shape_str(self.sizes) + " does not broadcast to the result's " +
               shape_str(out.sizes));
    }
  }
  return out;
}

inline TensorMeta rule_convolution(const Context& ctx) {
  const TensorMeta& input = ctx.tensor("input");
  const TensorMeta& weight = ctx.tensor("weight");
  const std::size_t rank = weight.sizes.size();
  if (rank < 3) ctx.fail("weight should have at least three dimensions");
  if (input.sizes.size() != rank) {
    ctx.fail("Expected " + std::to_string(rank) + "-dimensional input for " + std::to_string(rank) +
             "-dimensional weight " + shape_str(weight.sizes) + ", but got " +
             std::to_string(input.sizes.size()) + "-dimensional input of size " +
             shape_str(input.sizes) + " instead");
  }
  const std::size_t nsp = rank - 2;
  auto expand_param = [&](const char* name) {
    Ints v = ctx.int_list(name);
    if (v.size() == 1 && nsp > 1) v.assign(nsp, v[0]);
    if (v.size() != nsp) {
      ctx.fail("expected " + std::string(name) + " to be a single integer value or a list of " +
               std::to_string(nsp) + " values to match the convolution dimensions, but got " +
               std::string(name) + "=" + shape_str(to_sym(v)));
    }
    return v;
  };
  const Ints stride = expand_param("stride");
  const Ints padding = expand_param("padding");
  const Ints dilation = expand_param("dilation");
  // convolution says; conv_transpose{1,2,3}d (with output_padding, no flag) are transposed;
  // conv{1,2,3}d are not
  const bool transposed =
      ctx.has("transposed") ? ctx.boolean("transposed") : ctx.has("output_padding");
  const Ints output_padding = transposed ? expand_param("output_padding") : Ints(nsp, 0);
  const std::int64_t groups = ctx.integer("groups");
  if (groups <= 0) ctx.fail("non-positive groups is not supported");
  Sizes shape;
  shape.push_back(input.sizes[0]);
  if (transposed) {
    shape.push_back(ctx.mul(weight.sizes[1], groups, "the output channels"));
  } else {
    shape.push_back(weight.sizes[0]);
  }
  // torch's meta_conv: (in + 2p - d(k - 1) - 1) // s + 1, transposed
  // (in - 1) s - 2p + d(k - 1) + output_padding + 1; symbolic sizes give FloorDiv expressions
  for (std::size_t i = 0; i < nsp; ++i) {
    sym::Expr o;
    try {
      const sym::Expr in = ctx.ex(input.sizes[i + 2]);
      const sym::Expr k = ctx.ex(weight.sizes[i + 2]);
      const sym::Expr span = sym::Expr(dilation[i]) * (k - sym::Expr(1));
      if (transposed) {
        o = (in - sym::Expr(1)) * sym::Expr(stride[i]) - sym::Expr(2) * sym::Expr(padding[i]) +
            span + sym::Expr(output_padding[i]) + sym::Expr(1);
      } else {
        if (stride[i] == 0) ctx.fail("stride should be greater than zero");
        o = sym::floordiv(in + sym::Expr(2) * sym::Expr(padding[i]) - span - sym::Expr(1),
                          sym::Expr(stride[i]), ctx.ranges()) +
            sym::Expr(1);
      }
    } catch (const value_error& e) {
      ctx.fail("the output size of spatial dimension " + std::to_string(i) + ": " + e.what());
    }
    if (!ctx.guard_or_true(sym::gt(o, sym::Expr(0), ctx.ranges()))) {
      ctx.fail("the computed output size of spatial dimension " + std::to_string(i) + " is " +
               sym_str(ctx.out(o)) + ", which is too small");
    }
    shape.push_back(ctx.out(o));
  }
  return contiguous_meta(ctx, input.dtype, std::move(shape), input.device);
}

// Whether CPU's fused kernel (_scaled_dot_product_flash_attention_for_cpu) takes this call, as
// torch's use_flash_attention_cpp decides (aten/src/ATen/native/transformers/sdp_utils_cpp.cpp):
// no dropout; 4-D query, key and value of one batch size; equal head counts, or grouped-query
// attention (enable_gqa, query's heads a multiple of key's, key's equal to value's); one head
// dimension; no empty sequence; last dimensions of stride 1 (or a head dimension of 1); a mask
// of rank 2, or of rank 4 whose batch and head dimensions are 1 or query's.
inline bool sdpa_takes_flash_cpu(const Context& ctx, const TensorMeta& q, const TensorMeta& k,
                                 const TensorMeta& v) {
  if (ctx.has("dropout_p") && ctx.number("dropout_p") != 0.0) return false;
  if (q.sizes.size() != 4 || k.sizes.size() != 4 || v.sizes.size() != 4) return false;
  if (!ctx.equal(q.sizes[0], k.sizes[0]) || !ctx.equal(q.sizes[0], v.sizes[0])) return false;
  const bool gqa = ctx.has("enable_gqa") && ctx.boolean("enable_gqa");
  if (!ctx.equal(k.sizes[1], v.sizes[1])) return false;
  if (!ctx.equal(q.sizes[1], k.sizes[1])) {
    const auto* hq = std::get_if<std::int64_t>(&q.sizes[1]);
    const auto* hk = std::get_if<std::int64_t>(&k.sizes[1]);
    if (!gqa || hq == nullptr || hk == nullptr || *hk == 0 || *hq % *hk != 0) return false;
  }
  if (!ctx.equal(q.sizes[3], k.sizes[3]) || !ctx.equal(q.sizes[3], v.sizes[3])) return false;
  for (const TensorMeta* t : {&q, &k, &v}) {
    if (ctx.guard_or_false(sym::eq(ctx.ex(t->sizes[2]), sym::Expr(0), ctx.ranges()))) {
      return false;
    }
    if (!ctx.is_one(t->strides[3]) && !ctx.is_one(q.sizes[3])) return false;
  }
  if (const TensorMeta* mask = ctx.opt_tensor("attn_mask")) {
    const Sizes& m = mask->sizes;
    if (m.size() < 2) {
      ctx.fail("attn_mask must have at least 2 dimensions, got " + shape_str(m));
    }
    const SymInt& rows = m[m.size() - 2];
    const SymInt& cols = m.back();
    if (!(ctx.equal(rows, q.sizes[2]) || ctx.is_one(rows))) return false;
    if (!(ctx.equal(cols, k.sizes[2]) || ctx.is_one(cols))) return false;
    if (m.size() == 2) return true;
    return m.size() == 4 && (ctx.is_one(m[0]) || ctx.equal(m[0], q.sizes[0])) &&
           (ctx.is_one(m[1]) || ctx.equal(m[1], q.sizes[1]));
  }
  return true;
}

// aten.scaled_dot_product_attention: query [*, L, E], key [*, S, E], value [*, S, Ev] -> [*, L, Ev]
// in query's dtype. On the fused CPU path (sdpa_takes_flash_cpu) the result is empty_like(query)
// (query's dimension order, so a [b, s, h, d] tensor viewed as [b, h, s, d] gives the same view);
// on the math path it is attn @ value, contiguous, its batch dimensions broadcast.
inline NodeValue rule_sdpa(const Context& ctx, std::string_view) {
  const TensorMeta& q = ctx.tensor("query");
  const TensorMeta& k = ctx.tensor("key");
  const TensorMeta& v = ctx.tensor("value");
  if (q.dtype != k.dtype || q.dtype != v.dtype) {
    ctx.fail("Expected query, key, and value to have the same dtype, but got query.dtype: " +
             std::string(dtype_name(q.dtype)) + " key.dtype: " + std::string(dtype_name(k.dtype)) +
             " and value.dtype: " + std::string(dtype_name(v.dtype)) + " instead.");
  }
  if (q.sizes.size() < 2 || k.sizes.size() < 2 || v.sizes.size() < 2) {
    ctx.fail("query, key and value need at least 2 dimensions, got " + shape_str(q.sizes) + ", " +
             shape_str(k.sizes) + " and " + shape_str(v.sizes));
  }
  if (!ctx.equal(q.sizes.back(), k.sizes.back())) {
    ctx.fail("query's last dimension " + shape_str(q.sizes) + " and key's " + shape_str(k.sizes) +
             " differ");
  }
  if (sdpa_takes_flash_cpu(ctx, q, k, v)) {
    return formatted_meta(ctx, q.dtype, q.sizes, q.device, MemoryFormat::PreserveFormat, &q);
  }
  Sizes shape(q.sizes.begin(), q.sizes.end() - 1);
  const bool gqa = ctx.has("enable_gqa") && ctx.boolean("enable_gqa");
  if (!gqa && q.sizes.size() == k.sizes.size() && q.sizes.size() == v.sizes.size() &&
      q.sizes.size() > 2) {
    // the batch dimensions of q @ k^T, then of that @ v (grouped-query attention repeats key's
    // and value's heads to query's)
    const Sizes qb(q.sizes.begin(), q.sizes.end() - 2);
    const Sizes kb(k.sizes.begin(), k.sizes.end() - 2);
    const Sizes vb(v.sizes.begin(), v.sizes.end() - 2);
    Sizes batch = broadcast(ctx, {&qb, &kb, &vb});
    std::copy(batch.begin(), batch.end(), shape.begin());
  }
  shape.push_back(v.sizes.back());
  return contiguous_meta(ctx, q.dtype, std::move(shape), q.device);
}

inline NodeValue rule_mm_op(const Context& ctx, std::string_view op) {
  return rule_mm(ctx, "self", "mat2", op == "bmm" ? 3 : 2);
}

inline NodeValue rule_addmm_op(const Context& ctx, std::string_view op) {
  return rule_addmm(ctx, op == "baddbmm");
}

// cdist / _cdist_forward (x1 [*, P, M], x2 [*, R, M], p, compute_mode): the batch dimensions
// broadcast, then [P, R], contiguous; x1's dtype for _cdist_forward, the promoted one for cdist
// (torch's meta_cdist_forward and its messages).
inline NodeValue rule_cdist(const Context& ctx, std::string_view op) {
  const TensorMeta& x1 = ctx.tensor("x1");
  const TensorMeta& x2 = ctx.tensor("x2");
  if (x1.sizes.size() < 2) {
    ctx.fail("cdist only supports at least 2D tensors, X1 got: " + std::to_string(x1.sizes.size()) +
             "D");
  }
  if (x2.sizes.size() < 2) {
    ctx.fail("cdist only supports at least 2D tensors, X2 got: " + std::to_string(x2.sizes.size()) +
             "D");
  }
  if (!ctx.equal(x1.sizes.back(), x2.sizes.back())) {
    ctx.fail("X1 and X2 must have the same number of columns. X1: " + sym_str(x1.sizes.back()) +
             " X2: " + sym_str(x2.sizes.back()));
  }
  if (!is_floating(x1.dtype)) {
    ctx.fail("cdist only supports floating-point dtypes, X1 got: torch." +
             std::string(dtype_name(x1.dtype)));
  }
  if (!is_floating(x2.dtype)) {
    ctx.fail("cdist only supports floating-point dtypes, X2 got: torch." +
             std::string(dtype_name(x2.dtype)));
  }
  if (ctx.has("p") && ctx.number("p") < 0) ctx.fail("cdist only supports non-negative p values");
  if (const auto mode = ctx.opt_integer("compute_mode"); mode && (*mode < 0 || *mode > 2)) {
    ctx.fail("possible modes: None, 0, 1, 2, but was: " + std::to_string(*mode));
  }
  const Sizes b1(x1.sizes.begin(), x1.sizes.end() - 2);
  const Sizes b2(x2.sizes.begin(), x2.sizes.end() - 2);
  Sizes shape = broadcast(ctx, {&b1, &b2});
  shape.push_back(x1.sizes[x1.sizes.size() - 2]);
  shape.push_back(x2.sizes[x2.sizes.size() - 2]);
  const dtype type =
      op == "cdist" ? ctx.result_type({Context::tensor_operand(x1), Context::tensor_operand(x2)})
                    : x1.dtype;
  return contiguous_meta(ctx, type, std::move(shape), x1.device);
}

// pdist / _pdist_forward (self [N, M], p): the N * (N - 1) / 2 pairwise distances, contiguous.
// _pdist_forward requires a contiguous input (torch's meta__pdist_forward); pdist, which makes
// its input contiguous, requires two dimensions and a floating dtype.
inline NodeValue rule_pdist(const Context& ctx, std::string_view op) {
  const TensorMeta& self = ctx.tensor("self");
  if (op == "pdist") {
    if (self.sizes.size() != 2) {
      ctx.fail("pdist only supports 2D tensors, got: " + std::to_string(self.sizes.size()) + "D");
    }
    if (!is_floating(self.dtype)) ctx.fail("pdist only supports floating-point dtypes");
    if (ctx.has("p") && ctx.number("p") < 0) ctx.fail("pdist only supports non-negative p values");
  } else {
    const auto s = all_concrete(self.sizes);
    const auto st = all_concrete(self.strides);
    const bool contiguous =
        s && st ? is_contiguous(*s, *st) : self.strides == contiguous_sym_strides(ctx, self.sizes);
    if (!contiguous) ctx.fail("_pdist_forward requires contiguous input");
    if (self.sizes.empty()) ctx.fail("_pdist_forward expects a tensor with dimensions");
  }
  const sym::Expr n = ctx.ex(self.sizes[0]);
  SymInt pairs = std::int64_t{0};
  try {
    pairs = ctx.out(sym::floordiv(n * (n - sym::Expr(1)), sym::Expr(2), ctx.ranges()));
  } catch (const value_error& e) {
    ctx.fail("the number of pairs: " + std::string(e.what()));
  }
  return contiguous_meta(ctx, self.dtype, Sizes{pairs}, self.device);
}

}  // namespace infer
}  // namespace detail
}  // namespace epgraph
