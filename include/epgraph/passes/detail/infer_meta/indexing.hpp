// infer_meta rules of indexing ops: index_select, embedding, gather, index.Tensor.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include "shapes.hpp"

namespace epgraph {
namespace detail {
namespace infer {

inline TensorMeta rule_index_select(const Context& ctx) {
  const TensorMeta& self = ctx.tensor("self");
  const TensorMeta& index = ctx.tensor("index");
  if (index.sizes.size() > 1) ctx.fail("index_select(): Index is supposed to be a vector");
  const SymInt n = index.sizes.empty() ? SymInt{std::int64_t{1}} : index.sizes[0];
  const std::size_t rank = self.sizes.size();
  const auto d = static_cast<std::size_t>(ctx.wrap_dim(ctx.integer("dim"), rank));
  Sizes shape = self.sizes;
  if (rank > 0) shape[d] = n;
  return contiguous_meta(ctx, self.dtype, std::move(shape), self.device);
}

inline TensorMeta rule_embedding(const Context& ctx) {
  const TensorMeta& weight = ctx.tensor("weight");
  const TensorMeta& indices = ctx.tensor("indices");
  if (weight.sizes.size() != 2) ctx.fail("'weight' must be 2-D");
  Sizes shape = indices.sizes;
  shape.push_back(weight.sizes[1]);
  return contiguous_meta(ctx, weight.dtype, std::move(shape), weight.device);
}

// aten.gather: index's shape in self's dtype, contiguous (index of rank other than self's refused).
inline NodeValue rule_gather(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const TensorMeta& index = ctx.tensor("index");
  (void)ctx.wrap_dim(ctx.integer("dim"), self.sizes.size());
  if (index.dtype != dtype::int64) ctx.fail("gather(): Expected dtype int64 for index");
  if (index.sizes.size() != self.sizes.size() && !(index.sizes.empty() || self.sizes.empty())) {
    ctx.fail("Index tensor must have the same number of dimensions as input tensor");
  }
  return contiguous_meta(ctx, self.dtype, index.sizes, self.device);
}

// index.Tensor as torch's meta_index_Tensor computes it: the index tensors broadcast together
// replace the dimensions they index, in place when they are adjacent, else at the front; the
// result's strides follow the dimension order of self restrided with 0 strides for the indexed
// dimensions (TensorIterator's rule), contiguous when self is empty.
inline NodeValue rule_index(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const ArgumentList* list = ctx.arg("indices").list();
  if (list == nullptr) ctx.fail("argument 'indices' is not a list");
  std::vector<const TensorMeta*> indices;
  for (const Argument& a : *list) {
    indices.push_back(a.is_none() ? nullptr : &ctx.tensor_of(a, "an element of 'indices'"));
  }
  if (indices.size() > self.sizes.size()) {
    ctx.fail("too many indices for tensor of dimension " + std::to_string(self.sizes.size()) +
             " (got " + std::to_string(indices.size()) + ")");
  }
  std::vector<const Sizes*> index_shapes;
  for (const TensorMeta* t : indices) {
    if (t == nullptr) continue;
    if (t->dtype == dtype::bool_ || t->dtype == dtype::uint8) {
      ctx.cannot(
          "indexing with a boolean or byte mask has a data-dependent shape; epgraph has no "
          "shape rule for it");
    }
    if (t->dtype != dtype::int64 && t->dtype != dtype::int32) {
      ctx.fail("tensors used as indices must be long, int, byte or bool tensors");
    }
    index_shapes.push_back(&t->sizes);
  }
  if (index_shapes.empty()) ctx.fail("index.Tensor needs at least one index tensor");
  const Sizes replacement = broadcast(ctx, index_shapes);
  indices.resize(self.sizes.size(), nullptr);
  // adjacent: the indexed dimensions form one run
  int state = 0;
  bool adjacent = true;
  for (const TensorMeta* t : indices) {
    if (t != nullptr) {
      if (state == 2) adjacent = false;
      state = 1;
    } else if (state == 1) {
      state = 2;
    }
  }
  std::vector<std::size_t> order;  // self's dimensions in the order the result uses them
  for (std::size_t i = 0; i < indices.size(); ++i) {
    if (adjacent || indices[i] != nullptr) order.push_back(i);
  }
  if (!adjacent) {
    for (std::size_t i = 0; i < indices.size(); ++i) {
      if (indices[i] == nullptr) order.push_back(i);
    }
  }
  Sizes before, after, before_st, after_st;
  bool seen = false;
  for (std::size_t i : order) {
    if (indices[i] != nullptr) {
      seen = true;
    } else {
      (seen ? after : before).push_back(self.sizes[i]);
      (seen ? after_st : before_st).push_back(self.strides[i]);
    }
  }
  Sizes shape = before;
  shape.insert(shape.end(), replacement.begin(), replacement.end());
  shape.insert(shape.end(), after.begin(), after.end());
  for (const SymInt& s : self.sizes) {
    if (const auto* v = std::get_if<std::int64_t>(&s); v != nullptr && *v == 0) {
      return contiguous_meta(ctx, self.dtype, std::move(shape), self.device);
    }
  }
  TensorMeta restrided = self;
  restrided.sizes = shape;
  restrided.strides = before_st;
  restrided.strides.insert(restrided.strides.end(), replacement.size(), SymInt{std::int64_t{0}});
  restrided.strides.insert(restrided.strides.end(), after_st.begin(), after_st.end());
  return elementwise_meta(ctx, self.dtype, {&restrided});
}

// masked_scatter(self, mask, source): self and mask broadcast together, self's dtype, contiguous
// (torch's meta_masked_scatter: the result of masked_scatter_ on a broadcast clone).
inline NodeValue rule_masked_scatter(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const TensorMeta& mask = ctx.tensor("mask");
  (void)ctx.tensor("source");
  if (mask.dtype != dtype::bool_) {
    ctx.fail("masked_scatter_ only supports boolean masks, but got mask with dtype " +
             std::string(dtype_name(mask.dtype)));
  }
  return contiguous_meta(ctx, self.dtype, broadcast(ctx, {&self.sizes, &mask.sizes}), self.device);
}

// _embedding_bag / _embedding_bag_forward_only(weight, indices, offsets, scale_grad_by_freq,
// mode, sparse, per_sample_weights, include_last_offset, padding_idx): (output [bags, dim],
// offset2bag, bag_size, max_indices) as torch's meta_embedding_bag computes them; the CPU
// kernels' fast sum path leaves offset2bag empty.
inline NodeValue rule_embedding_bag(const Context& ctx, std::string_view op) {
  const TensorMeta& weight = ctx.tensor("weight");
  const TensorMeta& indices = ctx.tensor("indices");
  const TensorMeta& offsets = ctx.tensor("offsets");
  auto index_type = [](dtype d) { return d == dtype::int64 || d == dtype::int32; };
  if (!index_type(indices.dtype)) {
    ctx.fail("expected indices to be long or int, got " + std::string(dtype_name(indices.dtype)));
  }
  if (!index_type(offsets.dtype)) {
    ctx.fail("expected offsets to be long or int, got " + std::string(dtype_name(offsets.dtype)));
  }
  if (!is_floating(weight.dtype)) {
    ctx.fail("expected weight to be floating point type, got " +
             std::string(dtype_name(weight.dtype)));
  }
  if (weight.sizes.size() != 2 || indices.sizes.empty() || offsets.sizes.empty()) {
    ctx.fail("expected a 2-D weight and 1-D indices and offsets");
  }
  const std::int64_t mode = ctx.integer("mode");
  const bool last_offset = ctx.boolean("include_last_offset");
  const std::int64_t padding_idx = ctx.integer("padding_idx");
  const TensorMeta* per_sample = ctx.opt_tensor("per_sample_weights");
  constexpr std::int64_t kSum = 0, kMean = 1, kMax = 2;
  const std::int64_t offsets_count = ctx.concrete(offsets.sizes[0], "argument 'offsets' size");
  std::int64_t bags = offsets_count;
  if (last_offset) {
    if (bags < 1) ctx.fail("include_last_offset: numBags should be at least 1");
    --bags;
  }
  if (per_sample != nullptr) {
    if (mode != kSum) ctx.fail("embedding_bag: per_sample_weights only supported with mode='sum'");
    if (per_sample->sizes.size() != 1) {
      ctx.fail("expected per_sample_weights to be 1D tensor, got " +
               std::to_string(per_sample->sizes.size()) + "D");
    }
  }
  const TensorMeta output =
      contiguous_meta(ctx, weight.dtype, Sizes{bags, weight.sizes[1]}, weight.device);
  auto new_index = [&](const TensorMeta& like, Sizes sizes) {
    return contiguous_meta(ctx, like.dtype, std::move(sizes), like.device);
  };
  if (offsets.device.type != "cpu") {
    return NodeValue(NodeValue::List{
        output, new_index(indices, {indices.sizes[0]}), new_index(indices, offsets.sizes),
        new_index(indices, mode == kMax ? Sizes{bags, weight.sizes[1]} : Sizes{std::int64_t{0}})});
  }
  // the CPU kernel's fast path (float/half, unit inner strides, no padding index) needs no
  // offset2bag for a sum
  const bool fast = (weight.dtype == dtype::float32 || weight.dtype == dtype::float16) &&
                    ctx.equal(weight.strides[1], std::int64_t{1}) && padding_idx < 0 &&
                    (per_sample == nullptr || ctx.equal(per_sample->strides[0], std::int64_t{1}));
  const TensorMeta offset2bag =
      new_index(offsets, mode == kMean || mode == kMax || !fast ? Sizes{indices.sizes[0]}
                                                                : Sizes{std::int64_t{0}});
  const TensorMeta bag_size =
      new_index(offsets, op == "_embedding_bag_forward_only" ? offsets.sizes : Sizes{bags});
  const TensorMeta max_indices =
      new_index(offsets, mode == kMax ? Sizes{bags, weight.sizes[1]} : Sizes{bags});
  return NodeValue(NodeValue::List{output, offset2bag, bag_size, max_indices});
}

}  // namespace infer
}  // namespace detail
}  // namespace epgraph
