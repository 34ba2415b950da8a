# `pt2_edit validate --meta` on programs torch 2.13 exported. SPDX-License-Identifier: BSD-3-Clause
"""Small modules whose values are easy to get wrong (views of size-1 dimensions, einsum in many
forms, instance_norm, channels-last pooling and padding), exported by torch with static and with
dynamic sizes, as exported and after run_decompositions(): `validate --meta` must compute every
node's value and find each equal to the one torch stored (strides included). Then the exit status:
a node whose op refuses its arguments fails validation (the program is wrong), a node of an op
without a rule does not (epgraph cannot compute it; the program may be right).

Environment: EPGRAPH_PT2_EDIT (set by ctest; skipped without it).
"""

from __future__ import annotations

import re

import pytest

from conftest import rewrite_model_json

torch = pytest.importorskip("torch")
nn = torch.nn
F = torch.nn.functional

SUMMARY = re.compile(r"meta: nodes=(\d+) computed=(\d+) equal=(\d+) differ=(\d+) "
                     r"uncomputed=(\d+) invalid=(\d+)")


class SizeOneViews(nn.Module):
    """Views and reshapes of permuted tensors with size-1 dimensions: FakeTensorMode's strides of
    these differ from eager's ([8, 1, 4] where eager has [8, 1, 1])."""

    def forward(self, x):  # x: [b, 1, 4, 1]
        p = x.permute(0, 2, 1, 3)
        b = x.shape[0]
        return (p.reshape(1, 4 * b, 1) + 1, p.reshape(b * 4, 1, 1) * 2,
                x.transpose(1, 2).reshape(b, 1, 4) - 1, p.flatten(1) + 0.5)


class EinsumForms(nn.Module):
    def forward(self, a, c, m):  # a: [b, 3, 4], c: [b, 5, 4], m: [4, 4]
        return (torch.einsum("bij,bkj->bik", a, c), torch.einsum("bij,bkj->", a, c),
                torch.einsum("ii->i", m), torch.einsum("ij,jk->ik", m, m),
                torch.einsum("bij->bji", a), torch.einsum("bij,jk->bik", a, m),
                torch.einsum("bij,bij->bi", a, a))


class InstanceNorms(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.n2 = nn.InstanceNorm2d(3, affine=True)
        self.n1 = nn.InstanceNorm1d(3, track_running_stats=True)

    def forward(self, x, h):  # x: [b, 3, 6, 5], h: [b, 3, 7]
        return self.n2(x), self.n1(h)


class ChannelsLastPools(nn.Module):
    def forward(self, x):  # x: [b, 4, 8, 8] channels-last
        return (F.max_pool2d(x, 2), F.avg_pool2d(x, 3, 2, padding=1),
                F.adaptive_avg_pool2d(x, 1), F.pad(x, (1, 1, 0, 1)), F.pixel_unshuffle(x, 2),
                F.relu(x) + 1)


class Spectral(nn.Module):
    """rfft, irfft, fft2 and an unfolded signal's rfft (an STFT without its window): torch.fft's
    functions in the default IR, the _fft_r2c/_fft_c2r/_fft_c2c primitives after
    run_decompositions(); their output strides follow the transformed dimensions."""

    def forward(self, x, w):  # x: [2, 16], w: [3, 8, 16]
        spec = torch.fft.rfft(x)
        back = torch.fft.irfft(spec, n=16)
        f2 = torch.fft.fft2(w.to(torch.complex64), dim=(0, 2))
        frames = torch.fft.rfft(x.unfold(-1, 8, 4), dim=-1)
        return torch.view_as_real(spec), back, torch.view_as_real(f2), torch.view_as_real(frames)


class RandomFactories(nn.Module):
    def forward(self, x):  # x: [2, 4]
        return x + torch.randn(2, 4), torch.rand(4, dtype=torch.float64), torch.randperm(6)


class DataDependent(nn.Module):
    """nonzero and argwhere of one input (FakeTensor's memo gives both the same unbacked size
    u<k>, strides [1, u<k>]), an int and a float item() (unbacked u<k> / zuf<k>), and ops on
    them: an elementwise op of nonzero's column-major result gets strides [1, Max(1, u<k>)]."""

    def forward(self, x, f, k):  # x: [b, 4], f: [3], k: [2] int64
        n = k.sum().item()
        torch._check(n >= 0)
        return x.nonzero(), x * f.sum().item(), torch.zeros(n, 2), torch.argwhere(x) + 1


class Recurrent(nn.Module):
    """The recurrent layers torch.export keeps whole: a 2-layer bidirectional batch-first LSTM
    with a projection, a GRU and a ReLU RNN over its output."""

    def __init__(self) -> None:
        super().__init__()
        self.lstm = nn.LSTM(4, 6, num_layers=2, bidirectional=True, batch_first=True, proj_size=3)
        self.gru = nn.GRU(6, 5)
        self.rnn = nn.RNN(5, 4, nonlinearity="relu", batch_first=True)

    def forward(self, x):  # x: [b, 7, 4]
        y, (h, c) = self.lstm(x)
        z, hz = self.gru(y.transpose(0, 1))
        w, hw = self.rnn(z.transpose(0, 1))
        return w, h, c, hz, hw


def _inputs(name):
    g = torch.Generator().manual_seed(0)
    r = lambda *s: torch.randn(*s, generator=g)  # noqa: E731
    if name == "size_one_views":
        return SizeOneViews(), (r(2, 1, 4, 1),), {"x": {0: "b"}}
    if name == "einsum":
        return EinsumForms(), (r(2, 3, 4), r(2, 5, 4), r(4, 4)), {"a": {0: "b"}, "c": {0: "b"},
                                                                  "m": None}
    if name == "instance_norm":
        return InstanceNorms().eval(), (r(2, 3, 6, 5), r(2, 3, 7)), {"x": {0: "b"}, "h": {0: "b"}}
    if name == "spectral":
        return Spectral(), (r(2, 16), r(3, 8, 16)), None
    if name == "random":
        return RandomFactories(), (r(2, 4),), None
    if name == "recurrent":
        return Recurrent().eval(), (r(2, 7, 4),), {"x": {0: "b"}}
    if name == "data_dependent":
        return (DataDependent(), (r(5, 4), r(3), torch.tensor([1, 2])),
                {"x": {0: "b"}, "f": None, "k": None})
    x = r(2, 4, 8, 8).contiguous(memory_format=torch.channels_last)
    return ChannelsLastPools(), (x,), {"x": {0: "b"}}


def _export(name, dynamic):
    model, args, spec = _inputs(name)
    dynamic_shapes = None
    if dynamic:
        b = torch.export.Dim("b", min=2, max=64)
        dynamic_shapes = {k: (None if v is None else {d: b for d in v}) for k, v in spec.items()}
    return torch.export.export(model, args, dynamic_shapes=dynamic_shapes)


# (name, dynamic): the FFT and random programs are static (epgraph's FFT rule needs concrete
# sizes; a symbolic one is reported as not computed)
PROGRAMS = [(n, d) for n in ("size_one_views", "einsum", "instance_norm", "channels_last",
                             "data_dependent", "recurrent")
            for d in (False, True)] + [("spectral", False), ("random", False)]


@pytest.mark.parametrize("decompose", [False, True], ids=["default_ir", "decomposed"])
@pytest.mark.parametrize("name,dynamic", PROGRAMS,
                         ids=[f"{n}-{'dynamic' if d else 'static'}" for n, d in PROGRAMS])
def test_validate_meta_computes_every_value_torch_stored(name, dynamic, decompose, pt2_edit,
                                                         workdir):
    ep = _export(name, dynamic)
    if decompose:
        ep = ep.run_decompositions()
    path = workdir / f"vmeta_{name}_{'dyn' if dynamic else 'static'}_{int(decompose)}.pt2"
    torch.export.save(ep, str(path))
    proc = pt2_edit.run("validate", path, "--meta")
    summary = SUMMARY.search(proc.stdout)
    assert summary, proc.stdout
    nodes, computed, equal, differ, uncomputed, invalid = map(int, summary.groups())
    # every call_function node of the file (torch's saver adds getitems for unused outputs)
    assert nodes == sum(1 for n in torch.export.load(str(path)).graph.nodes
                        if n.op == "call_function")
    assert (computed, equal, differ, uncomputed, invalid) == (nodes, nodes, 0, 0, 0), proc.stdout
    assert proc.stdout.endswith(f"OK: {path} passes every check of verify and --meta\n")


def test_validate_meta_fails_on_an_op_that_refuses_its_arguments(pt2_edit, workdir):
    """An einsum whose equation names more operands than the node has: torch's meta refuses it,
    so the program is wrong and validation fails, naming the node, with torch's message."""
    src = workdir / "vmeta_einsum_src.pt2"
    torch.export.save(_export("einsum", False), str(src))

    def break_equation(doc):
        for node in doc["graph_module"]["graph"]["nodes"]:
            if node["target"] == "torch.ops.aten.einsum.default":
                for arg in node["inputs"]:
                    if arg["name"] == "equation" and arg["arg"]["as_string"] == "ii->i":
                        arg["arg"]["as_string"] = "ij,jk->ik"
                        return
        raise AssertionError("no einsum ii->i")

    bad = workdir / "vmeta_einsum_bad.pt2"
    rewrite_model_json(src, bad, break_equation)
    before = bad.read_bytes()
    proc = pt2_edit.run("validate", bad, "--meta", check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    nodes, computed, equal, differ, uncomputed, invalid = map(
        int, SUMMARY.search(proc.stdout).groups())
    assert (computed, equal, differ, uncomputed, invalid) == (nodes - 1, nodes - 1, 0, 0, 1)
    assert re.search(r"^meta: invalid: Cannot infer the metadata of node 'einsum_\d+' "
                     r"\(torch\.ops\.aten\.einsum\.default\): einsum\(\): fewer operands were "
                     r"provided than specified in the equation$", proc.stdout, re.M), proc.stdout
    assert proc.stdout.splitlines()[-1] == (
        f"FAILED: {bad} passes every check of verify, but --meta finds stored values that differ "
        "from what their ops compute, or ops that refuse their arguments")
    assert "OK:" not in proc.stdout
    assert bad.read_bytes() == before


class NoRule(nn.Module):
    def forward(self, x):
        return torch.logcumsumexp(x, 1) + 1


def test_validate_meta_passes_a_program_with_an_op_it_cannot_compute(pt2_edit, workdir):
    """logcumsumexp has no rule in epgraph: the node is counted as uncomputed and named, and the
    program passes (its stored value is used for the add below it, which is checked)."""
    path = workdir / "vmeta_no_rule.pt2"
    torch.export.save(torch.export.export(NoRule(), (torch.randn(2, 3),)), str(path))
    proc = pt2_edit.run("validate", path, "--meta")
    assert SUMMARY.search(proc.stdout).groups() == ("2", "1", "1", "0", "1", "0"), proc.stdout
    assert ("meta: not computed: Cannot infer the metadata of node 'logcumsumexp' "
            "(torch.ops.aten.logcumsumexp.default): epgraph has no shape rule for it; set "
            "meta().val yourself\n"
            "meta: no value computed for 1 node(s) of torch.ops.aten.logcumsumexp.default\n"
            f"OK: {path} passes every check of verify and --meta\n") in proc.stdout, proc.stdout


def _first_placeholder_size(doc):
    graph = doc["graph_module"]["graph"]
    name = graph["inputs"][0]["as_tensor"]["name"]
    return name, graph["tensor_values"][name]["sizes"]


@pytest.mark.parametrize("text", ["s0 +* 2", "((s0", "", "Foo(s0, 3)"])
def test_validate_refuses_an_expression_torch_cannot_read(text, pt2_edit, workdir):
    """A placeholder size whose expression text torch never writes: `validate` said OK and
    `validate --meta` propagated the text as if it were a symbol. torch.export.load refuses it
    (sympy cannot read it, or it names no function torch knows); epgraph's loader refuses it
    naming the field, and the file is unchanged."""
    src = workdir / "vmeta_expr_src.pt2"
    if not src.exists():
        torch.export.save(_export("einsum", True), str(src))
    field = {}

    def garble(doc):
        name, sizes = _first_placeholder_size(doc)
        assert "as_expr" in sizes[0], sizes
        sizes[0]["as_expr"]["expr_str"] = text
        sizes[0]["as_expr"]["hint"] = None
        field["name"] = name

    bad = workdir / "vmeta_expr_bad.pt2"
    rewrite_model_json(src, bad, garble)
    before = bad.read_bytes()
    for extra in ([], ["--meta"]):
        proc = pt2_edit.run("validate", bad, *extra, check=False)
        assert proc.returncode != 0, proc.stdout + proc.stderr
        assert "OK:" not in proc.stdout
        assert (f"graph_module.graph.tensor_values.{field['name']}.sizes[0].as_expr.expr_str: "
                f"cannot read the symbolic expression '{text}': ") in proc.stderr, proc.stderr
    assert bad.read_bytes() == before
    if text != "Foo(s0, 3)":  # sympify makes an undefined function of Foo; torch fails later
        with pytest.raises(Exception):
            torch.export.load(str(bad))


def test_validate_refuses_an_aten_operator_torch_lacks(pt2_edit, workdir):
    """A node calling `torch.ops.aten.no_such_op.default`: `validate` said OK (only --strict
    checked targets); torch.export.load cannot resolve it, so validation fails, naming it."""
    src = workdir / "vmeta_target_src.pt2"
    torch.export.save(_export("einsum", False), str(src))
    renamed = {}

    def rename(doc):
        node = doc["graph_module"]["graph"]["nodes"][0]
        renamed["name"] = node["name"]
        node["target"] = "torch.ops.aten.no_such_op.default"

    bad = workdir / "vmeta_target_bad.pt2"
    rewrite_model_json(src, bad, rename)
    with pytest.raises(Exception):
        torch.export.load(str(bad))
    proc = pt2_edit.run("validate", bad, check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert (f"Node '{renamed['name']}' calls 'torch.ops.aten.no_such_op.default', which is not "
            "an operator of torch 2.13.0 (no schema aten::no_such_op)") in proc.stdout, proc.stdout
    assert "OK:" not in proc.stdout


class BoolItem(nn.Module):
    def forward(self, x, b):
        return x * b.item()


@pytest.mark.parametrize("decompose", [False, True], ids=["default_ir", "decomposed"])
def test_validate_reads_the_piecewise_torch_writes(decompose, pt2_edit, workdir):
    """`x * b.item()` with a bool b: torch writes sym_ite's value as
    Piecewise(ExprCondPair(Integer(1), Equality(u0, 1)), ExprCondPair(Integer(0), true)); the
    loader's expression check refused it (a file torch loads) until Piecewise was read."""
    ep = torch.export.export(BoolItem(), (torch.randn(3), torch.tensor(True)))
    if decompose:
        ep = ep.run_decompositions()
    path = workdir / f"vmeta_bool_item_{int(decompose)}.pt2"
    torch.export.save(ep, str(path))
    import json
    import zipfile
    with zipfile.ZipFile(path) as z:
        text = z.read(next(n for n in z.namelist() if n.endswith("models/model.json"))).decode()
    assert "Piecewise(ExprCondPair(" in json.dumps(json.loads(text)), "torch wrote no Piecewise"
    proc = pt2_edit.run("validate", path, "--meta")
    nodes, computed, equal, differ, uncomputed, invalid = map(
        int, SUMMARY.search(proc.stdout).groups())
    assert (differ, invalid) == (0, 0), proc.stdout
    assert equal == computed == nodes - uncomputed, proc.stdout
    assert proc.stdout.endswith(f"OK: {path} passes every check of verify and --meta\n")
