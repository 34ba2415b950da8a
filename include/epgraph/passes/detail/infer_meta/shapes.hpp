// infer_meta's shared shape and stride helpers: printing, contiguous/channels-last strides,
// broadcasting, TensorIterator's elementwise strides (concrete and symbolic), computeStride.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include "context.hpp"

namespace epgraph {
namespace detail {
namespace infer {

// --- shapes and strides ------------------------------------------------------------------------

inline std::string sym_str(const SymInt& s) {
  if (const auto* v = std::get_if<std::int64_t>(&s)) return std::to_string(*v);
  return std::get<SymExpr>(s).expr;
}
inline std::string shape_str(const Sizes& sizes) {
  std::string out = "[";
  for (std::size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + sym_str(sizes[i]);
  return out + "]";
}
inline Sizes to_sym(const Ints& v) { return Sizes(v.begin(), v.end()); }
inline bool is_identifier(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) {
      return false;
    }
  }
  return true;
}

// Concrete sizes/strides of a tensor, when all are concrete.
inline std::optional<Ints> all_concrete(const Sizes& v) {
  Ints out;
  out.reserve(v.size());
  for (const SymInt& s : v) {
    const auto* i = std::get_if<std::int64_t>(&s);
    if (i == nullptr) return std::nullopt;
    out.push_back(*i);
  }
  return out;
}

// Row-major strides for sizes that may be symbolic, as torch writes them
// (torch._prims_common.make_contiguous_strides_for): each stride the product of the later sizes,
// each taken as Max(size, 1) (`s0` for a positive symbol, kept as `Max(1, u0)` for an unbacked
// one), simplified by the symbols' assumptions only, as torch's Max is: torch keeps
// Max(1, s0//2) and Max(1, s0 - 4) although the range constraints say s0 >= 2 or s0 >= 5.
inline Sizes contiguous_sym_strides(const Context& ctx, const Sizes& sizes) {
  if (auto c = all_concrete(sizes)) return to_sym(contiguous_strides(*c));
  Sizes out(sizes.size(), std::int64_t{1});
  sym::Expr multiplier(1);
  for (std::size_t i = sizes.size(); i-- > 0;) {
    out[i] = ctx.out(multiplier);
    if (i == 0) break;
    const sym::Expr size = ctx.ex(sizes[i]);
    try {
      multiplier = multiplier * sym::max({size, sym::Expr(1)});
    } catch (const value_error& e) {
      ctx.cannot("cannot write the contiguous strides of the symbolic shape " + shape_str(sizes) +
                 ": " + e.what());
    }
  }
  return out;
}

inline Ints channels_last_strides(const Ints& sizes) {
  Ints s(sizes.size(), 1);
  auto m = [](std::int64_t v) { return std::max<std::int64_t>(v, 1); };
  if (sizes.size() == 4) {
    s[1] = 1;
    s[3] = m(sizes[1]);
    s[2] = wrap_mul(s[3], m(sizes[3]));
    s[0] = wrap_mul(s[2], m(sizes[2]));
  } else if (sizes.size() == 5) {
    s[1] = 1;
    s[4] = m(sizes[1]);
    s[3] = wrap_mul(s[4], m(sizes[4]));
    s[2] = wrap_mul(s[3], m(sizes[3]));
    s[0] = wrap_mul(s[2], m(sizes[2]));
  }
  return s;
}

// c10's is_contiguous (size-1 dimensions ignored; empty tensors are contiguous).
inline bool is_contiguous(const Ints& sizes, const Ints& strides) {
  std::int64_t expected = 1;
  for (std::size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 0) return true;
  }
  for (std::size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] != 1) {
      if (strides[i] != expected) return false;
      expected = wrap_mul(expected, sizes[i]);
    }
  }
  return true;
}
// c10's channels-last contiguity (4-D and 5-D).
inline bool is_channels_last(const Ints& sizes, const Ints& strides) {
  if (sizes.size() != 4 && sizes.size() != 5) return false;
  for (std::int64_t s : sizes) {
    if (s == 0) return true;
  }
  const std::vector<std::size_t> order = sizes.size() == 4
                                             ? std::vector<std::size_t>{1, 3, 2, 0}
                                             : std::vector<std::size_t>{1, 4, 3, 2, 0};
  std::int64_t expected = 1;
  for (std::size_t d : order) {
    if (sizes[d] != 1) {
      if (strides[d] != expected) return false;
      expected = wrap_mul(expected, sizes[d]);
    }
  }
  return true;
}
// c10's _compute_non_overlapping_and_dense.
inline bool is_non_overlapping_and_dense(const Ints& sizes, const Ints& strides) {
  if (sizes.size() == 1) return sizes[0] < 2 || strides[0] == 1;
  std::vector<std::size_t> perm(sizes.size());
  for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = i;
  std::stable_sort(perm.begin(), perm.end(), [&](std::size_t a, std::size_t b) {
    if (sizes[a] < 2) return false;
    if (sizes[b] < 2) return true;
    return strides[a] < strides[b];
  });
  std::int64_t require = 1;
  for (std::size_t i : perm) {
    if (sizes[i] < 2) return true;
    if (strides[i] != require) return false;
    require = wrap_mul(require, sizes[i]);
  }
  return true;
}

// TensorIteratorBase::reorder_dimensions' insertion sort (in torch's Python meta functions
// compute_elementwise_output_logical_to_physical_perm): the dimensions ordered innermost first,
// starting from [ndim - 1, ..., 0]; should_swap(d0, d1) for d0 before d1 in the order so far
// gives 1 to put d1 before d0, -1 to keep the order and stop, 0 to look further. O(ndim^2 calls).
template <class ShouldSwap>
std::vector<std::size_t> reorder_dimensions(std::size_t ndim, const ShouldSwap& should_swap) {
  std::vector<std::size_t> perm(ndim);
  for (std::size_t i = 0; i < ndim; ++i) perm[i] = ndim - 1 - i;
  for (std::size_t i = 1; i < ndim; ++i) {
    std::size_t dim1 = i;
    for (std::size_t dim0 = i; dim0-- > 0;) {
      const int c = should_swap(perm[dim0], perm[dim1]);
      if (c > 0) {
        std::swap(perm[dim0], perm[dim1]);
        dim1 = dim0;
      } else if (c < 0) {
        break;
      }
    }
  }
  return perm;
}

// The output strides TensorIterator gives an elementwise op of `shape` over `inputs` (each
// already checked to broadcast to `shape`) in FakeTensorMode: the fast paths for inputs of the
// output's shape that are all contiguous / all channels-last, else the stride order of the inputs
// (TensorIteratorBase::reorder_dimensions + compatible_stride). nullopt when a size or stride is
// symbolic.
inline std::optional<Ints> elementwise_strides(const Ints& shape,
                                               const std::vector<const TensorMeta*>& inputs) {
  const std::size_t ndim = shape.size();
  std::vector<Ints> in_sizes, in_strides;
  for (const TensorMeta* t : inputs) {
    auto s = all_concrete(t->sizes);
    auto st = all_concrete(t->strides);
    if (!s || !st) return std::nullopt;
    in_sizes.push_back(*s);
    in_strides.push_back(*st);
  }
  if (ndim == 0) return Ints{};
  bool same_shape = !inputs.empty();
  for (const Ints& s : in_sizes) same_shape = same_shape && s == shape;
  if (same_shape) {
    bool contiguous = true, channels_last = true;
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      contiguous = contiguous && is_contiguous(in_sizes[i], in_strides[i]);
      channels_last = channels_last && is_channels_last(in_sizes[i], in_strides[i]);
    }
    if (contiguous) return contiguous_strides(shape);
    if (channels_last) return channels_last_strides(shape);
    // Dense inputs with equal strides keep them in eager TensorIterator's fast setup, but
    // FakeTensorMode (what export stores) gives relu, exp, add of [3, 1, 4] with strides
    // [1, 100, 3] the strides [1, 12, 3]: the permutation below; they differ only in the strides
    // of size-1 dimensions.
  }
  // broadcast strides of each input over `shape`
  std::vector<Ints> bs;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    Ints s(ndim, 0);
    const std::size_t off = ndim - in_sizes[k].size();
    for (std::size_t i = 0; i < in_sizes[k].size(); ++i) {
      s[off + i] = (in_sizes[k][i] == 1 && shape[off + i] != 1) ? 0 : in_strides[k][i];
    }
    bs.push_back(std::move(s));
  }
  if (ndim == 1) return Ints{1};
  auto should_swap = [&](std::size_t d0, std::size_t d1) {
    for (const Ints& s : bs) {
      const std::int64_t s0 = s[d0], s1 = s[d1];
      if (s0 == 0 || s1 == 0) continue;
      if (s0 < s1) return -1;
      if (s0 > s1) return 1;
      if (shape[d0] > shape[d1]) return 1;
    }
    return 0;
  };
  // perm[0] is the innermost dimension
  const std::vector<std::size_t> perm = reorder_dimensions(ndim, should_swap);
  bool inverted = true;
  for (std::size_t j = 0; j < ndim; ++j) inverted = inverted && perm[j] == ndim - j - 1;
  if (inverted) return contiguous_strides(shape);
  Ints out(ndim, 0);
  std::int64_t next = 1;
  for (std::size_t j = 0; j < ndim; ++j) {
    out[perm[j]] = next;
    next = wrap_mul(next, shape[perm[j]]);
  }
  return out;
}

inline TensorMeta make_meta(dtype type, Sizes sizes, Sizes strides, const Device& device) {
  TensorMeta m;
  m.dtype = type;
  m.sizes = std::move(sizes);
  m.strides = std::move(strides);
  m.storage_offset = std::int64_t{0};
  m.device = device;
  m.layout = Layout::Strided;
  m.requires_grad = false;
  return m;
}
inline TensorMeta contiguous_meta(const Context& ctx, dtype type, Sizes sizes,
                                  const Device& device) {
  Sizes strides = contiguous_sym_strides(ctx, sizes);
  return make_meta(type, std::move(sizes), std::move(strides), device);
}
inline Sizes elementwise_strides_sym(const Context& ctx, const Sizes& shape_in,
                                     const std::vector<const TensorMeta*>& inputs);
// The strides empty_like(preserve_format) gives a symbolic `like` (defined below).
inline Sizes preserved_strides_sym(const Context& ctx, const TensorMeta& like);

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
      ctx.cannot("cannot write the channels-last strides of the symbolic shape " +
                 shape_str(sizes) + ": " + e.what());
    }
  }
  return out;
}

// Strides for a new tensor of `memory_format` (contiguous, channels-last or preserve of `like`).
inline TensorMeta formatted_meta(const Context& ctx, dtype type, const Sizes& sizes,
                                 const Device& device, std::optional<MemoryFormat> format,
                                 const TensorMeta* like) {
  const MemoryFormat f =
      format.value_or(like ? MemoryFormat::PreserveFormat : MemoryFormat::ContiguousFormat);
  if (f == MemoryFormat::ChannelsLast || f == MemoryFormat::ChannelsLast3d) {
    if ((f == MemoryFormat::ChannelsLast && sizes.size() != 4) ||
        (f == MemoryFormat::ChannelsLast3d && sizes.size() != 5)) {
      ctx.fail("memory format " + std::string(memory_format_name(f)) + " needs a " +
               (f == MemoryFormat::ChannelsLast ? "4" : "5") + "-D shape, not " + shape_str(sizes));
    }
    return make_meta(type, sizes, channels_last_sym_strides(ctx, sizes), device);
  }
  if (f == MemoryFormat::PreserveFormat && like != nullptr) {
    // empty_like(preserve_format): dense inputs keep their strides, others get the dense
    // strides of the same dimension order.
    auto s = all_concrete(like->sizes);
    auto st = all_concrete(like->strides);
    if (s && st) {
      if (is_non_overlapping_and_dense(*s, *st))
        return make_meta(type, sizes, like->strides, device);
      if (auto out = elementwise_strides(*s, {like})) {
        return make_meta(type, sizes, to_sym(*out), device);
      }
    } else if (like->sizes.size() == sizes.size()) {
      // symbolic: c10's empty_like keeps a dense operand's strides (clone of [u0, 2] with strides
      // [1, u0] keeps [1, u0]), others get torch._prims_common's strides for one operand
      return make_meta(type, sizes, preserved_strides_sym(ctx, *like), device);
    }
  }
  return contiguous_meta(ctx, type, sizes, device);
}

// Broadcasts shapes (torch's infer_size). Fails naming both shapes.
inline Sizes broadcast(const Context& ctx, const std::vector<const Sizes*>& shapes) {
  Sizes out;
  for (const Sizes* sp : shapes) {
    const Sizes& s = *sp;
    Sizes next(std::max(out.size(), s.size()), std::int64_t{1});
    for (std::size_t i = 0; i < next.size(); ++i) {
      const std::size_t ia = next.size() - 1 - i;
      const SymInt* a = i < out.size() ? &out[out.size() - 1 - i] : nullptr;
      const SymInt* b = i < s.size() ? &s[s.size() - 1 - i] : nullptr;
      if (a == nullptr) {
        next[ia] = *b;
      } else if (b == nullptr) {
        next[ia] = *a;
      } else if (ctx.is_one(*a)) {
        next[ia] = *b;
      } else if (ctx.is_one(*b) || ctx.equal(*a, *b)) {
        next[ia] = *a;
      } else if (a->index() == 0 && b->index() == 0) {
        ctx.fail("shapes " + shape_str(out) + " and " + shape_str(s) + " do not broadcast");
      } else if (ctx.guard_or_true(sym::eq(ctx.ex(*a), ctx.ex(*b), ctx.ranges()))) {
        // torch's infer_size: neither is known to be 1, so they must be equal (torch._check);
        // the first one is kept
        next[ia] = *a;
      } else {
        ctx.fail("shapes " + shape_str(out) + " and " + shape_str(s) +
                 " do not broadcast (their sizes " + sym_str(*a) + " and " + sym_str(*b) +
                 " differ under the symbols' ranges or hints)");
      }
    }
    out = std::move(next);
  }
  return out;
}

using Exprs = std::vector<sym::Expr>;

inline sym::Expr product(const Exprs& v) {
  sym::Expr p(1);
  for (const sym::Expr& e : v) p = p * e;
  return p;
}

inline Exprs exprs_of(const Context& ctx, const Sizes& v) {
  Exprs out;
  out.reserve(v.size());
  for (const SymInt& s : v) out.push_back(ctx.ex(s));
  return out;
}
inline Sizes sizes_of(const Context& ctx, const Exprs& v) {
  Sizes out;
  out.reserve(v.size());
  for (const sym::Expr& e : v) out.push_back(ctx.out(e));
  return out;
}

// --- elementwise strides of symbolic shapes (torch._prims_common, which FakeTensor runs for
// them: the refs broadcast every operand to the result's shape, then
// compute_elementwise_output_strides) ------------------------------------------------------------

struct SymOperand {
  std::vector<sym::Expr> sizes, strides;
};

// check_contiguous_sizes_strides (false on what the guards cannot decide).
inline bool contiguous_sym(const Context& ctx, const SymOperand& t) {
  const sym::Ranges* r = ctx.ranges();
  sym::Expr numel(1);
  for (const sym::Expr& e : t.sizes) numel = numel * e;
  if (ctx.guard_or_false(sym::lt(numel, sym::Expr(2), r))) return true;
  sym::Expr expected(1);
  for (std::size_t i = t.sizes.size(); i-- > 0;) {
    if (ctx.guard_or_false(sym::eq(t.sizes[i], sym::Expr(1), r))) continue;
    if (ctx.guard_or_true(sym::ne(t.strides[i], expected, r))) return false;
    expected = expected * t.sizes[i];
  }
  return true;
}
// Whether the strides, taken in `order` (innermost first), are the nested products of the sizes,
// size-1 dimensions skipped (false on what the guards cannot decide).
inline bool strides_nest_in_order(const Context& ctx, const SymOperand& t,
                                  const std::vector<std::size_t>& order) {
  const sym::Ranges* r = ctx.ranges();
  sym::Expr expected(1);
  for (std::size_t d : order) {
    if (ctx.guard_or_false(sym::eq(t.sizes[d], sym::Expr(1), r))) continue;
    if (ctx.guard_or_true(sym::ne(t.strides[d], expected, r))) return false;
    expected = expected * t.sizes[d];
  }
  return true;
}
// is_contiguous_for_memory_format(t, torch.channels_last) as the reference elementwise strides
// and FakeTensor's fast binary path ask it: is_channels_last_contiguous_2d, so a 5-D operand is
// never channels-last here (false on what the guards cannot decide).
inline bool channels_last_sym(const Context& ctx, const SymOperand& t) {
  if (t.sizes.size() != 4) return false;
  return strides_nest_in_order(ctx, t, {1, 3, 2, 0});
}
// is_non_overlapping_and_dense: the strides sorted (stably) are the nested products.
inline bool dense_sym(const Context& ctx, const SymOperand& t) {
  const sym::Ranges* r = ctx.ranges();
  if (contiguous_sym(ctx, t)) return true;
  std::vector<std::size_t> order(t.sizes.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return ctx.guard_or_false(sym::lt(t.strides[a], t.strides[b], r));
  });
  return strides_nest_in_order(ctx, t, order);
}
// Dense strides of `shape` laid out in memory in `perm` order (perm[0] outermost): the strides
// a contiguous tensor of the permuted shape has, moved back to the logical dimensions.
inline Sizes dense_strides_in_order(const Context& ctx, const Sizes& shape,
                                    const std::vector<std::size_t>& perm) {
  Sizes physical;
  physical.reserve(perm.size());
  for (std::size_t d : perm) physical.push_back(shape[d]);
  const Sizes st = contiguous_sym_strides(ctx, physical);
  Sizes out(shape.size());
  for (std::size_t i = 0; i < perm.size(); ++i) out[perm[i]] = st[i];
  return out;
}

// The strides compute_elementwise_output_strides gives operands broadcast to `shape`.
inline Sizes elementwise_strides_sym(const Context& ctx, const Sizes& shape_in,
                                     const std::vector<const TensorMeta*>& inputs) {
  const sym::Ranges* r = ctx.ranges();
  const Exprs shape = exprs_of(ctx, shape_in);
  const std::size_t ndim = shape.size();
  std::vector<SymOperand> ops;
  for (const TensorMeta* t : inputs) {
    if (t->sizes.empty() && t->device.type == "cpu") continue;  // a CPU scalar tensor
    SymOperand op;
    op.sizes = shape;
    op.strides.assign(ndim, sym::Expr(0));
    const std::size_t off = ndim - t->sizes.size();
    for (std::size_t i = 0; i < t->sizes.size(); ++i) {
      // expand: a size-1 dimension broadcast to another size gets stride 0
      if (ctx.equal(t->sizes[i], shape_in[off + i])) op.strides[off + i] = ctx.ex(t->strides[i]);
    }
    ops.push_back(std::move(op));
  }
  if (ndim == 0) return {};
  if (ndim == 1) return {std::int64_t{1}};
  if (ops.empty()) return contiguous_sym_strides(ctx, shape_in);
  if (ops.size() == 1) {
    // a contiguous operand gives a new contiguous output (strides with Max(1, size) where torch
    // keeps it, not the operand's own); any other goes through the permutation below, as the
    // refs do: a dense operand's strides are recomputed too (FakeTensorMode gives relu of
    // [3, 1, 4] with strides [1, 100, 3] the strides [1, 12, 3], eager keeps [1, 100, 3]; and
    // of [u0, 4] with strides [1, u0] the strides [1, Max(1, u0)])
    if (contiguous_sym(ctx, ops[0])) return contiguous_sym_strides(ctx, shape_in);
  } else {
    bool contiguous = true, channels_last = true;
    for (const SymOperand& op : ops) {
      contiguous = contiguous && contiguous_sym(ctx, op);
      channels_last = channels_last && channels_last_sym(ctx, op);
    }
    if (contiguous && !channels_last) return contiguous_sym_strides(ctx, shape_in);
    if (channels_last && !contiguous) {
      std::vector<std::size_t> perm{0};  // logical to physical: [0, 2, ..., 1]
      for (std::size_t i = 2; i < ndim; ++i) perm.push_back(i);
      perm.push_back(1);
      return dense_strides_in_order(ctx, shape_in, perm);
    }
  }
  // compute_elementwise_output_logical_to_physical_perm's insertion sort
  const sym::Expr zero(0);
  auto ge = [&](const sym::Expr& a, const sym::Expr& b) {
    if (ctx.guard_or_false(sym::eq(b, zero, r))) return true;
    if (ctx.guard_or_false(sym::eq(a, zero, r))) return false;
    return ctx.guard_or_false(sym::ge(a, b, r)) ||
           ctx.guard_or_false(sym::eq(sym::mod(a, b, r), zero, r));
  };
  auto should_swap = [&](std::size_t a, std::size_t b) {
    for (const SymOperand& op : ops) {
      const sym::Expr& sa = op.strides[a];
      const sym::Expr& sb = op.strides[b];
      if (ctx.guard_or_false(sym::eq(sa, zero, r)) || ctx.guard_or_false(sym::eq(sb, zero, r))) {
        continue;
      }
      if (ctx.guard_or_false(sym::eq(sa, sb, r))) {
        if (ge(shape[b], shape[a])) continue;
        return 1;
      }
      if (ge(sb, sa)) return -1;
      if (ge(sa, sb)) return 1;
    }
    return 0;
  };
  std::vector<std::size_t> perm = reorder_dimensions(ndim, should_swap);
  std::reverse(perm.begin(), perm.end());  // logical to physical
  return dense_strides_in_order(ctx, shape_in, perm);
}

inline Sizes preserved_strides_sym(const Context& ctx, const TensorMeta& like) {
  const SymOperand op{exprs_of(ctx, like.sizes), exprs_of(ctx, like.strides)};
  if (dense_sym(ctx, op)) return sizes_of(ctx, op.strides);
  return elementwise_strides_sym(ctx, like.sizes, {&like});
}

// An elementwise result: broadcast shape, TensorIterator strides (contiguous when symbolic).
inline TensorMeta elementwise_meta(const Context& ctx, dtype type,
                                   const std::vector<const TensorMeta*>& tensors) {
  std::vector<const Sizes*> shapes;
  for (const TensorMeta* t : tensors) shapes.push_back(&t->sizes);
  Sizes shape = broadcast(ctx, shapes);
  const Device device = tensors.empty() ? Device{} : tensors.front()->device;
  if (auto concrete = all_concrete(shape)) {
    if (auto strides = elementwise_strides(*concrete, tensors)) {
      return make_meta(type, std::move(shape), to_sym(*strides), device);
    }
  }
  Sizes strides = elementwise_strides_sym(ctx, shape, tensors);
  return make_meta(type, std::move(shape), std::move(strides), device);
}

// torch's computeStride: the strides of a view of (sizes, strides) as `shape`, if one exists.
inline std::optional<Ints> view_strides(const Ints& oldshape, const Ints& oldstride,
                                        const Ints& newshape) {
  if (oldshape.empty()) return Ints(newshape.size(), 1);
  std::int64_t numel = 1;
  for (std::int64_t s : oldshape) numel = wrap_mul(numel, s);
  if (numel == 0 && oldshape == newshape) return oldstride;
  Ints newstride(newshape.size(), 0);
  if (numel == 0) {
    for (std::size_t d = newshape.size(); d-- > 0;) {
      newstride[d] = d + 1 == newshape.size()
                         ? 1
                         : wrap_mul(std::max<std::int64_t>(newshape[d + 1], 1), newstride[d + 1]);
    }
    return newstride;
  }
  auto view_d = static_cast<std::ptrdiff_t>(newshape.size()) - 1;
  std::int64_t chunk_base_stride = oldstride.back();
  std::int64_t tensor_numel = 1;
  std::int64_t view_numel = 1;
  for (auto tensor_d = static_cast<std::ptrdiff_t>(oldshape.size()) - 1; tensor_d >= 0;
       --tensor_d) {
    const auto td = static_cast<std::size_t>(tensor_d);
    tensor_numel = wrap_mul(tensor_numel, oldshape[td]);
    if (tensor_d == 0 ||
        (oldshape[td - 1] != 1 && oldstride[td - 1] != wrap_mul(tensor_numel, chunk_base_stride))) {
      while (view_d >= 0 &&
             (view_numel < tensor_numel || newshape[static_cast<std::size_t>(view_d)] == 1)) {
        newstride[static_cast<std::size_t>(view_d)] = wrap_mul(view_numel, chunk_base_stride);
        view_numel = wrap_mul(view_numel, newshape[static_cast<std::size_t>(view_d)]);
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = oldstride[td - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return newstride;
}

}  // namespace infer
}  // namespace detail
}  // namespace epgraph
