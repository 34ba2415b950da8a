"""pt2_edit's handling of bad command lines and inputs a fresh-clone user ran into: each case
asserts the exit code, the exact message and which files exist afterwards (torch exports the
programs; torch is also the oracle for partition ids and for getitem's spelling).

- an unknown aten operator or overload in --ops / --except is an error (it was a note, exit 0,
  with an untagged copy written);
- `operator.getitem` (as print(ep.graph) shows it) and `_operator.getitem` name the same target;
- an unknown option names itself and its command (it printed only the usage, or a misleading
  "copy needs FILE -o OUT");
- validate --strict reports a call of an aten operator torch does not have;
- specialize does not write a program whose recomputed values disagree with the stored ones;
- extract's messages about its directory and its checks before writing;
- partition ids are torch's ids (not consecutive), which the usage says;
- add-buffer gives the buffer the name asked for, or refuses naming the clash.
"""

from __future__ import annotations

import json
import pathlib

import torch
import torch.nn as nn
from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
from torch.fx.passes.operator_support import create_op_support


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(4, 4)

    def forward(self, x):
        a, b = torch.split(self.linear(x), 2, dim=1)
        return torch.relu(a) + b.sum()


def block(tmp_path: pathlib.Path) -> pathlib.Path:
    path = tmp_path / "block.pt2"
    torch.export.save(torch.export.export(Block(), (torch.randn(2, 4),)), str(path))
    return path


def test_unknown_operator_or_overload_is_an_error(pt2_edit, tmp_path):
    path = block(tmp_path)
    out = tmp_path / "out.pt2"
    cases = [
        ("partition", ["--ops", "torch.ops.aten.relu,torch.ops.aten.not_an_op.default"],
         "error: --ops: unknown operator 'torch.ops.aten.not_an_op.default' (torch 2.13.0 has no "
         "aten::not_an_op)\n"),
        ("partition", ["--ops", "torch.ops.aten.relu.Foo"],
         "error: --ops: unknown overload 'torch.ops.aten.relu.Foo' (aten::relu has the overloads "
         "default, out)\n"),
        ("partition", ["--except", "torch.ops.aten.not_an_op"],
         "error: --except: unknown operator 'torch.ops.aten.not_an_op' (torch 2.13.0 has no "
         "aten::not_an_op)\n"),
        ("outline", ["--ops", "torch.ops.aten.not_an_op"],
         "error: --ops: unknown operator 'torch.ops.aten.not_an_op' (torch 2.13.0 has no "
         "aten::not_an_op)\n"),
        ("extract", ["--ops", "torch.ops.prims.not_an_op.default", "--op-namespace", "my",
                     "--extract-dir", tmp_path / "sub"],
         "error: --ops: unknown operator 'torch.ops.prims.not_an_op.default' (torch 2.13.0 has "
         "no prims::not_an_op)\n"),
    ]
    for cmd, extra, message in cases:
        proc = pt2_edit.run(cmd, path, *extra, "-o", out, check=False)
        assert (proc.returncode, proc.stderr, proc.stdout) == (2, message, ""), (cmd, extra)
        assert not out.exists()
        assert not (tmp_path / "sub").exists()
    # An existing operator the graph does not call (a backend's fixed list) is still a note, and
    # a namespace epgraph has no schema table for cannot be checked.
    proc = pt2_edit.run("partition", path, "--ops",
                        "torch.ops.aten.relu,torch.ops.aten.gelu.default,torch.ops.myns.op")
    assert proc.stdout == "partition 0: relu\n"
    assert proc.stderr == (
        "note: --ops: no call_function node of the graph has target "
        "'torch.ops.aten.gelu.default'\n"
        "note: --ops: no call_function node of the graph has target 'torch.ops.myns.op'\n")


def _torch_partitions(ep, ops):
    def supported(_, node) -> bool:
        if node.op != "call_function":
            return False
        name = torch.fx.node._get_qualified_name(node.target)
        return name in ops or any(name.startswith(o + ".") for o in ops)

    parts = CapabilityBasedPartitioner(ep.graph_module, create_op_support(supported),
                                       allows_single_node_partition=True).propose_partitions()
    return sorted((p.id, sorted(n.name for n in p.nodes)) for p in parts)


def test_getitem_in_both_spellings_and_ids_are_torchs(pt2_edit, tmp_path):
    path = block(tmp_path)
    ep = torch.export.load(str(path))
    assert "call_function[target=operator.getitem]" in str(ep.graph)
    expected = _torch_partitions(ep, ["_operator.getitem", "torch.ops.aten.split"])
    assert expected == [(1, ["getitem", "getitem_1", "split"])]  # torch's id: 1, not 0
    for spelling in ("operator.getitem", "_operator.getitem"):
        proc = pt2_edit.run("partition", path, "--ops", f"{spelling},torch.ops.aten.split")
        assert (proc.stdout, proc.stderr) == ("partition 1: split, getitem, getitem_1\n", "")
    usage = pt2_edit.run("--help").stdout
    assert ("  (partition IDs are torch's CapabilityBasedPartitioner ids, as torch numbers and "
            "tags\n   them: they need not start at 0 nor be consecutive)\n") in usage


def assert_usage_errors(pt2_edit, cases, out) -> None:
    """Each (args, first line) case exits 2 with that line and the usage on stderr, prints
    nothing on stdout and writes nothing to `out`."""
    for args, first_line in cases:
        proc = pt2_edit.run(*args, check=False)
        assert proc.returncode == 2, args
        assert proc.stderr.startswith(first_line + "usage:\n"), (args, proc.stderr)
        assert proc.stdout == ""
        assert not out.exists()


def test_unknown_options_are_named(pt2_edit, tmp_path):
    path = block(tmp_path)
    out = tmp_path / "out.pt2"
    cases = [
        (["copy", path, "--foo"], "pt2_edit: unknown option '--foo' for command 'copy'\n"),
        (["copy", path, "-o", out, "--ops"],
         "pt2_edit: unknown option '--ops' for command 'copy' (--ops is an option of partition, "
         "extract, outline)\n"),
        (["copy", path, "--ops", "torch.ops.aten.relu", "-o", out],
         "pt2_edit: unknown option '--ops' for command 'copy' (--ops is an option of partition, "
         "extract, outline)\n"),
        (["show", path, "--strict"],
         "pt2_edit: unknown option '--strict' for command 'show' (--strict is an option of "
         "validate)\n"),
        (["validate", path, "--foo"], "pt2_edit: unknown option '--foo' for command 'validate'\n"),
        (["specialize", path, "--dim", "s0=2", "--foo", "-o", out],
         "pt2_edit: unknown option '--foo' for command 'specialize'\n"),
        (["partition", path, "--ops", "torch.ops.aten.relu", "--dim", "s0=1", "-o", out],
         "pt2_edit: unknown option '--dim' for command 'partition' (--dim is an option of "
         "specialize)\n"),
        (["outline", path, "--ops", "torch.ops.aten.relu", "--extract-dir", "d", "-o", out],
         "pt2_edit: unknown option '--extract-dir' for command 'outline' (--extract-dir is an "
         "option of extract)\n"),
        (["add-buffer", path, "--name", "b", "--shape", "2", "--bogus", "1", "-o", out],
         "pt2_edit: unknown option '--bogus' for command 'add-buffer'\n"),
        (["frobnicate", path], "pt2_edit: unknown command 'frobnicate'\n"),
    ]
    assert_usage_errors(pt2_edit, cases, out)


def test_option_mistakes_are_named(pt2_edit, tmp_path):
    """Regression (found by a break test): `copy FILE -o a -o b` said "copy needs FILE -o OUT",
    `copy -o OUT FILE` was refused, `specialize FILE --dim` said "unexpected argument '--dim'",
    and `add-buffer --name --dtype float32` took '--dtype' for the name."""
    path = block(tmp_path)
    out = tmp_path / "out.pt2"
    cases = [
        (["copy", path, "-o", out, "-o", tmp_path / "b.pt2"], "error: copy: -o given twice\n"),
        (["copy", path, "-o"], "error: copy: -o needs a value\n"),
        (["copy", path, path, "-o", out],
         f"error: copy: unexpected argument '{path}' (FILE is '{path}')\n"),
        (["specialize", path, "--dim"], "error: specialize: --dim needs a value\n"),
        (["specialize", path, "--dim", "-o", out],
         "error: specialize: --dim needs a value (got the option '-o')\n"),
        (["add-buffer", path, "--name", "--dtype", "float32", "--shape", "2", "-o", out],
         "error: add-buffer: --name needs a value (got the option '--dtype')\n"),
    ]
    assert_usage_errors(pt2_edit, cases, out)
    # the option before FILE; a negative --fill is a value
    proc = pt2_edit.run("copy", "-o", out, path)
    assert proc.stdout == f"copied {path} -> {out}\n"
    out.unlink()
    pt2_edit.run("add-buffer", path, "--name", "b_neg", "--fill", "-1.5", "--shape", "2", "-o", out)
    assert torch.equal(torch.export.load(str(out)).state_dict["neg"], torch.full((2,), -1.5))


def test_validate_reports_unknown_aten_targets(pt2_edit, tmp_path):
    path = block(tmp_path)
    good = tmp_path / "block.json"
    pt2_edit.run("copy", path, "-o", good)
    record = json.loads(good.read_text())
    nodes = record["graph_module"]["graph"]["nodes"]
    relu = next(n for n in nodes if n["target"] == "torch.ops.aten.relu.default")
    relu["target"] = "torch.ops.aten.not_an_op.default"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(record))
    note = f"note: {bad} is a JSON record, which holds no weights: state_dict/constants checks " \
           "skipped\n"
    # torch's own verifier does not look, but torch.export.load fails when it resolves the op:
    # an error at every level (the default level passed it once); the real program passes both.
    for extra in (["--strict"], []):
        proc = pt2_edit.run("validate", bad, *extra, check=False)
        assert proc.returncode == 1
        assert proc.stdout == note + (
            "Exported program verification failed:\n"
            "  - Node 'relu' calls 'torch.ops.aten.not_an_op.default', which is not an operator "
            "of torch 2.13.0 (no schema aten::not_an_op)\n")
    assert pt2_edit.run("validate", path, "--strict").stdout.endswith("passes every check of "
                                                                       "verify\n")


def test_specialize_does_not_write_disagreeing_values(pt2_edit, tmp_path):
    class M(nn.Module):
        def forward(self, x):
            return torch.relu(x) + 1

    dims = ({0: torch.export.Dim("n", min=2, max=64)},)
    src = tmp_path / "dyn.pt2"
    torch.export.save(torch.export.export(M(), (torch.randn(4, 3),), dynamic_shapes=dims),
                      str(src))
    good = tmp_path / "dyn.json"
    pt2_edit.run("copy", src, "-o", good)
    record = json.loads(good.read_text())
    symbol = next(iter(record["range_constraints"]))
    # relu's stored value says 5 columns where its input has 3: the recomputation disagrees.
    record["graph_module"]["graph"]["tensor_values"]["relu"]["sizes"][1] = {"as_int": 5}
    bad = tmp_path / "dyn_bad.json"
    bad.write_text(json.dumps(record))
    out = tmp_path / "static.json"
    proc = pt2_edit.run("specialize", bad, "--dim", f"{symbol}=16", "-o", out, check=False)
    assert proc.returncode == 1
    assert "meta: recomputed=2 changed=1 substituted_only=0 symbolic_values=0\n" in proc.stdout
    assert "specialized ->" not in proc.stdout
    assert proc.stderr == (f"error: specialize: the recomputed value of 1 node(s) differs from "
                           f"the value stored in {bad} with the symbols substituted: relu; {out} "
                           "not written\n")
    assert not out.exists()
    proc = pt2_edit.run("specialize", good, "--dim", f"{symbol}=16", "-o", out)
    assert "changed=0" in proc.stdout and proc.stdout.endswith(f"specialized -> {out}\n")
    assert out.exists()


def test_extract_directory_messages(pt2_edit, tmp_path):
    path = block(tmp_path)
    ops = ["--ops", "torch.ops.aten.relu,torch.ops.aten.add", "--op-namespace", "my"]
    folder = tmp_path / "parts"
    folder.mkdir()
    (folder / "README").write_text("not ours")
    host = tmp_path / "host.pt2"
    # A directory holding other files is fine (the old message said to use an empty one).
    proc = pt2_edit.run("extract", path, *ops, "-o", host, "--extract-dir", folder)
    assert proc.stdout.endswith(f"-> {folder}/subgraph_1.pt2\nreplaced 1 partition(s) -> {host}\n")
    host2 = tmp_path / "host2.pt2"
    afile = tmp_path / "afile"
    afile.write_text("x")
    cases = [
        (host2, folder,
         f"error: extract: {folder}/subgraph_1.pt2 exists (not overwritten: remove it or give "
         "another --extract-dir; other files in the directory do not matter)\n"),
        (host2, afile,
         f"error: extract: --extract-dir '{afile}': '{afile}' is a file, not a directory\n"),
        (host2, afile / "sub",
         f"error: extract: --extract-dir '{afile}/sub': '{afile}' is a file, not a directory\n"),
        # HOST's folder is checked before the partitions are written (they were written, then
        # saving HOST failed).
        (tmp_path / "nodir" / "host.pt2", tmp_path / "new",
         f"error: extract: -o '{tmp_path}/nodir/host.pt2': directory '{tmp_path}/nodir' does not "
         "exist\n"),
    ]
    for out, folder_arg, message in cases:
        proc = pt2_edit.run("extract", path, *ops, "-o", out, "--extract-dir", folder_arg,
                            check=False)
        assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", message)
        assert not out.exists()
    assert not (tmp_path / "new").exists()
    # A missing directory and its missing parents are made.
    deep = tmp_path / "a" / "b"
    proc = pt2_edit.run("extract", path, *ops, "-o", host2, "--extract-dir", deep)
    assert (deep / "subgraph_1.pt2").exists() and host2.exists()


def test_add_buffer_keeps_the_name_or_refuses(pt2_edit, tmp_path):
    path = block(tmp_path)
    out = tmp_path / "out.pt2"
    cases = [
        ("linear", "error: add-buffer: --name 'linear': the graph has a call_function node named "
         "'linear' already, so the buffer would be named 'linear_1'; pick another name (nothing "
         "written)\n"),
        ("x", "error: add-buffer: --name 'x': the graph has a placeholder node named 'x' already, "
         "so the buffer would be named 'x_1'; pick another name (nothing written)\n"),
        ("0_cache", "error: add-buffer: --name '0_cache': torch.fx does not keep this name (a "
         "Python keyword or builtin, or not an identifier), so the buffer would be named "
         "'_0_cache'; pick another name (nothing written)\n"),
        ("class", "error: add-buffer: --name 'class': torch.fx does not keep this name (a Python "
         "keyword or builtin, or not an identifier), so the buffer would be named 'class_1'; pick "
         "another name (nothing written)\n"),
    ]
    for name, message in cases:
        proc = pt2_edit.run("add-buffer", path, "--name", name, "--shape", "2", "-o", out,
                            check=False)
        assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", message), name
        assert not out.exists()
    proc = pt2_edit.run("add-buffer", path, "--name", "kv_cache", "--shape", "2", "-o", out)
    assert proc.stdout == f"added buffer placeholder 'kv_cache' -> {out}\n"
    ep = torch.export.load(str(out))
    assert "kv_cache" in [n.name for n in ep.graph.nodes]


def test_add_buffer_refuses_a_target_on_a_module_path(pt2_edit, tmp_path):
    """Regression (found by a break test): `--name b_lin` beside a Linear `lin` gave the buffer
    the target 'lin' next to 'lin.weight', and `--name b_true_graph_0` on a torch.cond program
    the target of the true branch's submodule: pt2_edit wrote both and said OK, torch loaded
    them, and ep.module() failed ("Node lin_weight target lin.weight references nonexistent
    attribute weight of lin"; KeyError "attribute 'true_graph_0' already exists"). Both are
    refused, nothing written."""

    class Lin(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            return self.lin(x)

    class Cond(nn.Module):
        def forward(self, x):
            return torch.cond(x.sum() > 0, lambda t: t * 2, lambda t: t - 1, (x,))

    lin, cond = tmp_path / "lin.pt2", tmp_path / "cond.pt2"
    torch.export.save(torch.export.export(Lin(), (torch.randn(3, 4),)), str(lin))
    torch.export.save(torch.export.export(Cond(), (torch.randn(2, 4),)), str(cond))
    out = tmp_path / "out.pt2"
    for path, name, message in [
        (lin, "b_lin", "error: Buffer target 'lin' (from name 'b_lin') cannot be used: target "
                       "'lin.weight' of input spec 'p_lin_weight' is already there, and "
                       "ep.module() cannot register 'lin' as a tensor and as the module of "
                       "'lin.weight'\n"),
        (cond, "b_true_graph_0", "error: Buffer target 'true_graph_0' (from name "
                                 "'b_true_graph_0') cannot be used: 'true_graph_0' is the "
                                 "submodule of the nested graph get_attr node 'true_graph_0' "
                                 "reads in ep.module()\n"),
    ]:
        proc = pt2_edit.run("add-buffer", path, "--name", name, "--shape", "2", "-o", out,
                            check=False)
        assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", message), proc.stderr
        assert not out.exists()
    # a name beside them is free, and the program builds and runs
    pt2_edit.run("add-buffer", lin, "--name", "b_lin_cache", "--shape", "2", "-o", out)
    ep = torch.export.load(str(out))
    assert ep.state_dict["lin_cache"].shape == (2,)
    assert ep.module()(torch.randn(3, 4)).shape == (3, 4)


def test_a_write_past_the_file_size_limit_is_an_error(pt2_edit, tmp_path):
    """Regression (found by a break test): under `ulimit -f`, SIGXFSZ killed pt2_edit (exit 153)
    and left its temporary files beside the output. The signal is ignored, so the write fails
    with EFBIG: an error naming the file, exit 2, no output and no temporary file left."""
    import subprocess

    class Big(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = nn.Linear(256, 256)  # 256 KiB of weights

        def forward(self, x):
            return self.lin(x)

    src = tmp_path / "big.pt2"
    torch.export.save(torch.export.export(Big(), (torch.randn(2, 256),)), str(src))
    folder = tmp_path / "out"
    folder.mkdir()
    out = folder / "copy.pt2"
    proc = subprocess.run(["bash", "-c", 'ulimit -f 64 && exec "$0" copy "$1" -o "$2"',
                           pt2_edit.path, str(src), str(out)], capture_output=True, text=True)
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert proc.stderr.startswith("error: ") and "File too large" in proc.stderr, proc.stderr
    assert str(out) in proc.stderr, proc.stderr
    assert list(folder.iterdir()) == []  # neither the output nor a temporary file
