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

}  // namespace infer
}  // namespace detail
}  // namespace epgraph
