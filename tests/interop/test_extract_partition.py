# `pt2_edit extract` against torch 2.13. SPDX-License-Identifier: BSD-3-Clause
"""`pt2_edit extract` (epgraph::extract_partition and replace_partition_with_call) on real
architectures (the CNN and the Llama-style decoder of test_partition.py): every extracted
program DIR/subgraph_<id>.pt2 loads in torch.export.load and, run alone on the original's values
of its boundary inputs, gives the original's values of its outputs; the host program loads once
each backend op `<ns>::subgraph_<id>` is defined in Python with torch.library (its kernel runs
the extracted program's module, its fake kernel builds the outputs from the extracted program's
output metadata), and gives the original module's numbers. Refusals leave nothing written.
"""

from __future__ import annotations

import pathlib
import re

import pytest
import torch
from torch.export.graph_signature import InputKind, OutputKind

import test_partition as tp

LINE = re.compile(r"^partition (\d+): (\w+)::(\w+) inputs=\[(.*)\] weights=\[(.*)\] "
                  r"outputs=\[(.*)\] -> (.*)$")


def _names(text: str):
    return text.split(", ") if text else []


def run_extract(pt2_edit, path, folder, ns, ops=None, except_=None, single=True):
    host = folder / f"{ns}_host.pt2"
    sub_dir = folder / f"{ns}_parts"
    args = ["extract", str(path)]
    args += ["--ops", ",".join(ops)] if ops is not None else ["--except", ",".join(except_)]
    if not single:
        args.append("--no-single-node")
    args += ["--op-namespace", ns, "-o", str(host), "--extract-dir", str(sub_dir)]
    proc = pt2_edit.run(*args)
    parts = []
    for line in proc.stdout.splitlines():
        m = LINE.match(line)
        if m:
            parts.append(dict(id=int(m.group(1)), ns=m.group(2), op=m.group(3),
                              inputs=_names(m.group(4)), weights=_names(m.group(5)),
                              outputs=_names(m.group(6)), file=pathlib.Path(m.group(7))))
    return host, parts


class Recorder(torch.fx.Interpreter):
    """Runs a module's graph and keeps every node's value by name."""

    def __init__(self, gm):
        super().__init__(gm)
        self.values = {}

    def run_node(self, n):
        out = super().run_node(n)
        self.values[n.name] = out
        return out


def _empty_like_meta(v):
    return torch.empty_strided(tuple(v.shape), tuple(v.stride()), dtype=v.dtype, device=v.device)


def define_backend_op(libs, ns, name, sub):
    """Defines ns::name as the runtime op of the extracted program `sub`: the kernel runs
    sub.module(), the fake kernel makes tensors shaped as sub's outputs. Returns the schema."""
    user_inputs = [s.arg.name for s in sub.graph_signature.input_specs
                   if s.kind == InputKind.USER_INPUT]
    outs = list(sub.graph.output_node().args[0])
    metas = [o.meta["val"] for o in outs]
    ret = "Tensor" if len(outs) == 1 else "(" + ", ".join(["Tensor"] * len(outs)) + ")"
    schema = f"{name}(" + ", ".join(f"Tensor {a}" for a in user_inputs) + f") -> {ret}"
    if ns not in libs:
        libs[ns] = torch.library.Library(ns, "FRAGMENT")
    lib = libs[ns]
    lib.define(schema)
    module = sub.module()

    def kernel(*args):
        out = module(*args)
        if len(outs) == 1:
            return out.clone()
        return tuple(t.clone() for t in out)

    def fake(*args):
        if len(outs) == 1:
            return _empty_like_meta(metas[0])
        return tuple(_empty_like_meta(m) for m in metas)

    lib.impl(name, kernel, "CompositeExplicitAutograd")
    torch.library.register_fake(f"{ns}::{name}", fake, lib=lib)
    return f"{ns}::{schema}"


@pytest.fixture(scope="module")
def arch_folder(workdir) -> pathlib.Path:
    out = workdir / "extract_partition"
    out.mkdir(parents=True, exist_ok=True)
    return out


@pytest.fixture(scope="module")
def backend_libs():
    libs = {}
    yield libs
    for lib in libs.values():
        lib._destroy()


CASES = [
    # (label, architecture, ops, except)
    ("cnn_conv_bn_relu", "cnn",
     ["torch.ops.aten.conv2d", "torch.ops.aten.batch_norm", "torch.ops.aten.relu"], None),
    ("cnn_all_but_add", "cnn", None, ["torch.ops.aten.add"]),
    ("llama_all_but_sdpa", "llama", None, ["torch.ops.aten.scaled_dot_product_attention"]),
    ("llama_linear_mul", "llama", ["torch.ops.aten.linear", "torch.ops.aten.mul"], None),
]


@pytest.mark.parametrize("label,arch,ops,except_", CASES, ids=[c[0] for c in CASES])
def test_extracted_and_host_run_with_the_original_numbers(label, arch, ops, except_, pt2_edit,
                                                          arch_folder, backend_libs):
    module, args, path = tp.export_architecture(arch, False, arch_folder)
    original = torch.export.load(str(path))
    expected = tp.torch_partitions(original, ops, except_, single=False)
    ns = f"epg_{label}"
    host_path, parts = run_extract(pt2_edit, path, arch_folder, ns, ops, except_, single=False)
    # The same partitions as torch's partitioner (ids), one line each.
    assert [p["id"] for p in parts] == [pid for pid, _ in expected]
    assert len(parts) >= 1
    recorder = Recorder(original.module())
    recorder.run(*args)
    values = recorder.values
    schemas = {}
    for p in parts:
        assert p["ns"] == ns and p["op"] == f"subgraph_{p['id']}"
        assert p["file"].name == f"subgraph_{p['id']}.pt2"
        sub = torch.export.load(str(p["file"]))
        sig = sub.graph_signature
        user_inputs = [s.arg.name for s in sig.input_specs if s.kind == InputKind.USER_INPUT]
        state = [s.arg.name for s in sig.input_specs if s.kind != InputKind.USER_INPUT]
        assert user_inputs == p["inputs"]
        assert state == p["weights"]
        assert [s.kind for s in sig.output_specs] == [OutputKind.USER_OUTPUT] * len(p["outputs"])
        assert [s.arg.name for s in sig.output_specs] == p["outputs"]
        # The partition's nodes, in the original's graph order.
        names = dict(expected)[p["id"]]
        order = [n.name for n in original.graph.nodes]
        assert [n.name for n in sub.graph.nodes if n.op == "call_function"] == sorted(
            names, key=order.index)
        # Its weights are the original's.
        for s in sig.input_specs:
            if s.kind in (InputKind.PARAMETER, InputKind.BUFFER):
                torch.testing.assert_close(sub.state_dict[s.target],
                                           original.state_dict[s.target], rtol=0, atol=0)
        # Alone, on the original's values of its inputs: the original's values of its outputs.
        out = sub.module()(*[values[n] for n in user_inputs])
        out = [out] if len(p["outputs"]) == 1 else list(out)
        for name, got in zip(p["outputs"], out):
            torch.testing.assert_close(got, values[name])
        schemas[p["id"]] = define_backend_op(backend_libs, ns, p["op"], sub)
    host = torch.export.load(str(host_path))
    calls = [n for n in host.graph.nodes if n.op == "call_function"
             and str(n.target).startswith(f"{ns}.subgraph_")]
    assert sorted(str(n.target) for n in calls) == sorted(
        f"{ns}.subgraph_{p['id']}.default" for p in parts)
    for n in calls:
        pid = int(str(n.target).split("_")[-1].split(".")[0])
        assert str(n.target._schema) == schemas[pid]
    # No node of a partition is left; weights only the partitions read are gone.
    left = {n.name for n in host.graph.nodes}
    for _, names in expected:
        assert not left & set(names)
    read_outside = {a.name for n in original.graph.nodes if n.op == "call_function"
                    and not any(n.name in names for _, names in expected)
                    for a in n.all_input_nodes}
    for s in original.graph_signature.input_specs:
        if s.kind == InputKind.PARAMETER:
            in_host = s.target in host.state_dict
            in_parts = any(s.arg.name in p["weights"] for p in parts)
            assert in_host == (s.arg.name in read_outside or not in_parts), s.target
    torch.testing.assert_close(host.module()(*args), module(*args))
    torch.testing.assert_close(host.module()(*args), original.module()(*args))


def test_refusals_write_nothing(pt2_edit, arch_folder):
    _, _, path = tp.export_architecture("cnn", False, arch_folder)
    ops = ["torch.ops.aten.conv2d", "torch.ops.aten.relu"]
    ids = [pid for pid, _ in tp.epgraph_partitions(pt2_edit, path, ops, None)]
    assert ids
    out = arch_folder / "refused"
    out.mkdir(exist_ok=True)
    sub_dir = out / "parts"
    sub_dir.mkdir(exist_ok=True)
    taken = f"subgraph_{ids[-1]}.pt2"
    (sub_dir / taken).write_bytes(b"taken")
    host = out / "host.pt2"
    proc = pt2_edit.run("extract", str(path), "--ops", ",".join(ops), "--op-namespace", "epg_no",
                        "-o", str(host), "--extract-dir", str(sub_dir), check=False)
    assert proc.returncode == 2
    assert (f"{taken} exists (not overwritten: remove it or give another --extract-dir; other "
            "files in the directory do not matter)") in proc.stderr
    assert not host.exists()
    assert sorted(p.name for p in sub_dir.iterdir()) == [taken]
    proc = pt2_edit.run("extract", str(path), "--ops", ",".join(ops), "--op-namespace",
                        "bad-ns", "-o", str(host), "--extract-dir", str(out / "fresh"),
                        check=False)
    assert proc.returncode == 2
    assert re.search(r"replace_partition_with_call: op name 'bad-ns::subgraph_\d+' is not of "
                     r"the form namespace::name \(each a Python identifier\)", proc.stderr)
    assert not host.exists() and not (out / "fresh").exists()
