// infer_meta rules of view ops: view/reshape, permute, transpose, squeeze, expand, slice, select,
// flatten, splits, unbind, unflatten, as_strided, diagonal.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include "shapes.hpp"

namespace epgraph {
namespace detail {
namespace infer {

// torch's computeStride (aten/src/ATen/TensorUtils.cpp) on symbolic sizes and strides: the
// decisions torch makes with guard_or_true / guard_or_false are made by the range constraints,
// else by the hints (a backed symbol's guard), else as torch's default. nullopt when no view
// exists.
inline std::optional<Exprs> view_strides_sym(const Context& ctx, const Exprs& oldshape,
                                             const Exprs& oldstride, const Exprs& newshape) {
  const sym::Ranges* r = ctx.ranges();
  const sym::Expr one(1);
  if (oldshape.empty()) return Exprs(newshape.size(), one);
  const sym::Expr numel = product(oldshape);
  const bool zero = ctx.guard_or_false(sym::eq(numel, sym::Expr(0), r));
  if (zero && oldshape == newshape) return oldstride;
  Exprs newstride(newshape.size());
  if (zero) {
    for (std::size_t d = newshape.size(); d-- > 0;) {
      newstride[d] =
          d + 1 == newshape.size() ? one : sym::max({newshape[d + 1], one}, r) * newstride[d + 1];
    }
    return newstride;
  }
  auto view_d = static_cast<std::ptrdiff_t>(newshape.size()) - 1;
  sym::Expr chunk_base_stride = oldstride.back();
  sym::Expr tensor_numel = one;
  sym::Expr view_numel = one;
  for (auto tensor_d = static_cast<std::ptrdiff_t>(oldshape.size()) - 1; tensor_d >= 0;
       --tensor_d) {
    const auto td = static_cast<std::size_t>(tensor_d);
    tensor_numel = tensor_numel * oldshape[td];
    if (tensor_d == 0 ||
        (ctx.guard_or_true(sym::ne(oldshape[td - 1], one, r)) &&
         ctx.guard_or_true(sym::ne(oldstride[td - 1], tensor_numel * chunk_base_stride, r)))) {
      while (view_d >= 0) {
        const auto vd = static_cast<std::size_t>(view_d);
        if (!ctx.guard_or_true(sym::lt(view_numel, tensor_numel, r)) &&
            !ctx.guard_or_false(sym::eq(newshape[vd], one, r))) {
          break;
        }
        newstride[vd] = view_numel * chunk_base_stride;
        view_numel = view_numel * newshape[vd];
        --view_d;
      }
      if (ctx.guard_or_true(sym::ne(view_numel, tensor_numel, r))) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = oldstride[td - 1];
        tensor_numel = one;
        view_numel = one;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return newstride;
}

// The strides FakeTensorMode gives a view (torch._refs._reshape_view_helper, which torch 2.13
// runs for aten.view, _unsafe_view and the view a reshape takes): a greedy walk that flattens
// input dimensions (prims.collapse_view) and splits them (prims.split_dim) left to right. It
// agrees with ATen's computeStride except in the strides of size-1 dimensions (e.g. [2,4,1,1] with
// strides [4,1,4,1] viewed as [1,8,1]: computeStride [8,1,1], this [8,1,4]), and an empty input
// gets contiguous strides. Torch stores these strides in every exported view's value, so epgraph
// computes them the same way. `Ops` is IntViewOps or SymViewOps below. Preconditions: `shape` has
// the input's element count. nullopt when the walk finds no view (a flatten of dimensions that
// are not nested).
template <class Ops>
std::optional<std::vector<typename Ops::Value>> reshape_view_strides(
    const Ops& ops, std::vector<typename Ops::Value> sz, std::vector<typename Ops::Value> st,
    const std::vector<typename Ops::Value>& shape) {
  using V = typename Ops::Value;
  using Vs = std::vector<V>;
  const V one(1);
  V numel(1);
  for (const V& s : sz) numel = ops.mul(numel, s);
  if (ops.eq(numel, V(0))) return ops.contiguous_strides(shape);
  if (sz.empty()) return Vs(shape.size(), one);  // unsqueezes of a 0-dim tensor
  if (shape.empty()) return Vs{};                // squeezes to a 0-dim tensor
  if (ops.contiguous(sz, st)) {
    if (shape.size() == 1 && sz.size() > 1) return Vs{one};
    if (shape.size() == 2 && sz.size() == 1) return Vs{shape[1], one};
  }
  const auto at = [](std::size_t i) { return static_cast<std::ptrdiff_t>(i); };
  std::size_t idx = 0;
  for (const V& length : shape) {
    if (idx >= sz.size()) {  // a trailing unsqueeze, made by split_dim(last, its length)
      sz.push_back(one);
      st.push_back(st.back());
      ++idx;
      continue;
    }
    if (ops.eq(length, sz[idx])) {
      ++idx;
      continue;
    }
    V accum = sz[idx];
    std::size_t end = idx;
    while (!ops.divides(length, accum)) {
      if (++end >= sz.size()) return std::nullopt;
      accum = ops.mul(accum, sz[end]);
    }
    if (end != idx) {  // collapse_view(idx, end), when _collapse_view_helper finds it valid
      for (std::size_t i = end; i-- > idx;) {
        if (!ops.eq(sz[i], one) && !ops.eq(sz[i + 1], one) &&
            !ops.eq(st[i], ops.mul(st[i + 1], sz[i + 1]))) {
          return std::nullopt;
        }
      }
      V stride = st[end];
      V len = sz[end];
      for (std::size_t i = end; i-- > idx;) {
        if (!ops.eq(sz[i], one)) stride = ops.min(stride, st[i]);
        len = ops.mul(len, sz[i]);
      }
      sz.erase(sz.begin() + at(idx) + 1, sz.begin() + at(end) + 1);
      st.erase(st.begin() + at(idx) + 1, st.begin() + at(end) + 1);
      sz[idx] = len;
      st[idx] = stride;
    }
    if (!ops.eq(accum, length)) {  // split_dim(idx, length)
      const V inner = ops.div(sz[idx], length);
      const V inner_stride = st[idx];
      sz[idx] = length;
      st[idx] = ops.mul(inner_stride, inner);
      sz.insert(sz.begin() + at(idx) + 1, inner);
      st.insert(st.begin() + at(idx) + 1, inner_stride);
    }
    ++idx;
  }
  st.resize(shape.size());  // trailing squeezes: the element counts agree, so these have size 1
  return st;
}

struct IntViewOps {
  using Value = std::int64_t;
  [[nodiscard]] bool eq(Value a, Value b) const { return a == b; }
  [[nodiscard]] bool divides(Value d, Value n) const { return d != 0 && n % d == 0; }
  [[nodiscard]] Value mul(Value a, Value b) const { return wrap_mul(a, b); }
  [[nodiscard]] Value div(Value a, Value b) const { return a / b; }
  [[nodiscard]] Value min(Value a, Value b) const { return b < a ? b : a; }
  [[nodiscard]] bool contiguous(const Ints& sizes, const Ints& strides) const {
    return is_contiguous(sizes, strides);
  }
  [[nodiscard]] Ints contiguous_strides(const Ints& shape) const {
    return epgraph::contiguous_strides(shape);
  }
};

// The same decisions on symbolic sizes, made as the guards torch's refs take (ranges, else hints).
struct SymViewOps {
  using Value = sym::Expr;
  const Context& ctx;
  [[nodiscard]] bool eq(const Value& a, const Value& b) const {
    return a == b || ctx.guard_or_false(sym::eq(a, b, ctx.ranges()));
  }
  [[nodiscard]] bool divides(const Value& d, const Value& n) const {
    return ctx.guard_or_false(sym::eq(sym::mod(n, d, ctx.ranges()), Value(0), ctx.ranges()));
  }
  [[nodiscard]] Value mul(const Value& a, const Value& b) const { return a * b; }
  [[nodiscard]] Value div(const Value& a, const Value& b) const {
    return sym::floordiv(a, b, ctx.ranges());
  }
  [[nodiscard]] Value min(const Value& a, const Value& b) const {
    return ctx.guard_or_false(sym::lt(b, a, ctx.ranges())) ? b : a;
  }
  [[nodiscard]] bool contiguous(const Exprs& sizes, const Exprs& strides) const {
    return contiguous_sym(ctx, SymOperand{sizes, strides});
  }
  [[nodiscard]] Exprs contiguous_strides(const Exprs& shape) const {
    return exprs_of(ctx, contiguous_sym_strides(ctx, sizes_of(ctx, shape)));
  }
};

// The strides of a view of (sizes, strides) as `shape`, nullopt when no view exists (for view an
// error, for reshape a contiguous copy). ATen's computeStride decides whether a view exists, and
// FakeTensorMode's _reshape_view_helper gives its strides.
// Torch bug, not copied: for view, torch 2.13's FakeTensorMode asks only _reshape_view_helper,
// whose collapse check skips any pair with a size-1 dimension, so it accepts views eager refuses
// ([4,1,1,3] with strides [2,2,2,8] as [2,6,1]) and export writes a program that fails when run.
// epgraph refuses them with eager's message.
template <class Ops, class Vs, class ComputeStride>
std::optional<Vs> view_or_reshape_strides(const Ops& ops, const Vs& sizes, const Vs& strides,
                                          const Vs& shape, const ComputeStride& compute_stride) {
  std::optional<Vs> aten = compute_stride();
  if (!aten) return std::nullopt;
  if (auto fake = reshape_view_strides(ops, sizes, strides, shape)) return fake;
  return aten;
}

// view / reshape when a size or stride is symbolic: torch's infer_size (the -1 is
// numel // the other sizes' product, which must divide it) and computeStride; reshape falls back
// to a contiguous copy where no view exists.
inline TensorMeta rule_view_symbolic(const Context& ctx, const TensorMeta& self,
                                     const Sizes& shape_arg, std::ptrdiff_t infer,
                                     std::string_view op) {
  const sym::Ranges* r = ctx.ranges();
  const Exprs old_sizes = exprs_of(ctx, self.sizes);
  const Exprs old_strides = exprs_of(ctx, self.strides);
  Exprs shape = exprs_of(ctx, shape_arg);
  const sym::Expr numel = product(old_sizes);
  auto invalid = [&]() {
    ctx.fail("shape '" + shape_str(shape_arg) + "' is invalid for input of size " +
             sym::str(numel));
  };
  if (infer >= 0) {
    sym::Expr known(1);
    for (std::size_t i = 0; i < shape.size(); ++i) {
      if (static_cast<std::ptrdiff_t>(i) != infer) known = known * shape[i];
    }
    if (known.as_integer() == std::int64_t{0}) {
      ctx.fail("cannot reshape tensor of " + sym::str(numel) + " elements into shape " +
               shape_str(shape_arg) +
               " because the unspecified dimension size -1 can be any value and is ambiguous");
    }
    if (!ctx.guard_or_true(sym::eq(sym::mod(numel, known, r), sym::Expr(0), r))) invalid();
    shape[static_cast<std::size_t>(infer)] = sym::floordiv(numel, known, r);
  }
  const sym::Expr new_numel = product(shape);
  if (new_numel != numel && !ctx.guard_or_true(sym::eq(new_numel, numel, r))) invalid();
  if (auto strides = view_or_reshape_strides(SymViewOps{ctx}, old_sizes, old_strides, shape, [&] {
        return view_strides_sym(ctx, old_sizes, old_strides, shape);
      })) {
    TensorMeta out =
        make_meta(self.dtype, sizes_of(ctx, shape), sizes_of(ctx, *strides), self.device);
    out.storage_offset = self.storage_offset;
    return out;
  }
  if (op == "reshape" || op == "flatten") {
    return contiguous_meta(ctx, self.dtype, sizes_of(ctx, shape), self.device);
  }
  ctx.fail(
      "view size is not compatible with input tensor's size and stride (at least one dimension "
      "spans across two contiguous subspaces). Use .reshape(...) instead.");
}

inline TensorMeta rule_view(const Context& ctx, std::string_view op) {
  const TensorMeta& self = ctx.tensor("self");
  const Sizes shape_arg = ctx.has("size") ? ctx.sym_list("size") : ctx.sym_list("shape");
  // infer -1
  std::ptrdiff_t infer = -1;
  for (std::size_t i = 0; i < shape_arg.size(); ++i) {
    if (const auto* v = std::get_if<std::int64_t>(&shape_arg[i])) {
      if (*v == -1) {
        if (infer >= 0) ctx.fail("only one dimension can be inferred");
        infer = static_cast<std::ptrdiff_t>(i);
      } else if (*v < 0) {
        ctx.fail("invalid shape dimension " + std::to_string(*v));
      }
    }
  }
  auto in_sizes = all_concrete(self.sizes);
  auto in_strides = all_concrete(self.strides);
  auto out_concrete = all_concrete(shape_arg);
  if (!in_sizes || !out_concrete || !in_strides) {
    return rule_view_symbolic(ctx, self, shape_arg, infer, op);
  }
  std::int64_t numel = 1;
  for (std::int64_t s : *in_sizes) numel = wrap_mul(numel, s);
  Ints shape = *out_concrete;
  if (infer >= 0) {
    std::int64_t known = 1;
    for (std::size_t i = 0; i < shape.size(); ++i) {
      if (static_cast<std::ptrdiff_t>(i) != infer) {
        known =
            checked_mul(ctx, known, shape[i], "the element count of shape " + shape_str(shape_arg));
      }
    }
    if (known == 0 || numel % known != 0) {
      ctx.fail("shape '" + shape_str(shape_arg) + "' is invalid for input of size " +
               std::to_string(numel));
    }
    shape[static_cast<std::size_t>(infer)] = numel / known;
  }
  std::int64_t new_numel = 1;
  for (std::int64_t s : shape) {
    new_numel =
        checked_mul(ctx, new_numel, s, "the element count of shape " + shape_str(shape_arg));
  }
  if (new_numel != numel) {
    ctx.fail("shape '" + shape_str(shape_arg) + "' is invalid for input of size " +
             std::to_string(numel));
  }
  if (auto strides = view_or_reshape_strides(IntViewOps{}, *in_sizes, *in_strides, shape, [&] {
        return view_strides(*in_sizes, *in_strides, shape);
      })) {
    TensorMeta out = make_meta(self.dtype, to_sym(shape), to_sym(*strides), self.device);
    out.storage_offset = self.storage_offset;
    return out;
  }
  if (op == "reshape" || op == "flatten") {
    return make_meta(self.dtype, to_sym(shape), to_sym(contiguous_strides(shape)), self.device);
  }
  ctx.fail(
      "view size is not compatible with input tensor's size and stride (at least one dimension "
      "spans across two contiguous subspaces). Use .reshape(...) instead.");
}

inline TensorMeta rule_permute(const Context& ctx) {
  const TensorMeta& self = ctx.tensor("self");
  const Ints dims = ctx.int_list("dims");
  if (dims.size() != self.sizes.size()) {
    ctx.fail(
        "permute(sparse_coo): number of dimensions in the tensor input does not match the "
        "length of the desired ordering of dimensions i.e. input.dim() = " +
        std::to_string(self.sizes.size()) +
        " is not equal to len(dims) = " + std::to_string(dims.size()));
  }
  TensorMeta out = self;
  std::vector<bool> seen(dims.size(), false);
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const auto d = static_cast<std::size_t>(ctx.wrap_dim(dims[i], self.sizes.size()));
    if (seen[d]) ctx.fail("permute(): duplicate dims are not allowed.");
    seen[d] = true;
    out.sizes[i] = self.sizes[d];
    out.strides[i] = self.strides[d];
  }
  out.requires_grad = false;
  return out;
}

inline TensorMeta transpose_meta(const Context& ctx, const TensorMeta& self, std::int64_t d0,
                                 std::int64_t d1) {
  TensorMeta out = self;
  out.requires_grad = false;
  if (self.sizes.empty()) {
    (void)ctx.wrap_dim(d0, 0);
    (void)ctx.wrap_dim(d1, 0);
    return out;
  }
  const auto a = static_cast<std::size_t>(ctx.wrap_dim(d0, self.sizes.size()));
  const auto b = static_cast<std::size_t>(ctx.wrap_dim(d1, self.sizes.size()));
  std::swap(out.sizes[a], out.sizes[b]);
  std::swap(out.strides[a], out.strides[b]);
  return out;
}

inline TensorMeta rule_unsqueeze(const Context& ctx) {
  const TensorMeta& self = ctx.tensor("self");
  const std::size_t rank = self.sizes.size();
  // A new dimension may go at any of rank + 1 places (torch wraps it against rank + 1).
  const auto d = static_cast<std::size_t>(ctx.wrap_dim(ctx.integer("dim"), rank + 1));
  TensorMeta out = self;
  out.requires_grad = false;
  const SymInt stride = d >= rank ? SymInt{std::int64_t{1}}
                                  : ctx.mul(self.sizes[d], self.strides[d], "the new stride");
  out.sizes.insert(out.sizes.begin() + static_cast<std::ptrdiff_t>(d), std::int64_t{1});
  out.strides.insert(out.strides.begin() + static_cast<std::ptrdiff_t>(d), stride);
  return out;
}

inline TensorMeta rule_squeeze(const Context& ctx) {
  const TensorMeta& self = ctx.tensor("self");
  const std::size_t rank = self.sizes.size();
  std::vector<bool> drop(rank, false);
  if (ctx.has("dim") || ctx.has("dims")) {
    const Ints dims = ctx.int_list(ctx.has("dim") ? "dim" : "dims");
    for (std::int64_t dim : dims) {
      const auto d = static_cast<std::size_t>(ctx.wrap_dim(dim, rank));
      if (rank > 0 && ctx.is_one(self.sizes[d])) drop[d] = true;
    }
  } else {
    for (std::size_t d = 0; d < rank; ++d) drop[d] = ctx.is_one(self.sizes[d]);
  }
  TensorMeta out = self;
  out.requires_grad = false;
  out.sizes.clear();
  out.strides.clear();
  for (std::size_t d = 0; d < rank; ++d) {
    if (drop[d]) continue;
    out.sizes.push_back(self.sizes[d]);
    out.strides.push_back(self.strides[d]);
  }
  return out;
}

inline TensorMeta rule_expand(const Context& ctx) {
  const TensorMeta& self = ctx.tensor("self");
  const Sizes target = ctx.sym_list("size");
  if (target.size() < self.sizes.size()) {
    ctx.fail("the number of sizes provided (" + std::to_string(target.size()) +
             ") must be greater or equal to the number of dimensions in the tensor (" +
             std::to_string(self.sizes.size()) + ")");
  }
  TensorMeta out = self;
  out.requires_grad = false;
  out.sizes.assign(target.size(), std::int64_t{1});
  out.strides.assign(target.size(), std::int64_t{0});
  const std::size_t off = target.size() - self.sizes.size();
  for (std::size_t i = 0; i < target.size(); ++i) {
    const SymInt& t = target[i];
    const bool keep = t.index() == 0 && std::get<std::int64_t>(t) == -1;
    if (i < off) {
      if (keep) {
        ctx.fail(
            "The expanded size of the tensor (-1) isn't allowed in a leading, non-existing "
            "dimension " +
            std::to_string(i));
      }
      out.sizes[i] = t;
      // A new leading dimension of size 1 gets stride[0] * size[0] of self (1 for a 0-d self),
      // as torch._refs.expand's prims.broadcast_in_dim computes it, which is what torch.export
      // runs and stores: [3, 1] -> [1, 2, 3, 4] is (3, 0, 1, 0). Eager and a FakeTensorMode
      // without export's tracing run the C++ kernel, which gives the next expanded dimension's
      // size * stride there, (0, 0, 1, 0). A new dimension of another size has stride 0.
      if (!ctx.is_one(t)) {
        out.strides[i] = std::int64_t{0};
      } else if (self.sizes.empty()) {
        out.strides[i] = std::int64_t{1};
      } else {
        out.strides[i] = ctx.mul(self.strides[0], self.sizes[0], "a stride");
      }
      continue;
    }
    const SymInt& s = self.sizes[i - off];
    if (keep || ctx.equal(t, s)) {
      out.sizes[i] = s;
      out.strides[i] = self.strides[i - off];
    } else if (ctx.is_one(s)) {
      out.sizes[i] = t;
      out.strides[i] = std::int64_t{0};
    } else {
      ctx.fail("The expanded size of the tensor (" + sym_str(t) +
               ") must match the existing size (" + sym_str(s) + ") at non-singleton dimension " +
               std::to_string(i) + ".  Target sizes: " + shape_str(target) +
               ".  Tensor sizes: " + shape_str(self.sizes));
    }
  }
  return out;
}

// torch's _compute_slice_index (torch/_subclasses/fake_impls.py): `index` wrapped and clamped
// into [0, size], or nullopt when the guards cannot decide (torch then makes an unbacked symbol).
inline std::optional<sym::Expr> slice_index(const Context& ctx, const sym::Expr& size,
                                            const sym::Expr& index) {
  const sym::Ranges* r = ctx.ranges();
  const sym::Expr zero(0);
  if (ctx.guard_or_false(sym::logical_and({sym::ge(index, zero, r), sym::le(index, size, r)}))) {
    return index;
  }
  if (ctx.guard_or_false(sym::logical_and({sym::lt(index, zero, r), sym::ge(index, -size, r)}))) {
    return index + size;
  }
  if (ctx.guard_or_false(sym::lt(index, -size, r))) return zero;
  if (ctx.guard_or_false(sym::gt(index, size, r))) return size;
  if (ctx.guard_or_false(sym::ge(index, zero, r))) return sym::min({index, size}, r);
  if (ctx.guard_or_false(sym::lt(index, zero, r))) return sym::max({index + size, zero}, r);
  return std::nullopt;
}

// slice.Tensor as torch's FakeTensor implementation computes it (fake_impls.py slice_forward):
// start and end wrapped and clamped, the size ceil((end - start) / step) (0 when end <= start),
// the stride times step, the offset plus start * stride. Concrete inputs take int64 arithmetic.
inline TensorMeta rule_slice(const Context& ctx) {
  const TensorMeta& self = ctx.tensor("self");
  const std::size_t rank = self.sizes.size();
  if (rank == 0) ctx.fail("slice() cannot be applied to a 0-dim tensor.");
  const auto d = static_cast<std::size_t>(ctx.wrap_dim(ctx.integer("dim"), rank));
  auto opt_sym = [&](const char* name) -> std::optional<SymInt> {
    const Argument& a = ctx.arg(name);
    if (a.is_none()) return std::nullopt;
    return ctx.sym_of(a, "argument '" + std::string(name) + "'");
  };
  const std::optional<SymInt> start_arg = opt_sym("start");
  const std::optional<SymInt> end_arg = opt_sym("end");
  const std::int64_t step = ctx.integer("step");
  if (step <= 0) ctx.fail("slice step must be positive");
  constexpr std::int64_t maxsize = std::numeric_limits<std::int64_t>::max();
  auto is_int = [](const std::optional<SymInt>& v, std::int64_t n) {
    return v && v->index() == 0 && std::get<std::int64_t>(*v) == n;
  };
  TensorMeta out = self;
  out.requires_grad = false;
  if ((!start_arg || is_int(start_arg, 0)) && (!end_arg || is_int(end_arg, maxsize)) && step == 1) {
    return out;  // the whole dimension, symbolic or not
  }
  const bool concrete_case = self.sizes[d].index() == 0 && self.strides[d].index() == 0 &&
                             (!start_arg || start_arg->index() == 0) &&
                             (!end_arg || end_arg->index() == 0) &&
                             self.storage_offset.index() == 0;
  if (concrete_case) {
    const std::int64_t size = std::get<std::int64_t>(self.sizes[d]);
    std::int64_t start = start_arg ? std::get<std::int64_t>(*start_arg) : 0;
    std::int64_t end = end_arg ? std::get<std::int64_t>(*end_arg) : maxsize;
    if (start < 0) start += size;
    if (end < 0) end += size;
    if (start < 0) {
      start = 0;
    } else if (start >= size) {
      start = size;
    }
    if (end < start) {
      end = start;
    } else if (end >= size) {
      end = size;
    }
    const std::int64_t stride = std::get<std::int64_t>(self.strides[d]);
    // end - start is in [0, size]; (n + step - 1) / step without overflow for any step >= 1.
    const std::int64_t n = end - start;
    out.sizes[d] = n / step + (n % step != 0 ? 1 : 0);
    out.strides[d] = checked_mul(ctx, stride, step, "the stride of the slice");
    out.storage_offset =
        checked_add(ctx, std::get<std::int64_t>(self.storage_offset),
                    checked_mul(ctx, start, stride, "the slice's offset"), "the storage offset");
    return out;
  }
  const sym::Ranges* r = ctx.ranges();
  const sym::Expr size = ctx.ex(self.sizes[d]);
  const sym::Expr stride = ctx.ex(self.strides[d]);
  const std::optional<sym::Expr> start =
      start_arg ? slice_index(ctx, size, ctx.ex(*start_arg)) : sym::Expr(0);
  const std::optional<sym::Expr> end =
      !end_arg || is_int(end_arg, maxsize) ? size : slice_index(ctx, size, ctx.ex(*end_arg));
  if (!start || !end) {
    ctx.fail("the slice bounds of dimension " + std::to_string(d) +
             " cannot be decided under the symbols' ranges and hints (torch makes an unbacked "
             "symbol for the size)");
  }
  const sym::Expr step_e(step);
  sym::Expr new_size;
  if (ctx.guard_or_false(sym::ge(*end, *start, r))) {
    new_size = sym::floordiv(*end - *start + step_e - sym::Expr(1), step_e, r);
  } else if (ctx.guard_or_false(sym::ge(*start, *end, r))) {
    new_size = sym::Expr(0);
  } else {
    const sym::Expr diff = sym::max({*end - *start, sym::Expr(0)}, r);
    new_size = sym::floordiv(diff + step_e - sym::Expr(1), step_e, r);
  }
  out.sizes[d] = ctx.out(new_size);
  out.strides[d] = ctx.out(stride * step_e);
  out.storage_offset = ctx.out(ctx.ex(self.storage_offset) + *start * stride);
  return out;
}

// narrow(self, dim, start, length) as torch's narrow_symint computes it (aten/src/ATen/native/
// TensorShape.cpp, then slice(dim, start, start + length)): the length must be non-negative,
// start in [-size, size] (a negative one counts from the end) and start + length <= size, each
// refused when the bounds or hints decide it is not (torch asserts the undecided ones at run
// time, so the slice's end is start + length, unclamped); the size becomes length, the offset
// grows by start * stride. narrow.Tensor (start a 0-dim tensor) reads data: no rule.
inline TensorMeta rule_narrow(const Context& ctx) {
  if (ctx.node().target() == "torch.ops.aten.narrow.Tensor") {
    ctx.cannot("its start is a tensor's data");
  }
  const TensorMeta& self = ctx.tensor("self");
  const std::size_t rank = self.sizes.size();
  if (rank == 0) ctx.fail("narrow() cannot be applied to a 0-dim tensor.");
  const auto d = static_cast<std::size_t>(ctx.wrap_dim(ctx.integer("dim"), rank));
  const SymInt start_arg = ctx.sym_of(ctx.arg("start"), "argument 'start'");
  const SymInt length_arg = ctx.sym_of(ctx.arg("length"), "argument 'length'");
  const sym::Ranges* r = ctx.ranges();
  const sym::Expr zero(0);
  const sym::Expr size = ctx.ex(self.sizes[d]);
  sym::Expr start = ctx.ex(start_arg);
  const sym::Expr length = ctx.ex(length_arg);
  if (ctx.guard_or_false(sym::lt(length, zero, r))) {
    ctx.fail("narrow(): length must be non-negative.");
  }
  if (ctx.guard_or_false(sym::lt(start, -size, r)) || ctx.guard_or_false(sym::gt(start, size, r))) {
    ctx.fail("start out of range (expected to be in range of [" + sym_str(ctx.out(-size)) + ", " +
             sym_str(self.sizes[d]) + "], but got " + sym_str(start_arg) + ")");
  }
  if (ctx.guard_or_false(sym::lt(start, zero, r))) {
    start = start + size;
  } else if (!ctx.guard_or_false(sym::ge(start, zero, r))) {
    ctx.cannot("the sign of its start " + sym_str(start_arg) +
               " cannot be decided under the symbols' ranges and hints");
  }
  if (ctx.guard_or_false(sym::gt(start + length, size, r))) {
    ctx.fail("start (" + sym_str(ctx.out(start)) + ") + length (" + sym_str(length_arg) +
             ") exceeds dimension size (" + sym_str(self.sizes[d]) + ").");
  }
  TensorMeta out = self;
  out.requires_grad = false;
  out.sizes[d] = length_arg;
  out.storage_offset = ctx.out(ctx.ex(self.storage_offset) + start * ctx.ex(self.strides[d]));
  return out;
}

// select.int (torch's select meta: the index must be in [-size, size), a negative one counts
// from the end; the offset grows by index * stride).
inline TensorMeta rule_select(const Context& ctx) {
  const TensorMeta& self = ctx.tensor("self");
  const std::size_t rank = self.sizes.size();
  if (rank == 0) ctx.fail("select() cannot be applied to a 0-dim tensor.");
  const auto d = static_cast<std::size_t>(ctx.wrap_dim(ctx.integer("dim"), rank));
  const SymInt index_arg = ctx.sym_of(ctx.arg("index"), "argument 'index'");
  TensorMeta out = self;
  out.requires_grad = false;
  out.sizes.erase(out.sizes.begin() + static_cast<std::ptrdiff_t>(d));
  out.strides.erase(out.strides.begin() + static_cast<std::ptrdiff_t>(d));
  const auto out_of_range = [&]() {
    ctx.fail("select(): index " + sym_str(index_arg) + " out of range for tensor of size " +
             shape_str(self.sizes) + " at dimension " + std::to_string(d));
  };
  if (index_arg.index() == 0 && self.sizes[d].index() == 0 && self.strides[d].index() == 0 &&
      self.storage_offset.index() == 0) {
    std::int64_t index = std::get<std::int64_t>(index_arg);
    const std::int64_t size = std::get<std::int64_t>(self.sizes[d]);
    if (index < -size || index >= size) out_of_range();
    if (index < 0) index += size;
    out.storage_offset = checked_add(
        ctx, std::get<std::int64_t>(self.storage_offset),
        checked_mul(ctx, index, std::get<std::int64_t>(self.strides[d]), "the selected offset"),
        "the storage offset");
    return out;
  }
  const sym::Ranges* r = ctx.ranges();
  const sym::Expr size = ctx.ex(self.sizes[d]);
  sym::Expr index = ctx.ex(index_arg);
  if (ctx.guard_or_false(sym::lt(index, -size, r)) || ctx.guard_or_false(sym::ge(index, size, r))) {
    out_of_range();
  }
  if (ctx.guard_or_false(sym::lt(index, sym::Expr(0), r))) index = index + size;
  out.storage_offset = ctx.out(ctx.ex(self.storage_offset) + index * ctx.ex(self.strides[d]));
  return out;
}

inline TensorMeta rule_flatten(const Context& ctx) {
  const TensorMeta& self = ctx.tensor("self");
  const std::size_t rank = self.sizes.size();
  if (rank == 0) {
    TensorMeta out = make_meta(self.dtype, {std::int64_t{1}}, {std::int64_t{1}}, self.device);
    out.storage_offset = self.storage_offset;
    return out;
  }
  const auto s = static_cast<std::size_t>(ctx.wrap_dim(ctx.integer("start_dim"), rank));
  const auto e = static_cast<std::size_t>(ctx.wrap_dim(ctx.integer("end_dim"), rank));
  if (s > e) ctx.fail("flatten() has invalid args: start_dim cannot come after end_dim");
  if (s == e) {
    TensorMeta out = self;
    out.requires_grad = false;
    return out;
  }
  if (!all_concrete(self.sizes) || !all_concrete(self.strides)) {
    sym::Expr prod(1);
    for (std::size_t i = s; i <= e; ++i) prod = prod * ctx.ex(self.sizes[i]);
    Sizes shape(self.sizes.begin(), self.sizes.begin() + static_cast<std::ptrdiff_t>(s));
    shape.push_back(ctx.out(prod));
    shape.insert(shape.end(), self.sizes.begin() + static_cast<std::ptrdiff_t>(e) + 1,
                 self.sizes.end());
    return rule_view_symbolic(ctx, self, shape, -1, "flatten");
  }
  std::int64_t prod = 1;
  for (std::size_t i = s; i <= e; ++i) {
    prod = checked_mul(
        ctx, prod, ctx.concrete(self.sizes[i], "argument 'self' dimension " + std::to_string(i)),
        "the flattened size");
  }
  Sizes shape(self.sizes.begin(), self.sizes.begin() + static_cast<std::ptrdiff_t>(s));
  shape.push_back(prod);
  shape.insert(shape.end(), self.sizes.begin() + static_cast<std::ptrdiff_t>(e) + 1,
               self.sizes.end());
  auto in_sizes = ctx.concrete_all(self.sizes, "argument 'self'");
  auto in_strides = all_concrete(self.strides);
  const Ints out_shape = ctx.concrete_all(shape, "the result's");
  if (in_strides) {
    if (auto st = view_or_reshape_strides(IntViewOps{}, in_sizes, *in_strides, out_shape, [&] {
          return view_strides(in_sizes, *in_strides, out_shape);
        })) {
      TensorMeta out = make_meta(self.dtype, shape, to_sym(*st), self.device);
      out.storage_offset = self.storage_offset;
      return out;
    }
  }
  return make_meta(self.dtype, shape, to_sym(contiguous_strides(out_shape)), self.device);
}

inline TensorMeta rule_contiguous(const Context& ctx) {
  const TensorMeta& self = ctx.tensor("self");
  const MemoryFormat f =
      ctx.opt_memory_format("memory_format").value_or(MemoryFormat::ContiguousFormat);
  auto s = all_concrete(self.sizes);
  auto st = all_concrete(self.strides);
  if (s && st) {
    const bool already = f == MemoryFormat::ChannelsLast || f == MemoryFormat::ChannelsLast3d
                             ? is_channels_last(*s, *st)
                             : is_contiguous(*s, *st);
    if (already) {
      TensorMeta out = self;
      out.requires_grad = false;
      return out;
    }
  }
  return formatted_meta(ctx, self.dtype, self.sizes, self.device,
                        f == MemoryFormat::PreserveFormat ? MemoryFormat::ContiguousFormat : f,
                        nullptr);
}

// A view of `self` narrowed to [start, start + length) along dimension `d`.
inline TensorMeta narrow_meta(const Context& ctx, const TensorMeta& self, std::size_t d,
                              const sym::Expr& start, const sym::Expr& length) {
  TensorMeta out = self;
  out.requires_grad = false;
  out.sizes[d] = ctx.out(length);
  out.storage_offset = ctx.out(ctx.ex(self.storage_offset) + start * ctx.ex(self.strides[d]));
  return out;
}

// The dimension argument `name` of self, wrapped; a 0-dim self is refused naming `op`.
inline std::size_t split_dim(const Context& ctx, const TensorMeta& self, const char* op,
                             const char* name = "dim") {
  if (self.sizes.empty()) ctx.fail(std::string(op) + " expects at least a 1-dimensional tensor");
  return static_cast<std::size_t>(
      ctx.wrap_dim(ctx.has(name) ? ctx.integer(name) : 0, self.sizes.size()));
}

// split.Tensor / chunk: pieces of `split_size` along dim, the last one shorter (torch's
// split_symint: max(ceil(size / split_size), 1) pieces); chunk's split size is
// ceil(size / chunks). The dimension's size must be concrete (the number of outputs is).
inline NodeValue rule_split(const Context& ctx, std::string_view op) {
  const TensorMeta& self = ctx.tensor("self");
  const std::size_t d = split_dim(ctx, self, op == "chunk" ? "chunk" : "split");
  const std::int64_t size = ctx.concrete(self.sizes[d], "the split dimension " + std::to_string(d));
  std::int64_t split_size = 0;
  if (op == "chunk") {
    const std::int64_t chunks = ctx.integer("chunks");
    if (chunks <= 0)
      ctx.fail("chunk expects `chunks` to be greater than 0, got: " + std::to_string(chunks));
    split_size = (size + chunks - 1) / chunks;
  } else {
    split_size = ctx.concrete(ctx.sym_of(ctx.arg("split_size"), "argument 'split_size'"),
                              "argument 'split_size'");
    if (split_size < 0) {
      ctx.fail("split expects split_size be non-negative, but got split_size=" +
               std::to_string(split_size));
    }
  }
  if (split_size == 0 && size != 0) {
    ctx.fail("split_size can only be 0 if dimension size is 0, but got dimension size of " +
             std::to_string(size));
  }
  const std::int64_t pieces =
      split_size == 0 ? 1 : std::max<std::int64_t>((size + split_size - 1) / split_size, 1);
  NodeValue::List out;
  for (std::int64_t i = 0; i < pieces; ++i) {
    const std::int64_t start = i * split_size;
    const std::int64_t length = std::min(split_size, size - start);
    out.emplace_back(narrow_meta(ctx, self, d, sym::Expr(start), sym::Expr(length)));
  }
  return NodeValue(std::move(out));
}

// split_with_sizes: pieces of the given (possibly symbolic) sizes, which must add up to the
// dimension's size.
inline NodeValue rule_split_with_sizes(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const std::size_t d = split_dim(ctx, self, "split_with_sizes");
  const Sizes sizes = ctx.sym_list("split_sizes");
  sym::Expr start(0);
  NodeValue::List out;
  for (const SymInt& s : sizes) {
    const sym::Expr length = ctx.ex(s);
    if (ctx.guard_or_false(sym::lt(length, sym::Expr(0), ctx.ranges()))) {
      ctx.fail(
          "split_with_sizes expects split_sizes have only non-negative entries, but got "
          "split_sizes=" +
          shape_str(sizes));
    }
    out.emplace_back(narrow_meta(ctx, self, d, start, length));
    start = start + length;
  }
  if (!ctx.guard_or_true(sym::eq(start, ctx.ex(self.sizes[d]), ctx.ranges()))) {
    ctx.fail("split_with_sizes expects split_sizes to sum exactly to " + sym_str(self.sizes[d]) +
             " (input tensor's size at dimension " + std::to_string(d) +
             "), but got split_sizes=" + shape_str(sizes));
  }
  return NodeValue(std::move(out));
}

// unbind.int: one select per index of the (concrete) dimension.
inline NodeValue rule_unbind(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const std::size_t d = split_dim(ctx, self, "unbind");
  const std::int64_t size =
      ctx.concrete(self.sizes[d], "the unbound dimension " + std::to_string(d));
  const auto at = static_cast<std::ptrdiff_t>(d);
  NodeValue::List out;
  for (std::int64_t i = 0; i < size; ++i) {
    TensorMeta piece = narrow_meta(ctx, self, d, sym::Expr(i), sym::Expr(1));
    piece.sizes.erase(piece.sizes.begin() + at);
    piece.strides.erase(piece.strides.begin() + at);
    out.emplace_back(std::move(piece));
  }
  return NodeValue(std::move(out));
}

// unflatten.int: a view splitting dimension `dim` into `sizes` (one -1 inferred).
inline NodeValue rule_unflatten(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const std::size_t d = split_dim(ctx, self, "unflatten");
  const Sizes parts = ctx.sym_list("sizes");
  if (parts.empty()) ctx.fail("unflatten: sizes must be non-empty");
  Sizes shape(self.sizes.begin(), self.sizes.begin() + static_cast<std::ptrdiff_t>(d));
  std::ptrdiff_t infer = -1;
  for (const SymInt& s : parts) {
    if (const auto* v = std::get_if<std::int64_t>(&s); v != nullptr && *v == -1) {
      if (infer >= 0) ctx.fail("unflatten: only one dimension can be inferred");
      infer = static_cast<std::ptrdiff_t>(shape.size());
    }
    shape.push_back(s);
  }
  shape.insert(shape.end(), self.sizes.begin() + static_cast<std::ptrdiff_t>(d) + 1,
               self.sizes.end());
  return rule_view_symbolic(ctx, self, shape, infer, "view");
}

// expand_as: expand to other's shape.
inline NodeValue rule_expand_as(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const TensorMeta& other = ctx.tensor("other");
  const std::size_t off = other.sizes.size() - std::min(other.sizes.size(), self.sizes.size());
  if (self.sizes.size() > other.sizes.size()) {
    ctx.fail("expand_as: the number of sizes provided (" + std::to_string(other.sizes.size()) +
             ") must be greater or equal to the number of dimensions in the tensor (" +
             std::to_string(self.sizes.size()) + ")");
  }
  TensorMeta out = self;
  out.requires_grad = false;
  out.sizes = other.sizes;
  out.strides.assign(other.sizes.size(), std::int64_t{0});
  for (std::size_t i = off; i < other.sizes.size(); ++i) {
    const SymInt& s = self.sizes[i - off];
    if (ctx.equal(s, other.sizes[i])) {
      out.strides[i] = self.strides[i - off];
    } else if (!ctx.is_one(s)) {
      ctx.fail("The expanded size of the tensor (" + sym_str(other.sizes[i]) +
               ") must match the existing size (" + sym_str(s) + ") at non-singleton dimension " +
               std::to_string(i));
    }
  }
  return out;
}

// as_strided: the given sizes and strides over self's storage, at storage_offset (default:
// self's).
inline NodeValue rule_as_strided(const Context& ctx, std::string_view) {
  TensorMeta out = ctx.tensor("self");
  out.requires_grad = false;
  out.sizes = ctx.sym_list("size");
  out.strides = ctx.sym_list("stride");
  if (out.sizes.size() != out.strides.size()) {
    ctx.fail("mismatch in length of strides and shape");
  }
  const Argument* offset = ctx.given_arg("storage_offset");
  if (offset != nullptr && !offset->is_none()) {
    out.storage_offset = ctx.sym_of(*offset, "argument 'storage_offset'");
  }
  return out;
}

// diagonal: a view of the diagonal of dimensions dim1 and dim2 (offset above or below it),
// appended as the last dimension with stride stride(dim1) + stride(dim2).
inline NodeValue rule_diagonal(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const std::size_t rank = self.sizes.size();
  if (rank < 2) ctx.fail("diagonal expects a tensor of at least 2 dimensions");
  const std::int64_t offset = ctx.has("offset") ? ctx.integer("offset") : 0;
  const auto d1 =
      static_cast<std::size_t>(ctx.wrap_dim(ctx.has("dim1") ? ctx.integer("dim1") : 0, rank));
  const auto d2 =
      static_cast<std::size_t>(ctx.wrap_dim(ctx.has("dim2") ? ctx.integer("dim2") : 1, rank));
  if (d1 == d2) {
    ctx.fail("diagonal dimensions cannot be identical " + std::to_string(d1) + ", " +
             std::to_string(d2));
  }
  const std::int64_t s1 =
      ctx.concrete(self.sizes[d1], "argument 'self' dimension " + std::to_string(d1));
  const std::int64_t s2 =
      ctx.concrete(self.sizes[d2], "argument 'self' dimension " + std::to_string(d2));
  const std::int64_t n = offset >= 0 ? std::max<std::int64_t>(std::min(s1, s2 - offset), 0)
                                     : std::max<std::int64_t>(std::min(s1 + offset, s2), 0);
  TensorMeta out = self;
  out.requires_grad = false;
  const sym::Expr st1 = ctx.ex(self.strides[d1]);
  const sym::Expr st2 = ctx.ex(self.strides[d2]);
  if (n != 0) {
    const sym::Expr shift = offset >= 0 ? sym::Expr(offset) * st2 : sym::Expr(-offset) * st1;
    out.storage_offset = ctx.out(ctx.ex(self.storage_offset) + shift);
  }
  for (const std::size_t d : {std::max(d1, d2), std::min(d1, d2)}) {
    out.sizes.erase(out.sizes.begin() + static_cast<std::ptrdiff_t>(d));
    out.strides.erase(out.strides.begin() + static_cast<std::ptrdiff_t>(d));
  }
  out.sizes.push_back(SymInt{n});
  out.strides.push_back(ctx.out(st1 + st2));
  return out;
}

// view_as_real: a complex tensor's real and imaginary parts as a last dimension of 2 (strides
// and storage offset in units of the real dtype).
inline TensorMeta rule_view_as_real(const Context& ctx) {
  const TensorMeta& self = ctx.tensor("self");
  if (!is_complex(self.dtype)) ctx.fail("view_as_real is only supported for complex tensors");
  TensorMeta out = self;
  out.requires_grad = false;
  out.dtype = complex_to_real(self.dtype);
  for (SymInt& st : out.strides) st = ctx.mul(st, std::int64_t{2}, "a stride");
  out.sizes.emplace_back(std::int64_t{2});
  out.strides.emplace_back(std::int64_t{1});
  out.storage_offset = ctx.mul(self.storage_offset, std::int64_t{2}, "the storage offset");
  return out;
}

// real / imag (aten/src/ATen/native/UnaryOps.cpp): of a complex tensor, view_as_real's last
// dimension selected at 0 / 1 (strides and storage offset in units of the real dtype); real of a
// real tensor is the tensor itself (an alias), imag of one is refused with torch's message.
inline NodeValue rule_real_imag(const Context& ctx, std::string_view op) {
  const TensorMeta& self = ctx.tensor("self");
  if (!is_complex(self.dtype)) {
    if (op == "imag") ctx.fail("imag is not implemented for tensors with non-complex dtypes.");
    return self;
  }
  TensorMeta out = self;
  out.requires_grad = false;
  out.dtype = complex_to_real(self.dtype);
  for (SymInt& st : out.strides) st = ctx.mul(st, std::int64_t{2}, "a stride");
  out.storage_offset = ctx.mul(self.storage_offset, std::int64_t{2}, "the storage offset");
  if (op == "imag")
    out.storage_offset = ctx.add(out.storage_offset, std::int64_t{1}, "the storage offset");
  return out;
}

// _conj: a view of a complex tensor with its conjugate bit set (torch.export's TensorMeta does not
// record the bit: the value is the input's layout). Torch asserts on a real input.
inline NodeValue rule_conj_view(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  if (!is_complex(self.dtype)) {
    ctx.fail("_conj expects a complex tensor, not " + std::string(dtype_name(self.dtype)) +
             " (torch.conj returns a real tensor itself without calling _conj)");
  }
  TensorMeta out = self;
  out.requires_grad = false;
  return out;
}

// view_as_complex: the inverse of view_as_real, with torch's checks.
inline TensorMeta rule_view_as_complex(const Context& ctx) {
  const TensorMeta& self = ctx.tensor("self");
  if (self.dtype != dtype::float32 && self.dtype != dtype::float64 &&
      self.dtype != dtype::float16) {
    ctx.fail(
        "view_as_complex is only supported for float, double and half tensors, but got a tensor "
        "of scalar type: " +
        std::string(dtype_name(self.dtype)));
  }
  if (self.sizes.empty() || !ctx.equal(self.sizes.back(), std::int64_t{2})) {
    ctx.fail("Tensor must have a last dimension of size 2");
  }
  if (!ctx.equal(self.strides.back(), std::int64_t{1})) {
    ctx.fail("Tensor must have a last dimension with stride 1");
  }
  TensorMeta out = self;
  out.requires_grad = false;
  out.dtype = real_to_complex(self.dtype);
  out.sizes.pop_back();
  out.strides.pop_back();
  for (SymInt& st : out.strides) {
    const std::int64_t v = ctx.concrete(st, "a stride");
    if (v % 2 != 0) ctx.fail("Tensor must have a stride divisible by 2 for all but last dimension");
    st = v / 2;
  }
  const std::int64_t offset = ctx.concrete(self.storage_offset, "the storage offset");
  if (offset % 2 != 0) ctx.fail("Tensor must have a storage_offset divisible by 2");
  out.storage_offset = offset / 2;
  return out;
}

// unfold(self, dimension, size, step): the windows of `size` every `step` along `dimension` as a
// new last dimension.
inline TensorMeta rule_unfold(const Context& ctx) {
  const TensorMeta& self = ctx.tensor("self");
  const std::size_t rank = self.sizes.size();
  const auto d = static_cast<std::size_t>(
      ctx.wrap_dim(ctx.integer("dimension"), std::max<std::size_t>(rank, 1)));
  const std::int64_t size = ctx.integer("size");
  const std::int64_t step = ctx.integer("step");
  const SymInt max_size = rank == 0 ? SymInt{std::int64_t{1}} : self.sizes[d];
  const sym::Ranges* r = ctx.ranges();
  const auto* concrete_max = std::get_if<std::int64_t>(&max_size);
  if (concrete_max != nullptr ? size > *concrete_max
                              : ctx.guard_or_false(sym::gt(sym::Expr(size), ctx.ex(max_size), r))) {
    ctx.fail("maximum size for tensor at dimension " + std::to_string(d) + " is " +
             sym_str(max_size) + " but size is " + std::to_string(size));
  }
  if (size < 0) ctx.fail("size is " + std::to_string(size) + " but must be >= 0");
  if (step <= 0) ctx.fail("step is " + std::to_string(step) + " but must be > 0");
  TensorMeta out = self;
  out.requires_grad = false;
  if (rank == 0) {
    out.sizes = {SymInt{size}};
    out.strides = {SymInt{std::int64_t{1}}};
    return out;
  }
  if (concrete_max != nullptr) {
    out.sizes[d] = (*concrete_max - size) / step + 1;
  } else {  // (n - size) // step + 1, as the refs compute it on a SymInt
    out.sizes[d] = ctx.out(sym::floordiv(ctx.ex(max_size) - sym::Expr(size), sym::Expr(step), r) +
                           sym::Expr(1));
  }
  out.strides[d] = ctx.mul(self.strides[d], step, "a stride");
  out.sizes.emplace_back(size);
  out.strides.emplace_back(self.strides[d]);
  return out;
}

inline NodeValue rule_view_op(const Context& ctx, std::string_view op) {
  return rule_view(ctx, op);
}

inline NodeValue rule_transpose(const Context& ctx, std::string_view) {
  return transpose_meta(ctx, ctx.tensor("self"), ctx.integer("dim0"), ctx.integer("dim1"));
}

inline NodeValue rule_t(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  if (self.sizes.size() > 2) {
    ctx.fail("t() expects a tensor with <= 2 dimensions, but self is " +
             std::to_string(self.sizes.size()) + "D");
  }
  return self.sizes.size() < 2 ? transpose_meta(ctx, self, 0, 0) : transpose_meta(ctx, self, 0, 1);
}

}  // namespace infer
}  // namespace detail
}  // namespace epgraph
