// Metadata for new nodes: the FX `meta["val"]` (dtype, sizes, strides, device) of the ops graph
// passes commonly insert, computed from the node's arguments like torch's meta functions do.
// The rules live in detail/infer_meta/, one header per op family; registry.hpp binds them.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <string>
#include <string_view>
#include <utility>

#include "../error.hpp"
#include "../ir/graph.hpp"
#include "../ir/node.hpp"
#include "../ir/value.hpp"
#include "../ops/registry.hpp"
#include "../ops/schema.hpp"
#include "detail/infer_meta/meta_context.hpp"
#include "detail/infer_meta/registry.hpp"

namespace epgraph {

/// Registers the eight schemas of `quantized_decomposed::quantize_per_tensor` and
/// `quantized_decomposed::dequantize_per_tensor` (overloads `default`, `tensor`, `tensor2`),
/// `quantize_per_channel` and `dequantize_per_channel` of torch 2.13 in `registry`, so that
/// Graph::check_call, normalized_arguments, verify and the JSON writer know them (in Python they
/// exist once `torch.ao.quantization.fx._decomposed` is imported). infer_meta does not need them
/// registered. Calling it again does nothing.
///
/// Arguments: `registry`, the registry to add them to (default: global_registry()).
/// Returns nothing.
/// Errors: value_error "Operator 'quantized_decomposed::quantize_per_tensor' is already
/// registered with schema '<old>', not '<new>'" when one of the names is taken by another
/// schema; nothing is registered then (strong guarantee, short of another thread registering the
/// same names at the same time). std::bad_alloc.
/// Complexity: O(total schema length + log registry size).
/// Mirrors: the `quantized_decomposed` torch.library definitions in
/// torch/ao/quantization/fx/_decomposed.py.
inline void register_quantized_decomposed_schemas(OperatorRegistry& registry = global_registry()) {
  for (const char* text : detail::quantized_decomposed_schema_texts) {
    const FunctionSchema parsed = parse_schema(text);
    const FunctionSchema* old = registry.find(parsed.qualified_name());
    if (old != nullptr && *old != parsed) {
      throw value_error("Operator '" + parsed.qualified_name() +
                        "' is already registered with schema '" + old->str() + "', not '" +
                        parsed.str() + "'");
    }
  }
  for (const char* text : detail::quantized_decomposed_schema_texts) {
    (void)registry.register_schema(text);
  }
}

/// Computes the FX `meta["val"]` of `node` from its arguments' `meta().val` and its operator
/// schema, as torch's meta functions do when FakeTensor propagation fills it at export time: the
/// dtype, sizes, strides and device of the result (layout strided, requires_grad false, storage
/// offset 0 except for views), or a tuple of them for multi-output ops. Use it to give a node a
/// pass creates the metadata torch.export would have written.
///
/// Arguments: `node`, a call_function node whose target is `torch.ops.<ns>.<op>.<overload>` (or
/// `operator.getitem`, a Python operator on SymInts, SymFloats or SymBools, `torch.sym_float`,
/// `torch.sym_min`/`sym_max`/`sym_not` or `math.trunc`/`floor`/`ceil`) and whose tensor
/// arguments have tensor
/// metadata; `symbols`, the program's range constraints and symbol hints (see MetaContext; the
/// overload without it uses an empty context, which learns the hints of this node's arguments).
///
/// Returns the value; the node is not changed (it reads only the node, its arguments'
/// `meta().val` and the schema; it updates only `symbols`' caches).
///
/// Covered ops (their Tensor/Scalar overloads and, for every op whose name ends in `_` and whose
/// schema writes and returns `self`, the in-place variant, which returns `self`'s metadata
/// unchanged; `out=` variants are not covered):
/// - elementwise unary: neg, abs (complex -> real), relu, gelu, silu, hardtanh, leaky_relu, elu,
///   sign, floor, ceil, round, trunc, clone (memory_format), ... keep the dtype; exp, log, sqrt,
///   rsqrt, sigmoid, tanh, sin, cos, reciprocal, erf, ... turn integral inputs into float32;
///   logical_not, isnan, isinf, isfinite give bool; alias, detach, lift_fresh give `self`;
/// - elementwise binary/ternary with broadcasting and torch's result_type (categories bool < int
///   < float < complex; dimensioned tensors before zero-dim tensors before Python numbers, the
///   lower groups counting only when of a higher category; a Python float is float32): add, sub,
///   rsub, mul, div (integral true division -> float32; rounding_mode keeps the type), pow (bool
///   -> int64), maximum, minimum, fmax, fmin, remainder, fmod, floor_divide, bitwise_and/or/xor,
///   atan2, clamp/clamp_min/clamp_max/clip, where (all overloads), addcmul, addcdiv (`value`
///   does not take part in promotion); eq, ne, lt, le, gt, ge,
///   logical_and/or/xor give bool;
/// - views: view, _unsafe_view, reshape (one -1), permute, transpose.int, t, unsqueeze,
///   squeeze.dim/.dims/.default (a symbolic size is assumed not to be 1, like torch's size
///   oblivious reasoning), expand (-1 keeps), slice.Tensor (start/end None, negative, clamped,
///   step), narrow.default (start + length checked, the size is length), select.int,
///   flatten.using_ints, contiguous;
/// - cat (legacy 1-D empty tensors skipped), stack, index_copy, index_put, copy, index_select,
///   slice_scatter, select_scatter, embedding, linear, mm, bmm, matmul (1-D, 2-D, batched with
///   broadcasting), addmm, baddbmm, convolution (stride, padding, dilation, groups, transposed
///   with output_padding; batched inputs, as aten.convolution requires);
/// - _native_batch_norm_legit_no_training (output, and empty save_mean/save_invstd of shape [0])
///   and native_layer_norm (output, mean, rstd of shape [*, 1, ...]), both tuples of 3 in the
///   input's dtype;
/// - the default IR's scaled_dot_product_attention (query's dimension order where torch's CPU
///   dispatch takes the fused kernel, contiguous on the math path), layer_norm, batch_norm,
///   dropout (train=False: `self` itself), cumsum/cumprod (integral -> int64; dtype), gather,
///   adaptive_avg_pool2d, max_pool2d, max_pool2d_with_indices, avg_pool2d (kernel, stride,
///   padding, dilation, ceil_mode; a channels-last input gives channels-last outputs);
/// - split.Tensor, split_with_sizes, chunk, unbind (lists of views with their offsets),
///   unflatten, expand_as, type_as, repeat, repeat_interleave.self_int, flip, roll, tril, triu,
///   square, __and__/__or__/__xor__, constant_pad_nd, pad, upsample_nearest2d and
///   upsample_bilinear2d (.vec and .default), scatter (.src/.value), scatter_add,
///   scatter_reduce, index_add, masked_fill, index.Tensor (integer indices, adjacent or not;
///   a boolean mask has a data-dependent shape and is refused);
/// - native_batch_norm, _native_batch_norm_legit (.default/.no_stats),
///   _native_batch_norm_legit_functional (save_mean/save_invstd [C] when training, else [0];
///   the new running statistics), native_group_norm, group_norm, native_dropout (output and
///   bool mask);
/// - var, std, var_mean, std_mean (complex -> real), prod (integral -> int64), argmax, argmin,
///   linalg_vector_norm, topk, sort, max/min (.dim: values and int64 indices; .default; .other);
/// - as_strided, diagonal (views), empty_strided, fill, _adaptive_avg_pool2d,
///   reflection_pad1d/2d/3d, replication_pad1d/2d/3d;
/// - avg_pool3d and _adaptive_avg_pool3d (contiguous), max_pool3d_with_indices (a
///   channels_last_3d input gives channels_last_3d outputs), pixel_shuffle, pixel_unshuffle (a
///   channels-last input stays channels-last), logsumexp (integral -> float32), cummax/cummin
///   (values and int64 indices), masked_scatter (self and mask broadcast);
/// - _assert_scalar, _assert_async, sym_constrain_range(_for_size), _assert_tensor_metadata:
///   None;
/// - sum.dim_IntList/sum.default (bool and integer inputs -> int64), mean.dim/mean.default (an
///   integral input without dtype is an error, as in torch), amax, amin: dims negative, None or
///   empty (all), keepdim, dtype;
/// - softmax.int, log_softmax.int (dtype), _softmax, _log_softmax (half_to_float turns float16
///   and bfloat16 into float32);
/// - _to_copy, to.dtype, to.dtype_layout, to.device (dtype, device, memory_format; without a
///   change and copy=False `to` returns `self`'s metadata);
/// - full (dtype from the fill value: bool, int64 or float32), zeros, ones, empty.memory_format
///   (channels_last, channels_last_3d), zeros_like, ones_like, empty_like, full_like, arange
///   (.default/.start/.start_step; int64 unless a bound or the step is a float), scalar_tensor
///   (float32 by default), new_ones, new_zeros, new_empty, new_full (self's dtype and device
///   unless given);
/// - quantized_decomposed.quantize_per_tensor (.default/.tensor/.tensor2; `dtype`) and
///   quantized_decomposed.dequantize_per_tensor (`out_dtype`, default float32);
/// - operator.getitem of a node whose `meta().val` is a tuple: that element (negative indices
///   count from the end);
/// - SymInt producers: sym_size.int, sym_stride.int, sym_numel, sym_storage_offset (a SymInt
///   value); operator.add/sub/mul/floordiv/mod/neg on SymInts and ints (a SymInt: `//` is
///   FloorDiv, `%` Mod when both sides are known non-negative, else PythonMod) and
///   operator.eq/ne/lt/le/gt/ge (a SymBool, folded only when the symbols' assumptions decide it,
///   as torch does: `s0 >= 2` stays symbolic, `s0 > 0` is true); torch.sym_min/sym_max of ints
///   (Min/Max by the assumptions only); operator.and_/or_ and torch.sym_not of SymBools
///   (And/Or/Not);
/// - SymFloat arithmetic: operator.add/sub/mul/neg with a float or SymFloat operand and
///   operator.truediv (a SymFloat: an int operand as ToFloat, `/` IntTrueDiv of two ints, else
///   FloatTrueDiv), torch.sym_float (ToFloat), math.trunc/floor/ceil (a SymInt: TruncToInt,
///   FloorToInt, CeilToInt), as the run_decompositions() form of F.interpolate computes sizes.
///
/// Strides (all checked against torch 2.13 by tests/json/test_infer_meta.cpp):
/// - exact for views (permute, transpose, t, expand, squeeze, unsqueeze, select, slice, narrow,
/// view,
///   _unsafe_view, alias, detach, and reshape/flatten when torch can view; their storage offset
///   is the input's plus the view's offset), for in-place ops (`self`'s), for elementwise ops
///   (TensorIterator's rule: the fast paths for same-shape contiguous / channels-last / dense
///   inputs, else the inputs' stride order), for clone/_to_copy/to/index_copy/index_put/copy/
///   slice_scatter/select_scatter/*_like/batch norm output (empty_like's preserve_format: a dense
///   input's strides, else the dense strides of its dimension order), for contiguous and
///   factories (contiguous or channels-last strides);
/// - contiguous strides for everything else (cat, stack, matmul family, convolution, reductions,
///   softmax, layer norm, index_select, embedding), which is what torch reports for contiguous
///   inputs; torch may report another layout for channels-last inputs of cat and convolution.
///
/// Symbolic sizes (SymExpr) are computed with as sym::Expr, in the printed form of the file
/// (MetaContext::form; torch 2.13's srepr) with the hint evaluated from the symbols' hints:
/// contiguous strides as torch writes them (products of Max(size, 1) under the range
/// constraints: `4*s0`), numel, broadcasting (equal expressions; a size known to be 1; two
/// sizes not known to be 1 must be equal, the first is kept, as torch's infer_size does),
/// view/reshape/flatten (-1 is numel // the other sizes; computeStride's decisions taken as
/// torch's guards take them: by the range constraints, else by the hints), cat, stack, expand,
/// slice, narrow and select (torch's FakeTensor clamping of start/end), the matmul family,
/// reductions, softmax, layer norm, and arange with a symbolic bound ((end - start + step - sgn) //
/// step). Elementwise ops, clone and the `*_like` factories of tensors with symbolic sizes get
/// contiguous strides. Convolution and channels-last formats still need concrete sizes.
///
/// Errors: value_error, always starting with "Cannot infer the metadata of node '<name>'
/// (<target>): " followed by the reason. It is an unsupported_meta_error (a value_error) when
/// epgraph cannot compute the value though the node may be right: no rule, an input without a
/// value, a symbolic size or expression the rule cannot compute with. Any other value_error
/// means the op refuses its arguments as torch's meta function would (the program is wrong):
/// - "epgraph has no shape rule for it; set meta().val yourself" for any other op (also
///   call_method/call_module/placeholder/get_attr/output nodes, with the op code in
///   parentheses);
/// - "argument 'self' (node 'x') has no tensor metadata: its meta().val is unset" (or "None",
///   "a SymInt", ...) when a tensor argument has no tensor value; "argument 'self' is not a
///   node" when it is not a node;
/// - "shapes [2, 3] and [4] do not broadcast";
/// - "shapes [s0, 8] and [3, 8] do not broadcast (their sizes s0 and 3 differ under the symbols'
///   ranges or hints)";
/// - "argument 'input' dimension 2 is the symbolic size s0, which this op must compute with;
///   epgraph only computes with concrete sizes" for the ops above that still need concrete
///   sizes (and similar for symbolic integer arguments such as a dim);
/// - "cannot read the symbolic expression '<text>': ..." (sym::parse) for a size that is not an
///   expression torch writes; "integer overflow in a symbolic expression" and other errors of the
///   symbolic arithmetic;
/// - torch's own message for invalid arguments: "Dimension out of range (expected to be in
///   range of [-2, 1], but got 5)", "shape '[5, 5]' is invalid for input of size 24", "mat1 and
///   mat2 shapes cannot be multiplied (2x3 and 4x4)", "select(): index 5 out of range for tensor
///   of size [4, 10] at dimension 0", "The expanded size of the tensor (4) must match the
///   existing size (3) at non-singleton dimension 1.  Target sizes: [4].  Tensor sizes: [3]",
///   "torch does not promote uint16 with float32", ...;
/// - "Node 'add' (torch.ops.aten.add.Tensor) does not match its schema: ..." from
///   normalized_arguments when the arguments do not bind to the schema;
/// - for getitem: "node 'bn' has no tuple metadata: its meta().val is a tensor", "index 3 is out
///   of range for the 3 values of node 'bn'".
/// std::bad_alloc.
///
/// Complexity: O(size of the arguments + rank^2) (rank^2 only for the elementwise stride
/// order), plus a schema lookup O(log registry size); symbolic sizes add the size of their
/// expressions (each distinct expression text is parsed once per MetaContext).
///
/// Mirrors: the meta functions FakeTensor propagation runs when torch.export fills
/// `node.meta["val"]` (torch/_meta_registrations.py, torch/_refs, TensorIterator's
/// compute_types/compute_strides in aten/src/ATen/TensorIterator.cpp, at::native::result_type,
/// at::infer_size, computeStride in aten/src/ATen/TensorUtils.cpp, empty_like's
/// preserve_format).
[[nodiscard]] inline NodeValue infer_meta(const Node& node, const MetaContext& symbols) {
  using detail::infer::Context;
  if (node.op() != OpCode::call_function) {
    throw unsupported_meta_error("Cannot infer the metadata of node '" + std::string(node.name()) +
                                 "' (" + std::string(op_name(node.op())) + " " +
                                 std::string(node.target()) +
                                 "): epgraph has no shape rule for it; set meta().val yourself");
  }
  const std::string_view target = node.target();
  const Context bare(node, nullptr, symbols);
  if (target == "operator.getitem" || target == "_operator.getitem") {
    return detail::infer::rule_getitem(bare);
  }
  if (const std::string_view fn = detail::infer::python_operator(target); !fn.empty()) {
    return detail::infer::guarded(bare, [&] { return detail::infer::rule_operator(bare, fn); });
  }
  if (const std::string_view fn = detail::infer::python_sym_function(target); !fn.empty()) {
    return detail::infer::guarded(bare, [&] { return detail::infer::rule_sym_function(bare, fn); });
  }
  if (const std::string_view fn = detail::infer::python_number_function(target); !fn.empty()) {
    return detail::infer::guarded(bare,
                                  [&] { return detail::infer::rule_number_function(bare, fn); });
  }
  const auto [op_key, overload] = detail::infer::split_target(target);
  const std::string_view op = std::string_view(op_key).substr(op_key.find('.') + 1);
  // `add_`, `index_copy_`: in-place variants (not dunder names such as `__and__`)
  const bool in_place = op.size() > 1 && op.back() == '_' && op.substr(0, 2) != "__";
  const FunctionSchema* schema = schema_of(node);
  if (schema == nullptr && op_key.substr(0, 21) == "quantized_decomposed.") {
    schema = detail::infer::builtin_schema("quantized_decomposed::" + std::string(op) +
                                           (overload == "default" ? "" : "." + overload));
  }
  const auto& table = detail::infer::rule_table();
  const auto it = table.find(op_key);
  const bool writes_self = schema != nullptr && !schema->arguments.empty() &&
                           schema->arguments[0].type.is_write() && schema->returns.size() == 1 &&
                           schema->returns[0].type.alias == schema->arguments[0].type.alias;
  if (op_key.empty() || schema == nullptr || (in_place ? !writes_self : it == table.end())) {
    bare.cannot("epgraph has no shape rule for it; set meta().val yourself");
  }
  if (schema->argument_index("out") >= 0) {
    bare.cannot(
        "epgraph has no shape rule for it (out= variants are not covered); set meta().val "
        "yourself");
  }
  NormalizedArguments args = [&] {
    try {
      return NormalizedArguments(*schema, node.args(), node.kwargs());
    } catch (const value_error& e) {
      throw value_error("Node '" + std::string(node.name()) + "' (" + std::string(target) +
                        ") does not match its schema: " + e.what());
    }
  }();
  const Context ctx(node, &args, symbols);
  if (in_place) {
    TensorMeta out = ctx.tensor(schema->arguments[0].name);
    out.requires_grad = false;
    return out;
  }
  return detail::infer::guarded(ctx, [&] { return it->second(ctx, op); });
}

/// infer_meta(node, symbols) with a context that knows no range constraints and learns the
/// symbols' hints from this node's arguments only.
[[nodiscard]] inline NodeValue infer_meta(const Node& node) {
  const MetaContext symbols;
  return infer_meta(node, symbols);
}

/// Sets `node.meta().val` to infer_meta(node, symbols) and returns it.
///
/// Arguments: `node`, see infer_meta. Returns a reference to the node's `meta().val`.
/// Errors: what infer_meta throws, and std::bad_alloc; the node is unchanged then (strong
/// guarantee: the value is computed before anything is written).
/// Complexity: infer_meta's, plus O(size of the value) to store it.
/// Mirrors: what FakeTensor propagation does to `node.meta["val"]` in torch.export (e.g.
/// `node.meta["val"] = fake_result`) for a node a pass inserted.
inline NodeValue& set_inferred_meta(Node& node, const MetaContext& symbols) {
  NodeValue v = infer_meta(node, symbols);
  NodeMeta& meta = node.mutable_meta();  // may allocate; nothing is changed when it throws
  meta.val = std::move(v);               // noexcept move
  return meta.val;
}
/// set_inferred_meta(node, symbols) with infer_meta(node)'s context.
inline NodeValue& set_inferred_meta(Node& node) {
  NodeValue v = infer_meta(node);
  NodeMeta& meta = node.mutable_meta();  // may allocate; nothing is changed when it throws
  meta.val = std::move(v);               // noexcept move
  return meta.val;
}

}  // namespace epgraph
