// infer_meta rules of ops that join or repeat tensors: cat, stack, repeat, repeat_interleave.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include "shapes.hpp"

namespace epgraph {
namespace detail {
namespace infer {

inline TensorMeta rule_cat(const Context& ctx) {
  const std::vector<const TensorMeta*> ts = ctx.tensor_list("tensors");
  if (ts.empty()) ctx.fail("torch.cat(): expected a non-empty list of Tensors");
  std::vector<Operand> ops;
  std::vector<const TensorMeta*> kept;
  for (const TensorMeta* t : ts) {
    ops.push_back(Operand{Operand::Kind::tensor, t->dtype});
    // legacy: 1-D tensors of size 0 are skipped
    if (t->sizes.size() == 1 && t->sizes[0].index() == 0 &&
        std::get<std::int64_t>(t->sizes[0]) == 0) {
      continue;
    }
    kept.push_back(t);
  }
  const dtype type = ctx.result_type(ops);
  const Device device = ts.front()->device;
  if (kept.empty()) return contiguous_meta(ctx, type, ts.front()->sizes, device);
  const std::size_t rank = kept.front()->sizes.size();
  if (rank == 0) ctx.fail("zero-dimensional tensor (at position 0) cannot be concatenated");
  const auto d = static_cast<std::size_t>(ctx.wrap_dim(ctx.integer("dim"), rank));
  Sizes shape = kept.front()->sizes;
  SymInt total = std::int64_t{0};
  for (std::size_t k = 0; k < kept.size(); ++k) {
    const Sizes& s = kept[k]->sizes;
    if (s.size() != rank) {
      ctx.fail("Tensors must have same number of dimensions: got " + std::to_string(rank) +
               " and " + std::to_string(s.size()));
    }
    for (std::size_t i = 0; i < rank; ++i) {
      if (i == d) continue;
      if (!ctx.equal(s[i], shape[i])) {
        ctx.fail("Sizes of tensors must match except in dimension " + std::to_string(d) +
                 ". Expected size " + sym_str(shape[i]) + " but got size " + sym_str(s[i]) +
                 " for tensor number " + std::to_string(k) + " in the list.");
      }
    }
    total = ctx.add(total, s[d], "the concatenated size");
  }
  shape[d] = total;
  return contiguous_meta(ctx, type, std::move(shape), device);
}

inline TensorMeta rule_stack(const Context& ctx) {
  const std::vector<const TensorMeta*> ts = ctx.tensor_list("tensors");
  if (ts.empty()) ctx.fail("stack expects a non-empty TensorList");
  std::vector<Operand> ops;
  for (std::size_t k = 0; k < ts.size(); ++k) {
    ops.push_back(Operand{Operand::Kind::tensor, ts[k]->dtype});
    bool same = ts[k]->sizes.size() == ts[0]->sizes.size();
    for (std::size_t i = 0; same && i < ts[0]->sizes.size(); ++i) {
      same = ctx.equal(ts[k]->sizes[i], ts[0]->sizes[i]);
    }
    if (!same) {
      ctx.fail("stack expects each tensor to be equal size, but got " + shape_str(ts[0]->sizes) +
               " at entry 0 and " + shape_str(ts[k]->sizes) + " at entry " + std::to_string(k));
    }
  }
  const std::size_t rank = ts[0]->sizes.size();
  // A new dimension may go at any of rank + 1 places (torch wraps it against rank + 1).
  const auto d = static_cast<std::size_t>(ctx.wrap_dim(ctx.integer("dim"), rank + 1));
  Sizes shape = ts[0]->sizes;
  shape.insert(shape.begin() + static_cast<std::ptrdiff_t>(d),
               static_cast<std::int64_t>(ts.size()));
  return contiguous_meta(ctx, ctx.result_type(ops), std::move(shape), ts[0]->device);
}

// repeat: self's shape (left-padded with 1s) times repeats, contiguous.
inline NodeValue rule_repeat(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const Sizes repeats = ctx.sym_list("repeats");
  if (repeats.size() < self.sizes.size()) {
    ctx.fail(
        "Number of dimensions of repeat dims can not be smaller than number of dimensions "
        "of tensor");
  }
  const std::size_t off = repeats.size() - self.sizes.size();
  Sizes shape;
  for (std::size_t i = 0; i < repeats.size(); ++i) {
    const SymInt one{std::int64_t{1}};
    shape.push_back(ctx.mul(i < off ? one : self.sizes[i - off], repeats[i], "the repeated size"));
  }
  return contiguous_meta(ctx, self.dtype, std::move(shape), self.device);
}

// repeat_interleave.self_int: dimension `dim` times repeats (without dim: the flattened
// input), contiguous.
inline NodeValue rule_repeat_interleave(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const SymInt repeats = ctx.sym_of(ctx.arg("repeats"), "argument 'repeats'");
  const std::optional<std::int64_t> dim = ctx.opt_integer("dim");
  if (!dim) {
    SymInt n = std::int64_t{1};
    for (const SymInt& s : self.sizes) n = ctx.mul(n, s, "the element count");
    return contiguous_meta(ctx, self.dtype, {ctx.mul(n, repeats, "the repeated size")},
                           self.device);
  }
  const auto d = static_cast<std::size_t>(ctx.wrap_dim(*dim, self.sizes.size()));
  Sizes shape = self.sizes;
  if (!shape.empty()) shape[d] = ctx.mul(shape[d], repeats, "the repeated size");
  return contiguous_meta(ctx, self.dtype, std::move(shape), self.device);
}

}  // namespace infer
}  // namespace detail
}  // namespace epgraph
