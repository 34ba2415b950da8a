# epgraph's CapabilityBasedPartitioner against torch.fx's. SPDX-License-Identifier: BSD-3-Clause
"""`pt2_edit partition` proposes the partitions torch 2.13's
`torch.fx.passes.infra.partitioner.CapabilityBasedPartitioner.propose_partitions` proposes: the
same ids, in the same order, each with the same nodes in the same order, on

- every zoo program (zoo.py) as torch.export.save wrote it;
- real-architecture modules defined here in plain torch (a CNN, a ViT-style encoder, a
  Llama-style decoder), as exported and after run_decompositions();

for several support sets: one op family (the most frequent operator of the graph, all its
overloads); every call_function node but one operator, the one in the middle of the graph (which
makes torch refuse merges that would close a cycle); each with allows_single_node_partition on and
off, and the last also with skip_horizontal_fusion. torch runs on the program torch.export.load
reads back from the same file epgraph reads.

The tagged program `pt2_edit partition ... -o` writes loads in torch with every partition's tag in
node.meta["custom"]["delegation_tag"] and nothing else changed. ExecuTorch (when importable, with
torchao for its XNNPACK backend): a partitioner of a few lines reading those tags makes
`to_edge_transform_and_lower` delegate exactly epgraph's partitions to XNNPACK, and the .pte runs
in ExecuTorch's runtime with torch's numbers.
"""

from __future__ import annotations

import collections
import pathlib
import re

import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.fx.node import _get_qualified_name
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import create_op_support

import zoo

# --- the support sets, written once for torch and once for pt2_edit ---------------------------


def _target(n) -> str:
    return _get_qualified_name(n.target)


def _matches(name: str, targets) -> bool:
    for t in targets:
        if name == t:
            return True
        # "torch.ops.aten.relu": every overload of the op (as pt2_edit --ops reads it)
        if t.startswith("torch.ops.") and t.count(".") == 3 and name.rsplit(".", 1)[0] == t:
            return True
    return False


def torch_support(ops=None, except_=None):
    if ops is not None:
        return create_op_support(
            lambda mods, n: n.op == "call_function" and _matches(_target(n), ops))
    return create_op_support(
        lambda mods, n: n.op == "call_function" and not _matches(_target(n), except_))


def torch_partitions(ep, ops=None, except_=None, single=True, skip_horizontal=False):
    p = CapabilityBasedPartitioner(
        ep.graph_module, torch_support(ops, except_), allows_single_node_partition=single,
        skip_horizontal_fusion=skip_horizontal)
    return [(part.id, [n.name for n in part.nodes]) for part in p.propose_partitions()]


LINE = re.compile(r"^partition (\d+): (.*)$")


def epgraph_partitions(pt2_edit, path, ops=None, except_=None, single=True,
                       skip_horizontal=False, out=None):
    args = ["partition", str(path)]
    args += ["--ops", ",".join(ops)] if ops is not None else ["--except", ",".join(except_)]
    if not single:
        args.append("--no-single-node")
    if skip_horizontal:
        args.append("--skip-horizontal-fusion")
    if out is not None:
        args += ["-o", str(out)]
    proc = pt2_edit.run(*args)
    parts = []
    for line in proc.stdout.splitlines():
        m = LINE.match(line)
        if m:
            parts.append((int(m.group(1)), m.group(2).split(", ")))
    return parts


def support_sets(ep):
    """(label, ops, except) for a graph: its most frequent operator (all overloads), and every
    operator but the one of the call_function node in the middle of the graph."""
    calls = [n for n in ep.graph.nodes if n.op == "call_function"]
    if not calls:
        return []
    names = [_target(n) for n in calls]
    packets = [t.rsplit(".", 1)[0] if t.startswith("torch.ops.") and t.count(".") == 4 else t
               for t in names]
    family = collections.Counter(packets).most_common(1)[0][0]
    middle = names[len(names) // 2]
    return [("family", [family], None), ("all_but_middle", None, [middle])]


def check_same(pt2_edit, path, ep, label_filter=None):
    """Compares every support set and option on one file; returns how many partitionings had
    at least one partition (so that a test can insist on non-trivial cases)."""
    nontrivial = 0
    for label, ops, except_ in support_sets(ep):
        options = [(True, False), (False, False)]
        if except_ is not None:
            options.append((True, True))
        for single, skip in options:
            expected = torch_partitions(ep, ops, except_, single, skip)
            actual = epgraph_partitions(pt2_edit, path, ops, except_, single, skip)
            assert actual == expected, (label, ops, except_, single, skip)
            nontrivial += bool(expected)
    return nontrivial


# --- the zoo --------------------------------------------------------------------------------

NAMES = [e.name for e in zoo.ZOO]


@pytest.mark.parametrize("name", NAMES)
def test_zoo_partitions_match_torch(name, exported, pt2_edit):
    prog = exported(name)
    ep = torch.export.load(str(prog.path))
    check_same(pt2_edit, prog.path, ep)


# --- real architectures ----------------------------------------------------------------------


class SmallCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.b1 = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 8, 3, padding=1)
        self.b2 = nn.BatchNorm2d(8)
        self.c3 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.fc = nn.Linear(16, 10)

    def forward(self, x):
        y = F.relu(self.b1(self.c1(x)))
        y = F.relu(self.b2(self.c2(y)) + y)  # a residual block
        y = F.max_pool2d(F.relu(self.c3(y)), 2)
        y = torch.flatten(F.adaptive_avg_pool2d(y, 1), 1)
        return self.fc(y)


class ViTBlock(nn.Module):
    def __init__(self, dim: int = 32, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.n1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.n2 = nn.LayerNorm(dim)
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.n1(x)).split(d, dim=-1)
        q, k, v = (z.reshape(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        a = torch.softmax(q @ k.transpose(-2, -1) / (d // self.heads) ** 0.5, dim=-1) @ v
        x = x + self.proj(a.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(F.gelu(self.fc1(self.n2(x))))


class SmallViT(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.patch = nn.Conv2d(3, 32, 4, stride=4)
        self.cls = nn.Parameter(torch.randn(1, 1, 32))
        self.pos = nn.Parameter(torch.randn(1, 17, 32))
        self.blocks = nn.ModuleList([ViTBlock(), ViTBlock()])
        self.head = nn.Linear(32, 10)

    def forward(self, x):
        y = self.patch(x).flatten(2).transpose(1, 2)
        y = torch.cat([self.cls.expand(y.shape[0], -1, -1), y], dim=1) + self.pos
        for blk in self.blocks:
            y = blk(y)
        return self.head(y[:, 0])


class RMSNorm(nn.Module):
    def __init__(self, dim: int) -> None:
        super().__init__()
        self.w = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * self.w


class LlamaLayer(nn.Module):
    def __init__(self, dim: int = 32, heads: int = 4) -> None:
        super().__init__()
        self.heads = heads
        self.n1, self.n2 = RMSNorm(dim), RMSNorm(dim)
        self.wq, self.wk, self.wv, self.wo = (nn.Linear(dim, dim, bias=False) for _ in range(4))
        self.w1 = nn.Linear(dim, 64, bias=False)
        self.w3 = nn.Linear(dim, 64, bias=False)
        self.w2 = nn.Linear(64, dim, bias=False)

    @staticmethod
    def rope(x, cos, sin):
        x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
        return x * cos + torch.cat([-x2, x1], dim=-1) * sin

    def forward(self, x, cos, sin):
        b, t, d = x.shape
        h = self.n1(x)
        q, k, v = (w(h).view(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for w in (self.wq, self.wk, self.wv))
        q, k = self.rope(q, cos, sin), self.rope(k, cos, sin)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.wo(a.transpose(1, 2).reshape(b, t, d))
        h = self.n2(x)
        return x + self.w2(F.silu(self.w1(h)) * self.w3(h))


class SmallLlama(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(50, 32)
        self.layers = nn.ModuleList([LlamaLayer(), LlamaLayer()])
        self.norm = RMSNorm(32)
        self.out = nn.Linear(32, 50, bias=False)
        pos = torch.arange(8, dtype=torch.float32)[:, None]
        freq = torch.exp(-torch.arange(0, 8, 2, dtype=torch.float32)[None, :] / 8 * 9.2)
        ang = torch.cat([pos * freq, pos * freq], dim=-1)
        self.register_buffer("cos", ang.cos())
        self.register_buffer("sin", ang.sin())

    def forward(self, tokens):
        x = self.emb(tokens)
        for layer in self.layers:
            x = layer(x, self.cos, self.sin)
        return self.out(self.norm(x))


ARCHITECTURES = {
    "cnn": (SmallCNN, lambda: (torch.randn(2, 3, 16, 16),)),
    "vit": (SmallViT, lambda: (torch.randn(2, 3, 16, 16),)),
    "llama": (SmallLlama, lambda: (torch.randint(0, 50, (2, 8)),)),
}


def export_architecture(name: str, decompose: bool, folder: pathlib.Path):
    make, inputs = ARCHITECTURES[name]
    torch.manual_seed(0)
    module = make().eval()
    args = inputs()
    ep = torch.export.export(module, args)
    if decompose:
        ep = ep.run_decompositions()
    path = folder / f"{name}{'_core' if decompose else ''}.pt2"
    torch.export.save(ep, str(path))
    return module, args, path


@pytest.fixture(scope="module")
def arch_folder(workdir) -> pathlib.Path:
    out = workdir / "partition"
    out.mkdir(parents=True, exist_ok=True)
    return out


@pytest.mark.parametrize("decompose", [False, True], ids=["export", "core_aten"])
@pytest.mark.parametrize("name", sorted(ARCHITECTURES))
def test_architecture_partitions_match_torch(name, decompose, pt2_edit, arch_folder):
    _, _, path = export_architecture(name, decompose, arch_folder)
    ep = torch.export.load(str(path))
    assert check_same(pt2_edit, path, ep) >= 3


def test_cycle_refusal_is_exercised(pt2_edit, arch_folder):
    """The Llama decoder without its mul (the middle op of the core-ATen graph is not this one,
    so say it here): every node but the muls is supported, and the muls sit between supported
    nodes on both sides, so torch refuses merges that would close a cycle: more than one
    partition, equal to torch's."""
    _, _, path = export_architecture("llama", True, arch_folder)
    ep = torch.export.load(str(path))
    except_ = ["torch.ops.aten.mul"]
    expected = torch_partitions(ep, None, except_, single=False)
    assert len(expected) > 1
    assert epgraph_partitions(pt2_edit, path, None, except_, single=False) == expected


def test_target_lists_are_checked_by_name(pt2_edit, arch_folder):
    """A target list that cannot mean what was typed is refused before anything is proposed or
    written (exit 2, a message naming the option and the item), where it used to match nothing
    and exit 0 with an untagged copy: a name no node has and that is no torch operator name (with
    the graph's spelling when one ends like it), an empty item, a blank inside an item, an empty
    -o, both lists. Blanks around items are trimmed; a well-formed operator the graph does not
    call (a backend's fixed list) only gets a note; --help exits 0."""

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = nn.Linear(4, 4)

        def forward(self, x):
            return torch.relu(self.linear(x)) + x

    path = arch_folder / "target_lists.pt2"
    torch.export.save(torch.export.export(Block(), (torch.randn(2, 4),)), str(path))
    before = path.read_bytes()
    out = arch_folder / "target_lists_out.pt2"
    calls = ("torch.ops.aten.linear.default, torch.ops.aten.relu.default, "
             "torch.ops.aten.add.Tensor")
    cases = [
        (["--ops", "aten.linear.default"],
         "error: --ops: no call_function node of the graph has target 'aten.linear.default' "
         "(did you mean 'torch.ops.aten.linear.default'?)\n"),
        (["--ops", "torch.ops.aten.relu,linear"],
         "error: --ops: no call_function node of the graph has target 'linear' (did you mean "
         "'torch.ops.aten.linear'?)\n"),
        (["--except", "foo"],
         "error: --except: no call_function node of the graph has target 'foo' (targets are "
         "written as torch prints them: 'torch.ops.aten.linear.default', or "
         f"'torch.ops.aten.linear' for every overload; the graph calls {calls})\n"),
        (["--ops", ",,,"], "error: --ops ',,,': item 1 is empty\n"),
        (["--ops", "torch.ops.aten.relu,"], "error: --ops 'torch.ops.aten.relu,': item 2 is "
         "empty\n"),
        (["--ops", ""], "error: --ops '': item 1 is empty\n"),
        (["--ops", "torch.ops.aten.relu .default"],
         "error: --ops 'torch.ops.aten.relu .default': item 1 'torch.ops.aten.relu .default' "
         "has a blank inside\n"),
        (["--ops", "torch.ops.aten.relu", "-o", ""],
         "error: partition: -o needs a non-empty value\n"),
        (["--ops", "torch.ops.aten.relu", "--except", "torch.ops.aten.add"],
         "error: partition: give one of --ops, --except, not both\n"),
        (["--ops", "torch.ops.aten.relu", "--ops", "torch.ops.aten.add"],
         "error: partition: --ops given twice\n"),
    ]
    for extra, message in cases:
        args = [*extra] if "-o" in extra else [*extra, "-o", out]
        proc = pt2_edit.run("partition", path, *args, check=False)
        assert proc.returncode == 2, extra
        assert proc.stderr.startswith(message), (extra, proc.stderr)
        assert "partition 1" not in proc.stdout
        assert not out.exists()
        assert path.read_bytes() == before
    proc = pt2_edit.run("partition", path, "--ops",
                        " torch.ops.aten.linear.default ,\ttorch.ops.aten.relu", "-o", out)
    ep = torch.export.load(str(path))
    expected = torch_partitions(ep, ["torch.ops.aten.linear.default", "torch.ops.aten.relu"])
    assert expected == [(1, ["linear", "relu"])]
    assert proc.stdout.splitlines()[0] == "partition 1: linear, relu"
    assert proc.stderr == ""
    out.unlink()
    proc = pt2_edit.run("partition", path, "--ops", "torch.ops.aten.relu,torch.ops.aten.gelu")
    assert torch_partitions(ep, ["torch.ops.aten.relu"]) == [(0, ["relu"])]
    assert proc.stdout == "partition 0: relu\n"
    assert proc.stderr == ("note: --ops: no call_function node of the graph has target "
                           "'torch.ops.aten.gelu'\n")
    for flag in ("--help", "-h"):
        proc = pt2_edit.run("partition", flag)
        assert proc.stdout.startswith("usage:\n  pt2_edit show FILE")
        assert proc.stderr == ""


# --- tags ----------------------------------------------------------------------------------


def test_tags_written_and_program_unchanged(pt2_edit, arch_folder):
    module, args, path = export_architecture("vit", False, arch_folder)
    out = arch_folder / "vit_tagged.pt2"
    ops = ["torch.ops.aten.linear.default", "torch.ops.aten.gelu"]
    parts = epgraph_partitions(pt2_edit, path, ops, None, single=False, out=out)
    before = torch.export.load(str(path))
    assert parts == torch_partitions(before, ops, None, single=False)
    assert len(parts) >= 2
    after = torch.export.load(str(out))
    tag_of = {n: f"tag{pid}" for pid, names in parts for n in names}
    for n in after.graph.nodes:
        custom = n.meta.get("custom") or {}
        assert custom.get("delegation_tag") == tag_of.get(n.name), n.name
    assert str(after.graph) == str(before.graph)
    assert after.graph_signature == before.graph_signature
    torch.testing.assert_close(after.module()(*args), module(*args))


# --- ExecuTorch ----------------------------------------------------------------------------


def _executorch():
    try:
        from executorch.backends.xnnpack.partition.xnnpack_partitioner import (  # noqa: F401
            XnnpackPartitioner,
        )
        from executorch.exir import to_edge_transform_and_lower  # noqa: F401
        from executorch.exir.backend.partitioner import (  # noqa: F401
            DelegationSpec,
            PartitionResult,
        )
        from executorch.extension.pybindings.portable_lib import (  # noqa: F401
            _load_for_executorch_from_buffer,
        )
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"ExecuTorch's XNNPACK backend cannot be imported: {type(e).__name__}: {e}")


def make_tag_partitioner():
    """The few lines a backend author writes: delegate what epgraph tagged to XNNPACK."""
    from executorch.backends.xnnpack.xnnpack_preprocess import XnnpackBackend
    from executorch.exir.backend.utils import tag_constant_data
    from executorch.exir.backend.partitioner import (
        DelegationSpec,
        Partitioner,
        PartitionResult,
    )

    class EpgraphTags(Partitioner):
        def __init__(self) -> None:
            super().__init__()
            self.xnnpack = DelegationSpec(XnnpackBackend.__name__, [])

        def partition(self, ep):
            tags = {}
            for n in ep.graph_module.graph.nodes:
                tag = (n.meta.get("custom") or {}).get("delegation_tag")
                if tag is not None and n.op == "call_function":
                    n.meta["delegation_tag"] = tag
                    tags[tag] = self.xnnpack
            # The weights the tagged nodes read go into the delegate with them (XNNPACK's own
            # partitioner does the same: its convolutions need constant weights).
            tag_constant_data(ep)
            return PartitionResult(tagged_exported_program=ep, partition_tags=tags)

    return EpgraphTags()


def test_executorch_lowers_exactly_epgraphs_partitions(pt2_edit, arch_folder):
    _executorch()
    from executorch.exir import to_edge_transform_and_lower
    from executorch.extension.pybindings.portable_lib import _load_for_executorch_from_buffer

    module, args, path = export_architecture("cnn", True, arch_folder)
    out = arch_folder / "cnn_tagged.pt2"
    ops = ["torch.ops.aten.convolution.default", "torch.ops.aten.relu.default",
           "torch.ops.aten.add.Tensor"]
    parts = epgraph_partitions(pt2_edit, path, ops, None, single=False, out=out)
    assert parts == torch_partitions(torch.export.load(str(path)), ops, None, single=False)
    assert len(parts) >= 2
    with torch.no_grad():
        tagged = torch.export.load(str(out))
        edge = to_edge_transform_and_lower(tagged, partitioner=[make_tag_partitioner()])
    lowered = edge.exported_program()
    calls = [n for n in lowered.graph.nodes
             if n.op == "call_function" and "executorch_call_delegate" in str(n.target)]
    assert len(calls) == len(parts)
    # Each delegate holds the nodes of one epgraph partition: its backend program's compute
    # nodes are the partition's (the same targets, counted).
    delegates = sorted(
        sorted(_target(n) for n in getattr(lowered.graph_module, c.args[0].target)
               .original_module.graph.nodes if n.op == "call_function")
        for c in calls)
    wanted = sorted(
        sorted(_target(n) for n in tagged.graph.nodes if n.name in names)
        for _, names in parts)
    assert [[t.split(".")[-2] for t in d] for d in delegates] == \
        [[t.split(".")[-2] for t in w] for w in wanted]
    program = edge.to_executorch()
    runtime = _load_for_executorch_from_buffer(program.buffer)
    (actual,) = runtime.forward(args)
    torch.testing.assert_close(actual, module(*args), rtol=1e-4, atol=1e-4)


# --- random graphs: every shape of merge, refusal and cycle -----------------------------------

RANDOM_OPS = ["add", "mul", "sub", "relu", "sigmoid", "tanh", "neg", "exp"]


class RandomDag(nn.Module):
    """A random DAG of elementwise ops: each op reads one or two earlier values (often far
    back, so that partitions meet across unsupported nodes); several outputs."""

    def __init__(self, seed: int, size: int) -> None:
        super().__init__()
        g = torch.Generator().manual_seed(seed)

        def pick(n):
            return int(torch.randint(0, n, (1,), generator=g))

        self.plan = []
        for i in range(size):
            op = RANDOM_OPS[pick(len(RANDOM_OPS))]
            a = pick(i + 2)
            b = pick(i + 2)
            self.plan.append((op, a, b))
        self.outs = sorted({size + 1, *(2 + pick(size) for _ in range(3))})

    def forward(self, x, y):
        vals = [x, y]
        for op, a, b in self.plan:
            if op in ("add", "mul", "sub"):
                vals.append(getattr(torch, op)(vals[a], vals[b]))
            else:
                vals.append(getattr(torch, op)(vals[a]))
        return tuple(vals[i] for i in self.outs)


@pytest.mark.parametrize("seed", range(12))
def test_random_graph_partitions_match_torch(seed, pt2_edit, arch_folder):
    module = RandomDag(seed, 40)
    args = (torch.randn(3), torch.randn(3))
    ep = torch.export.export(module, args)
    path = arch_folder / f"random_{seed}.pt2"
    torch.export.save(ep, str(path))
    ep = torch.export.load(str(path))
    g = torch.Generator().manual_seed(1000 + seed)
    for trial in range(6):
        chosen = [f"torch.ops.aten.{op}" for op in RANDOM_OPS
                  if float(torch.rand(1, generator=g)) < 0.5] or ["torch.ops.aten.add"]
        for single in (True, False):
            for skip in (False, True):
                expected = torch_partitions(ep, chosen, None, single, skip)
                actual = epgraph_partitions(pt2_edit, path, chosen, None, single, skip)
                assert actual == expected, (seed, trial, chosen, single, skip)
