// infer_meta rules of elementwise ops (dtype promotion, broadcasting, TensorIterator strides)
// and of ops whose result is shaped like `self` (clone, to, quantize, *_like of self).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include "shapes.hpp"

namespace epgraph {
namespace detail {
namespace infer {

// The operands of an elementwise op: every Tensor/Scalar argument among `names` (present in the
// schema), tensors for the shape, all for the dtype.
struct Operands {
  std::vector<const TensorMeta*> tensors;
  std::vector<Operand> ops;
};

inline Operands collect(const Context& ctx, std::initializer_list<const char*> names) {
  Operands out;
  for (const char* name : names) {
    if (!ctx.has(name)) continue;
    const std::ptrdiff_t i = ctx.schema().argument_index(name);
    const SchemaType& type = ctx.schema().arguments[static_cast<std::size_t>(i)].type;
    const Argument& a = ctx.arg(name);
    if (type.is_tensor_like() && is_number_literal(a)) {
      // a Python number given for a Tensor argument is a wrapped number (a complex one too:
      // `x.to(torch.complex64) * (1.5 - 2j)` is mul.Tensor(to, as_complex))
      out.ops.push_back(Operand{Operand::Kind::wrapped, wrapped_dtype_of(a)});
    } else if (type.is_tensor_like() && a.node() != nullptr &&
               a.node()->meta().val.is_symbolic_scalar()) {
      // a SymInt/SymFloat node given for a Tensor argument is a wrapped number too
      // (run_decompositions() of torch.roll: `add.Tensor(x, mod)`)
      if (auto op = ctx.scalar_operand(name)) out.ops.push_back(*op);
    } else if (type.is_tensor_like()) {
      if (const TensorMeta* t = ctx.opt_tensor(name)) {
        out.tensors.push_back(t);
        out.ops.push_back(Context::tensor_operand(*t));
      }
    } else if (auto o = ctx.scalar_operand(name)) {
      out.ops.push_back(*o);
    }
  }
  return out;
}

inline TensorMeta rule_elementwise(const Context& ctx, Rule rule) {
  Operands o;
  switch (rule) {
    case Rule::where: o = collect(ctx, {"self", "other"}); break;
    case Rule::clamp: o = collect(ctx, {"self", "min", "max"}); break;
    case Rule::pointwise3: o = collect(ctx, {"self", "tensor1", "tensor2"}); break;
    case Rule::binary_pow: o = collect(ctx, {"self", "exponent"}); break;
    case Rule::unary_same:
    case Rule::unary_float:
    case Rule::unary_abs:
    case Rule::unary_angle:
    case Rule::unary_bool: o = collect(ctx, {"self"}); break;
    default: o = collect(ctx, {"self", "other"}); break;
  }
  std::vector<const TensorMeta*> shape_tensors = o.tensors;
  if (rule == Rule::where) {
    shape_tensors.insert(shape_tensors.begin(), &ctx.tensor("condition"));
  }
  if (shape_tensors.empty()) ctx.fail("the op has no tensor operand");
  dtype type = ctx.result_type(o.ops);
  switch (rule) {
    case Rule::unary_float:
    case Rule::binary_float:
      if (is_integral(type)) type = dtype::float32;
      break;
    case Rule::unary_abs: type = complex_to_real(type); break;
    case Rule::unary_angle:  // torch._refs.angle: INT_TO_FLOAT, a complex input's real type
      type = is_complex(type) ? complex_to_real(type) : is_integral(type) ? dtype::float32 : type;
      break;
    case Rule::unary_bool:
    case Rule::compare: type = dtype::bool_; break;
    case Rule::binary_pow:
      if (type == dtype::bool_) type = dtype::int64;
      break;
    case Rule::div: {
      const bool rounding = ctx.has("rounding_mode") && !ctx.arg("rounding_mode").is_none();
      if (!rounding && is_integral(type)) type = dtype::float32;
      break;
    }
    default: break;
  }
  TensorMeta out = elementwise_meta(ctx, type, shape_tensors);
  // where's condition does not decide the device or the stride order's first operand
  if (rule == Rule::where && !o.tensors.empty()) out.device = o.tensors.front()->device;
  return out;
}

inline TensorMeta rule_to(const Context& ctx, bool always_copy) {
  const TensorMeta& self = ctx.tensor("self");
  const dtype type = ctx.opt_dtype("dtype").value_or(self.dtype);
  const Device device = ctx.opt_device("device").value_or(self.device);
  const std::optional<MemoryFormat> format = ctx.opt_memory_format("memory_format");
  const bool copy = always_copy || (ctx.has("copy") && ctx.boolean("copy"));
  if (!copy && type == self.dtype && device == self.device &&
      (!format || *format == MemoryFormat::PreserveFormat)) {
    TensorMeta out = self;  // `to` returns self unchanged
    out.requires_grad = false;
    return out;
  }
  return formatted_meta(ctx, type, self.sizes, device, format, &self);
}

inline TensorMeta rule_quantize(const Context& ctx, bool quantize) {
  const TensorMeta& input = ctx.tensor("input");
  dtype type = dtype::float32;
  if (quantize) {
    const std::optional<dtype> d = ctx.opt_dtype("dtype");
    if (!d) ctx.fail("argument 'dtype' is None");
    type = *d;
  } else if (auto d = ctx.opt_dtype("out_dtype")) {
    type = *d;
  }
  return elementwise_meta(ctx, type, {&input});
}

// quantized_decomposed's check of quant_min/quant_max against `type`'s range
// (_quant_min_max_bounds_check in torch/ao/quantization/fx/_decomposed.py), with its messages.
inline void check_quant_bounds(const Context& ctx, dtype type) {
  struct Bounds {
    dtype type;
    std::int64_t lower, upper;
  };
  static constexpr Bounds bounds[] = {{dtype::uint8, 0, 255},
                                      {dtype::int8, -128, 127},
                                      {dtype::uint16, 0, 65535},
                                      {dtype::int16, -32768, 32767},
                                      {dtype::int32, -2147483648LL, 2147483647},
                                      {dtype::float8_e5m2, -57344, 57344},
                                      {dtype::float8_e4m3fn, -448, 448}};
  const Bounds* b = nullptr;
  for (const Bounds& x : bounds) {
    if (x.type == type) b = &x;
  }
  if (b == nullptr) ctx.fail("Unsupported dtype: torch." + std::string(dtype_name(type)));
  const std::int64_t lower = b->lower;
  const std::int64_t upper = b->upper;
  const std::int64_t quant_min = ctx.integer("quant_min");
  const std::int64_t quant_max = ctx.integer("quant_max");
  if (quant_min < lower) {
    ctx.fail("quant_min out of bounds for dtype, quant_min_lower_bound: " + std::to_string(lower) +
             " quant_min: " + std::to_string(quant_min));
  }
  if (quant_max > upper) {
    ctx.fail("quant_max out of bounds for dtype, quant_max_upper_bound: " + std::to_string(upper) +
             " quant_max: " + std::to_string(quant_max));
  }
}

// quantize_per_channel / dequantize_per_channel: torch.empty_like(input, dtype=...) after the
// checks of their Meta functions (quantize_per_channel_meta, dequantize_per_channel_meta in
// torch/ao/quantization/fx/_decomposed.py): a quantized input must have `dtype`, a quantized
// one be float32 (float16 and bfloat16 count as float32), `axis` below the input's rank (a
// negative one passes, as in torch), quant_min/quant_max within dtype's range.
inline TensorMeta rule_quantize_per_channel(const Context& ctx, bool quantize) {
  const TensorMeta& input = ctx.tensor("input");
  const std::optional<dtype> d = ctx.opt_dtype("dtype");
  if (!d) ctx.fail("argument 'dtype' is None");
  const dtype expected = quantize ? dtype::float32 : *d;
  const dtype got = quantize && (input.dtype == dtype::float16 || input.dtype == dtype::bfloat16)
                        ? dtype::float32
                        : input.dtype;
  if (got != expected) {
    ctx.fail("Expecting input to have dtype torch." + std::string(dtype_name(expected)) +
             ", but got dtype: torch." + std::string(dtype_name(input.dtype)));
  }
  const auto rank = static_cast<std::int64_t>(input.sizes.size());
  if (ctx.integer("axis") >= rank) ctx.fail("Expecting axis to be < " + std::to_string(rank));
  check_quant_bounds(ctx, *d);
  dtype type = *d;
  if (!quantize) type = ctx.opt_dtype("out_dtype").value_or(dtype::float32);
  return elementwise_meta(ctx, type, {&input});
}

// empty_like(argument `name`): its shape and dtype, its strides when dense (preserve_format).
inline TensorMeta preserved_like(const Context& ctx, std::string_view name) {
  const TensorMeta& t = ctx.tensor(name);
  return formatted_meta(ctx, t.dtype, t.sizes, t.device, MemoryFormat::PreserveFormat, &t);
}

// type_as: self itself when other has self's dtype, else to(other.dtype) (preserve format).
inline NodeValue rule_type_as(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  const TensorMeta& other = ctx.tensor("other");
  if (other.dtype == self.dtype) {
    TensorMeta out = self;
    out.requires_grad = false;
    return out;
  }
  return formatted_meta(ctx, other.dtype, self.sizes, self.device, MemoryFormat::PreserveFormat,
                        &self);
}

// copy, slice_scatter, select_scatter: a new tensor with self's sizes and strides exactly
// (empty_strided(self.sizes(), self.strides())), storage offset 0.
inline NodeValue rule_self_strided(const Context& ctx, std::string_view) {
  TensorMeta out = ctx.tensor("self");
  out.requires_grad = false;
  out.storage_offset = std::int64_t{0};
  return out;
}

// Ops whose result has self's shape and dtype, contiguous (roll, tril, triu, scatter*,
// index_add, masked_fill).
inline NodeValue rule_self_contiguous(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  return contiguous_meta(ctx, self.dtype, self.sizes, self.device);
}

// square: pow(self, 2): bool -> int64.
inline NodeValue rule_square(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  return elementwise_meta(ctx, self.dtype == dtype::bool_ ? dtype::int64 : self.dtype, {&self});
}

inline NodeValue rule_clone(const Context& ctx, std::string_view) {
  const TensorMeta& self = ctx.tensor("self");
  return formatted_meta(ctx, self.dtype, self.sizes, self.device,
                        ctx.opt_memory_format("memory_format"), &self);
}

inline NodeValue rule_alias(const Context& ctx, std::string_view) {
  TensorMeta out = ctx.tensor("self");
  out.requires_grad = false;
  return out;
}

// index_copy, index_put, lift_fresh_copy, flip: empty_like(self).
inline NodeValue rule_self_like(const Context& ctx, std::string_view) {
  return preserved_like(ctx, "self");
}

inline NodeValue rule_to_op(const Context& ctx, std::string_view op) {
  return rule_to(ctx, op == "_to_copy");
}

inline NodeValue rule_quantize_op(const Context& ctx, std::string_view op) {
  return rule_quantize(ctx, op == "quantize_per_tensor");
}

inline NodeValue rule_quantize_per_channel_op(const Context& ctx, std::string_view op) {
  return rule_quantize_per_channel(ctx, op == "quantize_per_channel");
}

}  // namespace infer
}  // namespace detail
}  // namespace epgraph
