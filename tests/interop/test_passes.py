# epgraph's C++ passes proven through PyTorch. SPDX-License-Identifier: BSD-3-Clause
"""Passes written in C++ (examples/pt2_passes.cpp) on programs torch.export produced give files that
torch 2.13 loads, verifies and runs with the right numbers.

For each pass family a small real nn.Module (fixed seed) is exported by torch.export and saved by
torch.export.save; `pt2_passes <pass>` rewrites the archive; then torch.export.load reads the
result (which runs torch's verifier), `ExportedProgram.validate()` runs it again explicitly, and
`ep.module()` is run and compared with the same edit done in Python. Every test also checks that
the `meta["val"]` the C++ pass gave each new node (which torch trusts without recomputing) is
what the node really computes (shape, dtype, strides; assert_vals_match_run), and that epgraph
reads the file back as torch does (`pt2_edit show` prints torch's graph and signature exactly).

- kv-cache: an attention with inputs (x, input_pos); two successive calls at different positions
  give the outputs and the mutated k/v cache buffers of a Python implementation of the cache;
- fold-conv-bn: conv + eval batch norm, as exported (aten.conv2d + aten.batch_norm) and
  decomposed (aten.convolution + aten._native_batch_norm_legit_no_training + getitem): equal to
  the unfused eval module within float tolerance, with the batch norm and old weights gone;
- quantize-linear: equal to a Python reference that quantizes/dequantizes each linear's input
  with the same parameters (torch needs `import torch.ao.quantization.fx._decomposed` before
  loading: the quantized_decomposed operators are defined there);
- misc-ops, multi-output: equal to the same operators applied in Python to the module's output;
- custom-op: the operator epgraph_test::scale_add is defined here with torch.library (custom_op
  + register_fake) before loading, as any program using a user operator needs;
- graft: graph_copy of a torch.cond program onto another one's output; the copied branches get
  fresh targets (or the given ones) and torch runs the right branch of both conds for inputs
  taking each branch, where torch.fx's own graph_copy calls the destination's branches;
- the command line: bad usage or input exits with 2, a program verify rejects with 1 (and no
  file is written);
- mutation and aliasing (inplace-to-functional, relu-to-clamp on training-IR graphs with add_):
  a match whose rewrite torch.fx gets wrong (a view outside it reads what its add_ wrote; the
  copy would read a tensor after an add_ outside it) is refused and the file keeps eager's
  numbers, which the test shows torch.fx's own rewrite does not; a match nobody outside sees is
  rewritten as torch.fx rewrites it;
- patterns torch.fx 2.13 gets wrong (issue 31's shared cases d02, d03): unreached-pattern, whose
  add_ no returned node reaches, is refused (exit 2) where torch.fx raises KeyError after
  rewriting `relu(x) * 2` into `relu(x + 1) * 2`; two-outputs is refused where its replacement
  would read `y` before it is computed (torch.fx's graph fails lint) and rewritten with eager's
  numbers, after `y`'s producer, where `y` comes first.

Environment: EPGRAPH_PT2_PASSES, the built pt2_passes (set by ctest; the tests skip without it),
and conftest.py's EPGRAPH_PT2_EDIT and EPGRAPH_INTEROP_WORKDIR.
"""

from __future__ import annotations

import json
import pathlib
import zipfile

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from conftest import Tool, tool_path

# Defines torch.ops.quantized_decomposed.*: torch.export.load of the quantize-linear result needs
# it, exactly as for a program quantized by PT2E in Python.
import torch.ao.quantization.fx._decomposed  # noqa: F401,E402


# The user operator the custom-op pass calls; its schema must be the one pt2_passes registers:
# epgraph_test::scale_add(Tensor x, Tensor y, *, float alpha=1.0) -> Tensor
@torch.library.custom_op("epgraph_test::scale_add", mutates_args=())
def scale_add(x: torch.Tensor, y: torch.Tensor, *, alpha: float = 1.0) -> torch.Tensor:
    return x + alpha * y


@scale_add.register_fake
def _scale_add_fake(x: torch.Tensor, y: torch.Tensor, *, alpha: float = 1.0) -> torch.Tensor:
    return torch.empty_like(x)


# --- fixtures and helpers -------------------------------------------------------------------------

class Passes(Tool):
    """Runs pt2_passes and returns its CompletedProcess (text mode); `edit` is conftest's pt2_edit
    runner."""

    def __init__(self, path: str, edit) -> None:
        super().__init__(path, "pt2_passes")
        self.edit = edit


@pytest.fixture(scope="session")
def pt2_passes(pt2_edit) -> Passes:
    return Passes(tool_path("EPGRAPH_PT2_PASSES"), pt2_edit)


@pytest.fixture(scope="session")
def folder(workdir) -> pathlib.Path:
    out = workdir / "passes"
    out.mkdir(parents=True, exist_ok=True)
    return out


def export_and_save(module: nn.Module, args, path: pathlib.Path, decompose: bool = False):
    ep = torch.export.export(module, args)
    if decompose:
        ep = ep.run_decompositions()
    torch.export.save(ep, str(path))
    return ep


def apply_pass(pt2_passes: Passes, name: str, src: pathlib.Path, dst: pathlib.Path, *options):
    """Runs `pt2_passes name src -o dst options`, then loads dst with torch (whose loader runs the
    verifier) and runs torch's verifier once more explicitly (ExportedProgram.validate). epgraph
    reading dst back (`pt2_edit show`) must print exactly the graph and signature torch loaded."""
    pt2_passes.run(name, src, "-o", dst, *options)
    ep = torch.export.load(str(dst))
    ep.validate()
    assert pt2_passes.edit.run("show", dst).stdout == str(ep.graph) + "\n" + str(ep.graph_signature)
    return ep


def _check_val(node, real, val) -> None:
    if isinstance(val, (tuple, list)):
        assert isinstance(real, (tuple, list)) and len(real) == len(val), node.name
        for r, v in zip(real, val):
            _check_val(node, r, v)
    elif isinstance(val, torch.Tensor):
        got = (tuple(real.shape), real.dtype, real.stride())
        want = (tuple(val.shape), val.dtype, val.stride())
        assert got == want, f"{node.name} ({node.target}): meta['val'] {want}, computes {got}"


def assert_vals_match_run(ep, *user_args) -> None:
    """Every node's meta["val"] (written by the C++ pass for its new nodes; torch trusts it and
    does not recompute it) has the shape, dtype and strides the node really computes: the graph
    is run node by node (torch.fx.Interpreter) on its state and `user_args`."""
    state = {**ep.state_dict, **ep.constants}
    user = iter(user_args)
    inputs = [next(user) if s.kind.name == "USER_INPUT" else state[s.target]
              for s in ep.graph_signature.input_specs]

    class Checker(torch.fx.Interpreter):
        def run_node(self, n):
            out = super().run_node(n)
            if n.op == "call_function":
                _check_val(n, out, n.meta.get("val"))
            return out

    with torch.no_grad():
        Checker(ep.graph_module).run(*inputs)


def targets(ep) -> list[str]:
    return [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]


def fake_quant(t, scale, zero_point):
    q = torch.ops.quantized_decomposed.quantize_per_tensor(t, scale, zero_point, -128, 127,
                                                           torch.int8)
    return torch.ops.quantized_decomposed.dequantize_per_tensor(q, scale, zero_point, -128, 127,
                                                                torch.int8)


# --- (a) kv-cache ---------------------------------------------------------------------------------

class Attention(nn.Module):
    """Multi-head self-attention over x [B, T, D]; input_pos names the positions of x's tokens
    (used only once the KV cache is added)."""

    def __init__(self, dim: int = 8, heads: int = 2) -> None:
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.q, self.k, self.v = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)

    def split(self, t):
        b, s, _ = t.shape
        return t.view(b, s, self.heads, self.head_dim).transpose(1, 2)

    def forward(self, x, input_pos):
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        y = F.scaled_dot_product_attention(q, k, v)
        return y.transpose(1, 2).reshape(x.shape)

    def reference(self, x, input_pos, k_cache, v_cache):
        """The attention with a KV cache, in Python: writes k/v at input_pos, attends over the
        whole cache. Returns the output and the new caches."""
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        k_cache = k_cache.index_copy(2, input_pos, k)
        v_cache = v_cache.index_copy(2, input_pos, v)
        y = F.scaled_dot_product_attention(q, k_cache, v_cache)
        return y.transpose(1, 2).reshape(x.shape), k_cache, v_cache


def test_kv_cache(pt2_passes, folder):
    torch.manual_seed(0)
    model = Attention().eval()
    steps = 3
    src, dst = folder / "attention.pt2", folder / "attention_kv.pt2"
    export_and_save(model, (torch.randn(1, steps, 8), torch.arange(steps)), src)
    max_seq = 8
    ep = apply_pass(pt2_passes, "kv-cache", src, dst, "--max-seq", max_seq)
    assert_vals_match_run(ep, torch.randn(1, steps, 8), torch.arange(steps))

    sig = ep.graph_signature
    assert sorted(sig.buffers_to_mutate.values()) == ["k_cache", "v_cache"]
    assert [t for t in targets(ep) if "index_copy" in t] == ["aten.index_copy.default"] * 2
    assert ep.state_dict["k_cache"].shape == (1, 2, max_seq, 4)
    assert torch.equal(ep.state_dict["k_cache"], torch.zeros(1, 2, max_seq, 4))

    module = ep.module()
    k_cache = v_cache = torch.zeros(1, 2, max_seq, 4)
    gen = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for call in range(2):  # two successive calls at different positions
            x = torch.randn(1, steps, 8, generator=gen)
            pos = torch.arange(call * steps, (call + 1) * steps)
            out = module(x, pos)
            expected, k_cache, v_cache = model.reference(x, pos, k_cache, v_cache)
            torch.testing.assert_close(out, expected)
            buffers = dict(module.named_buffers())
            torch.testing.assert_close(buffers["k_cache"], k_cache)
            torch.testing.assert_close(buffers["v_cache"], v_cache)
    assert torch.count_nonzero(k_cache[:, :, 2 * steps:]) == 0  # untouched positions stay zero


# --- (b) fold-conv-bn -----------------------------------------------------------------------------

class ConvBN(nn.Module):
    """Two conv + batch norm pairs (the second conv without bias), in eval mode."""

    def __init__(self) -> None:
        super().__init__()
        self.conv1, self.bn1 = nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4)
        self.conv2, self.bn2 = nn.Conv2d(4, 5, 3, padding=1, bias=False), nn.BatchNorm2d(5)
        for bn in (self.bn1, self.bn2):  # trained-looking statistics and affine parameters
            with torch.no_grad():
                bn.running_mean.uniform_(-1.0, 1.0)
                bn.running_var.uniform_(0.5, 2.0)
                bn.weight.uniform_(0.5, 1.5)
                bn.bias.uniform_(-0.5, 0.5)

    def forward(self, x):
        return self.bn2(self.conv2(torch.relu(self.bn1(self.conv1(x)))))


@pytest.mark.parametrize("decompose", [False, True], ids=["training_ir", "decomposed"])
def test_fold_conv_bn(pt2_passes, folder, decompose):
    torch.manual_seed(0)
    model = ConvBN().eval()
    x = torch.randn(2, 3, 8, 8)
    name = "conv_bn_decomposed" if decompose else "conv_bn"
    src, dst = folder / f"{name}.pt2", folder / f"{name}_folded.pt2"
    original = export_and_save(model, (x,), src, decompose)
    bn_op = "aten._native_batch_norm_legit_no_training.default" if decompose \
        else "aten.batch_norm.default"
    assert targets(original).count(bn_op) == 2
    ep = apply_pass(pt2_passes, "fold-conv-bn", src, dst)
    assert_vals_match_run(ep, x)

    assert not [t for t in targets(ep) if "batch_norm" in t], targets(ep)
    assert not [k for k in ep.state_dict if k.startswith(("bn1.", "bn2.", "conv1.", "conv2."))]
    assert len([s for s in ep.graph_signature.input_specs if s.kind.name == "PARAMETER"]) == 4
    gen = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for _ in range(2):
            x = torch.randn(2, 3, 8, 8, generator=gen)
            torch.testing.assert_close(ep.module()(x), model(x), rtol=1e-5, atol=1e-5)


# --- (c) quantize-linear --------------------------------------------------------------------------

class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(8, 16), nn.Linear(16, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def test_quantize_linear(pt2_passes, folder):
    torch.manual_seed(0)
    model = MLP().eval()
    src, dst = folder / "mlp.pt2", folder / "mlp_quantized.pt2"
    export_and_save(model, (torch.randn(4, 8),), src)
    scale, zero_point = 0.03, -5
    ep = apply_pass(pt2_passes, "quantize-linear", src, dst,
                    "--scale", scale, "--zero-point", zero_point)
    assert_vals_match_run(ep, torch.randn(4, 8))

    q = "quantized_decomposed.quantize_per_tensor.default"
    dq = "quantized_decomposed.dequantize_per_tensor.default"
    assert [t for t in targets(ep) if t in (q, dq, "aten.linear.default")] == \
        [q, dq, "aten.linear.default"] * 2
    gen = torch.Generator().manual_seed(3)
    with torch.no_grad():
        x = 3 * torch.randn(4, 8, generator=gen)  # some values beyond the int8 range saturate
        hidden = torch.relu(F.linear(fake_quant(x, scale, zero_point), model.fc1.weight,
                                     model.fc1.bias))
        expected = F.linear(fake_quant(hidden, scale, zero_point), model.fc2.weight,
                            model.fc2.bias)
        out = ep.module()(x)
        torch.testing.assert_close(out, expected)
        assert not torch.allclose(out, model(x), atol=1e-4)  # the quantization is really there



def test_quantize_linear_on_the_dynamic_decoder(pt2_passes, folder):
    """The pass on a program with a dynamic sequence length (the Llama-style decoder of
    test_propagate_meta.py, default IR): each inserted node gets its value from infer_meta with
    the symbolic length torch gave the linear's input, torch loads and verifies the result,
    `validate --meta` finds every value equal to what epgraph recomputes, and the program still
    runs at other lengths with the numbers of the decoder whose linears read fake-quantized
    inputs."""
    from test_propagate_meta import export_decoder, meta_counts
    model, exported, inputs = export_decoder(sdpa=False, decompose=False)
    src, dst = folder / "decoder_dynamic.pt2", folder / "decoder_dynamic_quantized.pt2"
    torch.export.save(exported, str(src))
    scale, zero_point = 0.02, 3
    ep = apply_pass(pt2_passes, "quantize-linear", src, dst,
                    "--scale", scale, "--zero-point", zero_point)

    q = "quantized_decomposed.quantize_per_tensor.default"
    dq = "quantized_decomposed.dequantize_per_tensor.default"
    # 2 blocks x (q, k, v, o, gate, up, down) + the head: 15 linears, each behind a pair
    assert [t for t in targets(ep) if t in (q, dq, "aten.linear.default")] == \
        [q, dq, "aten.linear.default"] * 15
    symbolic = 0
    for node in ep.graph.nodes:
        if str(node.target) not in (q, dq):
            continue
        val, src_val = node.meta["val"], node.args[0].meta["val"]
        assert [str(s) for s in val.shape] == [str(s) for s in src_val.shape], node.name
        assert [str(s) for s in val.stride()] == [str(s) for s in src_val.stride()], node.name
        assert val.dtype == (torch.int8 if str(node.target) == q else torch.float32), node.name
        symbolic += any(not isinstance(s, int) for s in val.shape)
    assert symbolic == 30  # every inserted value has the sequence length as a symbol

    proc = pt2_passes.edit.run("validate", dst, "--meta")
    nodes, computed, equal, differ, uncomputed = meta_counts(proc.stdout)
    assert differ == 0 and equal == computed == nodes - uncomputed, proc.stdout
    assert computed == nodes, proc.stdout  # the decoder without SDPA: a rule for every op

    hooks = [m.register_forward_pre_hook(
        lambda _m, args: (fake_quant(args[0], scale, zero_point),) + tuple(args[1:]))
        for m in model.modules() if isinstance(m, nn.Linear)]
    try:
        module = ep.module()
        with torch.no_grad():
            for tokens in inputs:  # lengths 12 (the example), 5 and 33
                out = module(tokens)
                torch.testing.assert_close(out, model(tokens), rtol=1e-4, atol=1e-4)
    finally:
        for h in hooks:
            h.remove()
    with torch.no_grad():  # the quantization is really there
        assert not torch.allclose(module(inputs[0]), model(inputs[0]), atol=1e-3)

# --- (d) misc-ops ---------------------------------------------------------------------------------

class TwoOutputs(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 5)

    def forward(self, x):
        return 8 * self.fc(x), x + 1


def misc_reference(y):
    """misc-ops' operators in Python (see examples/pt2_passes.cpp)."""
    c = torch.clamp(y, None, 6.0)
    f = c.to(torch.float16).to(device="cpu", dtype=torch.float32)
    s = f.sum([1], True)
    lo = torch.full(list(y.shape), -0.5, dtype=torch.float32, device="cpu")
    m = torch.clamp(torch.where(f > 0.0, f, lo), None, s)
    idx = torch.arange(y.shape[1] - 1, -1, -1, dtype=torch.int64, device="cpu")
    return m[:, idx]


def test_misc_ops(pt2_passes, folder):
    torch.manual_seed(0)
    model = TwoOutputs().eval()
    src, dst = folder / "two_outputs.pt2", folder / "two_outputs_misc.pt2"
    export_and_save(model, (torch.randn(3, 4),), src)
    ep = apply_pass(pt2_passes, "misc-ops", src, dst)
    assert_vals_match_run(ep, torch.randn(3, 4))

    ops = targets(ep)
    start = ops.index("aten.clamp.default")  # right after y = 8 * fc(x), before x + 1
    assert ops[start - 1:start + 11] == [
        "aten.mul.Tensor",
        "aten.clamp.default", "aten._to_copy.default", "aten._to_copy.default",
        "aten.sum.dim_IntList", "aten.full.default", "aten.gt.Scalar", "aten.where.self",
        "aten.clamp.Tensor", "aten.arange.start_step", "aten.index.Tensor", "aten.add.Tensor"]
    to_copy = [n for n in ep.graph.nodes if n.target == torch.ops.aten._to_copy.default]
    assert to_copy[0].kwargs == {"dtype": torch.float16}
    assert to_copy[1].kwargs == {"dtype": torch.float32, "device": torch.device("cpu")}
    (index,) = [n for n in ep.graph.nodes if n.target == torch.ops.aten.index.Tensor]
    assert index.args[1][0] is None  # the Tensor?[] keeps its None
    assert ep.graph.output_node().args[0][0] is index
    gen = torch.Generator().manual_seed(4)
    with torch.no_grad():
        x = torch.randn(3, 4, generator=gen)
        y, z = model(x)
        assert (y > 6).any() and (y < 0).any()  # every branch of clamp and where is taken
        out, out_z = ep.module()(x)
        torch.testing.assert_close(out, misc_reference(y))
        torch.testing.assert_close(out_z, z)  # the second output is untouched


# --- (e) multi-output -----------------------------------------------------------------------------

class Projection(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(5, 6)

    def forward(self, x):
        return self.fc(x)


def multi_reference(y):
    """multi-output's operators in Python (see examples/pt2_passes.cpp)."""
    var, mean = torch.var_mean(y, [1], correction=0, keepdim=True)
    n = (y - mean) * torch.rsqrt(var + 1e-5)
    values, indices = torch.max(n, 1, True)
    parts = torch.split(n, (y.shape[1] + 1) // 2, 1)
    return torch.cat(list(reversed(parts)), 1) - values + indices


def test_multi_output(pt2_passes, folder):
    torch.manual_seed(0)
    model = Projection().eval()
    src, dst = folder / "projection.pt2", folder / "projection_multi.pt2"
    export_and_save(model, (torch.randn(2, 5),), src)
    ep = apply_pass(pt2_passes, "multi-output", src, dst)
    assert_vals_match_run(ep, torch.randn(2, 5))

    for op in ("aten.var_mean.correction", "aten.max.dim", "aten.split.Tensor"):
        (node,) = [n for n in ep.graph.nodes if str(n.target) == op]
        assert isinstance(node.meta["val"], (tuple, list)), op
        assert all(u.target.__name__ == "getitem" for u in node.users), op
    (split,) = [n for n in ep.graph.nodes if str(n.target) == "aten.split.Tensor"]
    assert [tuple(v.shape) for v in split.meta["val"]] == [(2, 3), (2, 3)]
    gen = torch.Generator().manual_seed(5)
    with torch.no_grad():
        x = torch.randn(2, 5, generator=gen)
        torch.testing.assert_close(ep.module()(x), multi_reference(model(x)))


# --- (f) custom-op --------------------------------------------------------------------------------

def test_custom_op(pt2_passes, folder):
    torch.manual_seed(0)
    model = Projection().eval()
    src, dst = folder / "projection_for_custom.pt2", folder / "projection_custom.pt2"
    export_and_save(model, (torch.randn(2, 5),), src)
    ep = apply_pass(pt2_passes, "custom-op", src, dst, "--alpha", 0.25)
    assert_vals_match_run(ep, torch.randn(2, 5))

    (node,) = [n for n in ep.graph.nodes if n.target == torch.ops.epgraph_test.scale_add.default]
    assert node.kwargs == {"alpha": 0.25}
    gen = torch.Generator().manual_seed(6)
    with torch.no_grad():
        x = torch.randn(2, 5, generator=gen)
        y = model(x)
        torch.testing.assert_close(ep.module()(x), y + 0.25 * torch.sin(y))


# --- the command line -----------------------------------------------------------------------------

def test_bad_usage_and_input(pt2_passes, folder):
    src = folder / "projection_for_errors.pt2"
    export_and_save(Projection().eval(), (torch.randn(2, 5),), src)
    out = folder / "never_written.pt2"
    assert pt2_passes.run("no-such-pass", src, "-o", out, check=False).returncode == 2
    assert pt2_passes.run("misc-ops", src, check=False).returncode == 2  # no -o
    assert pt2_passes.run("misc-ops", src, "-o", out, "--bogus", 1, check=False).returncode == 2
    proc = pt2_passes.run("kv-cache", src, "-o", out, check=False)  # no attention in it
    assert proc.returncode == 2
    assert "scaled_dot_product_attention" in proc.stderr
    proc = pt2_passes.run("misc-ops", folder / "missing.pt2", "-o", out, check=False)
    assert proc.returncode == 2 and proc.stderr.startswith("error: ")
    assert not out.exists()


# --- (g) FX's editing toolkit: replace_pattern, PassManager, eliminate_dead_code, node_copy ------

def call(g, target, *args):
    """A call_function node named as epgraph names it (Graph::default_name: the op's name)."""
    return g.create_node("call_function", target, args, {}, name=target._opname)


def small_graph(inputs, build):
    """An fx.Graph like pt2_passes' small_graph: placeholders, then `build`'s nodes, returned."""
    g = torch.fx.Graph()
    result = build(g, *[g.placeholder(n) for n in inputs])
    g.output(result)
    return g


class Relus(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        h = torch.relu(torch.relu(self.fc(x)))  # a chain: the second binds the first's copy
        return h + torch.relu(x), torch.relu(h)


def test_relu_to_clamp(pt2_passes, folder):
    """replace_pattern(relu(x) -> clamp_min(x, 0)): every relu goes, the numbers stay."""
    torch.manual_seed(0)
    model = Relus().eval()
    src, dst = folder / "relus.pt2", folder / "relus_clamp.pt2"
    before = export_and_save(model, (torch.randn(3, 4),), src)
    relus = targets(before).count("aten.relu.default")
    assert relus == 4
    ep = apply_pass(pt2_passes, "relu-to-clamp", src, dst)
    assert "aten.relu.default" not in targets(ep)
    expected = torch.export.load(str(src)).graph_module
    aten = torch.ops.aten
    torch.fx.subgraph_rewriter.replace_pattern(
        expected, small_graph(["x"], lambda g, x: call(g, aten.relu.default, x)),
        small_graph(["x"], lambda g, x: call(g, aten.clamp_min.default, x, 0)))
    assert str(ep.graph) == str(expected.graph)  # torch's own rewrite: same order and names
    clamps = [n for n in ep.graph.nodes if n.target == torch.ops.aten.clamp_min.default]
    assert [n.name for n in clamps] == ["clamp_min", "clamp_min_1", "clamp_min_2", "clamp_min_3"]
    assert all(n.args[1] == 0 for n in clamps)
    x = torch.randn(3, 4)
    assert_vals_match_run(ep, x)
    with torch.no_grad():
        for got, want in zip(ep.module()(x), model(x)):
            torch.testing.assert_close(got, want)


class MulAdds(nn.Module):
    def forward(self, x, y, z):
        a = x * y + z  # fused
        b = y * z + x  # fused
        c = x * z  # used twice: not fused
        return a, b, c + y, c - 1


def test_fuse_mul_add(pt2_passes, folder):
    """A PassManager running replace_pattern(add(mul(a, b), c) -> addcmul(c, a, b)) and
    dead-code elimination, verifying after each pass."""
    model = MulAdds().eval()
    args = tuple(torch.randn(2, 3) for _ in range(3))
    src, dst = folder / "muladds.pt2", folder / "muladds_fused.pt2"
    export_and_save(model, args, src)
    proc = pt2_passes.run("fuse-mul-add", src, "-o", dst)
    assert "fuse-mul-add: 2 fused, changed 1" in proc.stdout
    ep = apply_pass(pt2_passes, "fuse-mul-add", src, dst)
    # torch's own replace_pattern on the exported graph gives the same graph (order and names)
    expected = torch.export.load(str(src)).graph_module
    aten = torch.ops.aten
    replaced = torch.fx.subgraph_rewriter.replace_pattern(
        expected,
        small_graph(["a", "b", "c"], lambda g, a, b, c: call(
            g, aten.add.Tensor, call(g, aten.mul.Tensor, a, b), c)),
        small_graph(["a", "b", "c"], lambda g, a, b, c: call(g, aten.addcmul.default, c, a, b)))
    assert len(replaced) == 2
    assert str(ep.graph) == str(expected.graph)
    assert targets(ep) == ["aten.mul.Tensor", "aten.add.Tensor", "aten.sub.Tensor",
                           "aten.addcmul.default", "aten.addcmul.default"]
    (first, second) = [n for n in ep.graph.nodes if n.target == torch.ops.aten.addcmul.default]
    assert [a.name for a in first.args] == ["z", "x", "y"]
    assert [a.name for a in second.args] == ["x", "y", "z"]
    assert_vals_match_run(ep, *args)
    with torch.no_grad():
        for got, want in zip(ep.module()(*args), model(*args)):
            torch.testing.assert_close(got, want)


class TwoHeads(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        y = self.fc(x)
        return y, torch.sin(x).cos() * 2


def test_drop_output_then_dce(pt2_passes, folder):
    """Routing the last output to the first leaves sin/cos/mul dead; eliminate_dead_code(program)
    removes them and keeps everything the signature names."""
    torch.manual_seed(0)
    model = TwoHeads().eval()
    src, dst = folder / "twoheads.pt2", folder / "twoheads_dropped.pt2"
    export_and_save(model, (torch.randn(2, 4),), src)
    ep = apply_pass(pt2_passes, "drop-output", src, dst)
    assert targets(ep) == ["aten.linear.default"]
    assert [s.arg.name for s in ep.graph_signature.output_specs] == ["linear", "linear"]
    x = torch.randn(2, 4)
    with torch.no_grad():
        y0, y1 = ep.module()(x)
        torch.testing.assert_close(y0, model(x)[0])
        torch.testing.assert_close(y1, model(x)[0])


# Custom operators that exist for their effect (pytorch/pytorch PR #105875, #145697): one declared
# with mutates_args that returns nothing, one out-variant. A .pt2 never carries their schemas.
@torch.library.custom_op("epgraph_test::accumulate_", mutates_args=("buf",))
def accumulate_(buf: torch.Tensor, x: torch.Tensor) -> None:
    buf.add_(x)


@accumulate_.register_fake
def _accumulate_fake(buf: torch.Tensor, x: torch.Tensor) -> None:
    return None


@torch.library.custom_op("epgraph_test::sin_out", mutates_args=("out",))
def sin_out(x: torch.Tensor, out: torch.Tensor) -> None:
    torch.sin(x, out=out)


@sin_out.register_fake
def _sin_out_fake(x: torch.Tensor, out: torch.Tensor) -> None:
    return None


class Accumulates(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("total", torch.zeros(3))
        self.register_buffer("sines", torch.zeros(3))

    def forward(self, x):
        torch.ops.epgraph_test.accumulate_(self.total, x)
        torch.ops.epgraph_test.sin_out(x, self.sines)
        return x * 2, x + 1


def test_dce_keeps_custom_ops_that_write_buffers(pt2_passes, folder):
    """eliminate_dead_code(program) keeps unused custom operators it has no schema for: before,
    it erased both (they are unused and epgraph assumed them pure), and after one call the
    buffers they write stayed zero."""
    src, dst = folder / "accumulates.pt2", folder / "accumulates_dropped.pt2"
    export_and_save(Accumulates(), (torch.ones(3),), src)
    ep = apply_pass(pt2_passes, "drop-output", src, dst)
    assert targets(ep) == ["epgraph_test.accumulate_.default", "epgraph_test.sin_out.default",
                           "aten.mul.Tensor"]
    m = ep.module()
    x = torch.tensor([1.0, 2.0, 3.0])
    y0, y1 = m(x)
    torch.testing.assert_close(y0, x * 2)
    torch.testing.assert_close(y1, x * 2)
    torch.testing.assert_close(m.total, x)
    torch.testing.assert_close(m.sines, torch.sin(x))


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(4, 4), nn.Linear(4, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def test_copy_block(pt2_passes, folder):
    """node_copy of every node of the block, fed by the block's output: y = block(block(x))."""
    torch.manual_seed(0)
    model = Block().eval()
    src, dst = folder / "block.pt2", folder / "block_twice.pt2"
    export_and_save(model, (torch.randn(2, 4),), src)
    ep = apply_pass(pt2_passes, "copy-block", src, dst)
    assert targets(ep) == ["aten.linear.default", "aten.relu.default", "aten.linear.default"] * 2
    assert [n.name for n in ep.graph.nodes if n.op == "call_function"] == [
        "linear", "relu", "linear_1", "linear_2", "relu_1", "linear_3"]
    x = torch.randn(2, 4)
    assert_vals_match_run(ep, x)
    with torch.no_grad():
        torch.testing.assert_close(ep.module()(x), model(model(x)))


def test_verify_failure_exits_1(pt2_passes, folder):
    """A program epgraph::verify rejects (here: an archive whose weights config lost a parameter)
    is not written, and pt2_passes exits with 1 after printing every violation."""
    src = folder / "projection_for_verify.pt2"
    export_and_save(Projection().eval(), (torch.randn(2, 5),), src)
    broken, out = folder / "projection_missing_bias.pt2", folder / "never_written_either.pt2"
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(broken, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info.filename)
            if info.filename.endswith("/data/weights/model_weights_config.json"):
                config = json.loads(data)
                del config["config"]["fc.bias"]
                data = json.dumps(config).encode()
            zout.writestr(info, data)
    proc = pt2_passes.run("custom-op", broken, "-o", out, check=False)
    assert proc.returncode == 1, proc.stderr
    assert "Parameter fc.bias is not in the state dict." in proc.stdout
    assert not out.exists()


# --- (h) graph_copy of nested graphs: a cond grafted onto a cond -------------------------------------
# pytorch/pytorch PR #88608 copies get_attr nodes between graphs with node_copy; torch.fx's
# graph_copy keeps a copied get_attr's target, so a cond copied into a program that has its own
# cond calls the destination's branches `true_graph_0` / `false_graph_0` (issue 31 item 5).

class CondSin(nn.Module):
    """The program grafted on: cond(x.sum() > 0, sin(t) + 1, cos(t) - 1)."""

    def forward(self, x):
        return torch.cond(x.sum() > 0, lambda t: t.sin() + 1, lambda t: t.cos() - 1, (x,))


class CondExp(nn.Module):
    """The program grafted onto: cond(x.mean() < 0, exp(t) - 2, tanh(t) * 4)."""

    def forward(self, x):
        return torch.cond(x.mean() < 0, lambda t: t.exp() - 2, lambda t: t.tanh() * 4, (x,))


def graft_inputs():
    """Inputs taking each branch of both conds: (inner pred, outer pred) = (T, F), (T, T), (F, T),
    (F, F) for out = CondSin()(CondExp()(x))."""
    spiky = torch.tensor([[3.0, -1, -1], [-1, -1, -1]])
    tall = torch.tensor([[10.0, -1, -1], [-1, -1, -1]])
    return [torch.full((2, 3), -0.5), spiky, torch.full((2, 3), 0.5), tall]


def test_graft_cond_into_cond(pt2_passes, folder):
    """graph_copy of a cond program onto the output of another cond program: the copied branches
    get fresh targets (true_graph_1/false_graph_1, as torch names new branch graphs) or the ones
    given with --nested-targets, and torch runs the right branch of each cond for every input.
    torch.fx's own graph_copy is shown to call the destination's branches instead."""
    inner, outer = CondExp(), CondSin()
    x0 = torch.randn(2, 3)
    src_inner, src_outer = folder / "cond_exp.pt2", folder / "cond_sin.pt2"
    export_and_save(inner, (x0,), src_inner)
    export_and_save(outer, (x0,), src_outer)
    inputs = graft_inputs()
    preds = [(bool(x.mean() < 0), bool(inner(x).sum() > 0)) for x in inputs]
    assert preds == [(True, False), (True, True), (False, True), (False, False)]

    def get_attrs(ep):
        return [(n.name, n.target) for n in ep.graph.nodes if n.op == "get_attr"]

    dst = folder / "cond_exp_then_sin.pt2"
    ep = apply_pass(pt2_passes, "graft", src_inner, dst, "--other", src_outer)
    assert get_attrs(ep) == [("true_graph_0", "true_graph_0"), ("false_graph_0", "false_graph_0"),
                             ("true_graph_1", "true_graph_1"), ("false_graph_1", "false_graph_1")]
    conds = [n for n in ep.graph.nodes if n.target is torch.ops.higher_order.cond]
    assert [[a.target for a in c.args[1:3]] for c in conds] == [
        ["true_graph_0", "false_graph_0"], ["true_graph_1", "false_graph_1"]]
    module = ep.module()
    for x in inputs:
        torch.testing.assert_close(module(x), outer(inner(x)))

    named = folder / "cond_exp_then_sin_named.pt2"
    ep = apply_pass(pt2_passes, "graft", src_inner, named, "--other", src_outer,
                    "--nested-targets", "true_graph_0=then_graph,false_graph_0=else_graph")
    assert get_attrs(ep)[2:] == [("then_graph", "then_graph"), ("else_graph", "else_graph")]
    module = ep.module()
    for x in inputs:
        torch.testing.assert_close(module(x), outer(inner(x)))

    # A given target that holds the destination's other branch is refused; nothing is written.
    refused = folder / "cond_graft_refused.pt2"
    proc = pt2_passes.run("graft", src_inner, "-o", refused, "--other", src_outer,
                          "--nested-targets", "true_graph_0=false_graph_0", check=False)
    assert proc.returncode == 2
    assert proc.stderr == (
        "error: Cannot give the copy of get_attr node 'true_graph_0' the target 'false_graph_0': "
        "get_attr node 'false_graph_0' of this graph names a different nested graph under it\n")
    assert not refused.exists()

    # torch.fx 2.13, the same graft in Python: the copied cond keeps the targets true_graph_0 /
    # false_graph_0 and so runs CondExp's branches on CondSin's predicate. torch is wrong here.
    ep_a, ep_b = torch.export.load(str(src_outer)), torch.export.load(str(src_inner))
    gm = ep_b.graph_module
    out_node = gm.graph.output_node()
    b_result = out_node.args[0][0]
    val_map = {n: b_result for n in ep_a.graph.nodes if n.op == "placeholder"}
    with gm.graph.inserting_before(out_node):
        copied = gm.graph.graph_copy(ep_a.graph, val_map)
    out_node.replace_input_with(b_result, copied[0])
    gm.recompile()
    assert [n.target for n in gm.graph.nodes if n.op == "get_attr"] == [
        "true_graph_0", "false_graph_0", "true_graph_0", "false_graph_0"]

    def fx_result(x):  # what FX's graft computes: CondExp's branches, CondSin's predicate
        y = inner(x)
        return y.exp() - 2 if y.sum() > 0 else y.tanh() * 4

    for x in inputs:
        (got,) = gm(x)
        torch.testing.assert_close(got, fx_result(x))
        assert not torch.allclose(got, outer(inner(x)))


# --- mutation and aliasing in matches (issue 31, item 3) -----------------------------------------

class AddInPlaceViewAfter(nn.Module):
    """pytorch/pytorch PR #82090's review case: the view made before add_ observes the +1."""

    def forward(self, x):
        y = x.clone()
        v = y.view(-1)
        y.add_(1)
        return torch.relu(y), v * 1


class AddInPlaceViewBefore(nn.Module):
    """The view is read before add_: replacing add_ by add changes nothing anybody reads."""

    def forward(self, x):
        y = x.clone()
        w = y.view(-1) * 1
        y.add_(1)
        return torch.relu(y), w


class ReluThenAddInPlace(nn.Module):
    """relu(y) is used after y.add_(1): a copy of relu put before its first user reads y + 1."""

    def forward(self, x):
        y = x.clone()
        r = torch.relu(y)
        y.add_(1)
        return r * 2, y


def add_relu_pattern():
    aten = torch.ops.aten
    return small_graph(["x"], lambda g, x: call(g, aten.relu.default, call(g, aten.add_.Tensor, x, 1)))


def add_clamp_replacement():
    aten = torch.ops.aten
    return small_graph(["x"], lambda g, x: call(g, aten.clamp_min.default,
                                                call(g, aten.add.Tensor, x, 1), 0))


def torch_fx_rewrite(src, pattern, replacement):
    """What torch.fx 2.13's replace_pattern does to the loaded program (in place), and its count."""
    ep = torch.export.load(str(src))
    return ep, len(torch.fx.subgraph_rewriter.replace_pattern(ep.graph_module, pattern, replacement))


def test_inplace_match_read_through_a_view_is_refused(pt2_passes, folder):
    """pattern relu(add_(x, 1)) -> clamp_min(add(x, 1), 0) where a view of x made before the
    add_ is read after it: torch.fx rewrites and loses the +1 the view sees; epgraph's matcher
    refuses the match (0 replaced) and the program keeps eager's numbers."""
    torch.manual_seed(0)
    x = torch.randn(2, 3)
    model = AddInPlaceViewAfter()
    want = model(x)
    src, dst = folder / "inplace_view_after.pt2", folder / "inplace_view_after_out.pt2"
    before = export_and_save(model, (x,), src)
    assert targets(before) == ["aten.clone.default", "aten.view.default", "aten.add_.Tensor",
                               "aten.relu.default", "aten.mul.Tensor"]
    proc = pt2_passes.run("inplace-to-functional", src, "-o", dst)
    assert "inplace-to-functional: 0 replaced" in proc.stdout
    ep = torch.export.load(str(dst))
    ep.validate()
    assert targets(ep) == targets(before)
    got = ep.module()(x)
    torch.testing.assert_close(got[0], want[0])
    torch.testing.assert_close(got[1], want[1])
    # torch.fx is wrong here: it matches, and the view's output loses the +1.
    fx_ep, fx_count = torch_fx_rewrite(src, add_relu_pattern(), add_clamp_replacement())
    assert fx_count == 1
    fx_out = fx_ep.graph_module(x)
    torch.testing.assert_close(fx_out[0], want[0])
    torch.testing.assert_close(fx_out[1], want[1] - 1)


def test_inplace_match_nobody_sees_is_rewritten(pt2_passes, folder):
    """The same pattern where the view is read before the add_: matched and rewritten (add_ gone),
    with eager's numbers, and the graph torch.fx's own rewrite makes."""
    torch.manual_seed(0)
    x = torch.randn(2, 3)
    model = AddInPlaceViewBefore()
    src, dst = folder / "inplace_view_before.pt2", folder / "inplace_view_before_out.pt2"
    export_and_save(model, (x,), src)
    ep = apply_pass(pt2_passes, "inplace-to-functional", src, dst)
    assert targets(ep) == ["aten.clone.default", "aten.view.default", "aten.mul.Tensor",
                           "aten.add.Tensor", "aten.clamp_min.default"]
    fx_ep, fx_count = torch_fx_rewrite(src, add_relu_pattern(), add_clamp_replacement())
    assert fx_count == 1
    assert str(ep.graph) == str(fx_ep.graph)
    assert_vals_match_run(ep, x)
    got, want = ep.module()(x), model(x)
    torch.testing.assert_close(got[0], want[0])
    torch.testing.assert_close(got[1], want[1])


def test_match_whose_replacement_would_read_after_a_write_is_refused(pt2_passes, folder):
    """relu-to-clamp on `r = relu(y); y.add_(1); return r * 2, y`: torch.fx puts clamp_min before
    relu's first user, after the add_, and computes relu(y + 1) * 2; epgraph refuses that match
    and the program keeps eager's numbers."""
    torch.manual_seed(0)
    x = torch.randn(2, 3)
    model = ReluThenAddInPlace()
    want = model(x)
    src, dst = folder / "relu_then_add_.pt2", folder / "relu_then_add_out.pt2"
    before = export_and_save(model, (x,), src)
    assert targets(before) == ["aten.clone.default", "aten.relu.default", "aten.add_.Tensor",
                               "aten.mul.Tensor"]
    proc = pt2_passes.run("relu-to-clamp", src, "-o", dst)
    assert "relu-to-clamp: 0 relu replaced" in proc.stdout
    ep = torch.export.load(str(dst))
    ep.validate()
    assert targets(ep) == targets(before)
    got = ep.module()(x)
    torch.testing.assert_close(got[0], want[0])
    torch.testing.assert_close(got[1], want[1])
    aten = torch.ops.aten
    fx_ep, fx_count = torch_fx_rewrite(
        src, small_graph(["x"], lambda g, x: call(g, aten.relu.default, x)),
        small_graph(["x"], lambda g, x: call(g, aten.clamp_min.default, x, 0)))
    assert fx_count == 1
    fx_out = fx_ep.graph_module(x)
    torch.testing.assert_close(fx_out[0], torch.relu(x + 1) * 2)
    assert not torch.allclose(fx_out[0], want[0])


# --- patterns torch.fx 2.13 matches or places wrongly (issue 31, cases d02 and d03) ---------------

class ReluTimesTwo(nn.Module):
    """d02's first program: no add_ anywhere, so `x.add_(1); return relu(x)` does not occur."""

    def forward(self, x):
        return torch.relu(x) * 2


class CloneAddInPlaceRelu(nn.Module):
    """d02's second program: relu reads what add_ wrote (training IR keeps the add_)."""

    def forward(self, x):
        y = x.clone()
        y.add_(1)
        return torch.relu(y) * 2


def unreached_add_pattern():
    """pytorch/pytorch #104775's pattern: `x.add_(1); return relu(x)`, the add_ not returned."""
    aten = torch.ops.aten

    def build(g, x):
        call(g, aten.add_.Tensor, x, 1)
        return call(g, aten.relu.default, x)
    return small_graph(["x"], build)


UNREACHED_REFUSAL = ("error: Pattern node 'add_' is reached from no returned node: a match would "
                     "leave it out; return it from the pattern\n")


def run_unreached_pattern(pt2_passes, folder, model, name, x):
    """Exports `model`, runs `pt2_passes unreached-pattern` (refused: exit 2, the matcher's
    message, nothing written), then torch.fx 2.13's replace_pattern on the same file, which raises
    KeyError on the pattern's add_ after rewriting. Returns torch.fx's half-rewritten program."""
    src, dst = folder / f"{name}.pt2", folder / f"{name}_unreached.pt2"
    export_and_save(model, (x,), src)
    proc = pt2_passes.run("unreached-pattern", src, "-o", dst, check=False)
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", UNREACHED_REFUSAL)
    assert not dst.exists()
    fx_ep = torch.export.load(str(src))
    pattern = unreached_add_pattern()
    with pytest.raises(KeyError) as info:
        torch.fx.subgraph_rewriter.replace_pattern(fx_ep.graph_module, pattern,
                                                   add_clamp_replacement())
    (key,) = info.value.args
    assert key.graph is pattern and key.name == "add_" and key.target == torch.ops.aten.add_.Tensor
    fx_ep.graph_module.recompile()  # what a caller that catches the KeyError runs
    return fx_ep


def test_unreached_pattern_node_is_refused_where_the_pattern_is_absent(pt2_passes, folder):
    """d02 on `relu(x) * 2`: epgraph refuses the pattern (its add_ no returned node reaches);
    torch.fx matches relu alone, raises KeyError, and leaves a graph computing relu(x + 1) * 2.
    The pattern written right (inplace-to-functional, add_ returned) finds nothing here."""
    torch.manual_seed(0)
    x = torch.randn(2, 3)
    model = ReluTimesTwo()
    want = model(x)
    fx_ep = run_unreached_pattern(pt2_passes, folder, model, "d02_relu_only", x)
    # torch.fx is wrong: it rewrote a program without add_, before raising.
    assert targets(fx_ep) == ["aten.add.Tensor", "aten.clamp_min.default", "aten.mul.Tensor"]
    (fx_out,) = fx_ep.graph_module(x)
    torch.testing.assert_close(fx_out, torch.relu(x + 1) * 2)
    assert not torch.allclose(fx_out, want)
    # The pattern returning add_'s result: no match, the file keeps eager's numbers.
    dst = folder / "d02_relu_only_functional.pt2"
    proc = pt2_passes.run("inplace-to-functional", folder / "d02_relu_only.pt2", "-o", dst)
    assert "inplace-to-functional: 0 replaced" in proc.stdout
    ep = torch.export.load(str(dst))
    ep.validate()
    assert targets(ep) == ["aten.relu.default", "aten.mul.Tensor"]
    torch.testing.assert_close(ep.module()(x), want)


def test_unreached_pattern_node_is_refused_where_add_is_present(pt2_passes, folder):
    """d02 on `y = x.clone(); y.add_(1); relu(y) * 2`: epgraph refuses the same pattern the same
    way; torch.fx matches relu(add_) leaving the add_ out, raises KeyError, and leaves a graph that
    adds 1 twice (relu(x + 2) * 2). inplace-to-functional rewrites it with eager's numbers."""
    torch.manual_seed(0)
    x = torch.randn(2, 3)
    model = CloneAddInPlaceRelu()
    want = model(x)
    fx_ep = run_unreached_pattern(pt2_passes, folder, model, "d02_add_relu", x)
    assert targets(fx_ep) == ["aten.clone.default", "aten.add_.Tensor", "aten.add.Tensor",
                              "aten.clamp_min.default", "aten.mul.Tensor"]
    (fx_out,) = fx_ep.graph_module(x)
    torch.testing.assert_close(fx_out, torch.relu(x + 2) * 2)
    assert not torch.allclose(fx_out, want)
    ep = apply_pass(pt2_passes, "inplace-to-functional", folder / "d02_add_relu.pt2",
                    folder / "d02_add_relu_functional.pt2")
    assert targets(ep) == ["aten.clone.default", "aten.add.Tensor", "aten.clamp_min.default",
                           "aten.mul.Tensor"]
    assert_vals_match_run(ep, x)
    torch.testing.assert_close(ep.module()(x), want)


class ReluSigmoidLateY(nn.Module):
    """d03's program (pytorch/pytorch #148751): y's producer `cos` comes after relu's first user."""

    def forward(self, x, y):
        a = torch.relu(x)
        u = torch.neg(a)
        z = torch.cos(y)
        s = torch.sigmoid(z)
        return u, s


class ReluSigmoidEarlyY(nn.Module):
    """The same computation with `cos` before relu's first user."""

    def forward(self, x, y):
        a = torch.relu(x)
        z = torch.cos(y)
        u = torch.neg(a)
        s = torch.sigmoid(z)
        return u, s


def relu_sigmoid_pattern():
    aten = torch.ops.aten
    return small_graph(["x", "y"], lambda g, x, y: (call(g, aten.relu.default, x),
                                                    call(g, aten.sigmoid.default, y)))


def clamp_reciprocal_replacement():
    """pt2_passes two-outputs' replacement: clamp_min(x, 0), 1 / (1 + exp(-y))."""
    aten = torch.ops.aten

    def build(g, x, y):  # nodes in pt2_passes' order: clamp_min first
        r = call(g, aten.clamp_min.default, x, 0)
        d = call(g, aten.add.Tensor, call(g, aten.exp.default, call(g, aten.neg.default, y)), 1)
        return r, call(g, aten.reciprocal.default, d)
    return small_graph(["x", "y"], build)


def test_two_output_replacement_reading_a_late_input_is_refused(pt2_passes, folder):
    """d03: the replacement of (relu(x), sigmoid(y)) must go before `neg` (relu's first user) but
    reads `cos`, computed after `neg`: epgraph refuses (exit 2, naming both, nothing written);
    torch.fx 2.13 reports 1 replacement and gives a graph that fails lint and cannot run."""
    torch.manual_seed(0)
    args = (torch.randn(2, 3), torch.randn(2, 3))
    src, dst = folder / "d03_twoout.pt2", folder / "d03_twoout_out.pt2"
    before = export_and_save(ReluSigmoidLateY(), args, src)
    assert targets(before) == ["aten.relu.default", "aten.neg.default", "aten.cos.default",
                               "aten.sigmoid.default"]
    proc = pt2_passes.run("two-outputs", src, "-o", dst, check=False)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == (
        "error: Cannot replace the match returning 'relu', 'sigmoid': its replacement must go "
        "before 'neg', the first user of a returned node, but reads 'cos', which comes after "
        "that; nothing was changed\n")
    assert not dst.exists()
    # torch.fx is wrong: "success", then the copy of neg(y) reads cos before cos is computed.
    fx_ep, fx_count = torch_fx_rewrite(src, relu_sigmoid_pattern(), clamp_reciprocal_replacement())
    assert fx_count == 1
    assert [n.name for n in fx_ep.graph.nodes if n.op == "call_function"] == [
        "clamp_min", "neg_1", "exp", "add", "reciprocal", "neg", "cos"]
    with pytest.raises(RuntimeError) as lint:
        fx_ep.graph.lint()
    assert str(lint.value).startswith(
        "Argument 'cos' of Node 'neg_1' was used before it has been defined! Please check that "
        "Nodes in the graph are topologically ordered\n")
    with pytest.raises(UnboundLocalError,
                       match="^cannot access local variable 'cos' where it is not associated "
                             "with a value$"):
        fx_ep.graph_module(*args)


def test_two_output_replacement_goes_after_its_inputs(pt2_passes, folder):
    """The d03 pattern where `cos` (y's producer) precedes relu's first user: epgraph rewrites,
    the copies sit after `cos` and before `neg`, torch loads, verifies and runs the file with
    eager's numbers, and the graph is the one torch.fx's own (here right) rewrite makes."""
    torch.manual_seed(0)
    args = (torch.randn(2, 3), torch.randn(2, 3))
    model = ReluSigmoidEarlyY()
    src, dst = folder / "d03_twoout_early.pt2", folder / "d03_twoout_early_out.pt2"
    before = export_and_save(model, args, src)
    assert targets(before) == ["aten.relu.default", "aten.cos.default", "aten.neg.default",
                               "aten.sigmoid.default"]
    proc = pt2_passes.run("two-outputs", src, "-o", dst)
    assert "two-outputs: 1 replaced" in proc.stdout
    ep = torch.export.load(str(dst))
    ep.validate()
    assert pt2_passes.edit.run("show", dst).stdout == str(ep.graph) + "\n" + str(ep.graph_signature)
    assert targets(ep) == ["aten.cos.default", "aten.clamp_min.default", "aten.neg.default",
                           "aten.exp.default", "aten.add.Tensor", "aten.reciprocal.default",
                           "aten.neg.default"]
    assert [n.name for n in ep.graph.nodes if n.op == "call_function"] == [
        "cos", "clamp_min", "neg_1", "exp", "add", "reciprocal", "neg"]
    nodes = {n.name: n for n in ep.graph.nodes}
    assert [a.name for a in nodes["neg_1"].args] == ["cos"]  # the copy of -y reads y's producer
    assert [a.name for a in nodes["neg"].args] == ["clamp_min"]
    assert [a.name for a in ep.graph.output_node().args[0]] == ["neg", "reciprocal"]
    fx_ep, fx_count = torch_fx_rewrite(src, relu_sigmoid_pattern(), clamp_reciprocal_replacement())
    assert fx_count == 1
    assert str(ep.graph) == str(fx_ep.graph)
    assert_vals_match_run(ep, *args)
    got, want = ep.module()(*args), model(*args)
    torch.testing.assert_close(got[0], want[0])
    torch.testing.assert_close(got[1], want[1])
