#!/usr/bin/env python3
# Writes tests/data/infer_meta_cases.json: the metadata torch 2.13 computes for the ops
# epgraph::infer_meta (include/epgraph/passes/infer_meta.hpp) knows, so tests/json/test_infer_meta.cpp can
# compare epgraph's rules with torch's on every case.
# SPDX-License-Identifier: BSD-3-Clause
"""Usage: python3 tools/gen_infer_meta_cases.py [OUTPUT]   (default tests/data/infer_meta_cases.json)

Every case is run through torch's FakeTensorMode (the machinery torch.export uses to fill
``node.meta["val"]``): the inputs are fake tensors made with ``torch.empty_strided`` and the op is
called as ``torch.ops.<ns>.<op>.<overload>``. No expected value is written by hand.

JSON format (a list of cases):

    {"name": "add_broadcast",                      # unique, for test output
     "target": "torch.ops.aten.add.Tensor",         # the FX target
     "args": [ARG, ...], "kwargs": {"name": ARG},   # the call, as an FX node holds it
     "strides": "exact" | "contiguous",             # what epgraph claims about the strides
     "out": OUT}

    ARG = {"tensor": META} | {"int": 1} | {"float": 1.5} | {"float": "inf"} | {"bool": true}
        | {"none": null} | {"dtype": 7} | {"device": "cpu"} | {"layout": 7}
        | {"memory_format": 1} | {"str": "tanh"} | {"list": [ARG, ...]}
    META = {"dtype": 7, "sizes": [2, 3], "strides": [3, 1], "storage_offset": 0}
    OUT = META | {"tuple": [OUT, ...]}

dtype, layout and memory_format are the numeric codes of torch.export's serialization schema
(epgraph::dtype, epgraph::Layout, epgraph::MemoryFormat). "strides": "exact" means the test
compares strides and storage offset with torch's; "contiguous" means epgraph documents that it
reports contiguous strides for that op/input (the test then checks exactly that).
"""

from __future__ import annotations

import json
import math
import os
import random
import sys
from typing import Any

import torch
import torch.ao.quantization.fx._decomposed  # noqa: F401 - registers quantized_decomposed ops
from torch._export.serde.serialize import _TORCH_TO_SERIALIZE_DTYPE
from torch._dispatch.python import enable_python_dispatcher
from torch._subclasses.fake_tensor import FakeTensorMode

TORCH_VERSION = "2.13.0"

DT = {k: v.value for k, v in _TORCH_TO_SERIALIZE_DTYPE.items()}
LAYOUT = {torch.strided: 7}
MEMORY_FORMAT = {torch.contiguous_format: 1, torch.channels_last: 2,
                 torch.channels_last_3d: 3, torch.preserve_format: 4}

f32, f16, bf16, f64 = torch.float32, torch.float16, torch.bfloat16, torch.float64
i64, i32, i16, i8, u8, b = torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8, torch.bool
c64, c128 = torch.complex64, torch.complex128


class T:
    """A tensor input: dtype, sizes and (default contiguous) strides and storage offset."""

    def __init__(self, dtype: torch.dtype, sizes, strides=None, offset: int = 0) -> None:
        self.dtype = dtype
        self.sizes = list(sizes)
        if strides is None:
            strides, acc = [], 1
            for s in reversed(self.sizes):
                strides.insert(0, acc)
                acc *= max(s, 1)
        self.strides = list(strides)
        self.offset = offset

    def make(self) -> torch.Tensor:
        need = self.offset + 1 + sum((s - 1) * st for s, st in zip(self.sizes, self.strides)
                                     if s > 0)
        base = torch.empty(max(need, 1), dtype=self.dtype)
        return base.as_strided(self.sizes, self.strides, self.offset)


def meta_of(t: torch.Tensor) -> dict:
    return {"dtype": DT[t.dtype], "sizes": list(t.shape), "strides": list(t.stride()),
            "storage_offset": int(t.storage_offset())}


def encode_arg(a: Any) -> dict:
    if isinstance(a, T):
        return {"tensor": {"dtype": DT[a.dtype], "sizes": a.sizes, "strides": a.strides,
                           "storage_offset": a.offset}}
    if a is None:
        return {"none": None}
    if isinstance(a, bool):
        return {"bool": a}
    if isinstance(a, int):
        return {"int": a}
    if isinstance(a, float):
        if math.isinf(a):
            return {"float": "inf" if a > 0 else "-inf"}
        return {"float": a}
    if isinstance(a, torch.dtype):
        return {"dtype": DT[a]}
    if isinstance(a, torch.device):
        return {"device": str(a)}
    if isinstance(a, torch.layout):
        return {"layout": LAYOUT[a]}
    if isinstance(a, torch.memory_format):
        return {"memory_format": MEMORY_FORMAT[a]}
    if isinstance(a, str):
        return {"str": a}
    if isinstance(a, (list, tuple)):
        return {"list": [encode_arg(x) for x in a]}
    raise TypeError(f"cannot encode {a!r}")


def materialize(a: Any) -> Any:
    if isinstance(a, T):
        return a.make()
    if isinstance(a, list):
        return [materialize(x) for x in a]
    if isinstance(a, tuple):
        return tuple(materialize(x) for x in a)
    return a


def encode_out(v: Any) -> dict:
    if isinstance(v, torch.Tensor):
        return meta_of(v)
    if isinstance(v, (list, tuple)):
        return {"tuple": [encode_out(x) for x in v]}
    if v is None:  # an output the op does not compute (a backward op's output_mask)
        return {"none": None}
    raise TypeError(f"unexpected output {v!r}")


def resolve(target: str):
    if target.startswith("operator."):
        import operator
        return getattr(operator, target[len("operator."):])
    assert target.startswith("torch.ops.")
    ns, op, overload = target[len("torch.ops."):].split(".")
    return getattr(getattr(getattr(torch.ops, ns), op), overload)


CASES: list[tuple] = []  # (name, target, args, kwargs, strides)


def case(name: str, target: str, *args, strides: str = "exact", **kwargs) -> None:
    CASES.append((name, target, list(args), kwargs, strides))


def permuted_t(rng: random.Random, sizes: list) -> T:
    """A dense float32 input whose dimensions are stored in a random order."""
    order = list(range(len(sizes)))
    rng.shuffle(order)
    strides, acc = [0] * len(sizes), 1
    for d in reversed(order):
        strides[d] = acc
        acc *= max(sizes[d], 1)
    return T(f32, sizes, strides)


def define_cases() -> None:
    CASES.clear()
    A = "torch.ops.aten."
    # --- unary elementwise ---------------------------------------------------------------------
    for op in ["neg", "abs", "exp", "log", "sqrt", "rsqrt", "relu", "sigmoid", "tanh", "gelu",
               "silu", "sin", "cos", "reciprocal", "clone", "alias", "detach"]:
        case(f"{op}_f32", A + op + ".default", T(f32, [2, 3]))
    for op in ["neg", "abs", "exp", "sqrt", "sigmoid", "relu", "clone", "reciprocal"]:
        case(f"{op}_i64", A + op + ".default", T(i64, [4]))
    case("exp_bool", A + "exp.default", T(b, [2, 2]))
    case("sin_i32_zero_dim", A + "sin.default", T(i32, []))
    case("abs_c64", A + "abs.default", T(c64, [3]))
    case("angle_c128_transposed", A + "angle.default", T(c128, [3, 2], [1, 3]))
    case("angle_f16", A + "angle.default", T(f16, [2, 3]))
    case("angle_i64", A + "angle.default", T(i64, [4]))
    case("angle_bool", A + "angle.default", T(b, [2]))
    case("neg_f16_zero_dim", A + "neg.default", T(f16, []))
    case("gelu_tanh_bf16", A + "gelu.default", T(bf16, [2, 5]), approximate="tanh")
    case("exp_transposed_input", A + "exp.default", T(f32, [3, 2], [1, 3]))
    case("clone_transposed_input", A + "clone.default", T(f32, [3, 2], [1, 3]))
    case("clone_contiguous_fmt", A + "clone.default", T(f32, [3, 2], [1, 3]),
         memory_format=torch.contiguous_format)
    case("detach_strided", A + "detach.default", T(f32, [2, 3], [6, 2], 1))
    case("relu_inplace", A + "relu_.default", T(f32, [2, 3]))
    case("sigmoid_inplace_strided", A + "sigmoid_.default", T(f32, [3, 2], [1, 3]))
    case("hardtanh", A + "hardtanh.default", T(f32, [2, 3]), -1.0, 1.0)
    # --- binary elementwise: broadcasting and type promotion ------------------------------------
    case("add_same", A + "add.Tensor", T(f32, [2, 3]), T(f32, [2, 3]))
    case("add_broadcast", A + "add.Tensor", T(f32, [2, 1, 3]), T(f32, [4, 1]))
    case("add_broadcast_rank", A + "add.Tensor", T(f32, [5, 2, 3]), T(f32, [3]))
    case("add_alpha", A + "add.Tensor", T(f32, [2, 3]), T(f32, [2, 3]), alpha=2)
    case("add_int_float", A + "add.Tensor", T(i64, [2, 3]), T(f32, [2, 3]))
    case("add_int_zero_dim_float", A + "add.Tensor", T(i32, [2, 3]), T(f64, []))
    case("add_f16_zero_dim_f32", A + "add.Tensor", T(f16, [2, 3]), T(f32, []))
    case("add_zero_dim_both", A + "add.Tensor", T(i32, []), T(i64, []))
    case("add_zero_dim_dim_i8", A + "add.Tensor", T(i64, []), T(i8, [3]))
    case("add_u8_i8", A + "add.Tensor", T(u8, [3]), T(i8, [3]))
    case("add_bool_bool", A + "add.Tensor", T(b, [3]), T(b, [3]))
    case("add_f16_bf16", A + "add.Tensor", T(f16, [3]), T(bf16, [3]))
    case("add_c64_f64", A + "add.Tensor", T(c64, [3]), T(f64, [3]))
    case("add_scalar_int_on_int", A + "add.Scalar", T(i32, [2]), 3)
    case("add_scalar_float_on_int", A + "add.Scalar", T(i32, [2]), 2.5)
    case("add_scalar_float_on_f16", A + "add.Scalar", T(f16, [2]), 2.5)
    case("add_scalar_bool_on_bool", A + "add.Scalar", T(b, [2]), True)
    case("add_scalar_int_on_bool", A + "add.Scalar", T(b, [2]), 1)
    case("add_tensor_with_python_float", A + "add.Tensor", T(i64, [2, 2]), 1.5)
    case("add_empty_broadcast", A + "add.Tensor", T(f32, [0, 3]), T(f32, [1, 3]))
    case("add_inplace", A + "add_.Tensor", T(f32, [2, 3]), T(f32, [3]))
    case("add_inplace_scalar_strided", A + "add_.Scalar", T(f32, [3, 2], [1, 3]), 1.0)
    case("sub", A + "sub.Tensor", T(f32, [4, 1]), T(f32, [1, 5]))
    case("sub_scalar", A + "sub.Scalar", T(i64, [3]), 2)
    case("mul_bool_int", A + "mul.Tensor", T(b, [3]), T(i16, [3]))
    case("mul_scalar_float_int", A + "mul.Scalar", T(u8, [2, 2]), 0.5)
    case("mul_inplace", A + "mul_.Tensor", T(f32, [2, 3]), T(f32, []))
    case("div_float", A + "div.Tensor", T(f32, [2, 3]), T(f32, [3]))
    case("div_int_int", A + "div.Tensor", T(i64, [2, 3]), T(i64, [3]))
    case("div_bool", A + "div.Tensor", T(b, [2]), T(b, [2]))
    case("div_int_scalar", A + "div.Scalar", T(i32, [2]), 2)
    case("div_f64_scalar", A + "div.Scalar", T(f64, [2]), 2)
    case("div_mode_trunc_int", A + "div.Tensor_mode", T(i64, [2, 3]), T(i64, [3]),
         rounding_mode="trunc")
    case("div_mode_floor_int32", A + "div.Tensor_mode", T(i32, [4]), T(i32, [4]),
         rounding_mode="floor")
    case("div_mode_none_int", A + "div.Tensor_mode", T(i64, [4]), T(i64, [4]),
         rounding_mode=None)
    case("div_scalar_mode_floor", A + "div.Scalar_mode", T(i64, [4]), 3, rounding_mode="floor")
    case("pow_tensor_scalar_int", A + "pow.Tensor_Scalar", T(i64, [3]), 2)
    case("pow_tensor_scalar_float", A + "pow.Tensor_Scalar", T(i64, [3]), 0.5)
    case("pow_tensor_tensor", A + "pow.Tensor_Tensor", T(f32, [2, 3]), T(f64, [3]))
    case("pow_scalar", A + "pow.Scalar", 2, T(i32, [3]))
    case("pow_scalar_float", A + "pow.Scalar", 2.0, T(i32, [3]))
    case("maximum", A + "maximum.default", T(f32, [2, 1]), T(i64, [3]))
    case("minimum_bool", A + "minimum.default", T(b, [2]), T(b, [2]))
    case("clamp_scalar", A + "clamp.default", T(f32, [2, 3]), 0.0, 6.0)
    case("clamp_int_float_min", A + "clamp.default", T(i64, [3]), 0.5)
    case("clamp_int_max_only", A + "clamp.default", T(i64, [3]), None, 5)
    case("clamp_tensor", A + "clamp.Tensor", T(f32, [2, 3]), T(f32, [3]), T(f32, [2, 1]))
    case("clamp_min", A + "clamp_min.default", T(f16, [4]), 0.0)
    case("clamp_max", A + "clamp_max.default", T(i32, [4]), 1)
    case("clamp_min_tensor", A + "clamp_min.Tensor", T(f32, [4]), T(f32, [2, 1]))
    case("addcmul", A + "addcmul.default", T(f32, [2, 3]), T(f32, [3]), T(f32, [2, 1]))
    case("addcmul_promote", A + "addcmul.default", T(f16, [3]), T(f32, [3]), T(f32, [2, 3]),
         value=0.5)
    case("addcmul_int", A + "addcmul.default", T(i64, [3]), T(i64, [3]), T(i32, [3]), value=2)
    case("addcdiv", A + "addcdiv.default", T(f32, [4, 1]), T(f32, [3]), T(f32, [4, 3]),
         value=0.25)
    case("where_self", A + "where.self", T(b, [2, 1]), T(f32, [3]), T(f32, [2, 3]))
    case("where_promote", A + "where.self", T(b, [3]), T(i64, [3]), T(f16, [3]))
    case("where_zero_dim_other", A + "where.self", T(b, [2, 3]), T(f16, [2, 3]), T(f32, []))
    case("where_scalar_other", A + "where.ScalarOther", T(b, [3]), T(i32, [3]), 0.0)
    case("where_scalar", A + "where.Scalar", T(b, [3]), 1, 0)
    # non-contiguous inputs: TensorIterator's stride order
    case("add_both_transposed", A + "add.Tensor", T(f32, [2, 3], [1, 2]), T(f32, [2, 3], [1, 2]))
    case("add_transposed_contiguous", A + "add.Tensor", T(f32, [2, 3], [1, 2]), T(f32, [2, 3]))
    case("add_contiguous_transposed", A + "add.Tensor", T(f32, [2, 3]), T(f32, [2, 3], [1, 2]))
    case("add_transposed_zero_dim", A + "add.Tensor", T(f32, [4, 3], [1, 4]), T(f32, []))
    case("add_transposed_broadcast", A + "add.Tensor", T(f32, [4, 3], [1, 4]), T(f32, [3]))
    case("add_3d_permuted", A + "add.Tensor", T(f32, [2, 3, 4], [1, 8, 2]), T(f32, [3, 1]))
    # a dense layout whose size-1 dimension has an odd stride: eager's unary fast path keeps
    # [1, 100, 3], FakeTensorMode recomputes [1, 12, 3] for every elementwise op; clone and
    # _to_copy keep it
    odd = T(f32, [3, 1, 4], [1, 100, 3])
    case("relu_dense_size_one_stride", A + "relu.default", odd)
    case("exp_dense_size_one_stride", A + "exp.default", odd)
    case("add_dense_size_one_stride", A + "add.Tensor", odd, odd)
    case("mul_scalar_dense_size_one_stride", A + "mul.Tensor", odd, 2.0)
    case("clone_dense_size_one_stride", A + "clone.default", odd)
    case("to_copy_dense_size_one_stride", A + "_to_copy.default", odd, dtype=f16)
    case("mul_channels_last", A + "mul.Tensor", T(f32, [2, 3, 4, 5], [60, 1, 15, 3]),
         T(f32, [2, 3, 4, 5], [60, 1, 15, 3]))
    case("mul_channels_last_broadcast", A + "mul.Tensor", T(f32, [2, 3, 4, 5], [60, 1, 15, 3]),
         T(f32, [3, 1, 1]))
    case("relu_channels_last", A + "relu.default", T(f16, [2, 3, 4, 5], [60, 1, 15, 3]))
    case("exp_sliced", A + "exp.default", T(f32, [2, 3], [6, 2]))
    case("exp_sliced_transposed", A + "exp.default", T(f32, [3, 2], [2, 8]))
    case("clone_sliced", A + "clone.default", T(f32, [2, 3], [6, 2]))
    case("clone_sliced_transposed", A + "clone.default", T(f32, [3, 2], [2, 8]))
    case("where_transposed", A + "where.self", T(b, [2, 3]), T(f32, [2, 3], [1, 2]),
         T(f32, [2, 3], [1, 2]))
    case("rsub", A + "rsub.Scalar", T(i32, [3]), 2.0)
    case("floor_divide", A + "floor_divide.default", T(i64, [3]), T(i32, [3]))
    case("remainder", A + "remainder.Scalar", T(f16, [3]), 2)
    case("bitwise_and", A + "bitwise_and.Tensor", T(u8, [3]), T(i8, [3]))
    case("atan2_int", A + "atan2.default", T(i64, [3]), T(i32, [3]))
    case("isnan", A + "isnan.default", T(f32, [2, 2]))
    case("pow_bool", A + "pow.Tensor_Scalar", T(b, [3]), 2)
    # comparisons and logical ops
    for op in ["eq", "ne", "lt", "le", "gt", "ge"]:
        case(f"{op}_tensor", A + op + ".Tensor", T(f32, [2, 3]), T(i64, [3]))
        case(f"{op}_scalar", A + op + ".Scalar", T(i32, [4]), 1.5)
    case("logical_and", A + "logical_and.default", T(f32, [2, 1]), T(i64, [3]))
    case("logical_or", A + "logical_or.default", T(b, [2]), T(b, [2]))
    case("logical_xor", A + "logical_xor.default", T(i8, []), T(b, [2]))
    case("logical_not", A + "logical_not.default", T(f32, [2, 3]))
    # --- views ---------------------------------------------------------------------------------
    case("view", A + "view.default", T(f32, [2, 3, 4]), [6, 4])
    case("view_minus_one", A + "view.default", T(f32, [2, 3, 4]), [-1, 2])
    case("view_to_scalar", A + "view.default", T(f32, [1, 1]), [])
    case("view_strided_input", A + "view.default", T(f32, [4, 6], [12, 2]), [2, 2, 6])
    case("view_transposed_input", A + "view.default", T(f32, [3, 4, 5], [5, 15, 1]), [3, 4, 5, 1])
    case("unsafe_view", A + "_unsafe_view.default", T(f32, [2, 3, 4]), [2, 12])
    case("reshape", A + "reshape.default", T(f32, [2, 3, 4]), [4, -1])
    case("reshape_zero_numel", A + "reshape.default", T(f32, [0, 3]), [3, 0])
    case("reshape_noncontig", A + "reshape.default", T(f32, [3, 4], [1, 3]), [12])
    case("permute", A + "permute.default", T(f32, [2, 3, 4]), [2, 0, 1])
    case("permute_negative", A + "permute.default", T(f32, [2, 3, 4]), [-1, -3, -2])
    case("permute_strided", A + "permute.default", T(f32, [2, 3], [1, 2], 3), [1, 0])
    case("transpose", A + "transpose.int", T(f32, [2, 3, 4]), 0, 2)
    case("transpose_negative", A + "transpose.int", T(f32, [2, 3, 4]), -1, -2)
    case("t_2d", A + "t.default", T(f32, [2, 3]))
    case("t_1d", A + "t.default", T(f32, [5]))
    case("unsqueeze_front", A + "unsqueeze.default", T(f32, [2, 3]), 0)
    case("unsqueeze_end", A + "unsqueeze.default", T(f32, [2, 3]), 2)
    case("unsqueeze_negative", A + "unsqueeze.default", T(f32, [2, 3]), -1)
    case("unsqueeze_strided", A + "unsqueeze.default", T(f32, [2, 3], [1, 2]), 1)
    case("unsqueeze_zero_dim", A + "unsqueeze.default", T(f32, []), 0)
    case("squeeze_dim", A + "squeeze.dim", T(f32, [2, 1, 3]), 1)
    case("squeeze_dim_noop", A + "squeeze.dim", T(f32, [2, 1, 3]), 0)
    case("squeeze_dims", A + "squeeze.dims", T(f32, [1, 2, 1, 3, 1]), [0, -1])
    case("squeeze_default", A + "squeeze.default", T(f32, [1, 2, 1, 3, 1]))
    case("expand", A + "expand.default", T(f32, [3, 1]), [2, 3, 4])
    case("expand_keep", A + "expand.default", T(f32, [3, 1]), [-1, 5])
    case("expand_zero_dim", A + "expand.default", T(f32, []), [2, 2])
    # new leading dimensions of size 1: torch.export runs torch._refs.expand (see run_case)
    case("expand_new_size1_lead", A + "expand.default", T(f32, [8]), [1, 9, 8])
    case("expand_new_size1_lead_keep", A + "expand.default", T(f32, [3, 1]), [1, 2, 3, 4])
    case("expand_new_size1_transposed", A + "expand.default", T(f32, [3, 2], [1, 3]), [2, 1, 3, 2])
    case("expand_new_size1_zero_dim", A + "expand.default", T(f32, []), [1, 1])
    case("expand_new_size1_strided", A + "expand.default", T(f32, [4, 2], [6, 2], 1), [1, 1, 4, 2])
    case("slice", A + "slice.Tensor", T(f32, [4, 10]), 1, 2, 8)
    case("slice_step", A + "slice.Tensor", T(f32, [4, 10]), 1, 1, 10, 3)
    case("slice_negative", A + "slice.Tensor", T(f32, [4, 10]), -1, -3, None)
    case("slice_none", A + "slice.Tensor", T(f32, [4, 10]), 0, None, None)
    case("slice_clamped", A + "slice.Tensor", T(f32, [4, 10]), 0, 1, 100)
    case("slice_empty", A + "slice.Tensor", T(f32, [4, 10]), 1, 8, 2)
    case("slice_huge_end", A + "slice.Tensor", T(f32, [4, 10]), 1, 3, 9223372036854775807)
    case("slice_very_negative", A + "slice.Tensor", T(f32, [4, 10]), 1, -100, 5)
    case("slice_default", A + "slice.Tensor", T(f32, [4, 10]))
    case("slice_strided_input", A + "slice.Tensor", T(f32, [4, 10], [1, 4], 2), 0, 1, 4, 2)
    case("narrow", A + "narrow.default", T(f32, [4, 10]), 1, 2, 5)
    case("narrow_negative_start", A + "narrow.default", T(f32, [4, 10]), 1, -4, 3)
    case("narrow_strided_input", A + "narrow.default", T(f32, [4, 10], [1, 4], 2), 0, 1, 2)
    case("narrow_empty_at_end", A + "narrow.default", T(f32, [4, 10]), -1, 10, 0)
    case("select", A + "select.int", T(f32, [4, 10]), 0, 2)
    case("select_negative", A + "select.int", T(f32, [4, 10]), -1, -1)
    case("select_strided", A + "select.int", T(f32, [3, 4, 5], [20, 1, 4], 7), 1, 3)
    case("flatten_all", A + "flatten.using_ints", T(f32, [2, 3, 4]))
    case("flatten_partial", A + "flatten.using_ints", T(f32, [2, 3, 4, 5]), 1, -2)
    case("flatten_zero_dim", A + "flatten.using_ints", T(f32, []))
    case("contiguous_of_transposed", A + "contiguous.default", T(f32, [3, 2], [1, 3]))
    case("contiguous_already", A + "contiguous.default", T(i64, [3, 2]))
    # --- joining, indexing, scatter ------------------------------------------------------------
    case("cat", A + "cat.default", [T(f32, [2, 3]), T(f32, [4, 3])])
    case("cat_dim1_promote", A + "cat.default", [T(f32, [2, 3]), T(i64, [2, 1]), T(f16, [2, 2])],
         1)
    case("cat_negative_dim", A + "cat.default", [T(f32, [2, 3, 1]), T(f32, [2, 3, 2])], -1)
    case("cat_legacy_empty", A + "cat.default", [T(f32, [0]), T(f32, [2, 3])], 1)
    case("stack", A + "stack.default", [T(f32, [2, 3]), T(f32, [2, 3])])
    case("stack_last", A + "stack.default", [T(f32, [2, 3]), T(f32, [2, 3]), T(f32, [2, 3])], -1)
    case("stack_mid", A + "stack.default", [T(i32, [2, 3]), T(i32, [2, 3])], 1)
    case("index_copy", A + "index_copy.default", T(f32, [1, 8, 16, 4]), 2, T(i64, [1]),
         T(f32, [1, 8, 1, 4]))
    case("index_copy_inplace", A + "index_copy_.default", T(f32, [5, 3]), 0, T(i64, [2]),
         T(f32, [2, 3]))
    case("index_put", A + "index_put.default", T(f32, [5, 3]), [T(i64, [2])], T(f32, [2, 3]))
    case("index_put_accumulate", A + "index_put.default", T(f32, [5, 3]), [None, T(i64, [2])],
         T(f32, []), True)
    case("index_put_inplace", A + "index_put_.default", T(f16, [5, 3]), [T(i64, [2])],
         T(f16, [3]))
    case("copy", A + "copy.default", T(f32, [2, 3]), T(f16, [3]))
    case("copy_inplace", A + "copy_.default", T(f32, [3, 2], [1, 3]), T(f32, [3, 2]))
    case("index_select", A + "index_select.default", T(f32, [5, 3]), 0, T(i64, [4]))
    case("index_select_neg", A + "index_select.default", T(f32, [5, 3, 2]), -2, T(i32, [7]))
    case("index_select_scalar_index", A + "index_select.default", T(f32, [5, 3]), 1,
         T(i64, []))
    case("slice_scatter", A + "slice_scatter.default", T(f32, [4, 10]), T(f32, [4, 3]), 1, 0, 3)
    case("select_scatter", A + "select_scatter.default", T(f32, [4, 10]), T(f32, [10]), 0, 1)
    case("embedding", A + "embedding.default", T(f32, [100, 16]), T(i64, [2, 7]))
    case("embedding_scalar_index", A + "embedding.default", T(bf16, [10, 4]), T(i64, []))
    # --- linear algebra ------------------------------------------------------------------------
    case("linear", A + "linear.default", T(f32, [2, 5, 8]), T(f32, [4, 8]), T(f32, [4]))
    case("linear_no_bias", A + "linear.default", T(f32, [8]), T(f32, [3, 8]))
    case("linear_2d", A + "linear.default", T(f16, [6, 8]), T(f16, [3, 8]), T(f16, [3]))
    case("mm", A + "mm.default", T(f32, [2, 3]), T(f32, [3, 4]))
    case("bmm", A + "bmm.default", T(f32, [5, 2, 3]), T(f32, [5, 3, 4]))
    case("matmul_1d_1d", A + "matmul.default", T(f32, [3]), T(f32, [3]))
    case("matmul_2d_1d", A + "matmul.default", T(f32, [2, 3]), T(f32, [3]))
    case("matmul_1d_2d", A + "matmul.default", T(f32, [3]), T(f32, [3, 4]))
    case("matmul_2d_2d", A + "matmul.default", T(f32, [2, 3]), T(f32, [3, 4]))
    case("matmul_3d_2d", A + "matmul.default", T(f32, [5, 2, 3]), T(f32, [3, 4]))
    case("matmul_3d_1d", A + "matmul.default", T(f32, [5, 2, 3]), T(f32, [3]))
    case("matmul_1d_3d", A + "matmul.default", T(f32, [3]), T(f32, [5, 3, 4]))
    case("matmul_batched_broadcast", A + "matmul.default", T(f32, [2, 1, 4, 3]),
         T(f32, [5, 3, 6]))
    case("matmul_2d_3d", A + "matmul.default", T(f32, [2, 3]), T(f32, [5, 3, 4]))
    case("addmm", A + "addmm.default", T(f32, [4]), T(f32, [2, 3]), T(f32, [3, 4]))
    case("addmm_beta_alpha", A + "addmm.default", T(f32, [2, 4]), T(f32, [2, 3]),
         T(f32, [3, 4]), beta=0.5, alpha=2)
    case("baddbmm", A + "baddbmm.default", T(f32, [1, 2, 4]), T(f32, [5, 2, 3]),
         T(f32, [5, 3, 4]))
    # --- convolution ---------------------------------------------------------------------------
    cv = A + "convolution.default"
    case("conv2d", cv, T(f32, [1, 3, 8, 8]), T(f32, [6, 3, 3, 3]), T(f32, [6]), [1, 1], [0, 0],
         [1, 1], False, [0, 0], 1)
    case("conv2d_stride_pad", cv, T(f32, [2, 4, 9, 7]), T(f32, [8, 4, 3, 2]), None, [2, 1],
         [1, 2], [1, 1], False, [0, 0], 1)
    case("conv2d_dilation_groups", cv, T(f32, [1, 4, 10, 10]), T(f32, [8, 2, 3, 3]), None,
         [1, 1], [2, 2], [2, 2], False, [0, 0], 2)
    case("conv1d", cv, T(f32, [2, 3, 20]), T(f32, [5, 3, 4]), T(f32, [5]), [3], [1], [1], False,
         [0], 1)
    case("conv3d", cv, T(f32, [1, 2, 5, 6, 7]), T(f32, [4, 2, 2, 3, 3]), None, [1, 2, 1],
         [0, 1, 1], [1, 1, 2], False, [0, 0, 0], 1)
    case("conv_transpose2d", cv, T(f32, [1, 4, 5, 5]), T(f32, [4, 3, 3, 3]), T(f32, [3]),
         [2, 2], [1, 1], [1, 1], True, [1, 1], 1)
    case("conv_transpose1d_groups", cv, T(f32, [2, 4, 7]), T(f32, [4, 3, 4]), None, [3], [2],
         [2], True, [1], 2)
    # --- normalization -------------------------------------------------------------------------
    case("batch_norm_no_training", A + "_native_batch_norm_legit_no_training.default",
         T(f32, [2, 3, 4, 4]), T(f32, [3]), T(f32, [3]), T(f32, [3]), T(f32, [3]), 0.1, 1e-5)
    case("batch_norm_no_training_no_affine", A + "_native_batch_norm_legit_no_training.default",
         T(f32, [2, 3, 5]), None, None, T(f32, [3]), T(f32, [3]), 0.1, 1e-5)
    case("batch_norm_no_training_channels_last", A + "_native_batch_norm_legit_no_training.default",
         T(f32, [2, 3, 4, 4], [48, 1, 12, 3]), T(f32, [3]), T(f32, [3]), T(f32, [3]),
         T(f32, [3]), 0.1, 1e-5)
    case("batch_norm_no_training_bf16", A + "_native_batch_norm_legit_no_training.default",
         T(bf16, [2, 3, 4]), T(f32, [3]), T(f32, [3]), T(f32, [3]), T(f32, [3]), 0.1, 1e-5)
    # recurrent layers kept whole in the default IR (.input overloads): output [seq, batch,
    # D*H], transposed for batch_first; hy/cy contiguous
    def rnn_params(gates, inputs, hidden, layers=1, dirs=1, proj=0):
        ps = []
        for layer in range(layers):
            for _ in range(dirs):
                width = inputs if layer == 0 else dirs * (proj or hidden)
                ps += [T(f32, [gates * hidden, width]), T(f32, [gates * hidden, proj or hidden]),
                       T(f32, [gates * hidden]), T(f32, [gates * hidden])]
                if proj:
                    ps.append(T(f32, [proj, hidden]))
        return ps
    case("lstm", A + "lstm.input", T(f32, [5, 2, 4]), [T(f32, [1, 2, 6]), T(f32, [1, 2, 6])],
         rnn_params(4, 4, 6), True, 1, 0.0, False, False, False)
    case("lstm_bidirectional_batch_first", A + "lstm.input", T(f32, [2, 5, 4]),
         [T(f32, [4, 2, 6]), T(f32, [4, 2, 6])], rnn_params(4, 4, 6, 2, 2), True, 2, 0.0,
         False, True, True)
    case("lstm_proj", A + "lstm.input", T(f32, [5, 2, 4]), [T(f32, [1, 2, 3]), T(f32, [1, 2, 6])],
         rnn_params(4, 4, 6, proj=3), True, 1, 0.0, False, False, False)
    case("gru_batch_first", A + "gru.input", T(f32, [2, 5, 4]), T(f32, [1, 2, 6]),
         rnn_params(3, 4, 6), True, 1, 0.0, False, False, True)
    case("rnn_tanh", A + "rnn_tanh.input", T(f32, [5, 2, 4]), T(f32, [1, 2, 6]),
         rnn_params(1, 4, 6), True, 1, 0.0, False, False, False)
    case("rnn_relu_bidirectional_batch_first", A + "rnn_relu.input", T(f32, [2, 5, 4]),
         T(f32, [2, 2, 6]), rnn_params(1, 4, 6, dirs=2), True, 1, 0.0, False, True, True)
    case("layer_norm", A + "native_layer_norm.default", T(f32, [2, 5, 8]), [8], T(f32, [8]),
         T(f32, [8]), 1e-5)
    case("layer_norm_two_dims", A + "native_layer_norm.default", T(f32, [2, 5, 8]), [5, 8], None,
         None, 1e-5)
    case("layer_norm_bf16", A + "native_layer_norm.default", T(bf16, [3, 4]), [4], T(bf16, [4]),
         T(bf16, [4]), 1e-6)
    # --- reductions ----------------------------------------------------------------------------
    case("sum_dim", A + "sum.dim_IntList", T(f32, [2, 3, 4]), [1])
    case("sum_dims_keepdim", A + "sum.dim_IntList", T(f32, [2, 3, 4]), [0, -1], True)
    case("sum_none", A + "sum.dim_IntList", T(f32, [2, 3, 4]), None)
    case("sum_empty_list", A + "sum.dim_IntList", T(f32, [2, 3, 4]), [])
    case("sum_none_keepdim", A + "sum.dim_IntList", T(f32, [2, 3]), None, True)
    case("sum_int", A + "sum.dim_IntList", T(i32, [2, 3]), [1])
    case("sum_bool", A + "sum.dim_IntList", T(b, [2, 3]), [0])
    case("sum_dtype", A + "sum.dim_IntList", T(i32, [2, 3]), [1], dtype=f64)
    case("sum_default", A + "sum.default", T(u8, [2, 3]))
    case("sum_zero_dim", A + "sum.dim_IntList", T(f32, []), [0])
    case("mean_dim", A + "mean.dim", T(f32, [2, 3, 4]), [-1], True)
    case("mean_none", A + "mean.dim", T(f16, [2, 3, 4]), None)
    case("mean_dtype", A + "mean.dim", T(f32, [2, 3]), [0], dtype=f64)
    case("mean_default", A + "mean.default", T(f32, [2, 3]))
    case("amax", A + "amax.default", T(f32, [2, 3, 4]), [1])
    case("amax_keepdim_neg", A + "amax.default", T(i64, [2, 3, 4]), [-1, 0], True)
    case("amax_all", A + "amax.default", T(f32, [2, 3, 4]))
    case("amin", A + "amin.default", T(bf16, [2, 3]), [0], True)
    case("amin_all_keepdim", A + "amin.default", T(f32, [2, 3]), [], True)
    # --- softmax -------------------------------------------------------------------------------
    case("softmax_int", A + "softmax.int", T(f32, [2, 3]), -1)
    case("softmax_dtype", A + "softmax.int", T(f16, [2, 3]), 1, f32)
    case("softmax_private", A + "_softmax.default", T(f32, [2, 3]), 0, False)
    case("softmax_private_half_to_float", A + "_softmax.default", T(f16, [2, 3]), 1, True)
    case("log_softmax_int", A + "log_softmax.int", T(f32, [4, 5]), 1)
    case("log_softmax_private", A + "_log_softmax.default", T(bf16, [4, 5]), -1, False)
    case("softmax_transposed", A + "_softmax.default", T(f32, [3, 2], [1, 3]), 0, False)
    case("cat_channels_last", A + "cat.default", [T(f32, [1, 2, 3, 3], [18, 1, 6, 2]),
                                                  T(f32, [1, 2, 3, 3], [18, 1, 6, 2])], 1,
         strides="contiguous")
    case("sum_transposed", A + "sum.dim_IntList", T(f32, [4, 3, 2], [1, 4, 12]), [1])
    # --- conversions ---------------------------------------------------------------------------
    case("to_copy_dtype", A + "_to_copy.default", T(f32, [2, 3]), dtype=f16)
    case("to_copy_same", A + "_to_copy.default", T(i64, [2, 3]))
    case("to_copy_transposed", A + "_to_copy.default", T(f32, [3, 2], [1, 3]), dtype=f64)
    case("to_copy_contiguous", A + "_to_copy.default", T(f32, [3, 2], [1, 3]),
         memory_format=torch.contiguous_format)
    case("to_copy_device", A + "_to_copy.default", T(f32, [2]), dtype=b,
         device=torch.device("cpu"))
    case("to_dtype", A + "to.dtype", T(f32, [2, 3]), bf16)
    case("to_dtype_same", A + "to.dtype", T(f32, [2, 3]), f32)
    case("to_dtype_layout", A + "to.dtype_layout", T(f32, [2, 3]), dtype=i32,
         layout=torch.strided, device=torch.device("cpu"))
    case("to_device", A + "to.device", T(f32, [2, 3]), torch.device("cpu"), i64)
    case("to_dtype_noop_strided", A + "to.dtype", T(f32, [2, 3], [6, 2], 1), f32)
    case("to_dtype_copy", A + "to.dtype", T(f32, [2, 3]), f32, False, True)
    case("to_dtype_channels_last", A + "to.dtype", T(f32, [1, 2, 3, 4]), f16,
         memory_format=torch.channels_last)
    case("zeros_like_transposed", A + "zeros_like.default", T(f32, [2, 3], [1, 2]))
    case("ones_like_dtype", A + "ones_like.default", T(f32, [2, 3]), dtype=i32)
    case("empty_like_sliced", A + "empty_like.default", T(f32, [2, 3], [6, 2]))
    case("full_like", A + "full_like.default", T(i64, [4]), 1.5)
    case("full_like_contiguous", A + "full_like.default", T(f32, [2, 3], [1, 2]), 0,
         memory_format=torch.contiguous_format)
    # --- factories -----------------------------------------------------------------------------
    case("full_float", A + "full.default", [2, 3], 1.5)
    case("full_int", A + "full.default", [2, 3], 7)
    case("full_bool", A + "full.default", [4], True)
    case("full_dtype", A + "full.default", [2], 0, dtype=f16)
    case("full_scalar", A + "full.default", [], 2.0)
    case("zeros", A + "zeros.default", [2, 3])
    case("zeros_dtype", A + "zeros.default", [4, 0, 2], dtype=i64)
    case("ones", A + "ones.default", [3], dtype=b)
    case("ones_device", A + "ones.default", [1, 2], device=torch.device("cpu"))
    case("empty", A + "empty.memory_format", [2, 3])
    case("empty_channels_last", A + "empty.memory_format", [2, 3, 4, 5], dtype=f16,
         memory_format=torch.channels_last)
    case("empty_channels_last_3d", A + "empty.memory_format", [1, 3, 2, 4, 5],
         memory_format=torch.channels_last_3d)
    case("arange_end_int", A + "arange.default", 10)
    case("arange_end_float", A + "arange.default", 2.5)
    case("arange_end_dtype", A + "arange.default", 5, dtype=f32)
    case("arange_start", A + "arange.start", 2, 9)
    case("arange_start_float", A + "arange.start", 0.5, 3)
    case("arange_step", A + "arange.start_step", 0, 10, 3)
    case("arange_negative_step", A + "arange.start_step", 10, 0, -3)
    case("arange_float_step", A + "arange.start_step", 0, 1, 0.1)
    case("arange_empty", A + "arange.start_step", 5, 5, 1)
    case("scalar_tensor", A + "scalar_tensor.default", 1.5)
    case("scalar_tensor_int", A + "scalar_tensor.default", 3)
    case("scalar_tensor_dtype", A + "scalar_tensor.default", 3, dtype=i64)
    # --- quantized_decomposed ------------------------------------------------------------------
    Q = "torch.ops.quantized_decomposed."
    case("quantize_per_tensor", Q + "quantize_per_tensor.default", T(f32, [2, 3]), 0.1, 3,
         -128, 127, i8)
    case("quantize_per_tensor_u8", Q + "quantize_per_tensor.default", T(f32, [4]), 0.1, 3, 0, 255,
         u8)
    case("quantize_per_tensor_tensor", Q + "quantize_per_tensor.tensor", T(f32, [2, 3]),
         T(f64, []), T(i64, []), -128, 127, i8)
    case("dequantize_per_tensor", Q + "dequantize_per_tensor.default", T(i8, [2, 3]), 0.1, 3,
         -128, 127, i8)
    case("dequantize_per_tensor_out_dtype", Q + "dequantize_per_tensor.default", T(u8, [5]), 0.1,
         3, 0, 255, u8, out_dtype=f16)
    case("dequantize_per_tensor_tensor", Q + "dequantize_per_tensor.tensor", T(i8, [2, 3]),
         T(f64, []), T(i64, []), -128, 127, i8)
    case("dequantize_per_tensor_tensor_out_dtype", Q + "dequantize_per_tensor.tensor",
         T(i8, [2, 3]), T(f64, []), T(i64, []), -128, 127, i8, out_dtype=bf16)
    case("quantize_per_channel", Q + "quantize_per_channel.default", T(f32, [4, 3]),
         T(f64, [4]), T(i64, [4]), 0, -128, 127, i8)
    case("quantize_per_channel_bf16_axis1", Q + "quantize_per_channel.default",
         T(bf16, [2, 3, 4]), T(f32, [3]), T(i32, [3]), 1, 0, 255, u8)
    case("quantize_per_channel_transposed", Q + "quantize_per_channel.default",
         T(f32, [3, 2], [1, 3]), T(f32, [2]), T(i64, [2]), -1, -128, 127, i8)
    case("dequantize_per_channel", Q + "dequantize_per_channel.default", T(i8, [4, 3]),
         T(f32, [4]), T(i64, [4]), 0, -128, 127, i8)
    case("dequantize_per_channel_no_zero_points", Q + "dequantize_per_channel.default",
         T(i8, [2, 3, 4]), T(f32, [3]), None, 1, -127, 127, i8, out_dtype=f16)
    case("dequantize_per_channel_channels_last", Q + "dequantize_per_channel.default",
         T(u8, [2, 3, 4, 5], [60, 1, 15, 3]), T(f32, [3]), T(i64, [3]), 1, 0, 255, u8)
    # --- the type promotion table: add.Tensor over every pair of common dtypes -----------------
    table = [b, u8, i8, i16, i32, i64, f16, bf16, f32, f64, c64, c128]
    for x in table:
        for y in table:
            case(f"promote_{str(x)[6:]}_{str(y)[6:]}", A + "add.Tensor", T(x, [2]), T(y, [2]))

    # --- the default IR's conv2d family and any/all (issue 28) ----------------------------------
    case("conv_transpose2d_default_ir", A + "conv_transpose2d.input", T(f32, [2, 8, 5, 6]),
         T(f32, [8, 4, 2, 3]), T(f32, [4]), [2, 1], [0, 1], [1, 0], 1, [1, 2])
    case("conv_transpose1d_default_ir_groups", A + "conv_transpose1d.default", T(f32, [2, 4, 7]),
         T(f32, [4, 3, 3]), None, [2], [1], [1], 2)
    case("conv_transpose3d_default_ir", A + "conv_transpose3d.input", T(f32, [1, 2, 3, 4, 5]),
         T(f32, [2, 3, 2, 2, 2]))
    case("conv2d_default_ir", A + "conv2d.default", T(f32, [2, 3, 8, 8]), T(f32, [8, 3, 3, 3]),
         T(f32, [8]), strides="contiguous")
    case("conv2d_default_ir_stride_pad", A + "conv2d.default", T(f32, [1, 4, 9, 7]),
         T(f32, [6, 2, 3, 3]), None, [2, 1], [1, 0], [1, 1], 2, strides="contiguous")
    case("conv1d_default_ir", A + "conv1d.default", T(f32, [2, 3, 20]), T(f32, [5, 3, 4]),
         strides="contiguous")
    case("any_dim", A + "any.dim", T(b, [2, 3, 4]), 1)
    case("any_dim_keepdim", A + "any.dim", T(f32, [2, 3]), -1, True)
    case("any_default_uint8", A + "any.default", T(u8, [2, 3]))
    case("all_dims", A + "all.dims", T(i64, [2, 3, 4]), [0, 2])

    # --- attention, normalization, pooling, scans of the default IR (issue 28) ------------------
    # q/k/v as a decoder makes them: [b, s, h, d] viewed as [b, h, s, d] by a transpose
    hv = lambda sizes: T(f32, sizes, [sizes[1] * sizes[2] * sizes[3], sizes[3], sizes[1] * sizes[3], 1])  # noqa: E731,E501
    case("sdpa", A + "scaled_dot_product_attention.default", T(f32, [2, 4, 6, 8]),
         T(f32, [2, 4, 6, 8]), T(f32, [2, 4, 6, 8]))
    case("sdpa_causal_transposed_inputs", A + "scaled_dot_product_attention.default",
         hv([2, 4, 6, 8]), hv([2, 4, 6, 8]), hv([2, 4, 6, 8]), None, 0.0, True)
    case("sdpa_value_dim_mask_scale", A + "scaled_dot_product_attention.default",
         T(f32, [3, 5, 8]), T(f32, [3, 7, 8]), T(f32, [3, 7, 4]), T(b, [5, 7]), scale=0.5)
    case("sdpa_dropout_transposed", A + "scaled_dot_product_attention.default",
         hv([2, 4, 6, 8]), hv([2, 4, 6, 8]), hv([2, 4, 6, 8]), None, 0.1)
    case("sdpa_mask_3d_transposed", A + "scaled_dot_product_attention.default",
         hv([2, 4, 6, 8]), hv([2, 4, 6, 8]), hv([2, 4, 6, 8]), T(b, [4, 6, 6]))
    case("sdpa_mask_4d_transposed", A + "scaled_dot_product_attention.default",
         hv([2, 4, 6, 8]), hv([2, 4, 6, 8]), hv([2, 4, 6, 8]), T(f32, [2, 1, 6, 6]))
    case("sdpa_broadcast_batch", A + "scaled_dot_product_attention.default",
         T(f32, [1, 4, 6, 8]), T(f32, [3, 4, 5, 8]), T(f32, [3, 4, 5, 8]))
    case("sdpa_query_last_stride_2", A + "scaled_dot_product_attention.default",
         T(f32, [2, 4, 6, 8], [384, 96, 16, 2]), hv([2, 4, 6, 8]), hv([2, 4, 6, 8]))
    case("sdpa_head_dims_differ", A + "scaled_dot_product_attention.default", hv([2, 4, 6, 8]),
         hv([2, 4, 5, 8]), T(f32, [2, 4, 5, 3]))
    case("sdpa_empty_sequence", A + "scaled_dot_product_attention.default",
         T(f32, [2, 4, 0, 8], [64, 8, 32, 1]), hv([2, 4, 6, 8]), hv([2, 4, 6, 8]))
    case("sdpa_gqa_transposed", A + "scaled_dot_product_attention.default", hv([2, 4, 6, 8]),
         hv([2, 2, 6, 8]), hv([2, 2, 6, 8]), enable_gqa=True)
    case("sdpa_gqa_math", A + "scaled_dot_product_attention.default", T(f32, [2, 4, 6, 8]),
         T(f32, [2, 2, 6, 8]), T(f32, [2, 2, 6, 8]), None, 0.2, enable_gqa=True)
    case("sdpa_bf16_gqa", A + "scaled_dot_product_attention.default", T(bf16, [1, 8, 4, 16]),
         T(bf16, [1, 2, 4, 16]), T(bf16, [1, 2, 4, 16]), enable_gqa=True)
    case("layer_norm_default_ir", A + "layer_norm.default", T(f32, [2, 5, 8]), [8], T(f32, [8]),
         T(f32, [8]))
    case("layer_norm_default_ir_transposed", A + "layer_norm.default", T(f32, [5, 2, 8], [8, 40, 1]),
         [2, 8])
    case("batch_norm_default_ir", A + "batch_norm.default", T(f32, [2, 3, 4, 4]), T(f32, [3]),
         T(f32, [3]), T(f32, [3]), T(f32, [3]), False, 0.1, 1e-5, False)
    case("batch_norm_default_ir_channels_last", A + "batch_norm.default",
         T(f32, [2, 3, 4, 4], [48, 1, 12, 3]), None, None, T(f32, [3]), T(f32, [3]), False, 0.1,
         1e-5, False)
    case("dropout_eval", A + "dropout.default", T(f32, [4, 6]), 0.1, False)
    case("dropout_eval_transposed", A + "dropout.default", T(f32, [4, 6], [1, 4]), 0.5, False)
    case("dropout_train", A + "dropout.default", T(f32, [4, 6]), 0.1, True)
    case("cumsum", A + "cumsum.default", T(f32, [3, 4]), 1)
    case("cumsum_int_promotes", A + "cumsum.default", T(i32, [5]), 0)
    case("cumsum_bool", A + "cumsum.default", T(b, [2, 3]), -1)
    case("cumsum_dtype", A + "cumsum.default", T(i64, [2, 3]), 0, dtype=f32)
    case("cumsum_transposed", A + "cumsum.default", T(f32, [3, 4], [1, 3]), 0)
    case("cumprod", A + "cumprod.default", T(f16, [2, 3]), 1)
    case("gather", A + "gather.default", T(f32, [4, 5]), 1, T(i64, [4, 2]))
    case("gather_bigger_index", A + "gather.default", T(bf16, [4, 5, 6]), 0, T(i64, [2, 5, 6]))
    case("adaptive_avg_pool2d", A + "adaptive_avg_pool2d.default", T(f32, [2, 8, 7, 7]), [1, 1])
    case("adaptive_avg_pool2d_3d_input", A + "adaptive_avg_pool2d.default", T(f32, [8, 9, 6]),
         [3, 2])
    case("adaptive_avg_pool2d_channels_last", A + "adaptive_avg_pool2d.default",
         T(f32, [2, 8, 7, 7], [392, 1, 56, 8]), [2, 2])
    case("max_pool2d", A + "max_pool2d.default", T(f32, [2, 4, 9, 9]), [3, 3], [2, 2], [1, 1])
    case("max_pool2d_ceil_dilation", A + "max_pool2d.default", T(f32, [1, 2, 10, 7]), [3, 2],
         [2, 2], [1, 0], [2, 1], True)
    case("max_pool2d_with_indices", A + "max_pool2d_with_indices.default", T(f32, [2, 4, 8, 8]),
         [2, 2])
    case("max_pool2d_with_indices_channels_last", A + "max_pool2d_with_indices.default",
         T(f32, [2, 4, 8, 8], [256, 1, 32, 4]), [3, 3], [2, 2], [1, 1])
    case("avg_pool2d", A + "avg_pool2d.default", T(f32, [2, 3, 8, 8]), [2, 2])
    case("avg_pool2d_ceil_pad", A + "avg_pool2d.default", T(f32, [3, 9, 11]), [3, 3], [2, 2],
         [1, 1], True)

    # --- more of the default IR and Core ATen (issue 28) -----------------------------------------
    nd = T(f32, [2, 3], [18, 2])  # a non-dense input: every other element of every other row
    tp = T(f32, [3, 4], [1, 3])   # a transposed (dense, not contiguous) input
    case("copy_non_dense_self", A + "copy.default", nd, T(f32, [2, 3]))
    case("copy_transposed_self", A + "copy.default", tp, T(f32, [3, 4]))
    case("index_copy_non_dense_self", A + "index_copy.default", nd, 0, T(i64, [1]),
         T(f32, [1, 3]))
    case("index_put_non_dense_self", A + "index_put.default", nd, [T(i64, [1])], T(f32, [1, 3]))
    case("slice_scatter_non_dense_self", A + "slice_scatter.default", nd, T(f32, [2, 1]), 1, 0, 1)
    case("select_scatter_transposed_self", A + "select_scatter.default", tp, T(f32, [4]), 0, 1)
    case("split_tensor", A + "split.Tensor", T(f32, [7, 3]), 3)
    case("split_tensor_dim_transposed", A + "split.Tensor", tp, 2, 1)
    case("split_with_sizes", A + "split_with_sizes.default", T(f32, [2, 9]), [2, 3, 4], 1)
    case("split_with_sizes_zero", A + "split_with_sizes.default", T(f32, [5, 2]), [0, 5])
    case("chunk", A + "chunk.default", T(f32, [2, 10]), 3, -1)
    case("chunk_fewer", A + "chunk.default", T(f32, [5]), 4)
    case("unbind", A + "unbind.int", T(f32, [3, 2, 4]), 1)
    case("unbind_transposed", A + "unbind.int", tp)
    case("unflatten", A + "unflatten.int", T(f32, [2, 12, 5]), 1, [3, 4])
    case("unflatten_minus_one_transposed", A + "unflatten.int", T(f32, [4, 6], [1, 4]), 1, [-1, 2])
    case("native_dropout_train", A + "native_dropout.default", T(f32, [4, 6]), 0.1, True)
    case("native_dropout_train_transposed", A + "native_dropout.default", tp, 0.5, True)
    case("native_dropout_eval", A + "native_dropout.default", T(bf16, [4, 6]), 0.1, False)
    bn = [T(f32, [3]), T(f32, [3]), T(f32, [3]), T(f32, [3])]
    case("batch_norm_functional_train", A + "_native_batch_norm_legit_functional.default",
         T(f32, [2, 3, 4, 4]), *bn, True, 0.1, 1e-5)
    case("batch_norm_functional_eval_channels_last",
         A + "_native_batch_norm_legit_functional.default", T(f32, [2, 3, 4, 4], [48, 1, 12, 3]),
         *bn, False, 0.1, 1e-5)
    case("batch_norm_functional_bf16", A + "_native_batch_norm_legit_functional.default",
         T(bf16, [2, 3, 5]), None, None, T(f32, [3]), T(f32, [3]), True, 0.1, 1e-5)
    case("batch_norm_legit_train", A + "_native_batch_norm_legit.default", T(f32, [2, 3, 4]),
         *bn, True, 0.1, 1e-5)
    case("batch_norm_legit_no_stats", A + "_native_batch_norm_legit.no_stats", T(f16, [2, 3, 4]),
         T(f16, [3]), None, True, 0.1, 1e-5)
    case("native_batch_norm_train", A + "native_batch_norm.default", T(f32, [2, 3, 4]), *bn,
         True, 0.1, 1e-5)
    case("native_batch_norm_eval", A + "native_batch_norm.default", T(f32, [2, 3, 4]), *bn,
         False, 0.1, 1e-5)
    case("constant_pad_nd", A + "constant_pad_nd.default", T(f32, [2, 3, 4, 4]), [1, 1, 2, 0])
    case("constant_pad_nd_negative", A + "constant_pad_nd.default", T(f32, [3, 5]), [-1, 2], 1.5)
    case("constant_pad_nd_channels_last", A + "constant_pad_nd.default",
         T(f32, [2, 3, 4, 4], [48, 1, 12, 3]), [1, 1, 1, 1])
    case("constant_pad_nd_transposed", A + "constant_pad_nd.default", tp, [1, 0])
    case("pad_constant", A + "pad.default", T(f32, [2, 3, 4]), [1, 2], "constant", 0.0)
    case("pad_reflect", A + "pad.default", T(f32, [1, 2, 5, 5]), [1, 1, 2, 2], "reflect")
    case("pad_replicate", A + "pad.default", T(f32, [1, 2, 5]), [2, 1], "replicate")
    case("upsample_nearest2d_vec_scale", A + "upsample_nearest2d.vec", T(f32, [1, 3, 4, 5]), None,
         [2.0, 1.5])
    case("upsample_nearest2d_vec_size", A + "upsample_nearest2d.vec", T(f32, [2, 3, 4, 5]),
         [7, 9], None)
    case("upsample_nearest2d_channels_last", A + "upsample_nearest2d.vec",
         T(f32, [2, 3, 4, 4], [48, 1, 12, 3]), None, [2.0, 2.0])
    case("upsample_nearest2d_default", A + "upsample_nearest2d.default", T(f32, [1, 2, 3, 3]),
         [6, 5])
    case("upsample_bilinear2d_vec", A + "upsample_bilinear2d.vec", T(f32, [1, 3, 4, 5]), None,
         False, [2.0, 2.0])
    case("upsample_bilinear2d_vec_size_align", A + "upsample_bilinear2d.vec", T(f32, [1, 3, 4, 5]),
         [5, 3], True, None)
    case("upsample_bilinear2d_default", A + "upsample_bilinear2d.default", T(f32, [1, 3, 4, 5]),
         [8, 10], False)
    case("native_group_norm", A + "native_group_norm.default", T(f32, [2, 6, 4, 4]), T(f32, [6]),
         T(f32, [6]), 2, 6, 16, 3, 1e-5)
    case("native_group_norm_channels_last", A + "native_group_norm.default",
         T(f32, [2, 6, 4, 4], [96, 1, 24, 6]), None, None, 2, 6, 16, 2, 1e-5)
    case("group_norm", A + "group_norm.default", T(f32, [2, 6, 5]), 3, T(f32, [6]), T(f32, [6]))
    case("repeat", A + "repeat.default", T(f32, [2, 3]), [2, 1, 2])
    case("repeat_transposed", A + "repeat.default", tp, [1, 2])
    case("flip", A + "flip.default", T(f32, [2, 3, 4]), [0, 2])
    case("flip_transposed", A + "flip.default", tp, [1])
    case("roll", A + "roll.default", T(f32, [3, 4]), [1], [1])
    case("roll_transposed", A + "roll.default", tp, [2, 1], [0, 1])
    case("tril", A + "tril.default", T(f32, [4, 4]))
    case("triu_transposed_diag", A + "triu.default", tp, 1)
    case("tril_batched_bool", A + "tril.default", T(b, [2, 3, 3]), -1)
    case("type_as_same", A + "type_as.default", tp, T(f32, [2]))
    case("type_as_other", A + "type_as.default", tp, T(f16, [2]))
    case("expand_as", A + "expand_as.default", T(f32, [3, 1]), T(f32, [2, 3, 4]))
    case("square", A + "square.default", T(f32, [2, 3]))
    case("square_int", A + "square.default", T(i32, [2, 3]))
    case("square_bool", A + "square.default", T(b, [2, 3]))
    case("and_tensor", A + "__and__.Tensor", T(b, [2, 3]), T(b, [3]))
    case("or_tensor", A + "__or__.Tensor", T(i32, [2, 3]), T(i64, [2, 1]))
    case("xor_scalar", A + "__xor__.Scalar", T(u8, [4]), 3)
    case("repeat_interleave_dim", A + "repeat_interleave.self_int", T(f32, [2, 3, 4]), 2, 1)
    case("repeat_interleave_flat", A + "repeat_interleave.self_int", T(f32, [2, 3]), 3)
    case("repeat_interleave_transposed", A + "repeat_interleave.self_int", tp, 2, 0)
    case("scatter_add", A + "scatter_add.default", T(f32, [3, 5]), 0, T(i64, [2, 5]),
         T(f32, [2, 5]))
    case("scatter_src", A + "scatter.src", tp, 1, T(i64, [3, 2]), T(f32, [3, 2]))
    case("scatter_value", A + "scatter.value", T(bf16, [3, 5]), 1, T(i64, [3, 2]), 1.5)
    case("scatter_reduce", A + "scatter_reduce.two", T(f32, [4]), 0, T(i64, [3]), T(f32, [3]),
         "amax")
    case("index_add", A + "index_add.default", T(f32, [5, 3]), 0, T(i64, [2]), T(f32, [2, 3]))
    case("masked_fill_scalar", A + "masked_fill.Scalar", T(f32, [2, 3]), T(b, [3]), -1.0)
    case("masked_fill_transposed", A + "masked_fill.Scalar", tp, T(b, [3, 4]), 0.0)
    case("masked_fill_tensor", A + "masked_fill.Tensor", T(f16, [2, 3]), T(b, [2, 3]),
         T(f16, []))
    case("var_correction", A + "var.correction", T(f32, [2, 3, 4]), [1], correction=1,
         keepdim=True)
    case("var_all", A + "var.correction", T(f64, [2, 3]))
    case("var_complex", A + "var.correction", T(c64, [4, 3]), [0])
    case("std_dim", A + "std.dim", T(f32, [2, 3]), [1], True)
    case("var_mean", A + "var_mean.correction", T(f32, [2, 3, 4]), [2], correction=0)
    case("prod_dim", A + "prod.dim_int", T(f32, [2, 3]), 1)
    case("prod_int_keepdim", A + "prod.dim_int", T(i32, [2, 3]), 0, True)
    case("prod_default_bool", A + "prod.default", T(b, [2, 3]))
    case("argmax_dim", A + "argmax.default", T(f32, [2, 3, 4]), 1)
    case("argmax_all", A + "argmax.default", T(f32, [2, 3]))
    case("argmin_keepdim", A + "argmin.default", T(i32, [2, 3]), -1, True)
    case("topk", A + "topk.default", T(f32, [3, 8]), 2)
    case("topk_dim0", A + "topk.default", T(f32, [5, 4]), 3, 0, False, False)
    case("topk_transposed", A + "topk.default", tp, 2, 0)
    case("sort", A + "sort.default", T(f32, [3, 8]))
    case("sort_transposed", A + "sort.default", tp, 0, True)
    case("sort_stable", A + "sort.stable", T(i64, [4, 3]), stable=True, dim=0)
    case("linalg_vector_norm", A + "linalg_vector_norm.default", T(f32, [2, 3, 4]), 2, [-1],
         True)
    case("linalg_vector_norm_all_complex", A + "linalg_vector_norm.default", T(c64, [2, 3]))
    case("linalg_vector_norm_dtype", A + "linalg_vector_norm.default", T(f16, [2, 3]), 1, [0],
         dtype=f32)
    case("new_ones", A + "new_ones.default", tp, [2, 5])
    case("new_zeros_dtype", A + "new_zeros.default", T(i32, [3]), [4, 1], dtype=f16)
    case("new_empty", A + "new_empty.default", T(bf16, [3]), [])
    case("new_full", A + "new_full.default", T(f32, [2]), [3, 2], 1.5)
    case("adaptive_avg_pool2d_private", A + "_adaptive_avg_pool2d.default", T(f32, [2, 4, 7, 7]),
         [2, 3])
    case("reflection_pad2d", A + "reflection_pad2d.default", T(f32, [1, 2, 5, 5]), [1, 1, 2, 2])
    case("reflection_pad1d_channels", A + "reflection_pad1d.default", T(f32, [2, 5]), [2, 1])
    case("reflection_pad2d_channels_last", A + "reflection_pad2d.default",
         T(f32, [2, 3, 4, 4], [48, 1, 12, 3]), [1, 1, 1, 1])
    case("replication_pad2d", A + "replication_pad2d.default", T(f32, [1, 2, 5, 5]), [0, 1, 2, 3])
    case("replication_pad3d", A + "replication_pad3d.default", T(f32, [1, 2, 3, 4, 5]),
         [1, 1, 1, 1, 1, 1])
    case("as_strided", A + "as_strided.default", T(f32, [4, 6]), [3, 2], [1, 4], 2)
    case("as_strided_keep_offset", A + "as_strided.default", T(f32, [4, 6]), [2, 2], [6, 1])
    case("empty_strided", A + "empty_strided.default", [2, 3], [1, 2], dtype=f16)
    case("max_dim", A + "max.dim", T(f32, [2, 3, 4]), 1)
    case("min_dim_keepdim", A + "min.dim", T(i32, [2, 3]), -1, True)
    case("max_all", A + "max.default", T(f32, [2, 3]))
    case("fill_scalar", A + "fill.Scalar", tp, 2.0)
    case("diagonal", A + "diagonal.default", T(f32, [3, 4]))
    case("diagonal_offset_dims", A + "diagonal.default", T(f32, [2, 3, 4]), -1, 2, 0)
    case("index_tensor_one", A + "index.Tensor", T(f32, [5, 3]), [T(i64, [2, 4])])
    case("index_tensor_middle", A + "index.Tensor", T(f32, [2, 5, 3]), [None, T(i64, [4])])
    case("index_tensor_two_adjacent", A + "index.Tensor", T(f32, [2, 5, 3, 6]),
         [None, T(i64, [4]), T(i64, [2, 1])])
    case("index_tensor_separated", A + "index.Tensor", T(f32, [2, 5, 3]),
         [T(i64, [4]), None, T(i64, [4])])
    case("index_tensor_bool_mask_fails_in_meta_or_not", A + "index.Tensor", T(f32, [4, 3]),
         [T(i64, [3])])
    case("index_tensor_transposed", A + "index.Tensor", tp, [T(i64, [2])])
    case("index_tensor_transposed_middle", A + "index.Tensor", T(f32, [2, 3, 4], [1, 8, 2]),
         [None, T(i64, [5])])
    # --- 3-D pooling, pixel shuffle, logsumexp, cummax/cummin, masked_scatter ------------------
    cl3 = T(f32, [2, 3, 5, 6, 7], [630, 1, 126, 21, 3])  # channels_last_3d
    case("avg_pool3d", A + "avg_pool3d.default", T(f32, [2, 3, 5, 6, 7]), [2, 2, 2], [2, 2, 2])
    case("avg_pool3d_unbatched_ceil", A + "avg_pool3d.default", T(f32, [3, 5, 6, 7]), [2, 3, 2],
         [], [1, 1, 1], True)
    case("avg_pool3d_channels_last_3d", A + "avg_pool3d.default", cl3, [2, 2, 2])
    case("avg_pool3d_divisor", A + "avg_pool3d.default", T(f16, [1, 2, 4, 4, 4]), [3], [1], [1],
         False, False, 5)
    case("max_pool3d_with_indices", A + "max_pool3d_with_indices.default",
         T(f32, [2, 3, 5, 6, 7]), [2, 2, 2])
    case("max_pool3d_with_indices_channels_last_3d", A + "max_pool3d_with_indices.default", cl3,
         [3, 3, 3], [2, 2, 2], [1, 1, 1], [1, 1, 1], True)
    case("max_pool3d_with_indices_unbatched_dilated", A + "max_pool3d_with_indices.default",
         T(f32, [3, 9, 6, 7]), [2], [1], [0], [2, 1, 1])
    case("max_pool3d", A + "max_pool3d.default", T(f32, [2, 3, 5, 6, 7]), [2, 2, 2])
    case("max_pool3d_channels_last_3d", A + "max_pool3d.default", cl3, [2, 2, 2])
    case("max_pool1d", A + "max_pool1d.default", T(f32, [2, 3, 9]), [3])
    case("max_pool1d_channels_inner", A + "max_pool1d.default", T(f32, [2, 3, 9], [27, 1, 3]),
         [3], [2], [1], [1], False)
    case("max_pool1d_unbatched_ceil", A + "max_pool1d.default", T(f32, [3, 10], [1, 3]), [3],
         [2], [0], [1], True)
    case("max_pool1d_dilated", A + "max_pool1d.default", T(f16, [1, 4, 12]), [2], [], [1], [3])
    case("adaptive_avg_pool3d", A + "_adaptive_avg_pool3d.default", T(f32, [2, 3, 5, 6, 7]),
         [2, 3, 4])
    case("adaptive_avg_pool3d_channels_last_3d", A + "_adaptive_avg_pool3d.default", cl3,
         [2, 3, 4])
    case("adaptive_avg_pool3d_unbatched", A + "_adaptive_avg_pool3d.default", T(f32, [3, 5, 6, 7]),
         [1, 1, 1])
    cl = T(f32, [2, 8, 3, 4], [96, 1, 32, 8])  # channels_last
    case("pixel_shuffle", A + "pixel_shuffle.default", T(f32, [2, 8, 3, 4]), 2)
    case("pixel_shuffle_channels_last", A + "pixel_shuffle.default", cl, 2)
    case("pixel_shuffle_unbatched", A + "pixel_shuffle.default", T(f32, [8, 3, 4]), 2)
    case("pixel_shuffle_extra_batch", A + "pixel_shuffle.default", T(bf16, [2, 3, 9, 2, 2]), 3)
    case("pixel_unshuffle", A + "pixel_unshuffle.default", T(f32, [2, 2, 6, 4]), 2)
    case("pixel_unshuffle_channels_last", A + "pixel_unshuffle.default",
         T(f32, [2, 2, 6, 4], [48, 1, 8, 2]), 2)
    case("pixel_unshuffle_unbatched", A + "pixel_unshuffle.default", T(f32, [3, 6, 9]), 3)
    case("logsumexp", A + "logsumexp.default", T(f32, [2, 3, 4]), [1])
    case("logsumexp_int_keepdim", A + "logsumexp.default", T(i64, [2, 3, 4]), [1], True)
    case("logsumexp_transposed_all", A + "logsumexp.default", tp, [0, 1])
    case("logsumexp_f16_negative_dim", A + "logsumexp.default", T(f16, [2, 3, 4]), [-1, 0])
    case("cummax_transposed", A + "cummax.default", tp, 0)
    case("cummin_int32", A + "cummin.default", T(i32, [2, 3]), -1)
    case("cummax_scalar", A + "cummax.default", T(f32, []), 0)
    case("masked_scatter_transposed", A + "masked_scatter.default", tp, T(b, [3, 1]),
         T(f32, [12]))
    case("masked_scatter_broadcast_self", A + "masked_scatter.default", T(f32, [3]),
         T(b, [2, 3]), T(f32, [10]))
    case("masked_scatter_same_shape_f64", A + "masked_scatter.default", T(f64, [2, 2]),
         T(b, [2, 2]), T(f64, [2, 2]))
    # upsampling, every op torch.export emits for F.interpolate (issue 28): the output size from
    # output_size or scale_factors (an integral scale multiplies, another truncates size * scale),
    # channels-last (3-D too) preserved as suggest_memory_format decides, 1-D always contiguous
    cl4 = T(f32, [2, 3, 4, 4], [48, 1, 12, 3])
    cl5 = T(f32, [2, 3, 2, 4, 4], [96, 1, 48, 12, 3])
    case("upsample_nearest1d_vec_scale", A + "upsample_nearest1d.vec", T(f32, [2, 3, 5]), None,
         [2.0])
    case("upsample_nearest1d_vec_fraction", A + "upsample_nearest1d.vec", T(bf16, [2, 3, 5]), None,
         [1.7])
    case("upsample_nearest1d_default", A + "upsample_nearest1d.default", T(f32, [2, 3, 5]), [7])
    case("upsample_nearest1d_transposed", A + "upsample_nearest1d.vec",
         T(f32, [2, 3, 5], [15, 1, 3]), [4], None)
    case("upsample_linear1d_vec_scale", A + "upsample_linear1d.vec", T(f32, [2, 3, 5]), None, True,
         [1.5])
    case("upsample_linear1d_default", A + "upsample_linear1d.default", T(f64, [2, 3, 5]), [7],
         False)
    case("upsample_nearest2d_fraction_down", A + "upsample_nearest2d.vec", T(f32, [1, 3, 4, 5]),
         None, [0.3, 1.0])
    case("upsample_nearest2d_uint8", A + "upsample_nearest2d.vec", T(u8, [1, 3, 4, 5]), None,
         [2.0, 2.0])
    case("upsample_nearest2d_ambiguous_layout", A + "upsample_nearest2d.vec",
         T(f32, [1, 1, 4, 5], [20, 20, 5, 1]), None, [2.0, 2.0])
    case("upsample_nearest2d_default_channels_last", A + "upsample_nearest2d.default", cl4, [3, 5])
    case("upsample_bilinear2d_channels_last_f16", A + "upsample_bilinear2d.vec",
         T(f16, [1, 3, 4, 5], [60, 1, 15, 3]), None, False, [2.0, 2.0])
    case("upsample_bilinear2d_default_channels_last", A + "upsample_bilinear2d.default", cl4,
         [5, 7], True, 1.25, 1.75)
    case("upsample_bicubic2d_vec_scale", A + "upsample_bicubic2d.vec", T(f32, [1, 3, 4, 5]), None,
         False, [1.5, 2.5])
    case("upsample_bicubic2d_vec_channels_last", A + "upsample_bicubic2d.vec", cl4, None, False,
         [1.5, 2.5])
    case("upsample_bicubic2d_default", A + "upsample_bicubic2d.default", T(f32, [1, 3, 4, 5]),
         [7, 9], True)
    case("upsample_nearest_exact2d_vec", A + "_upsample_nearest_exact2d.vec", cl4, None,
         [2.0, 1.5])
    case("upsample_nearest_exact1d_vec", A + "_upsample_nearest_exact1d.vec", T(f32, [2, 3, 5]),
         None, [2.5])
    case("upsample_bilinear2d_aa_vec", A + "_upsample_bilinear2d_aa.vec", cl4, None, False,
         [2.0, 1.5])
    case("upsample_bicubic2d_aa_vec_size", A + "_upsample_bicubic2d_aa.vec", T(f32, [1, 3, 4, 5]),
         [3, 3], False, None)
    case("upsample_nearest3d_vec_channels_last_3d", A + "upsample_nearest3d.vec", cl5, None,
         [2.0, 2.0, 1.5])
    case("upsample_nearest3d_default", A + "upsample_nearest3d.default", T(f32, [1, 2, 3, 4, 5]),
         [4, 5, 6])
    case("upsample_trilinear3d_vec_channels_last_3d", A + "upsample_trilinear3d.vec", cl5, None,
         False, [2.0, 2.0, 1.5])
    case("upsample_trilinear3d_vec_size", A + "upsample_trilinear3d.vec", T(f32, [1, 2, 3, 4, 5]),
         [4, 5, 6], False, None)
    case("upsample_nearest2d_sliced_channels_last", A + "upsample_nearest2d.vec",
         T(f32, [2, 3, 4, 4], [96, 1, 24, 3]), None, [2.0, 2.0])
    case("upsample_nearest2d_one_channel_both_layouts", A + "upsample_nearest2d.vec",
         T(f32, [2, 1, 4, 4], [16, 1, 4, 1]), None, [2.0, 2.0])
    case("upsample_bilinear2d_transposed_hw", A + "upsample_bilinear2d.vec",
         T(f32, [2, 3, 4, 5], [60, 20, 1, 4]), None, False, [2.0, 2.0])
    # one channel: the strides are both contiguous and channels-last; the Python metas
    # (new_empty(...).contiguous(memory_format=...)) keep contiguous strides, the C++ ones
    # (set_output_raw_strided with the format) write channels-last ones
    c1 = T(f32, [2, 1, 4, 4], [16, 1, 4, 1])
    c1_3d = T(f32, [2, 1, 2, 4, 4], [32, 1, 16, 4, 1])
    case("upsample_nearest_exact2d_one_channel", A + "_upsample_nearest_exact2d.vec", c1, None,
         [2.0, 2.0])
    case("upsample_bilinear2d_one_channel", A + "upsample_bilinear2d.vec", c1, None, False,
         [2.0, 2.0])
    case("upsample_bilinear2d_default_one_channel", A + "upsample_bilinear2d.default", c1, [8, 8],
         False)
    case("upsample_bicubic2d_one_channel", A + "upsample_bicubic2d.vec", c1, None, False,
         [2.0, 2.0])
    case("upsample_bilinear2d_aa_one_channel", A + "_upsample_bilinear2d_aa.vec", c1, None, False,
         [2.0, 2.0])
    case("upsample_bicubic2d_aa_one_channel", A + "_upsample_bicubic2d_aa.vec", c1, None, False,
         [2.0, 2.0])
    case("upsample_nearest3d_one_channel", A + "upsample_nearest3d.vec", c1_3d, None,
         [2.0, 2.0, 2.0])
    case("upsample_trilinear3d_one_channel", A + "upsample_trilinear3d.vec", c1_3d, None, False,
         [2.0, 2.0, 2.0])
    case("upsample_nearest_exact3d_one_channel", A + "_upsample_nearest_exact3d.vec", c1_3d, None,
         [2.0, 2.0, 2.0])
    case("upsample_nearest2d_one_by_one", A + "upsample_nearest2d.vec",
         T(f32, [2, 3, 1, 1], [3, 1, 3, 3]), None, [1.0, 1.0])
    # grid sampling, F.unfold / F.fold and pairwise distances (issue 28): contiguous outputs
    clg = T(f32, [2, 3, 4, 6], [72, 1, 18, 3])
    grid = T(f32, [2, 5, 7, 2])
    case("grid_sampler", A + "grid_sampler.default", T(f32, [2, 3, 4, 6]), grid, 0, 0, False)
    case("grid_sampler_5d", A + "grid_sampler.default", T(f32, [2, 3, 2, 4, 6]),
         T(f32, [2, 5, 7, 3, 3]), 1, 1, True)
    case("grid_sampler_2d", A + "grid_sampler_2d.default", T(f16, [2, 3, 4, 6]),
         T(f16, [2, 5, 7, 2]), 1, 1, True)
    case("grid_sampler_2d_channels_last", A + "grid_sampler_2d.default", clg, grid, 2, 0, False)
    case("grid_sampler_2d_strided_grid", A + "grid_sampler_2d.default", T(f32, [2, 3, 4, 6]),
         T(f32, [2, 5, 7, 2], [70, 1, 10, 35]), 0, 2, False)
    case("grid_sampler_3d", A + "grid_sampler_3d.default", T(f64, [1, 2, 3, 4, 5]),
         T(f64, [1, 2, 3, 4, 3]), 0, 0, False)
    case("im2col_batched", A + "im2col.default", T(f32, [2, 3, 4, 6]), [2, 2], [1, 1], [0, 0],
         [2, 2])
    case("im2col_unbatched_dilated", A + "im2col.default", T(f32, [3, 4, 6]), [3, 2], [1, 2],
         [1, 0], [1, 1])
    case("im2col_channels_last", A + "im2col.default", clg, [2, 2], [1, 1], [0, 0], [1, 1])
    case("im2col_int64", A + "im2col.default", T(i64, [2, 3, 4, 6]), [2, 2], [1, 1], [1, 1],
         [3, 2])
    case("col2im_batched", A + "col2im.default", T(f32, [2, 12, 6]), [4, 6], [2, 2], [1, 1],
         [0, 0], [2, 2])
    case("col2im_unbatched", A + "col2im.default", T(f32, [12, 6]), [4, 6], [2, 2], [1, 1],
         [0, 0], [2, 2])
    case("col2im_padded_transposed_f16", A + "col2im.default", T(f16, [2, 18, 12], [216, 1, 18]),
         [4, 5], [3, 3], [1, 1], [1, 1], [1, 2])
    case("cdist_batched", A + "cdist.default", T(f32, [2, 5, 4]), T(f32, [2, 6, 4]))
    case("cdist_broadcast_batch", A + "cdist.default", T(f32, [5, 4]), T(f32, [3, 1, 6, 4]), 1.0)
    case("cdist_mode", A + "cdist.default", T(f32, [5, 4]), T(f32, [6, 4]), 2.0, 1)
    case("cdist_promotes", A + "cdist.default", T(f64, [5, 4]), T(f32, [6, 4]))
    case("cdist_forward", A + "_cdist_forward.default", T(f32, [2, 5, 4]), T(f32, [2, 6, 4]), 2.0,
         None)
    case("cdist_forward_transposed", A + "_cdist_forward.default", T(f32, [5, 4], [1, 5]),
         T(f32, [6, 4]), 2.0, None)
    case("cdist_forward_f16_mode", A + "_cdist_forward.default", T(f16, [5, 4]),
         T(f16, [1, 6, 4]), 0.0, 2)
    case("cdist_forward_x1_dtype", A + "_cdist_forward.default", T(f32, [5, 4]), T(f64, [6, 4]),
         2.0, None)
    case("cdist_forward_empty_columns", A + "_cdist_forward.default", T(f32, [5, 0]),
         T(f32, [6, 0]), 2.0, None)
    case("pdist", A + "pdist.default", T(f32, [5, 3]))
    case("pdist_one_row", A + "pdist.default", T(f32, [1, 3]), 1.0)
    case("pdist_transposed", A + "pdist.default", T(f64, [5, 3], [1, 5]))
    case("pdist_forward", A + "_pdist_forward.default", T(f32, [5, 3]), 2.0)
    case("pdist_forward_empty", A + "_pdist_forward.default", T(f64, [0, 3]), 2.0)
    case("pdist_forward_int32", A + "_pdist_forward.default", T(i32, [5, 3]), 2.0)
    # --- einsum: torch's kernel contracts with bmm + permute, so the strides vary -------------
    E = A + "einsum.default"
    case("einsum_matmul", E, "ij,jk->ik", [T(f32, [2, 3]), T(f32, [3, 4])])
    case("einsum_matmul_output_transposed", E, "ij,jk->ki", [T(f32, [2, 3]), T(f32, [3, 4])])
    case("einsum_interleaved_output", E, "dfa,ed", [T(f32, [3, 2, 3]), T(f32, [4, 3])])
    case("einsum_batched", E, "bij,bjk->bik", [T(f32, [2, 3, 4]), T(f32, [2, 4, 5])])
    case("einsum_outer", E, "i,j->ij", [T(f32, [2]), T(f32, [3])])
    case("einsum_product_transposed", E, "ij,ij->ji", [T(f32, [3, 2], [1, 3]), T(f32, [3, 2])])
    case("einsum_permute_view", E, "ijk->kji", [T(f32, [2, 3, 4], [12, 4, 1], 5)])
    case("einsum_diagonal_view", E, "ii->i", [T(f32, [3, 3])])
    case("einsum_trace", E, "ii", [T(f32, [3, 3])])
    case("einsum_row_sum_int", E, "ij->i", [T(i32, [2, 3])])
    case("einsum_ellipsis", E, "...ij,...jk->...ik", [T(f32, [2, 1, 3, 4]), T(f32, [5, 4, 2])])
    case("einsum_sum_one_side_first", E, "ij,jk->i", [T(f32, [2, 3]), T(f32, [3, 4])])
    case("einsum_three_operands", E, "bc,aefc,adcb",
         [T(f32, [3, 1]), T(f32, [1, 1, 5, 1]), T(f32, [1, 4, 1, 3])])
    case("einsum_three_operands_path", E, "ij,jk,kl->il",
         [T(f32, [2, 3]), T(f32, [3, 4]), T(f32, [4, 5])], path=[1, 2, 0, 1])
    case("einsum_empty_contraction", E, "ij,jk->ik", [T(f32, [2, 0]), T(f32, [0, 3])])
    case("einsum_product_size_one_dims", E, "dfeb,bd->bedf", [T(f32, [1, 1, 1, 2]), T(f32, [2, 1])])
    case("einsum_product_5d_contiguous_operands", E, "fcbe,cde->cbefd",
         [T(f32, [1, 3, 1, 3], [1, 3, 3, 1]), T(f32, [3, 1, 3])])
    case("einsum_f64_uppercase", E, "Ab,bC->CA", [T(f64, [2, 3]), T(f64, [3, 4])])
    # random equations (a fixed seed), each kept when torch accepts it
    rng = random.Random(13)
    kept = 0
    while kept < 120:
        sizes = {c: rng.choice([1, 2, 3, 4]) for c in "abcdef"}
        ops = ["".join(rng.sample("abcdef", rng.randint(1, 4)))
               for _ in range(rng.choice([1, 2, 2, 2, 3]))]
        labels = sorted(set("".join(ops)))
        eq = ",".join(ops)
        if rng.random() < 0.8:
            eq += "->" + "".join(rng.sample(labels, rng.randint(0, len(labels))))
        # the first 80 contiguous, the next 40 with dimensions stored in a random order
        tensors = [permuted_t(rng, [sizes[c] for c in o]) if kept >= 80 else
                   T(f32, [sizes[c] for c in o]) for o in ops]
        try:
            with FakeTensorMode():
                torch.ops.aten.einsum.default(eq, [t.make() for t in tensors])
        except RuntimeError:
            continue
        case(f"einsum_random_{kept}", E, eq, tensors)
        kept += 1
    # --- suggest_memory_format of ambiguous layouts (channels-last and contiguous at once) ------
    layouts = {
        "cl_and_contiguous": T(f32, [2, 3, 1, 1], [3, 1, 3, 3]),
        "one_channel_cl": T(f32, [2, 1, 4, 4], [16, 1, 4, 1]),
        "one_batch_cl": T(f32, [1, 3, 4, 4], [48, 1, 12, 3]),
        "n111": T(f32, [2, 1, 1, 1], [1, 1, 1, 1]),
    }
    for lname, x in layouts.items():
        spatial = x.sizes[2]
        case(f"max_pool2d_layout_{lname}", A + "max_pool2d_with_indices.default", x, [1, 1])
        case(f"avg_pool2d_layout_{lname}", A + "avg_pool2d.default", x, [1, 1])
        case(f"adaptive_avg_pool2d_layout_{lname}", A + "_adaptive_avg_pool2d.default", x,
             [1, 1])
        case(f"constant_pad_nd_layout_{lname}", A + "constant_pad_nd.default", x, [1, 1, 0, 1])
        if spatial % 2 == 0:
            case(f"pixel_unshuffle_layout_{lname}", A + "pixel_unshuffle.default", x, 2)
        case(f"pixel_shuffle_layout_{lname}", A + "pixel_shuffle.default", x, 1)
    case("constant_pad_nd_channels_last_3d", A + "constant_pad_nd.default",
         T(f32, [2, 3, 2, 2, 2], [24, 1, 12, 6, 3]), [1, 0, 0, 1])
    for lname, x in {"cl3d_and_contiguous": T(f32, [2, 3, 1, 1, 1], [3, 1, 3, 3, 3]),
                     "one_channel_cl3d": T(f32, [2, 1, 2, 2, 2], [8, 1, 4, 2, 1])}.items():
        case(f"max_pool3d_layout_{lname}", A + "max_pool3d_with_indices.default", x, [1, 1, 1])
    case("constant_pad_nd_cl3d_and_contiguous", A + "constant_pad_nd.default",
         T(f32, [2, 3, 1, 1, 1], [3, 1, 3, 3, 3]), [1, 1])
    # --- instance_norm: batch_norm on the contiguous input, viewed back ----------------------
    IN = A + "instance_norm.default"
    case("instance_norm", IN, T(f32, [2, 3, 4, 5]), T(f32, [3]), T(f32, [3]), None, None, True,
         0.1, 1e-5, False)
    case("instance_norm_channels_last", IN, T(f32, [2, 3, 4, 5], [60, 1, 15, 3]), None, None,
         None, None, True, 0.1, 1e-5, False)
    case("instance_norm_running_stats_f16", IN, T(f16, [2, 3, 7]), None, None, T(f16, [3]),
         T(f16, [3]), False, 0.1, 1e-5, False)

    # --- views and reshapes of permuted, sliced and size-1 layouts: FakeTensorMode computes a
    # view's strides with torch._refs._reshape_view_helper, which differs from eager's
    # computeStride in the strides of size-1 dimensions and of empty tensors -------------------
    case("view_size_one_permuted", A + "view.default", T(f32, [2, 4, 1, 1], [4, 1, 4, 1]),
         [1, 8, 1])
    case("reshape_size_one_permuted", A + "reshape.default", T(f32, [2, 4, 1, 1], [4, 1, 4, 1]),
         [1, 8, 1])
    case("unsafe_view_size_one_permuted", A + "_unsafe_view.default",
         T(f32, [2, 4, 1, 1], [4, 1, 4, 1]), [1, 8, 1])
    case("view_zero_numel_strided", A + "view.default", T(f32, [0, 3], [1, 7]), [0, 3])
    case("view_zero_numel_split", A + "view.default", T(f32, [0, 3], [1, 7]), [3, 0])
    case("flatten_size_one_strided", A + "flatten.using_ints", T(f32, [2, 1, 4, 1], [4, 1, 1, 9]),
         0, 2)
    rng = random.Random(29)
    kept = {"view": 0, "reshape": 0}
    while min(kept.values()) < 40:
        sizes = [rng.choice([1, 1, 1, 2, 3, 4]) for _ in range(rng.randint(1, 5))]
        x = permuted_t(rng, sizes) if rng.random() < 0.7 else T(f32, sizes)
        if rng.random() < 0.3:  # every other element of a larger buffer
            x = T(f32, x.sizes, [2 * st for st in x.strides])
        n, factors = math.prod(sizes), []
        for p in (2, 3):
            while n % p == 0:
                factors.append(p)
                n //= p
        rng.shuffle(factors)
        shape, i = [], 0
        while i < len(factors):
            k = rng.randint(1, 3)
            shape.append(math.prod(factors[i:i + k]))
            i += k
        for _ in range(rng.randint(0, 3)):
            shape.insert(rng.randint(0, len(shape)), 1)
        op = "view" if kept["view"] <= kept["reshape"] else "reshape"
        try:  # kept where eager and FakeTensorMode both take it (FakeTensorMode takes more)
            getattr(torch.ops.aten, op).default(x.make(), shape)
            with FakeTensorMode():
                getattr(torch.ops.aten, op).default(x.make(), shape)
        except (RuntimeError, ValueError):
            continue
        case(f"{op}_random_{kept[op]}", A + op + ".default", x, shape)
        kept[op] += 1

    # --- random factories --------------------------------------------------------------------
    case("randn", A + "randn.default", [2, 3])
    case("randn_f16", A + "randn.default", [2, 3], dtype=f16)
    case("rand_f64", A + "rand.default", [4], dtype=f64)
    case("rand_generator", A + "rand.generator", [2, 2], generator=None)
    case("randperm", A + "randperm.default", 5)
    case("randperm_f32", A + "randperm.default", 7, dtype=f32)
    # --- FFT primitives: torch's CPU (MKL) output strides ------------------------------------
    R2C, C2R, C2C = A + "_fft_r2c.default", A + "_fft_c2r.default", A + "_fft_c2c.default"
    case("fft_r2c_last", R2C, T(f32, [4, 6]), [1], 0, True)
    case("fft_r2c_two_sided", R2C, T(f32, [4, 6]), [1], 0, False)
    case("fft_r2c_2d", R2C, T(f64, [3, 4, 6]), [1, 2], 2, True)
    case("fft_r2c_transposed", R2C, T(f32, [4, 6], [1, 4]), [1], 0, True)
    case("fft_r2c_f16", R2C, T(f16, [2, 8]), [1], 0, True)
    case("fft_c2r_last", C2R, T(c64, [4, 4]), [1], 2, 6)
    case("fft_c2r_2d", C2R, T(c128, [3, 4, 4]), [0, 2], 2, 7)
    case("fft_c2c_dims", C2C, T(c64, [3, 4, 5]), [2, 0], 0, True)
    case("fft_c2c_no_dims", C2C, T(c64, [3, 4], [1, 3]), [], 0, False)
    rng = random.Random(31)
    for i in range(36):
        sizes = [rng.choice([1, 2, 3, 4, 5]) for _ in range(rng.randint(1, 4))]
        x = permuted_t(rng, sizes)
        dims = rng.sample(range(len(sizes)), rng.randint(1, len(sizes)))
        kind = i % 3
        if kind == 0:
            case(f"fft_r2c_random_{i}", R2C, x, dims, 0, rng.random() < 0.7)
        elif kind == 1:
            case(f"fft_c2r_random_{i}", C2R, T(c64, x.sizes, x.strides), dims, 0,
                 rng.randint(1, 9))
        else:
            case(f"fft_c2c_random_{i}", C2C, T(c64, x.sizes, x.strides), dims, 1, True)

    # --- torch.fft's functions (kept whole in the default IR), view_as_real/complex, unfold ----
    case("fft_rfft", A + "fft_rfft.default", T(f32, [3, 8]))
    case("fft_rfft_n_longer", A + "fft_rfft.default", T(f32, [3, 8], [1, 3]), 10, 0)
    case("fft_rfft_n_shorter", A + "fft_rfft.default", T(f32, [3, 8], [1, 3]), 5, 1, "ortho")
    case("fft_rfft_int", A + "fft_rfft.default", T(i64, [6]))
    case("fft_irfft", A + "fft_irfft.default", T(c64, [3, 5]))
    case("fft_irfft_n", A + "fft_irfft.default", T(c64, [3, 5], [1, 3]), 12, 1)
    case("fft_irfft_n_short", A + "fft_irfft.default", T(c64, [3, 5]), 4)
    case("fft_irfft_real_input", A + "fft_irfft.default", T(f32, [4, 5]))
    case("fft_hfft", A + "fft_hfft.default", T(c64, [2, 4, 3], [1, 6, 2]), None, 1)
    case("fft_ihfft", A + "fft_ihfft.default", T(f64, [4, 6]))
    # window functions (torch.stft's window, made in the graph)
    case("hann_window", A + "hann_window.default", 16)
    case("hamming_window_alpha_beta", A + "hamming_window.periodic_alpha_beta", 5, False, 0.5,
         0.4, dtype=f64)
    case("kaiser_window_beta", A + "kaiser_window.beta", 6, True, 12.0)
    case("bartlett_window_empty", A + "bartlett_window.default", 0)
    case("blackman_window_bf16", A + "blackman_window.periodic", 3, True, dtype=bf16)
    # stft.default (kept whole by the default IR, after torch.stft's padding)
    ST = A + "stft.default"
    case("stft_2d", ST, T(f32, [2, 100]), 16, 4, None, None, False, None, True)
    case("stft_window", ST, T(f32, [2, 100]), 16, 4, None, T(f32, [16]), False, None, True)
    case("stft_short_window", ST, T(f32, [2, 100]), 16, 4, 8, T(f64, [8]), True, None, True)
    case("stft_real_out", ST, T(f32, [2, 100]), 16, None, None, None, False, None, False)
    case("stft_two_sided", ST, T(f32, [3, 64]), 16, 5, None, None, False, False, True)
    case("stft_1d", ST, T(f64, [100]), 32, 8, None, None, False, None, True)
    case("stft_complex", ST, T(c64, [2, 50]), 16, 4, None, None, False, None, True)
    case("stft_complex_window", ST, T(f32, [50]), 16, 4, None, T(c64, [16]), False, None, False)
    case("stft_strided_input", ST, T(f32, [2, 100], [1, 2]), 16, 4, None, None, False, None, True)
    case("stft_align_to_window", ST, T(f32, [2, 100]), 16, 4, 8, None, False, None, True, True)
    case("stft_n_fft_is_length", ST, T(f32, [1, 16]), 16, 4, None, None, False, None, True)
    case("stft_short_win_length_no_window", ST, T(f32, [2, 100]), 16, 4, 10, None, False, None,
         True)
    # stft.center (export runs torch._refs.stft for it): (self, n_fft, hop_length, win_length,
    # window, center, pad_mode, normalized, onesided, return_complex, align_to_window)
    SC = A + "stft.center"
    case("stft_center_reflect", SC, T(f32, [2, 100]), 16, 4, None, T(f32, [16]), True, "reflect",
         False, None, True)
    case("stft_center_constant_1d", SC, T(f64, [50]), 16, 5, None, None, True, "constant", False,
         None, True)
    case("stft_center_replicate_real_out", SC, T(f32, [3, 40], [1, 3]), 8, 2, None, None, True,
         "replicate", False, None, False)
    case("stft_center_circular_two_sided", SC, T(f32, [2, 64]), 16, 4, 8, T(f32, [8]), True,
         "circular", False, False, True)
    case("stft_center_false", SC, T(f32, [2, 100]), 16, 4, None, None, False, "reflect", False,
         None, True)
    case("stft_center_false_align", SC, T(f32, [2, 100]), 16, 4, 10, None, False, "reflect",
         False, None, True, True)
    # istft.default (kept whole by the default IR; export computes it with torch._refs.istft)
    IS = A + "istft.default"
    # (self, n_fft, hop_length, win_length, window, center, normalized, onesided, length,
    # return_complex)
    case("istft_2d", IS, T(c64, [2, 9, 21]), 16, 4, None, T(f32, [16]), True, False, None, None,
         False)
    case("istft_1d_no_window", IS, T(c64, [9, 21]), 16, 4, None, None, True, False, None, None,
         False)
    case("istft_length", IS, T(c64, [2, 9, 21]), 16, 4, None, T(f32, [16]), True, False, None,
         60, False)
    case("istft_length_past_the_signal", IS, T(c64, [2, 9, 21]), 16, 4, None, T(f32, [16]), True,
         False, None, 90, False)
    case("istft_not_centered", IS, T(c128, [9, 13]), 16, 4, None, None, False, False, None,
         None, False)
    case("istft_short_window_f64", IS, T(c64, [2, 9, 21]), 16, 4, 8, T(f64, [8]), True, True,
         None, None, False)
    case("istft_two_sided_complex_out", IS, T(c64, [2, 16, 11]), 16, 4, None, None, True, False,
         False, None, True)
    case("istft_two_sided_real_out", IS, T(c64, [16, 11]), 16, 4, None, None, True, False, False,
         None, False)
    case("istft_transposed_input", IS, T(c64, [2, 9, 21], [189, 1, 9]), 16, 4, None, None, True,
         False, None, None, False)
    case("fft_fft_real", A + "fft_fft.default", T(f32, [4, 6], [1, 4]))
    case("fft_fft_complex_n", A + "fft_fft.default", T(c64, [4, 6]), 9, 0)
    case("fft_ifft_real", A + "fft_ifft.default", T(f32, [2, 3, 4]), None, 1)
    case("fft_fft2", A + "fft_fft2.default", T(f32, [2, 3, 4]))
    case("fft_fft2_dims", A + "fft_fft2.default", T(c64, [2, 3, 4], [1, 8, 2]), None, [2, 0])
    case("fft_ifft2_s", A + "fft_ifft2.default", T(c64, [2, 3, 4]), [5, 2])
    case("fft_fftn_all", A + "fft_fftn.default", T(f32, [2, 3, 4], [1, 8, 2]))
    case("fft_fftn_s_only", A + "fft_fftn.default", T(f32, [2, 3, 4]), [3, -1])
    case("fft_ifftn_dims", A + "fft_ifftn.default", T(c128, [2, 3, 4]), None, [0, 2])
    case("fft_rfft2", A + "fft_rfft2.default", T(f32, [2, 6, 8]))
    case("fft_rfftn_s", A + "fft_rfftn.default", T(f32, [2, 6, 8], [48, 1, 6]), [4, 10], [0, 2])
    case("fft_irfft2", A + "fft_irfft2.default", T(c64, [2, 6, 5]))
    case("fft_irfftn_s", A + "fft_irfftn.default", T(c64, [2, 6, 5]), [3, 8], [1, 2])
    case("fft_irfftn_all", A + "fft_irfftn.default", T(c64, [2, 6, 5], [30, 1, 6]))
    # hfft2/hfftn: irfft2/irfftn of the conjugate; ihfft2/ihfftn: the last dimension first
    case("fft_hfft2", A + "fft_hfft2.default", T(c64, [4, 2, 3], [1, 12, 4]))
    case("fft_hfftn_s", A + "fft_hfftn.default", T(c128, [2, 6, 5]), [3, 8], [1, 2])
    case("fft_hfftn_all", A + "fft_hfftn.default", T(c64, [4, 2, 3], [1, 12, 4]))
    case("fft_hfftn_real_input", A + "fft_hfftn.default", T(f32, [3, 4]), None, [0])
    case("fft_ihfft2", A + "fft_ihfft2.default", T(f32, [8, 2, 3], [1, 24, 8]))
    case("fft_ihfft2_s", A + "fft_ihfft2.default", T(f32, [8, 2, 3], [1, 24, 8]), [4, 6])
    case("fft_ihfftn_all", A + "fft_ihfftn.default", T(f32, [8, 2, 3], [1, 24, 8]))
    case("fft_ihfftn_dims", A + "fft_ihfftn.default", T(f64, [8, 2, 3], [1, 24, 8]), None, [0, 2])
    case("fft_ihfftn_int", A + "fft_ihfftn.default", T(i64, [4, 5]))
    # fftshift/ifftshift (a roll: contiguous), fftfreq/rfftfreq
    case("fft_fftshift", A + "fft_fftshift.default", T(f32, [4, 3], [1, 4]))
    case("fft_fftshift_dim", A + "fft_fftshift.default", T(c64, [4, 3], [1, 4]), [0])
    case("fft_ifftshift_strided", A + "fft_ifftshift.default", T(f32, [3, 4], [8, 2], 1), [-1])
    case("fft_fftfreq", A + "fft_fftfreq.default", 7)
    case("fft_fftfreq_complex", A + "fft_fftfreq.default", 6, 0.5, dtype=c64)
    case("fft_rfftfreq", A + "fft_rfftfreq.default", 7, 0.5, dtype=f64)
    case("fft_rfftfreq_even", A + "fft_rfftfreq.default", 8)
    # real / imag views, _conj, conj_physical
    case("real_complex_transposed", A + "real.default", T(c64, [3, 4], [1, 3]))
    case("real_complex_offset", A + "real.default", T(c128, [3], [2], 2))
    case("real_of_real", A + "real.default", T(f32, [3, 4], [1, 3]))
    case("imag_complex_transposed", A + "imag.default", T(c64, [3, 4], [1, 3]))
    case("imag_complex_offset", A + "imag.default", T(c128, [3], [2], 2))
    case("conj_view", A + "_conj.default", T(c64, [3, 4], [1, 3]))
    case("conj_physical_transposed", A + "_conj_physical.default", T(c64, [3, 4], [1, 3]))
    case("conj_physical_strided", A + "_conj_physical.default", T(c64, [3], [2], 2))
    case("conj_physical_real", A + "conj_physical.default", T(f32, [4, 3], [1, 4]))
    case("view_as_real", A + "view_as_real.default", T(c64, [3, 4]))
    case("view_as_real_strided", A + "view_as_real.default", T(c64, [3, 4], [1, 6], 2))
    case("view_as_complex", A + "view_as_complex.default", T(f32, [3, 4, 2]))
    case("view_as_complex_strided", A + "view_as_complex.default", T(f64, [3, 2], [4, 1], 6))
    case("unfold", A + "unfold.default", T(f32, [2, 10]), 1, 4, 2)
    case("unfold_strided", A + "unfold.default", T(f32, [10, 3], [1, 10]), 0, 3, 3)
    case("unfold_zero_dim", A + "unfold.default", T(f32, []), 0, 1, 1)
    case("unfold_whole", A + "unfold.default", T(f32, [4, 5]), -1, 5, 1)

    # --- backward ops of a training export ---------------------------------------------------
    CB = A + "convolution_backward.default"
    x_cl = T(f32, [2, 3, 6, 6], [108, 1, 18, 3])
    w_cl = T(f32, [4, 3, 3, 3], [27, 1, 9, 3])
    case("convolution_backward", CB, T(f32, [2, 4, 4, 4]), T(f32, [2, 3, 6, 6]),
         T(f32, [4, 3, 3, 3]), [4], [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [True, True, True])
    case("convolution_backward_cl_input", CB, T(f32, [2, 4, 4, 4]), x_cl, T(f32, [4, 3, 3, 3]),
         [4], [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [True, True, False])
    case("convolution_backward_cl_weight", CB, T(f32, [2, 4, 4, 4]), T(f32, [2, 3, 6, 6]), w_cl,
         None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [True, True, False])
    case("convolution_backward_1d", CB, T(f16, [2, 4, 6]), T(f16, [2, 3, 8]), T(f16, [4, 3, 3]),
         [4], [1], [0], [1], False, [0], 1, [False, True, True])
    LNB = A + "native_layer_norm_backward.default"
    case("layer_norm_backward", LNB, T(f32, [2, 3, 5]), T(f32, [2, 3, 5], [15, 1, 3]), [5],
         T(f32, [2, 3, 1]), T(f32, [2, 3, 1]), T(f32, [5]), T(f32, [5]), [True, True, True])
    case("layer_norm_backward_no_affine", LNB, T(f32, [2, 3, 5]), T(f32, [2, 3, 5]), [3, 5],
         T(f32, [2, 1, 1]), T(f32, [2, 1, 1]), None, None, [True, False, False])
    case("group_norm_backward", A + "native_group_norm_backward.default", T(f32, [2, 6, 4, 4]),
         T(f32, [2, 6, 4, 4], [96, 1, 24, 6]), T(f32, [2, 3]), T(f32, [2, 3]), T(f32, [6]), 2, 6,
         16, 3, [True, True, True])
    case("group_norm_backward_input_only", A + "native_group_norm_backward.default",
         T(f32, [2, 6, 4]), T(f32, [2, 6, 4]), T(f32, [2, 2]), T(f32, [2, 2]), None, 2, 6, 4, 2,
         [True, False, False])
    case("embedding_dense_backward", A + "embedding_dense_backward.default", T(f32, [2, 3, 8]),
         T(i64, [2, 3]), 10, -1, False)
    case("avg_pool2d_backward", A + "avg_pool2d_backward.default", T(f32, [2, 3, 3, 3]),
         T(f32, [2, 3, 6, 6]), [2, 2], [2, 2], [0, 0], False, True, None)
    case("avg_pool2d_backward_cl", A + "avg_pool2d_backward.default", T(f32, [2, 3, 3, 3]),
         x_cl, [3, 3], [2, 2], [1, 1], False, True, None)
    case("max_pool2d_backward", A + "max_pool2d_with_indices_backward.default",
         T(f32, [2, 3, 3, 3]), x_cl, [2, 2], [2, 2], [0, 0], [1, 1], False, T(i64, [2, 3, 3, 3]))
    case("adaptive_avg_pool2d_backward", A + "_adaptive_avg_pool2d_backward.default",
         T(f32, [2, 3, 1, 1]), x_cl)
    case("adaptive_avg_pool2d_backward_3d", A + "_adaptive_avg_pool2d_backward.default",
         T(f32, [3, 2, 2]), T(f32, [3, 6, 6]))

    # --- embedding_bag (EmbeddingBag modules): four outputs, by mode and the CPU fast path --
    EB, EBF = A + "_embedding_bag.default", A + "_embedding_bag_forward_only.default"
    wt, ix, off = T(f32, [10, 3]), T(i64, [8]), T(i64, [3])
    case("embedding_bag_sum", EB, wt, ix, off)
    case("embedding_bag_mean", EB, wt, ix, off, False, 1)
    case("embedding_bag_max", EB, wt, ix, off, False, 2)
    case("embedding_bag_last_offset", EB, wt, ix, T(i32, [4]), False, 0, False, None, True)
    case("embedding_bag_per_sample", EB, wt, ix, off, False, 0, False, T(f32, [8]))
    case("embedding_bag_padding", EB, wt, ix, off, False, 0, False, None, False, 2)
    case("embedding_bag_f64", EB, T(f64, [10, 3]), T(i32, [8]), off, False, 0)
    case("embedding_bag_forward_only", EBF, wt, ix, off, False, 1)
    case("embedding_bag_forward_only_max_last", EBF, wt, ix, T(i64, [4]), False, 2, False, None,
         True)


# Ops whose value torch.export computes with a Python reference rather than the C++ kernel
# FakeTensorMode runs here: export traces with the Python dispatcher, which runs
# torch._refs.expand (prims.broadcast_in_dim) for aten.expand. They differ in the stride of a new
# leading dimension of size 1 ([3, 1] -> [1, 2, 3, 4]: (3, 0, 1, 0) in an exported program,
# (0, 0, 1, 0) in eager), and the exported programs are what epgraph must match. istft and
# stft.center have Python kernels for CompositeImplicitAutograd (their refs), which export runs
# in place of the C++ ones.
EXPORT_REFS = {
    "torch.ops.aten.expand.default": "expand",
    "torch.ops.aten.istft.default": "istft",
    "torch.ops.aten.stft.center": "stft",
}


def run_case(name: str, target: str, args: list, kwargs: dict, strides: str) -> dict:
    op = resolve(target)
    if target in EXPORT_REFS:
        import torch._refs
        op = getattr(torch._refs, EXPORT_REFS[target])
    # Under the Python dispatcher, as torch.export traces: a .vec upsample then takes its Python
    # decomposition, whose output layout differs from the C++ meta's for one channel.
    with enable_python_dispatcher(), FakeTensorMode(allow_non_fake_inputs=False):
        real_args = materialize(args)
        real_kwargs = {k: materialize(v) for k, v in kwargs.items()}
        out = op(*real_args, **real_kwargs)
        encoded = encode_out(out)
    return {"name": name, "target": target, "args": [encode_arg(a) for a in args],
            "kwargs": {k: encode_arg(v) for k, v in kwargs.items()}, "strides": strides,
            "out": encoded}


def build_cases() -> list[dict]:
    """Every case with torch's output metadata, in definition order."""
    define_cases()
    names = [c[0] for c in CASES]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        raise AssertionError(f"duplicate case names: {sorted(dup)}")
    out = []
    for c in CASES:
        try:
            out.append(run_case(*c))
        except Exception as e:
            raise RuntimeError(f"case {c[0]} ({c[1]}) failed in torch: {e}") from e
    return out


def dumps(cases: list[dict]) -> str:
    """The file's text: one case per line, so that a change in torch shows as a one-line diff."""
    lines = ",\n".join("  " + json.dumps(c, separators=(", ", ": ")) for c in cases)
    return f'{{"torch_version": "{TORCH_VERSION}", "cases": [\n{lines}\n]}}\n'


# --- symbolic cases: tests/data/infer_meta_sym_cases.json ------------------------------------
#
# Each case runs under a FakeTensorMode with a ShapeEnv and the Python dispatcher on (as
# torch.export traces: a .vec upsample takes its Python decomposition, which keeps a scaled
# symbolic size, where the C++ one would specialize it): the symbols of `syms` (name -> hint) are
# backed symbols of the ShapeEnv (torch names them s0, s1, ...), an input's sizes are ints or
# Python expressions over those names, and `view` optionally applies a view (e.g. a transpose)
# to the contiguous input. Format (one case):
#
#     {"name": ..., "target": ..., "args": [SARG, ...], "kwargs": {...},
#      "ranges": {"s0": [2, null], ...},     # the ShapeEnv's ranges after the op (null: int_oo)
#      "out": SOUT}
#     SARG = ARG | {"tensor": SMETA} | {"symint": SIZE} | {"list": [SARG, ...]}
#     SIZE = 3 | {"expr": "<srepr>", "hint": 8}
#     SMETA = {"dtype": 7, "sizes": [SIZE, ...], "strides": [SIZE, ...], "storage_offset": SIZE}
#     SOUT = SMETA | {"tuple": [SOUT, ...]} | {"symint": SIZE} | {"symbool": true | "<srepr>"}
#
# Expressions are written as torch.export writes them (sympy's srepr, serialize._print_sympy).


class S:
    """A symbolic tensor input: dtype, sizes (ints or expressions over the case's symbols), and an
    optional view applied to the contiguous tensor (a function of the fake tensor)."""

    def __init__(self, dtype: torch.dtype, sizes, view=None) -> None:
        self.dtype, self.sizes, self.view = dtype, list(sizes), view


class SymArg:
    """A SymInt argument: a Python expression over the case's symbols."""

    def __init__(self, expr: str) -> None:
        self.expr = expr


SYM_CASES: list[tuple] = []


def symcase(name: str, target: str, syms: dict, *args, **kwargs) -> None:
    SYM_CASES.append((name, target, syms, list(args), kwargs))


def define_sym_cases() -> None:
    SYM_CASES.clear()
    A = "torch.ops.aten."
    one = {"n": 8}
    two = {"n": 8, "m": 5}
    tr = lambda t: t.transpose(0, 1)  # noqa: E731
    # contiguous strides of symbolic shapes, elementwise ops and broadcasting
    symcase("sym_relu", A + "relu.default", one, S(f32, [2, "n", 4]))
    symcase("sym_add_same", A + "add.Tensor", one, S(f32, [2, "n"]), S(f32, [2, "n"]))
    symcase("sym_add_broadcast_1", A + "add.Tensor", one, S(f32, [2, "n", 4]), S(f32, [1, 1, 4]))
    symcase("sym_add_broadcast_rank", A + "add.Tensor", one, S(f32, ["n", 4]), S(f32, [4]))
    symcase("sym_add_broadcast_sym_1", A + "add.Tensor", two, S(f32, ["n", 1]),
            S(f32, [1, "m"]))
    symcase("sym_mul_scalar", A + "mul.Tensor", one, S(f32, ["2*n", 3]), 2.0)
    symcase("sym_two_symbols", A + "sub.Tensor", two, S(f32, ["n", "m", 2]),
            S(f32, ["n", "m", 2]))
    symcase("sym_where", A + "where.self", one, S(b, ["n", 1]), S(f32, ["n", 4]), S(f32, [4]))
    t12 = lambda t: t.transpose(1, 2)  # noqa: E731
    symcase("sym_mul_transposed_broadcast", A + "mul.Tensor", one, S(f32, [2, "n", 4, 8], view=t12),
            S(f32, [1, 1, "n", 8]))
    symcase("sym_add_transposed_both", A + "add.Tensor", one, S(f32, [2, "n", 4, 8], view=t12),
            S(f32, [2, "n", 4, 8], view=t12))
    symcase("sym_neg_transposed", A + "neg.default", one, S(f32, [2, "n", 4, 8], view=t12))
    lstm_params = [S(f32, [24, 4]), S(f32, [24, 6]), S(f32, [24]), S(f32, [24])]
    symcase("sym_lstm_batch_first", A + "lstm.input", two, S(f32, ["m", "n", 4]),
            [S(f32, [1, "m", 6]), S(f32, [1, "m", 6])], lstm_params, True, 1, 0.0, False, False,
            True)
    # (a bidirectional GRU over a symbolic length specializes it in torch: a concrete one here)
    symcase("sym_gru", A + "gru.input", two, S(f32, [8, "m", 4]), S(f32, [2, "m", 6]),
            [S(f32, [18, 4]), S(f32, [18, 6]), S(f32, [18]), S(f32, [18])] * 2, True, 1, 0.0,
            False, True, False)
    rev = lambda t: t.permute(2, 1, 0)  # noqa: E731 - [n, 1, 4] with strides [1, n, n]
    symcase("sym_relu_size_one_stride", A + "relu.default", one, S(f32, [4, 1, "n"], view=rev))
    symcase("sym_add_size_one_stride", A + "add.Tensor", one, S(f32, [4, 1, "n"], view=rev), 1)
    symcase("sym_clone_size_one_stride", A + "clone.default", one, S(f32, [4, 1, "n"], view=rev))
    symcase("sym_neg_sliced", A + "neg.default", one,
            S(f32, [2, "n", 8], view=lambda t: t[..., 4:]))
    symcase("sym_clone_transposed", A + "clone.default", one, S(f32, [2, "n", 4, 8], view=t12))
    symcase("sym_to_copy_transposed", A + "_to_copy.default", one,
            S(f32, ["n", 4], view=tr), dtype=f16)
    symcase("sym_zeros_like_transposed", A + "zeros_like.default", one, S(f32, ["n", 4], view=tr))
    symcase("sym_add_transposed_contiguous", A + "add.Tensor", one,
            S(f32, ["n", 4], view=tr), S(f32, [4, "n"]))
    # a contiguous view whose stride lacks Max(1, n//2): TensorIterator writes a new contiguous
    # output, Max(1, n//2) kept (the decomposed F.interpolate(scale_factor=1.5) does this)
    symcase("sym_mul_view_floordiv", A + "mul.Tensor", one,
            S(f32, ["n", "2*(n//2)"], view=lambda t: t.view(t.shape[0], 2, -1)), 1.25)
    # views and reshapes
    symcase("sym_view_split", A + "view.default", one, S(f32, [2, "4*n"]),
            [2, SymArg("n"), 4])
    symcase("sym_view_infer", A + "view.default", one, S(f32, [2, "n", 4]), [-1, 4])
    symcase("sym_reshape_infer", A + "reshape.default", one, S(f32, [2, "2*n"]), [2, -1, 2])
    symcase("sym_view_merge", A + "view.default", one, S(f32, [2, "n", 3, 4]),
            [2, SymArg("n"), 12])
    symcase("sym_reshape_transposed", A + "reshape.default", one,
            S(f32, [2, "n", 3, 4], view=lambda t: t.transpose(1, 2)), [2, 3, SymArg("4*n")])
    symcase("sym_view_transposed_ok", A + "view.default", one,
            S(f32, ["n", 3, 4], view=tr), [3, SymArg("n"), 2, 2])
    symcase("sym_clone_channels_last", A + "clone.default", one, S(f32, ["n", 4, 3, 3]),
            memory_format=torch.channels_last)
    symcase("sym_clone_channels_last_spatial", A + "clone.default", one, S(f32, [2, 4, "n", 3]),
            memory_format=torch.channels_last)
    symcase("sym_contiguous_channels_last_3d", A + "clone.default", one,
            S(f32, [2, 4, "n", 3, 2]), memory_format=torch.channels_last_3d)
    p0213 = lambda t: t.permute(0, 2, 1, 3)  # noqa: E731
    symcase("sym_view_size_one_permuted", A + "view.default", one,
            S(f32, [2, 1, "n", 1], view=p0213), [1, SymArg("2*n"), 1])
    symcase("sym_reshape_size_one_permuted", A + "reshape.default", one,
            S(f32, [2, 1, "n", 1], view=p0213), [1, 2, 1, SymArg("n")])
    symcase("sym_view_size_one_tail", A + "view.default", one,
            S(f32, ["n", 1, 4, 1], view=p0213), [SymArg("n"), 2, 2, 1, 1])
    symcase("sym_permute", A + "permute.default", one, S(f32, [2, "n", 4]), [2, 0, 1])
    symcase("sym_transpose", A + "transpose.int", one, S(f32, [2, "n", 4]), 1, 2)
    symcase("sym_unsqueeze", A + "unsqueeze.default", one, S(f32, [2, "n", 4]), 1)
    symcase("sym_unsqueeze_transposed", A + "unsqueeze.default", one,
            S(f32, ["n", 4], view=tr), 1)
    symcase("sym_flatten", A + "flatten.using_ints", one, S(f32, [2, "n", 4]), 1, 2)
    symcase("sym_expand", A + "expand.default", one, S(f32, [1, "n", 1]),
            [3, SymArg("n"), 5])
    symcase("sym_expand_keep", A + "expand.default", one, S(f32, [2, "n", 1]), [-1, -1, 4])
    symcase("sym_contiguous_transposed", A + "clone.default", one, S(f32, ["n", 4], view=tr),
            memory_format=torch.contiguous_format)
    # slices and selects
    symcase("sym_slice_tail", A + "slice.Tensor", one, S(f32, [2, "n"]), 1, -3,
            9223372036854775807)
    symcase("sym_slice_head", A + "slice.Tensor", one, S(f32, [2, "n"]), 1, 0, 3)
    symcase("sym_slice_mid", A + "slice.Tensor", one, S(f32, [2, "n"]), 1, 1, SymArg("n - 1"))
    symcase("sym_slice_step", A + "slice.Tensor", one, S(f32, ["n", 2]), 0, 1,
            9223372036854775807, 2)
    symcase("sym_slice_to_sym", A + "slice.Tensor", two, S(f32, ["n", 2]), 0, 0, SymArg("m"))
    symcase("sym_narrow_head", A + "narrow.default", one, S(f32, [2, "n"]), 1, 0, 3)
    symcase("sym_narrow_tail", A + "narrow.default", one, S(f32, ["n", 2]), 0, -2, 2)
    symcase("sym_narrow_to_sym", A + "narrow.default", two, S(f32, ["n", 2]), 0, 1, SymArg("m"))
    symcase("sym_narrow_transposed", A + "narrow.default", one, S(f32, ["n", 4], view=tr), 1, 1,
            SymArg("n - 1"))
    symcase("sym_select_last", A + "select.int", one, S(f32, [2, "n", 3]), 1, -1)
    symcase("sym_select_first", A + "select.int", one, S(f32, ["n", 3]), 0, 0)
    # cat / stack
    symcase("sym_cat", A + "cat.default", one, [S(f32, [2, "n"]), S(f32, [2, "n"])], 1)
    symcase("sym_cat_two", A + "cat.default", two, [S(f32, ["n", 2]), S(f32, ["m", 2])], 0)
    symcase("sym_cat_other_dim", A + "cat.default", one, [S(f32, ["n", 2]), S(f32, ["n", 3])], 1)
    symcase("sym_stack", A + "stack.default", one, [S(f32, [2, "n"]), S(f32, [2, "n"])], 1)
    # matmul family
    symcase("sym_mm", A + "mm.default", one, S(f32, ["n", 4]), S(f32, [4, 3]))
    symcase("sym_bmm", A + "bmm.default", one, S(f32, [2, "n", 4]), S(f32, [2, 4, "n"]))
    symcase("sym_matmul_batched", A + "matmul.default", one, S(f32, [2, 3, "n", 8]),
            S(f32, [2, 3, 8, "n"]))
    symcase("sym_linear", A + "linear.default", one, S(f32, [2, "n", 8]), S(f32, [4, 8]),
            S(f32, [4]))
    symcase("sym_addmm", A + "addmm.default", one, S(f32, [3]), S(f32, ["n", 4]),
            S(f32, [4, 3]))
    symcase("sym_embedding", A + "embedding.default", one, S(f32, [10, 4]), S(i64, [2, "n"]))
    # reductions and softmax
    symcase("sym_sum", A + "sum.dim_IntList", one, S(f32, [2, "n", 4]), [1])
    symcase("sym_mean_keep", A + "mean.dim", one, S(f32, [2, "n", 4]), [-1], True)
    symcase("sym_amax", A + "amax.default", one, S(f32, [2, "n", 4]), [0])
    symcase("sym_softmax", A + "_softmax.default", one, S(f32, [2, "n", "n"]), -1, False)
    # the default IR's attention, normalization, scans and pooling (issue 28)
    heads = lambda t: t.transpose(1, 2)  # noqa: E731 - [b, s, h, d] viewed as [b, h, s, d]
    symcase("sym_sdpa_causal_transposed", A + "scaled_dot_product_attention.default", one,
            S(f32, [2, "n", 4, 8], view=heads), S(f32, [2, "n", 4, 8], view=heads),
            S(f32, [2, "n", 4, 8], view=heads), None, 0.0, True)
    symcase("sym_sdpa_contiguous", A + "scaled_dot_product_attention.default", two,
            S(f32, [2, 4, "n", 8]), S(f32, [2, 4, "m", 8]), S(f32, [2, 4, "m", 8]))
    symcase("sym_sdpa_math", A + "scaled_dot_product_attention.default", one,
            S(f32, [3, "n", 8]), S(f32, [3, "n", 8]), S(f32, [3, "n", 5]))
    symcase("sym_new_ones", A + "new_ones.default", one, S(f32, [2, "n"]), [2, SymArg("n")])
    symcase("sym_layer_norm_default_ir", A + "layer_norm.default", one, S(f32, [2, "n", 8]), [8])
    symcase("sym_dropout_eval", A + "dropout.default", one, S(f32, ["n", 4], view=tr), 0.1,
            False)
    symcase("sym_cumsum", A + "cumsum.default", one, S(i64, [2, "n"]), 1)
    symcase("sym_gather", A + "gather.default", one, S(f32, [2, "n"]), 1, S(i64, [2, 3]))
    symcase("sym_max_pool2d_batch", A + "max_pool2d.default", one, S(f32, ["n", 3, 8, 8]),
            [2, 2])
    symcase("sym_adaptive_avg_pool2d_batch", A + "adaptive_avg_pool2d.default", one,
            S(f32, ["n", 4, 7, 7]), [1, 1])
    symcase("sym_layer_norm", A + "native_layer_norm.default", one, S(f32, [2, "n", 8]), [8],
            S(f32, [8]), S(f32, [8]), 1e-5)
    # upsampling a dynamic H/W (F.interpolate): an integral scale multiplies the size
    # (2*s0), another is TruncToInt(scale*ToFloat(s0)); contiguous strides keep Max(1, ...)
    # where sympy cannot drop it
    hw = {"h": 8, "w": 6}
    symcase("sym_upsample_nearest2d_scale", A + "upsample_nearest2d.vec", hw,
            S(f32, [2, 3, "h", "w"]), None, [2.0, 2.0])
    symcase("sym_upsample_nearest2d_fraction", A + "upsample_nearest2d.vec", hw,
            S(f32, [2, 3, "h", "w"]), None, [1.5, 0.5])
    symcase("sym_upsample_nearest2d_default", A + "upsample_nearest2d.default", hw,
            S(f32, [2, 3, "h", "w"]), [SymArg("h + 1"), SymArg("w")])
    symcase("sym_upsample_nearest2d_batch", A + "upsample_nearest2d.vec", one,
            S(f32, ["n", 3, 4, 5]), None, [2.0, 3.0])
    symcase("sym_upsample_bilinear2d_scale", A + "upsample_bilinear2d.vec", hw,
            S(f32, [1, 3, "h", "w"]), None, False, [2.0, 2.0])
    symcase("sym_upsample_bilinear2d_fraction", A + "upsample_bilinear2d.vec", hw,
            S(f32, [1, 3, "h", "w"]), None, True, [1.5, 2.5])
    symcase("sym_upsample_bicubic2d_fraction", A + "upsample_bicubic2d.vec", hw,
            S(f32, [1, 3, "h", "w"]), None, False, [1.5, 1.5])
    symcase("sym_upsample_nearest1d_scale", A + "upsample_nearest1d.vec", one,
            S(f32, [2, 3, "n"]), None, [3.0])
    symcase("sym_upsample_linear1d_fraction", A + "upsample_linear1d.vec", one,
            S(f32, [2, 3, "n"]), None, False, [0.7])
    symcase("sym_upsample_trilinear3d_scale", A + "upsample_trilinear3d.vec", one,
            S(f32, [1, 2, "n", 4, 4]), None, False, [2.0, 2.0, 2.0])
    nhwc = lambda t: t.permute(0, 3, 1, 2)  # noqa: E731 - [n, h, w, c] viewed as NCHW
    symcase("sym_upsample_nearest2d_channels_last", A + "upsample_nearest2d.vec", hw,
            S(f32, [2, "h", "w", 3], view=nhwc), None, [2.0, 2.0])
    symcase("sym_upsample_bilinear2d_channels_last_fraction", A + "upsample_bilinear2d.vec", hw,
            S(f32, [2, "h", "w", 3], view=nhwc), None, False, [1.5, 2.0])
    # convolutions of a dynamic H/W or length: FloorDiv output sizes
    cv = A + "convolution.default"
    symcase("sym_conv2d_same", cv, hw, S(f32, [2, 3, "h", "w"]), S(f32, [8, 3, 3, 3]),
            S(f32, [8]), [1, 1], [1, 1], [1, 1], False, [0, 0], 1)
    symcase("sym_conv2d_stride2", cv, hw, S(f32, [2, 3, "h", "w"]), S(f32, [8, 3, 3, 3]), None,
            [2, 2], [1, 1], [1, 1], False, [0, 0], 1)
    symcase("sym_conv2d_dilated_groups", cv, hw, S(f32, [1, 4, "h", "w"]), S(f32, [8, 2, 3, 2]),
            None, [1, 3], [0, 1], [2, 1], False, [0, 0], 2)
    symcase("sym_conv_transpose2d", cv, hw, S(f32, [2, 4, "h", "w"]), S(f32, [4, 3, 3, 3]),
            S(f32, [3]), [2, 2], [1, 1], [1, 1], True, [1, 0], 1)
    symcase("sym_conv1d_length", A + "conv1d.default", one, S(f32, [2, 3, "n"]),
            S(f32, [5, 3, 4]), S(f32, [5]), [2], [1])
    symcase("sym_conv2d_batch", A + "conv2d.default", one, S(f32, ["n", 3, 8, 8]),
            S(f32, [6, 3, 3, 3]))
    symcase("sym_conv_transpose2d_default_ir", A + "conv_transpose2d.input", hw,
            S(f32, [2, 8, "h", "w"]), S(f32, [8, 4, 2, 2]), S(f32, [4]), [2, 2])
    # pooling of a dynamic H/W: FloorDiv output sizes, ceil_mode's correction decided by the hint
    symcase("sym_max_pool2d_hw", A + "max_pool2d.default", hw, S(f32, [2, 3, "h", "w"]), [2, 2])
    symcase("sym_max_pool2d_with_indices_pad", A + "max_pool2d_with_indices.default", hw,
            S(f32, [2, 3, "h", "w"]), [3, 3], [2, 2], [1, 1])
    symcase("sym_avg_pool2d_ceil", A + "avg_pool2d.default", hw, S(f32, [1, 3, "h", "w"]),
            [3, 3], [2, 2], [0, 0], True)
    symcase("sym_max_pool2d_ceil_dilated", A + "max_pool2d.default", hw,
            S(f32, [1, 3, "h", "w"]), [2, 3], [2, 3], [1, 0], [1, 2], True)
    symcase("sym_avg_pool3d", A + "avg_pool3d.default", one, S(f32, [1, 2, "n", 6, 6]),
            [2, 2, 2])
    # (a symbolic length is specialized by torch's max_pool1d, which reads the size as an int)
    symcase("sym_max_pool1d_batch", A + "max_pool1d.default", one, S(f32, ["n", 3, 9]), [3],
            [2], [1])
    symcase("sym_max_pool3d_with_indices", A + "max_pool3d_with_indices.default", one,
            S(f32, [1, 2, 4, "n", 6]), [2, 2, 2], [2, 1, 2], [0, 1, 1])
    symcase("sym_grid_sampler_2d", A + "grid_sampler_2d.default", hw, S(f32, [2, 3, "h", "w"]),
            S(f32, [2, "w", 5, 2]), 0, 0, False)
    symcase("sym_grid_sampler_batch", A + "grid_sampler.default", one, S(f32, ["n", 3, 4, 4]),
            S(f32, ["n", 5, 7, 2]), 1, 0, True)
    symcase("sym_im2col", A + "im2col.default", hw, S(f32, [2, 3, "h", "w"]), [2, 2], [1, 1],
            [0, 0], [2, 2])
    symcase("sym_im2col_padded", A + "im2col.default", one, S(f32, [2, 3, "n", 6]), [3, 3],
            [1, 1], [1, 1], [1, 1])
    symcase("sym_im2col_batch", A + "im2col.default", one, S(f32, ["n", 3, 4, 6]), [2, 2],
            [1, 1], [0, 0], [2, 2])
    symcase("sym_col2im_batch", A + "col2im.default", one, S(f32, ["n", 12, 6]), [4, 6], [2, 2],
            [1, 1], [0, 0], [2, 2])
    symcase("sym_cdist", A + "_cdist_forward.default", two, S(f32, [2, "n", 4]),
            S(f32, [2, "m", 4]), 2.0, None)
    symcase("sym_cdist_default", A + "cdist.default", one, S(f32, ["n", 4]), S(f32, [3, 4]))
    symcase("sym_pdist", A + "_pdist_forward.default", one, S(f32, ["n", 3]), 2.0)
    E = A + "einsum.default"
    symcase("sym_einsum_matmul", E, one, "ij,jk->ik", [S(f32, ["n", 3]), S(f32, [3, 4])])
    symcase("sym_einsum_output_transposed", E, two, "ij,jk->ki",
            [S(f32, ["n", "m"]), S(f32, ["m", 4])])
    symcase("sym_einsum_batched", E, two, "bij,bjk->bik",
            [S(f32, ["n", 3, "m"]), S(f32, ["n", "m", 2])])
    symcase("sym_einsum_outer", E, two, "i,j->ij", [S(f32, ["n"]), S(f32, ["m"])])
    symcase("sym_einsum_interleaved", E, one, "dfa,ed", [S(f32, [3, 2, "n"]), S(f32, [4, 3])])
    symcase("sym_einsum_diagonal", E, one, "ii->i", [S(f32, ["n", "n"])])
    symcase("sym_einsum_sum", E, one, "ij->j", [S(f32, ["n", 3])])
    cl = lambda t: t.contiguous(memory_format=torch.channels_last)  # noqa: E731
    symcase("sym_constant_pad_nd_channels_last", A + "constant_pad_nd.default", one,
            S(f32, [2, 3, "n", 4], view=cl), [1, 1, 0, 1])
    symcase("sym_max_pool2d_channels_last", A + "max_pool2d_with_indices.default", one,
            S(f32, [2, 3, "n", 4], view=cl), [2, 2])
    symcase("sym_adaptive_avg_pool2d_channels_last", A + "_adaptive_avg_pool2d.default", one,
            S(f32, [2, "n", 4, 4], view=cl), [2, 2])
    symcase("sym_einsum_ellipsis", E, two, "...ij,...jk->...ik",
            [S(f32, ["n", 2, 3]), S(f32, [1, 3, "m"])])
    symcase("sym_einsum_three_path", E, one, "ij,jk,kl->li",
            [S(f32, ["n", 3]), S(f32, [3, 4]), S(f32, [4, "n"])], path=[0, 2, 0, 1])
    symcase("sym_einsum_product_transposed", E, one, "ij,ji->ij",
            [S(f32, ["n", 3]), S(f32, [3, "n"])])
    symcase("sym_einsum_product_size_one_dims", E, one, "dfeb,bd->bedf",
            [S(f32, [1, 1, 1, "n"]), S(f32, ["n", 1])])
    symcase("sym_instance_norm", A + "instance_norm.default", one, S(f32, [2, "n", 5]), None,
            None, None, None, True, 0.1, 1e-5, False)
    # factories
    symcase("sym_arange", A + "arange.default", one, SymArg("n"), dtype=i64)
    symcase("sym_arange_start", A + "arange.start", one, 2, SymArg("n"))
    symcase("sym_full", A + "full.default", one, [2, SymArg("n")], 1.0)
    symcase("sym_zeros_like", A + "zeros_like.default", one, S(f32, [2, "n"]))
    symcase("sym_to_copy", A + "_to_copy.default", one, S(f32, [2, "n"]), dtype=f16)
    # SymInt producers
    symcase("sym_size_int", A + "sym_size.int", one, S(f32, [2, "2*n"]), 1)
    symcase("sym_numel", A + "sym_numel.default", two, S(f32, [2, "n", "m"]))
    symcase("sym_stride_int", A + "sym_stride.int", one, S(f32, [2, "n", 4]), 0)
    symcase("sym_storage_offset", A + "sym_storage_offset.default", one,
            S(f32, [2, "n"], view=lambda t: t[:, 1:]))
    # Python operators on SymInts (the nodes torch.export writes for shape arithmetic)
    n = SymArg("n")
    symcase("sym_op_add", "operator.add", one, n, 1)
    symcase("sym_op_sub", "operator.sub", one, n, SymArg("2*n"))
    symcase("sym_op_mul", "operator.mul", two, n, SymArg("m"))
    symcase("sym_op_floordiv", "operator.floordiv", one, SymArg("4*n + 2"), 2)
    symcase("sym_op_floordiv_sym", "operator.floordiv", one, n, 3)
    symcase("sym_op_mod", "operator.mod", one, n, 3)
    symcase("sym_op_mod_even", "operator.mod", one, SymArg("2*n"), 2)
    symcase("sym_op_neg", "operator.neg", one, n)
    symcase("sym_op_ge_folds", "operator.ge", one, n, 2)
    symcase("sym_op_gt", "operator.gt", one, n, 4)
    symcase("sym_op_eq", "operator.eq", two, n, SymArg("m"))
    # FFT primitives and torch.fft's functions over a symbolic length (an audio model's dynamic
    # number of samples): the onesided size n//2 + 1, strides in the input's stride order
    R2C, C2R, C2C = A + "_fft_r2c.default", A + "_fft_c2r.default", A + "_fft_c2c.default"
    symcase("sym_fft_r2c_last", R2C, one, S(f32, [2, "n"]), [1], 0, True)
    symcase("sym_fft_r2c_batch_symbolic", R2C, one, S(f32, ["n", 6]), [1], 0, True)
    symcase("sym_fft_r2c_transposed", R2C, one, S(f32, [6, "n"], view=tr), [1], 0, True)
    symcase("sym_fft_r2c_two_sided_2d", R2C, two, S(f64, [3, "n", "m"]), [1, 2], 2, False)
    symcase("sym_fft_c2c", C2C, one, S(c64, ["n", 4]), [0], 0, True)
    symcase("sym_fft_c2c_transposed_2d", C2C, two, S(c64, [3, "n", "m"], view=t12), [2, 0], 1,
            False)
    symcase("sym_fft_c2r", C2R, one, S(c64, [2, "n"]), [1], 2, SymArg("2*n - 2"))
    symcase("sym_fft_c2r_2d", C2R, two, S(c128, ["m", 3, "n"]), [0, 2], 0, 7)
    symcase("sym_fft_rfft", A + "fft_rfft.default", one, S(f32, [3, "n"]))
    symcase("sym_fft_rfft_n", A + "fft_rfft.default", one, S(f32, ["n", 8]), SymArg("n + 2"), 0)
    symcase("sym_fft_irfft", A + "fft_irfft.default", one, S(c64, [3, "n"]))
    symcase("sym_fft_fft_real", A + "fft_fft.default", one, S(f32, ["n", 4]), None, 0)
    symcase("sym_fft_fft2", A + "fft_fft2.default", two, S(f32, [2, "n", "m"]))
    symcase("sym_fft_rfftn_s", A + "fft_rfftn.default", one, S(f32, [2, "n", 6]),
            [SymArg("n"), 4])
    symcase("sym_stft", A + "stft.default", one, S(f32, [2, "4*n + 40"]), 16, 4, None,
            S(f32, [16]), False, None, True)
    symcase("sym_stft_1d_real_out", A + "stft.default", one, S(f32, ["8*n"]), 16, None, None,
            None, False, None, False)
    symcase("sym_stft_center", A + "stft.center", one, S(f32, [2, "4*n + 40"]), 16, 4, None,
            S(f32, [16]), True, "reflect", False, None, True)
    symcase("sym_istft", A + "istft.default", one, S(c64, [2, 9, "n"]), 16, 4, None,
            S(f32, [16]), True, False, None, None, False)
    # (length is an `int`: torch specializes a symbolic one)
    symcase("sym_istft_1d_length", A + "istft.default", one, S(c64, [9, "n"]), 16, 4, None,
            None, True, False, None, 20, False)
    symcase("sym_istft_not_centered", A + "istft.default", one, S(c128, [2, 16, "n"]), 16, 4,
            None, None, False, False, False, None, True)
    symcase("sym_unfold", A + "unfold.default", one, S(f32, [3, "2*n"]), 1, 5, 3)
    symcase("sym_unfold_transposed", A + "unfold.default", one, S(f32, ["n", 4], view=tr), 1, 2,
            2)
    symcase("sym_angle", A + "angle.default", one, S(c64, [3, "n"]))
    symcase("sym_fft_ihfft", A + "fft_ihfft.default", one, S(f64, ["2*n", 3], view=tr))
    symcase("sym_fft_hfft2", A + "fft_hfft2.default", two, S(c64, [2, "n", "m"]))
    symcase("sym_fft_ihfft2", A + "fft_ihfft2.default", two, S(f32, ["n", 3, "m"], view=t12))
    symcase("sym_fft_ihfftn_s", A + "fft_ihfftn.default", one, S(f32, [2, "n", 6]),
            [SymArg("n"), 4])
    symcase("sym_fft_fftshift", A + "fft_fftshift.default", one, S(f32, ["n", 4], view=tr))
    symcase("sym_real", A + "real.default", one, S(c64, [3, "n"], view=tr))
    symcase("sym_imag", A + "imag.default", one, S(c128, ["n", 2]))
    symcase("sym_conj_physical", A + "_conj_physical.default", one, S(c64, [3, "n"], view=tr))


def _symbols(shape_env, syms: dict) -> dict:
    from torch._dynamo.source import ConstantSource
    from torch.fx.experimental.symbolic_shapes import DimDynamic
    out = {}
    for name, hint in syms.items():
        source = ConstantSource(f"sym_{name}")
        sym = shape_env.create_symbol(hint, source, dynamic_dim=DimDynamic.DYNAMIC)
        out[name] = shape_env.create_symintnode(sym, hint=hint, source=source)
    return out


def _size(v, env: dict):
    return eval(v, {}, dict(env)) if isinstance(v, str) else v  # noqa: S307 - the cases above


def _encode_size(v) -> Any:
    import sympy
    from torch._export.serde.serialize import _print_sympy
    if isinstance(v, int):
        return v
    if isinstance(v, torch.SymInt):
        e = v.node.expr
        if isinstance(e, sympy.Integer):
            return int(e)
        return {"expr": _print_sympy(v), "hint": v.node.hint}
    raise TypeError(f"not a size: {v!r}")


def _smeta(t: torch.Tensor) -> dict:
    return {"dtype": DT[t.dtype], "sizes": [_encode_size(s) for s in t.shape],
            "strides": [_encode_size(s) for s in t.stride()],
            "storage_offset": _encode_size(t.storage_offset())}


def _make_sym_args(a: Any, env: dict):
    """(the torch value, its encoding) of a symbolic case argument."""
    if isinstance(a, S):
        t = torch.empty([_size(s, env) for s in a.sizes], dtype=a.dtype)
        if a.view is not None:
            t = a.view(t)
        return t, {"tensor": _smeta(t)}
    if isinstance(a, SymArg):
        v = _size(a.expr, env)
        return v, {"symint": _encode_size(v)}
    if isinstance(a, (list, tuple)):
        pairs = [_make_sym_args(x, env) for x in a]
        return [p[0] for p in pairs], {"list": [p[1] for p in pairs]}
    return a, encode_arg(a)


def _encode_sym_out(v: Any) -> dict:
    import sympy
    from torch._export.serde.serialize import _print_sympy
    if isinstance(v, torch.Tensor):
        return _smeta(v)
    if isinstance(v, (list, tuple)):
        return {"tuple": [_encode_sym_out(x) for x in v]}
    if isinstance(v, (int, torch.SymInt)):
        return {"symint": _encode_size(v)}
    if isinstance(v, (bool, torch.SymBool)):
        if isinstance(v, bool) or isinstance(v.node.expr, sympy.logic.boolalg.BooleanAtom):
            return {"symbool": bool(v)}
        return {"symbool": _print_sympy(v)}
    raise TypeError(f"unexpected output {v!r}")


def run_sym_case(name: str, target: str, syms: dict, args: list, kwargs: dict) -> dict:
    from torch.fx.experimental.symbolic_shapes import ShapeEnv
    from torch.utils._sympy.numbers import IntInfinity, NegativeIntInfinity
    op = resolve(target)
    shape_env = ShapeEnv()
    with enable_python_dispatcher(), FakeTensorMode(shape_env=shape_env,
                                                    allow_non_fake_inputs=False):
        env = _symbols(shape_env, syms)
        made = [_make_sym_args(a, env) for a in args]
        made_kw = {k: _make_sym_args(v, env) for k, v in kwargs.items()}
        out = op(*[m[0] for m in made], **{k: m[0] for k, m in made_kw.items()})
        encoded = _encode_sym_out(out)
    ranges = {}
    for sym, vr in shape_env.var_to_range.items():
        lo = None if isinstance(vr.lower, NegativeIntInfinity) else int(vr.lower)
        hi = None if isinstance(vr.upper, IntInfinity) else int(vr.upper)
        ranges[str(sym)] = [lo, hi]
    return {"name": name, "target": target, "args": [m[1] for m in made],
            "kwargs": {k: m[1] for k, m in made_kw.items()}, "ranges": ranges, "out": encoded}


def build_sym_cases() -> list[dict]:
    define_sym_cases()
    out = []
    for c in SYM_CASES:
        try:
            out.append(run_sym_case(*c))
        except Exception as e:
            raise RuntimeError(f"symbolic case {c[0]} ({c[1]}) failed in torch: {e}") from e
    return out


def main(argv: list[str]) -> int:
    if torch.__version__.split("+")[0] != TORCH_VERSION:
        print(f"warning: torch {torch.__version__}, the committed cases are from {TORCH_VERSION}",
              file=sys.stderr)
    here = os.path.dirname(os.path.abspath(__file__))
    out = argv[1] if len(argv) > 1 else os.path.join(here, "..", "tests", "data",
                                                     "infer_meta_cases.json")
    cases = build_cases()
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w", encoding="utf-8") as f:
        f.write(dumps(cases))
    print(f"wrote {len(cases)} cases to {out}")
    sym_out = os.path.join(os.path.dirname(os.path.abspath(out)), "infer_meta_sym_cases.json")
    sym_cases = build_sym_cases()
    with open(sym_out, "w", encoding="utf-8") as f:
        f.write(dumps(sym_cases))
    print(f"wrote {len(sym_cases)} symbolic cases to {sym_out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
