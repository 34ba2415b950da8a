// infer_meta rules of reductions, softmax, cumulative ops, sorting and topk.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include "elementwise.hpp"
#include "shapes.hpp"

namespace epgraph {
namespace detail {
namespace infer {

inline TensorMeta reduce_meta(const Context& ctx, const TensorMeta& self, dtype type,
                              const std::optional<Ints>& dims, bool keepdim) {
  const std::size_t rank = self.sizes.size();
  std::vector<bool> reduce(rank, false);
  if (!dims || dims->empty()) {
    reduce.assign(rank, true);
  } else {
    for (std::int64_t dim : *dims) {
      const auto d = static_cast<std::size_t>(ctx.wrap_dim(dim, rank));
      if (rank == 0) continue;
      if (reduce[d]) {
        ctx.fail("dim " + std::to_string(d) + " appears multiple times in the list of dims");
      }
      reduce[d] = true;
    }
  }
  Sizes shape;
  for (std::size_t d = 0; d < rank; ++d) {
    if (!reduce[d]) {
      shape.push_back(self.sizes[d]);
    } else if (keepdim) {
      shape.push_back(std::int64_t{1});
    }
  }
  return contiguous_meta(ctx, type, std::move(shape), self.device);
}

inline TensorMeta rule_reduction(const Context& ctx, Rule rule) {
  const TensorMeta& self = ctx.tensor("self");
  const std::optional<Ints> dims = ctx.has("dim") ? ctx.opt_int_list("dim") : std::nullopt;
  const bool keepdim = ctx.has("keepdim") && ctx.boolean("keepdim");
  dtype type = self.dtype;
  if (auto d = ctx.opt_dtype("dtype")) {
    type = *d;
  } else if (rule == Rule::sum && is_integral(self.dtype)) {
    type = dtype::int64;
  } else if (rule == Rule::mean && is_integral(self.dtype)) {
    ctx.fail(
        "mean(): could not infer output dtype. Input dtype must be either a floating point "
        "or complex dtype. Got: " +
        std::string(dtype_name(self.dtype)));
  }
  return reduce_meta(ctx, self, type, dims, keepdim);
}

inline TensorMeta rule_softmax(const Context& ctx, Rule rule) {
  const TensorMeta& self = ctx.tensor("self");
  (void)ctx.wrap_dim(ctx.integer("dim"), self.sizes.size());
  dtype type = self.dtype;
  if (rule == Rule::softmax) {
    if (auto d = ctx.opt_dtype("dtype")) type = *d;
  } else if (ctx.boolean("half_to_float") &&
             (self.dtype == dtype::float16 || self.dtype == dtype::bfloat16)) {
    type = dtype::float32;
  }
  return contiguous_meta(ctx, type, self.sizes, self.device);
}

// aten.cumsum / aten.cumprod: self's shape, contiguous; dtype given, else integral and bool ->
// int64.
inline NodeValue rule_cumulative(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  (void)ctx.wrap_dim(ctx.integer("dim"), self.sizes.size());
  dtype type = self.dtype;
  if (auto d = ctx.opt_dtype("dtype")) {
    type = *d;
  } else if (is_integral(self.dtype)) {
    type = dtype::int64;
  }
  return contiguous_meta(ctx, type, self.sizes, self.device);
}

// max, min: .dim gives (values, int64 indices) reduced over dim; .default the single extreme
// value (a 0-dim tensor); .other is elementwise maximum / minimum.
inline NodeValue rule_max(const Context& ctx, std::string_view) {
  if (ctx.has("other")) return rule_elementwise(ctx, Rule::binary);
  const TensorMeta& self = ctx.tensor("self");
  if (!ctx.has("dim")) return reduce_meta(ctx, self, self.dtype, std::nullopt, false);
  const bool keepdim = ctx.has("keepdim") && ctx.boolean("keepdim");
  const Ints dims{ctx.integer("dim")};
  TensorMeta values = reduce_meta(ctx, self, self.dtype, dims, keepdim);
  TensorMeta indices = values;
  indices.dtype = dtype::int64;
  return NodeValue(NodeValue::List{NodeValue(std::move(values)), NodeValue(std::move(indices))});
}

// The dims and keepdim of a reduction whose `dim` is an int or int list (absent or None: all).
inline std::optional<Ints> reduction_dims(const Context& ctx) {
  if (!ctx.has("dim")) return std::nullopt;
  const Argument& a = ctx.arg("dim");
  if (a.is_none()) return std::nullopt;
  if (a.is<std::int64_t>()) return Ints{ctx.integer("dim")};
  return ctx.opt_int_list("dim");
}

// var, std (.correction, .dim), var_mean/std_mean: float results (complex -> its real type).
inline NodeValue rule_variance(const Context& ctx, std::string_view op) {
  const TensorMeta& self = ctx.tensor("self");
  if (is_integral(self.dtype)) {
    ctx.fail(std::string(op) + "(): only support floating point and complex dtypes, got " +
             std::string(dtype_name(self.dtype)));
  }
  const bool keepdim = ctx.has("keepdim") && ctx.boolean("keepdim");
  TensorMeta out =
      reduce_meta(ctx, self, complex_to_real(self.dtype), reduction_dims(ctx), keepdim);
  if (op == "var_mean" || op == "std_mean") {
    TensorMeta mean = out;
    mean.dtype = self.dtype;
    return NodeValue(NodeValue::List{NodeValue(std::move(out)), NodeValue(std::move(mean))});
  }
  return out;
}

// prod (.dim_int, .default): integral and bool -> int64 unless dtype is given.
inline NodeValue rule_prod(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  dtype type = is_integral(self.dtype) ? dtype::int64 : self.dtype;
  if (auto d = ctx.opt_dtype("dtype")) type = *d;
  const bool keepdim = ctx.has("keepdim") && ctx.boolean("keepdim");
  return reduce_meta(ctx, self, type, reduction_dims(ctx), keepdim);
}

// argmax, argmin: int64 indices; without dim the flattened input's (keepdim: all ones).
inline NodeValue rule_argmax(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const bool keepdim = ctx.has("keepdim") && ctx.boolean("keepdim");
  return reduce_meta(ctx, self, dtype::int64, reduction_dims(ctx), keepdim);
}

// linalg_vector_norm: float results (complex -> real), dtype if given.
inline NodeValue rule_vector_norm(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  if (is_integral(self.dtype)) {
    ctx.fail("linalg.vector_norm: Expected a floating point or complex tensor as input. Got " +
             std::string(dtype_name(self.dtype)));
  }
  dtype type = complex_to_real(self.dtype);
  if (auto d = ctx.opt_dtype("dtype")) type = complex_to_real(*d);
  const bool keepdim = ctx.has("keepdim") && ctx.boolean("keepdim");
  return reduce_meta(ctx, self, type, reduction_dims(ctx), keepdim);
}

// topk: (values, int64 indices), self's shape with k at dim, contiguous.
inline NodeValue rule_topk(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const std::int64_t dim = ctx.has("dim") ? ctx.integer("dim") : -1;
  Sizes shape = self.sizes;
  const SymInt k = ctx.sym_of(ctx.arg("k"), "argument 'k'");
  if (!shape.empty()) {
    const auto d = static_cast<std::size_t>(ctx.wrap_dim(dim, shape.size()));
    const sym::Expr ke = ctx.ex(k);
    if (ctx.guard_or_false(sym::lt(ke, sym::Expr(0), ctx.ranges())) ||
        ctx.guard_or_false(sym::gt(ke, ctx.ex(shape[d]), ctx.ranges()))) {
      ctx.fail("selected index k out of range");
    }
    shape[d] = k;
  }
  TensorMeta values = contiguous_meta(ctx, self.dtype, shape, self.device);
  TensorMeta indices = contiguous_meta(ctx, dtype::int64, std::move(shape), self.device);
  return NodeValue(NodeValue::List{NodeValue(std::move(values)), NodeValue(std::move(indices))});
}

// sort (.default, .stable): (values, int64 indices), both empty_like(self).
inline NodeValue rule_sort(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  if (ctx.has("dim")) (void)ctx.wrap_dim(ctx.integer("dim"), self.sizes.size());
  TensorMeta values =
      formatted_meta(ctx, self.dtype, self.sizes, self.device, MemoryFormat::PreserveFormat, &self);
  TensorMeta indices = values;
  indices.dtype = dtype::int64;
  return NodeValue(NodeValue::List{NodeValue(std::move(values)), NodeValue(std::move(indices))});
}

// any, all: bool (uint8 stays uint8).
inline NodeValue rule_any(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const std::optional<Ints> dims = ctx.has("dim") ? ctx.opt_int_list("dim") : std::nullopt;
  const bool keepdim = ctx.has("keepdim") && ctx.boolean("keepdim");
  const dtype type = self.dtype == dtype::uint8 ? dtype::uint8 : dtype::bool_;
  return reduce_meta(ctx, self, type, dims, keepdim);
}

// logsumexp(self, dim, keepdim): a reduction; integral (and bool) inputs give float32.
inline NodeValue rule_logsumexp(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const dtype type = is_integral(self.dtype) ? dtype::float32 : self.dtype;
  const bool keepdim = ctx.has("keepdim") && ctx.boolean("keepdim");
  return reduce_meta(ctx, self, type, ctx.int_list("dim"), keepdim);
}

// cummax, cummin: values in self's dtype and int64 indices, both contiguous with self's shape.
inline NodeValue rule_cummax(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  (void)ctx.wrap_dim(ctx.integer("dim"), self.sizes.size());
  TensorMeta values = contiguous_meta(ctx, self.dtype, self.sizes, self.device);
  TensorMeta indices = contiguous_meta(ctx, dtype::int64, self.sizes, self.device);
  return NodeValue(NodeValue::List{NodeValue(std::move(values)), NodeValue(std::move(indices))});
}

}  // namespace infer
}  // namespace detail
}  // namespace epgraph
