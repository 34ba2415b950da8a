# epgraph interop zoo: small real modules that torch.export turns into the programs epgraph must
# read, print, write back and edit. Nothing here is committed output: every program is exported
# and saved at test time (see conftest.py).
# SPDX-License-Identifier: BSD-3-Clause
"""The zoo of real torch.export programs used by the interop tests.

Each entry is a ``ZooEntry``: a module factory, a function giving example inputs (also used to
draw fresh random inputs for running), optional dynamic shapes, and whether the exported program
is also lowered with ``run_decompositions()`` (the functional core-ATen form, where in-place
updates of buffers and inputs become BUFFER_MUTATION / USER_INPUT_MUTATION outputs).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional

import torch
import torch.nn.functional as F
from torch import nn


# --- custom operators (registered once per process; torch.export.load needs them too) ----------

@torch.library.custom_op("epgraph_zoo::scaled_add", mutates_args=())
def scaled_add(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
    return x + alpha * y


@scaled_add.register_fake
def _scaled_add_fake(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
    return torch.empty_like(x)


@torch.library.custom_op("epgraph_zoo::accumulate_", mutates_args=("acc",))
def accumulate_(acc: torch.Tensor, x: torch.Tensor) -> None:
    acc.add_(x)


@accumulate_.register_fake
def _accumulate_fake(acc: torch.Tensor, x: torch.Tensor) -> None:
    return None


# An operator defined by schema, for list arguments of every element kind (str[], bool[], float[])
# and an optional tensor (custom_op cannot infer str[]).
torch.library.define(
    "epgraph_zoo::tagged",
    "(Tensor x, str[] tags, bool[] mask, float[] scales, Tensor? bias) -> Tensor")


@torch.library.impl("epgraph_zoo::tagged", "CompositeExplicitAutograd")
def _tagged(x, tags, mask, scales, bias):
    out = x * sum(s for s, m in zip(scales, mask) if m) * len(tags)
    return out if bias is None else out + bias


@torch.library.register_fake("epgraph_zoo::tagged")
def _tagged_fake(x, tags, mask, scales, bias):
    return torch.empty_like(x)


# --- modules ------------------------------------------------------------------------------------

class LinearBatchNorm(nn.Module):
    """Linear + BatchNorm1d; in training mode BatchNorm updates its three buffers."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(6, 5)
        self.bn = nn.BatchNorm1d(5)

    def forward(self, x):
        return torch.relu(self.bn(self.fc(x)))


class ConvBatchNorm(nn.Module):
    """Conv2d + BatchNorm2d + pooling."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, kernel_size=3, padding=1)
        self.bn = nn.BatchNorm2d(4)

    def forward(self, x):
        return F.adaptive_avg_pool2d(F.relu(self.bn(self.conv(x))), 1).flatten(1)


class DecoderAttention(nn.Module):
    """One decoder attention block with a KV cache updated in place: ``index_copy_`` writes the
    new keys at ``input_pos``, ``copy_`` writes the new values into a slice of the value cache."""

    def __init__(self, dim: int = 16, heads: int = 2, max_seq: int = 8) -> None:
        super().__init__()
        self.heads, self.head_dim, self.max_seq = heads, dim // heads, max_seq
        self.norm = nn.LayerNorm(dim)
        self.wq = nn.Linear(dim, dim, bias=False)
        self.wk = nn.Linear(dim, dim, bias=False)
        self.wv = nn.Linear(dim, dim, bias=False)
        self.wo = nn.Linear(dim, dim, bias=False)
        self.register_buffer("k_cache", torch.zeros(1, heads, max_seq, self.head_dim))
        self.register_buffer("v_cache", torch.zeros(1, heads, max_seq, self.head_dim))
        self.register_buffer("mask", torch.tril(torch.ones(max_seq, max_seq, dtype=torch.bool)))

    def forward(self, x, input_pos):
        b, s, d = x.shape
        h = self.norm(x)
        q = self.wq(h).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.wk(h).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        v = self.wv(h).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        self.k_cache.index_copy_(2, input_pos, k)
        self.v_cache[:, :, : s].copy_(v)
        mask = self.mask[input_pos]
        attn = F.scaled_dot_product_attention(q, self.k_cache, self.v_cache, attn_mask=mask)
        return x + self.wo(attn.transpose(1, 2).reshape(b, s, d))


class NonPersistentBuffer(nn.Module):
    """A persistent and a non-persistent buffer (the latter lives in constants, not state_dict)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.register_buffer("scale", torch.full((4,), 0.5))
        self.register_buffer("rope_cache", torch.arange(8.0).reshape(2, 4), persistent=False)

    def forward(self, x):
        return self.fc(x) * self.scale + self.rope_cache.sum(0)


class LiftedConstant(nn.Module):
    """Plain tensor attributes (not parameters or buffers): lifted tensor constants."""

    def __init__(self) -> None:
        super().__init__()
        self.table = torch.tensor([1.0, -2.0, 3.5, 0.25])
        self.offsets = torch.tensor([3, 1, 2, 0])

    def forward(self, x):
        return x * self.table + self.offsets


class UserInputMutation(nn.Module):
    """Mutates one of its inputs in place and returns another value."""

    def forward(self, x, y):
        x.add_(y)
        return x * 2.0 + y


class MultiIO(nn.Module):
    """Several inputs (positional, nested tuple, dict, keyword) and outputs including an int, a
    None and a nested structure."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x, pair, table, *, bias):
        a, b = pair
        y = self.fc(x) + a - b
        z = table["w"] * table["v"] + bias
        return y, (z, y.sum()), 7, None


class DynamicShapes(nn.Module):
    """Batch and sequence sizes exported as symbols (torch.export.Dim), with range constraints;
    returns a symbolic int and a symbolic float too."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(8, 4)

    def forward(self, x, y):
        h = self.fc(x).sum(1)
        return torch.cat([h, y], dim=0), x.shape[0] * 2, x.shape[0] / 4


class CondControlFlow(nn.Module):
    """torch.cond on a data-dependent predicate: two nested graphs (true/false branches)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.register_buffer("shift", torch.tensor([0.5, -0.5, 1.0, 0.0]))

    def forward(self, x):
        def true_fn(t, shift):
            return torch.sin(t) + shift

        def false_fn(t, shift):
            return torch.cos(t) - shift

        h = self.fc(x)
        return torch.cond(h.sum() > 0, true_fn, false_fn, (h, self.shift))


class EffectfulPrint(nn.Module):
    """aten::_print is an ordered side effect: the functional form threads effect tokens."""

    def forward(self, x):
        torch.ops.aten._print("epgraph interop zoo")
        return x + 1


class CustomOps(nn.Module):
    """A functional custom op and a custom op that mutates a buffer in place."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("acc", torch.zeros(4))

    def forward(self, x, y):
        z = torch.ops.epgraph_zoo.scaled_add(x, y, 0.5)
        torch.ops.epgraph_zoo.accumulate_(self.acc, z)
        return z * 2


class NoGradRegion(nn.Module):
    """A `torch.no_grad()` region inside forward: kept as a nested graph in the training IR."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        with torch.no_grad():
            y = torch.sin(x) * 3
        return self.fc(y) + x


class TiedAndStrided(nn.Module):
    """Tied weights (one tensor under two names), a buffer that is a transposed (non-contiguous)
    view, and integer / boolean buffers."""

    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(10, 6)
        self.head = nn.Linear(6, 10, bias=False)
        self.head.weight = self.emb.weight
        self.register_buffer("proj_t", torch.arange(24.0).reshape(6, 4).t())
        self.register_buffer("counts", torch.arange(10, dtype=torch.int64))
        self.register_buffer("keep", torch.tensor([True, False, True, True, False, True]))

    def forward(self, ids):
        h = self.emb(ids) * self.keep
        logits = self.head(h) + self.counts
        return logits, h @ self.proj_t.t()


class ParameterMutation(nn.Module):
    """Updates a parameter in place (under no_grad): PARAMETER_MUTATION once decomposed."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.ones(3))

    def forward(self, x):
        with torch.no_grad():
            self.w.add_(1)
        return x * self.w


class ConstantInputs(nn.Module):
    """Non-tensor user inputs (int, float, bool, str, None): specialized to their values."""

    def forward(self, x, n: int, scale: float, flag: bool, mode: str, nothing=None):
        if flag and mode == "scale" and nothing is None:
            return x * n * scale
        return x


class UnbackedSymInts(nn.Module):
    """Data-dependent sizes (nonzero, item): unbacked symbols, runtime assertions."""

    def forward(self, x):
        idx = x.nonzero()
        n = (x > 0).sum().item()
        torch._check(n >= 0)
        return idx, torch.zeros(n)


class WhileLoop(nn.Module):
    """torch._higher_order_ops.while_loop: cond and body graphs; a lifted tensor constant."""

    def forward(self, x):
        from torch._higher_order_ops.while_loop import while_loop

        def cond_fn(i, v):
            return i < 3

        def body_fn(i, v):
            return i + 1, v * 2

        return while_loop(cond_fn, body_fn, (torch.tensor(0), x))


class MapLoop(nn.Module):
    """torch._higher_order_ops.map over the first dimension: a body graph."""

    def forward(self, xs, y):
        from torch._higher_order_ops.map import map as hop_map

        return hop_map(lambda x, y: torch.sin(x) + y, xs, y)


class AutocastRegion(nn.Module):
    """A torch.autocast region: kept as a nested graph (wrap_with_autocast) in the training IR."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            y = self.fc(x)
        return y.float()


class TensorFactories(nn.Module):
    """Arguments of every scalar kind: dtype, device, layout, memory_format, inf, None, lists,
    and a multi-output op (split)."""

    def forward(self, x):
        a = x.to(torch.float64)
        b = torch.zeros(2, 3, dtype=torch.int32, device="cpu")
        c = torch.empty_like(x, memory_format=torch.contiguous_format).fill_(1.0)
        d = torch.full((2,), float("inf"))
        e = F.layer_norm(x, [x.shape[-1]], None, None, 1e-6)
        f = torch.ones(2, layout=torch.strided)
        return a, b, c, d, e, f, x.unflatten(1, (2, 2)), torch.split(x, [1, 3], dim=1)


class ComplexScalar(nn.Module):
    """A complex scalar argument (as_complex)."""

    def forward(self, x):
        return torch.view_as_real(x.to(torch.complex64) * (1.5 - 2j))


class TorchBindObject(nn.Module):
    """A TorchBind object attribute (CUSTOM_OBJ input): an op taking it and a method call
    (call_torchbind). Needs libtorchbind_test.so (see load_torchbind)."""

    def __init__(self) -> None:
        super().__init__()
        self.attr = torch.classes._TorchScriptTesting._Foo(10, 20)
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        a = torch.ops._TorchScriptTesting.takes_foo(self.attr, x)
        b = self.attr.add_tensor(x)
        return self.fc(a + b)


class Loss(nn.Module):
    """A scalar loss: the joint forward-backward program has LOSS_OUTPUT and
    GRADIENT_TO_PARAMETER outputs."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return (self.fc(x) ** 2).sum()


class ListArguments(nn.Module):
    """List arguments (float[] of interpolate, str[] / bool[] / float[] of a custom op, an
    optional tensor) and a symbolic float (a dynamic size divided by 2)."""

    def forward(self, x, b):
        y = F.interpolate(x, scale_factor=2.0, mode="bilinear")
        z = torch.ops.epgraph_zoo.tagged(x, ["a", "b"], [True, False], [0.5, 1.5], b)
        w = torch.full((2,), x.shape[0] / 2)
        return y, z, w


class StrictOrder(nn.Module):
    """Exported with strict=True, torch 2.13 orders the lifted constant before the buffer:
    inputs PARAMETER, CONSTANT_TENSOR, BUFFER, USER_INPUT (torch's verifier accepts it)."""

    def __init__(self) -> None:
        super().__init__()
        self.gain = torch.tensor([1.5, 0.5, 2.0])
        self.register_buffer("offset", torch.tensor([0.25, -1.0, 3.0]))
        self.w = nn.Parameter(torch.tensor([1.0, 2.0, -0.5]))

    def forward(self, x):
        return x * self.gain + self.offset + self.w


class EffectOnly(nn.Module):
    """Only a side effect: outputs are the effect token and None; the input is unused."""

    def forward(self, x):
        torch.ops.aten._print("epgraph interop zoo: effect only")
        return None


class NoUserInputs(nn.Module):
    """forward(self) without arguments: the inputs are a parameter and a buffer only."""

    def __init__(self) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.tensor([1.0, 2.0, -3.0]))
        self.register_buffer("scale", torch.tensor([0.5, 4.0, 2.0]))

    def forward(self):
        return self.w * self.scale


class CustomObjFirst(nn.Module):
    """A TorchBind object and no parameter or buffer: the first input is the CUSTOM_OBJ."""

    def __init__(self) -> None:
        super().__init__()
        self.attr = torch.classes._TorchScriptTesting._Foo(10, 20)

    def forward(self, x):
        return torch.ops._TorchScriptTesting.takes_foo(self.attr, x) + 1


_TORCHBIND = {"loaded": None}


def load_torchbind() -> Optional[str]:
    """Loads PyTorch's TorchBind test classes (torch/lib/libtorchbind_test.so, shipped in the
    wheel) and their fake implementations. Returns None, or why they are unavailable."""
    if _TORCHBIND["loaded"] is None:
        import os

        lib = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorchbind_test.so")
        if not os.path.exists(lib):
            _TORCHBIND["loaded"] = f"{lib} does not exist in this torch build"
        else:
            try:
                torch.ops.load_library(lib)
                from torch.testing._internal import torchbind_impls

                torchbind_impls.register_fake_operators()
                torchbind_impls.register_fake_classes()
                _TORCHBIND["loaded"] = ""
            except Exception as e:  # noqa: BLE001
                _TORCHBIND["loaded"] = f"loading {lib} failed: {type(e).__name__}: {e}"
    return _TORCHBIND["loaded"] or None


# --- the zoo ------------------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True)
class ZooEntry:
    name: str
    make: Callable[[], nn.Module]
    inputs: Callable[[torch.Generator], tuple]  # (args tuple, kwargs dict)
    features: tuple  # schema features this entry is meant to exercise (see FEATURES)
    dynamic_shapes: Optional[Callable[[], Any]] = None
    decompose: bool = False  # export, then run_decompositions()
    train: bool = False
    # How the tests run the program: "module" (ep.module()) or "graph" (the graph module on the
    # flat inputs, for a joint forward-backward program, which has no unlifted module).
    run: str = "module"
    # "export" (torch.export.export) or "joint" (then _export_forward_backward).
    kind: str = "export"
    requires: Optional[Callable[[], Optional[str]]] = None  # returns why it cannot be made
    strict: bool = False  # torch.export.export(..., strict=True) (TorchDynamo tracing)


def _randn(g, *shape):
    return torch.randn(*shape, generator=g)


def _kv_inputs(g):
    start = int(torch.randint(0, 5, (1,), generator=g))
    return (_randn(g, 1, 3, 16), torch.arange(start, start + 3)), {}


def _multi_io_inputs(g):
    return (
        _randn(g, 2, 3),
        (_randn(g, 2, 3), _randn(g, 2, 3)),
        {"w": _randn(g, 5), "v": _randn(g, 5)},
    ), {"bias": _randn(g, 5)}


def _dynamic_inputs(g):
    batch = int(torch.randint(2, 9, (1,), generator=g))
    return (_randn(g, batch, 5, 8), _randn(g, 3, 4)), {}


def _dynamic_shapes():
    batch = torch.export.Dim("batch", min=2, max=64)
    return {"x": {0: batch}, "y": {0: torch.export.Dim("rows", max=32)}}


def _list_inputs(g):
    n = int(torch.randint(2, 9, (1,), generator=g))
    return (_randn(g, n, 1, 4, 4), _randn(g, 4)), {}


def _tied_inputs(g):
    return (torch.randint(0, 10, (2, 3), generator=g),), {}


ZOO = [
    ZooEntry("linear_bn_train", LinearBatchNorm, lambda g: ((_randn(g, 4, 6),), {}),
             ("parameter", "buffer", "in_place_training_ir"), train=True),
    ZooEntry("linear_bn_train_decomposed", LinearBatchNorm, lambda g: ((_randn(g, 4, 6),), {}),
             ("parameter", "buffer", "buffer_mutation", "getitem"),
             train=True, decompose=True),
    ZooEntry("conv_bn_eval", ConvBatchNorm, lambda g: ((_randn(g, 2, 3, 8, 8),), {}),
             ("parameter", "buffer")),
    ZooEntry("conv_bn_train_decomposed", ConvBatchNorm,
             lambda g: ((_randn(g, 2, 3, 8, 8),), {}),
             ("parameter", "buffer", "buffer_mutation", "getitem"), train=True, decompose=True),
    ZooEntry("decoder_kv_cache", DecoderAttention, _kv_inputs,
             ("parameter", "buffer", "in_place_training_ir")),
    ZooEntry("decoder_kv_cache_decomposed", DecoderAttention, _kv_inputs,
             ("parameter", "buffer", "buffer_mutation"), decompose=True),
    ZooEntry("non_persistent_buffer", NonPersistentBuffer, lambda g: ((_randn(g, 2, 4),), {}),
             ("buffer", "non_persistent_buffer")),
    ZooEntry("lifted_constant", LiftedConstant, lambda g: ((_randn(g, 3, 4),), {}),
             ("constant_tensor",)),
    ZooEntry("user_input_mutation", UserInputMutation,
             lambda g: ((_randn(g, 3), _randn(g, 3)), {}), ("in_place_training_ir",)),
    ZooEntry("user_input_mutation_decomposed", UserInputMutation,
             lambda g: ((_randn(g, 3), _randn(g, 3)), {}), ("user_input_mutation",),
             decompose=True),
    ZooEntry("multi_io", MultiIO, _multi_io_inputs,
             ("nested_inputs", "keyword_inputs", "constant_output_int", "constant_output_none")),
    ZooEntry("dynamic_shapes", DynamicShapes, _dynamic_inputs,
             ("symbolic_sizes", "range_constraints", "sym_int_output", "sym_float_output"),
             dynamic_shapes=_dynamic_shapes),
    ZooEntry("cond", CondControlFlow, lambda g: ((_randn(g, 2, 4),), {}),
             ("nested_graph", "get_attr")),
    ZooEntry("effect_tokens", EffectfulPrint, lambda g: ((_randn(g, 3),), {}),
             ("token",), decompose=True),
    ZooEntry("custom_ops", CustomOps, lambda g: ((_randn(g, 4), _randn(g, 4)), {}),
             ("custom_op",)),
    ZooEntry("custom_ops_decomposed", CustomOps, lambda g: ((_randn(g, 4), _randn(g, 4)), {}),
             ("custom_op", "buffer_mutation", "auto_functionalized"), decompose=True),
    ZooEntry("no_grad_region", NoGradRegion, lambda g: ((_randn(g, 2, 4),), {}),
             ("nested_graph",), train=True),
    ZooEntry("tied_and_strided", TiedAndStrided, _tied_inputs,
             ("tied_weights", "strided_buffer", "int_bool_buffers")),
    ZooEntry("parameter_mutation_decomposed", ParameterMutation,
             lambda g: ((_randn(g, 3),), {}), ("parameter_mutation",), decompose=True),
    ZooEntry("constant_inputs", ConstantInputs,
             lambda g: ((_randn(g, 3), 3, 0.5, True, "scale", None), {}), ("constant_inputs",)),
    ZooEntry("unbacked_symints", UnbackedSymInts,
             lambda g: ((_randn(g, 6),), {}), ("unbacked_symbols", "range_constraints")),
    ZooEntry("while_loop", WhileLoop, lambda g: ((_randn(g, 3),), {}),
             ("nested_graph", "constant_tensor")),
    ZooEntry("map", MapLoop, lambda g: ((_randn(g, 3, 2), _randn(g, 2)), {}), ("nested_graph",)),
    ZooEntry("autocast_region", AutocastRegion, lambda g: ((_randn(g, 2, 4),), {}),
             ("nested_graph",)),
    ZooEntry("tensor_factories", TensorFactories, lambda g: ((_randn(g, 2, 4),), {}),
             ("scalar_arguments", "getitem")),
    ZooEntry("complex_scalar", ComplexScalar, lambda g: ((_randn(g, 3),), {}),
             ("complex_argument",)),
    ZooEntry("torchbind", TorchBindObject, lambda g: ((_randn(g, 3, 3),), {}),
             ("custom_obj",), requires=load_torchbind),
    ZooEntry("torchbind_decomposed", TorchBindObject, lambda g: ((_randn(g, 3, 3),), {}),
             ("custom_obj", "token"), decompose=True, requires=load_torchbind),
    ZooEntry("list_arguments", ListArguments, _list_inputs,
             ("list_arguments", "sym_float_argument", "symbolic_sizes"),
             dynamic_shapes=lambda: {"x": {0: torch.export.Dim("n", min=2, max=8)}, "b": None}),
    ZooEntry("joint_forward_backward", Loss, lambda g: ((_randn(g, 2, 3),), {}),
             ("loss_output", "gradient_to_parameter"), kind="joint", run="graph"),
    # Added for the ExecuTorch oracle grid (test_oracle_grid.py, issue 13).
    ZooEntry("sequential", lambda: nn.Sequential(nn.Linear(3, 2), nn.ReLU()),
             lambda g: ((_randn(g, 1, 3),), {}), ("parameter",)),
    ZooEntry("non_persistent_buffer_strict", NonPersistentBuffer,
             lambda g: ((_randn(g, 2, 4),), {}), ("buffer", "non_persistent_buffer"),
             strict=True),
    ZooEntry("effect_only", EffectOnly, lambda g: ((_randn(g, 3),), {}),
             ("token", "constant_output_none"), decompose=True),
    ZooEntry("no_user_inputs", NoUserInputs, lambda g: ((), {}), ("parameter", "buffer")),
    ZooEntry("custom_obj_first", CustomObjFirst, lambda g: ((_randn(g, 3, 3),), {}),
             ("custom_obj",), requires=load_torchbind),
]

BY_NAME = {e.name: e for e in ZOO}

# Programs only the ExecuTorch oracle grid (test_oracle_grid.py) runs, because test_zoo.py cannot
# take them as they are: strict_order departs from torch's canonical input order (`pt2_edit
# validate` warns, test_fidelity.py checks that), and the signature torch.export returns in memory
# marks its lifted constant persistent=True, which torch's own serializer does not keep.
ORACLE_ONLY = [
    ZooEntry("strict_order", StrictOrder, lambda g: ((_randn(g, 3),), {}),
             ("parameter", "buffer", "constant_tensor"), strict=True),
]
BY_NAME.update({e.name: e for e in ORACLE_ONLY})


def export_entry(entry: ZooEntry) -> torch.export.ExportedProgram:
    """Exports one zoo entry with torch.export.export (and run_decompositions when asked)."""
    torch.manual_seed(0)
    module = entry.make()
    module.train(entry.train)
    args, kwargs = entry.inputs(torch.Generator().manual_seed(1))
    dynamic = entry.dynamic_shapes() if entry.dynamic_shapes else None
    ep = torch.export.export(module, args, kwargs, dynamic_shapes=dynamic, strict=entry.strict)
    if entry.decompose:
        ep = ep.run_decompositions()
    if entry.kind == "joint":
        from torch.export.experimental import _export_forward_backward

        ep = _export_forward_backward(ep)
    return ep


def run_graph(ep, args, kwargs):
    """Runs the graph module of `ep` on its flat inputs (parameters, buffers and constants from
    the program, then the user inputs), as torch's unlifting would; returns the flat outputs."""
    from torch.export.graph_signature import InputKind

    user = iter(torch.utils._pytree.tree_leaves((args, kwargs)))
    flat = []
    for spec in ep.graph_signature.input_specs:
        if spec.kind == InputKind.USER_INPUT:
            flat.append(next(user))
        elif spec.kind == InputKind.TOKEN:
            flat.append(torch.tensor([]))
        elif spec.target in ep.state_dict:
            flat.append(ep.state_dict[spec.target])
        else:
            flat.append(ep.constants[spec.target])
    return tuple(ep.graph_module(*flat))
