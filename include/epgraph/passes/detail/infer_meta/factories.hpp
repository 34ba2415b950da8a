// infer_meta rules of factories: full/zeros/ones/empty/rand/randn, *_like, arange, new_*,
// empty_strided, randperm, the window functions.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include "shapes.hpp"

namespace epgraph {
namespace detail {
namespace infer {

inline TensorMeta rule_factory(const Context& ctx, Rule rule) {
  Sizes size;
  dtype type = dtype::float32;
  if (rule == Rule::full) {
    size = ctx.sym_list("size");
    if (auto o = ctx.scalar_operand("fill_value")) type = o->type;
  } else if (rule == Rule::scalar_tensor) {
    // scalar_tensor's dtype defaults to the default float dtype, whatever the number
  } else {
    size = ctx.sym_list("size");
  }
  for (std::size_t i = 0; i < size.size(); ++i) {
    if (const auto* v = std::get_if<std::int64_t>(&size[i]); v != nullptr && *v < 0) {
      ctx.fail("Trying to create tensor with negative dimension " + std::to_string(*v) + ": " +
               shape_str(size));
    }
  }
  if (auto d = ctx.opt_dtype("dtype")) type = *d;
  const Device device = ctx.opt_device("device").value_or(Device{});
  return formatted_meta(ctx, type, size, device, ctx.opt_memory_format("memory_format"), nullptr);
}

inline TensorMeta rule_like(const Context& ctx) {
  const TensorMeta& self = ctx.tensor("self");
  const dtype type = ctx.opt_dtype("dtype").value_or(self.dtype);
  const Device device = ctx.opt_device("device").value_or(self.device);
  return formatted_meta(ctx, type, self.sizes, device, ctx.opt_memory_format("memory_format"),
                        &self);
}

inline TensorMeta rule_arange(const Context& ctx) {
  const bool has_start = ctx.has("start");
  const bool has_step = ctx.has("step");
  bool floating = false;
  for (const char* name : {"start", "end", "step"}) {
    if (!ctx.has(name)) continue;
    if (auto o = ctx.scalar_operand(name); o && is_floating(o->type)) floating = true;
  }
  auto symbolic = [&](const char* name) {
    if (!ctx.has(name)) return false;
    const Node* n = ctx.arg(name).node();
    const SymIntValue* v = n != nullptr ? n->meta().val.sym_int() : nullptr;
    return v != nullptr && v->value.index() == 1;
  };
  if (!floating && (symbolic("start") || symbolic("end") || symbolic("step"))) {
    // torch._refs.arange on integer arguments: (end - start + step - sgn(step)) // step
    auto bound = [&](const char* name, std::int64_t dflt) {
      return ctx.has(name)
                 ? ctx.ex(ctx.sym_of(ctx.arg(name), "argument '" + std::string(name) + "'"))
                 : sym::Expr(dflt);
    };
    const sym::Expr start = bound("start", 0), end = bound("end", 0), step = bound("step", 1);
    const sym::Ranges* r = ctx.ranges();
    const sym::Expr zero(0);
    if (!ctx.guard_or_true(sym::ne(step, zero, r))) ctx.fail("step must be nonzero");
    const std::int64_t sgn = (ctx.guard_or_false(sym::gt(step, zero, r)) ? 1 : 0) -
                             (ctx.guard_or_false(sym::lt(step, zero, r)) ? 1 : 0);
    const sym::Expr len = sym::floordiv(end - start + step - sym::Expr(sgn), step, r);
    if (!ctx.guard_or_true(sym::ge(len, zero, r))) {
      ctx.fail("upper bound and larger bound inconsistent with step sign");
    }
    const dtype type = ctx.opt_dtype("dtype").value_or(dtype::int64);
    const Device device = ctx.opt_device("device").value_or(Device{});
    return make_meta(type, {ctx.out(len)}, {std::int64_t{1}}, device);
  }
  const double start = has_start ? ctx.number("start") : 0.0;
  const double end = ctx.number("end");
  const double step = has_step ? ctx.number("step") : 1.0;
  if (step == 0) ctx.fail("step must be nonzero");
  if (!std::isfinite(start) || !std::isfinite(end)) {
    ctx.fail("unsupported range: " + std::to_string(start) + " -> " + std::to_string(end));
  }
  if ((step > 0 && end < start) || (step < 0 && end > start)) {
    ctx.fail("upper bound and larger bound inconsistent with step sign");
  }
  const double n = std::ceil((end - start) / step);
  const dtype type = ctx.opt_dtype("dtype").value_or(floating ? dtype::float32 : dtype::int64);
  const Device device = ctx.opt_device("device").value_or(Device{});
  const auto len = static_cast<std::int64_t>(n);
  return make_meta(type, {len}, {std::int64_t{1}}, device);
}

// new_ones, new_zeros, new_empty, new_full: `size`, contiguous, in self's dtype and device
// unless dtype / device are given.
inline NodeValue rule_new_factory(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const dtype type = ctx.opt_dtype("dtype").value_or(self.dtype);
  const Device device = ctx.opt_device("device").value_or(self.device);
  return contiguous_meta(ctx, type, ctx.sym_list("size"), device);
}

// randperm(n): int64 (unless dtype says) of shape [n], contiguous.
inline NodeValue rule_randperm(const Context& ctx, std::string_view) {
  const Sizes size{ctx.sym_of(ctx.arg("n"), "argument 'n'")};
  if (const auto* v = std::get_if<std::int64_t>(&size[0]); v != nullptr && *v < 0) {
    ctx.fail("Trying to create tensor with negative dimension " + std::to_string(*v) + ": " +
             shape_str(size));
  }
  return contiguous_meta(ctx, ctx.opt_dtype("dtype").value_or(dtype::int64), size,
                         ctx.opt_device("device").value_or(Device{}));
}

// hann/hamming/blackman/bartlett/kaiser_window (aten/src/ATen/native/TensorFactories.cpp):
// [window_length], contiguous, float32 unless dtype says (a floating one), with torch's checks.
inline NodeValue rule_window(const Context& ctx, std::string_view op) {
  const std::int64_t n = ctx.integer("window_length");
  if (n < 0) {
    ctx.fail(std::string(op) +
             " requires non-negative window_length, got window_length=" + std::to_string(n));
  }
  const dtype type = ctx.opt_dtype("dtype").value_or(dtype::float32);
  if (!is_floating(type) && !is_complex(type)) {
    ctx.fail(std::string(op) +
             " expects floating point dtypes, got: " + std::string(dtype_name(type)));
  }
  if (is_complex(type)) ctx.cannot(std::string(op) + " of a complex dtype fails at run time");
  return contiguous_meta(ctx, type, Sizes{SymInt{n}}, ctx.opt_device("device").value_or(Device{}));
}

// empty_strided: the given sizes and strides, float32 on the CPU unless dtype / device say.
inline NodeValue rule_empty_strided(const Context& ctx, std::string_view) {
  return make_meta(ctx.opt_dtype("dtype").value_or(dtype::float32), ctx.sym_list("size"),
                   ctx.sym_list("stride"), ctx.opt_device("device").value_or(Device{}));
}

}  // namespace infer
}  // namespace detail
}  // namespace epgraph
