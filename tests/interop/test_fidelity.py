# Fidelity with torch 2.13 (issue 13), torch being the oracle. SPDX-License-Identifier: BSD-3-Clause
"""Every file torch reads, epgraph reads the same way; no edit writes what torch cannot run:

- names a file fixes (a top-level nn.Sequential's `input`, values named `sum`, `max`, `min`,
  `list`) print as torch prints them and survive `copy`;
- bare `-Infinity` / `NaN` floats as torch <= 2.6 wrote them load, and the copy loads and runs;
- `add-buffer --fill` converts as torch.full does and refuses what it refuses, with its message;
- `add-buffer --name self` / `None` is refused (torch would write a program whose ep.module()
  raises SyntaxError);
- an empty `.pt2` is a broken archive; tensor metadata torch refuses (strides that do not
  match the sizes, a negative size, dtype 0, a negative device index) is refused by `show` and
  `validate` with torch's message;
- a strict-mode export (a lifted constant before a buffer) validates with a warning, and
  `add-buffer` adds no second departure, placing the buffer where ExecuTorch 1.5.1's
  create_mutable_buffer does; asking for the same buffer twice fails with ExecuTorch's message,
  and a requested target that is taken while the assigned one is free is accepted as ExecuTorch
  accepts it (ExecuTorch is skipped when it cannot be imported).
"""

from __future__ import annotations

import json
import zipfile

import pytest
import torch
import torch._export.serde.schema as _schema
import torch._export.serde.serialize as _serde
from torch import nn

import zoo
from test_zoo import expected_show


def _save(ep, path):
    for n in ep.graph.nodes:  # no stack traces: they hold this machine's paths
        n.meta.pop("stack_trace", None)
    torch.export.save(ep, str(path))


def _rewrite_model(src, dst, edit):
    """Copies archive `src` to `dst`, passing models/model.json's text through `edit`."""
    with zipfile.ZipFile(src) as z, zipfile.ZipFile(dst, "w") as out:
        for info in z.infolist():
            data = z.read(info.filename)
            if info.filename.endswith("models/model.json"):
                data = edit(data.decode()).encode()
            out.writestr(info.filename, data)


def _check_same(pt2_edit, path, folder, *inputs, **kwargs):
    """pt2_edit prints what torch prints; its copy loads in torch as the same program, running
    like the original."""
    reference = torch.export.load(str(path))
    assert pt2_edit.run("show", path).stdout == expected_show(reference)
    copy = folder / ("copy_" + path.name)
    pt2_edit.run("copy", path, "-o", copy)
    loaded = torch.export.load(str(copy))
    assert str(loaded.graph) == str(reference.graph)
    assert str(loaded.graph_signature) == str(reference.graph_signature)
    if inputs:
        torch.testing.assert_close(loaded.module()(*inputs, **kwargs),
                                   reference.module()(*inputs, **kwargs), equal_nan=True)
    return reference, loaded


@pytest.fixture()
def folder(workdir):
    out = workdir / "fidelity"
    out.mkdir(parents=True, exist_ok=True)
    return out


def test_sequential_input_keeps_its_name(pt2_edit, folder):
    torch.manual_seed(0)
    path = folder / "sequential_input.pt2"
    _save(torch.export.export(nn.Sequential(nn.Linear(3, 2), nn.ReLU()), (torch.randn(1, 3),)),
          path)
    x = torch.randn(1, 3)
    reference, loaded = _check_same(pt2_edit, path, folder, x)
    assert [n.name for n in loaded.graph.nodes if n.op == "placeholder"][-1] == "input"
    assert "%input : [num_users=1] = placeholder[target=input]" in pt2_edit.run(
        "show", path).stdout
    # An edit keeps it too, and torch runs the result.
    out = folder / "sequential_input_buffer.pt2"
    pt2_edit.run("add-buffer", path, "--name", "b_cache", "--shape", "2", "-o", out)
    edited = torch.export.load(str(out))
    assert "input" in [n.name for n in edited.graph.nodes if n.op == "placeholder"]
    torch.testing.assert_close(edited.module()(x), reference.module()(x))


def test_reserved_value_names_survive(pt2_edit, folder):
    class M(nn.Module):
        def forward(self, input, min, list=3):
            return torch.relu(torch.clamp(input, min=min)) + list

    path = folder / "reserved.pt2"
    _save(torch.export.export(M(), (torch.randn(3), torch.randn(3)), {"list": 3}), path)
    # Value names torch.export never writes but torch loads as they are: rename clamp/relu/add.
    renamed = folder / "reserved_renamed.pt2"

    def edit(text):
        doc = json.loads(text)
        table = {"clamp": "sum", "relu": "max", "add": "abs"}

        def walk(x):
            if isinstance(x, dict):
                return {table.get(k, k) if k in table else k: walk(v) for k, v in x.items()}
            if isinstance(x, list):
                return [walk(v) for v in x]
            return table.get(x, x) if isinstance(x, str) else x
        return json.dumps(walk(doc))

    _rewrite_model(path, renamed, edit)
    reference, _ = _check_same(pt2_edit, renamed, folder, torch.randn(3), torch.randn(3),
                                list=3)
    names = [n.name for n in reference.graph.nodes]
    assert {"input", "min", "sum", "max", "abs"} <= set(names)


def test_bare_non_finite_floats(pt2_edit, folder):
    class Floor(nn.Module):
        def forward(self, x):
            return torch.clamp(x, min=float("-inf"), max=3.0) * float("nan")

    path = folder / "finite.pt2"
    _save(torch.export.export(Floor(), (torch.randn(3),)), path)
    bare = folder / "bare_non_finite.pt2"

    def edit(text):
        assert '"as_float": "-Infinity"' in text and '"as_float": "NaN"' in text
        return text.replace('"as_float": "-Infinity"', '"as_float": -Infinity').replace(
            '"as_float": "NaN"', '"as_float": NaN')

    _rewrite_model(path, bare, edit)
    _, loaded = _check_same(pt2_edit, bare, folder, torch.tensor([-1e30, 5.0, 1.0]))
    # The copy is written as torch 2.13 writes it.
    copy = folder / ("copy_" + bare.name)
    with zipfile.ZipFile(copy) as z:
        text = z.read(next(n for n in z.namelist() if n.endswith("models/model.json"))).decode()
    assert '"as_float":"-Infinity"' in text.replace(" ", "")
    assert '"as_float":"NaN"' in text.replace(" ", "")


def _torch_full_error(value, dtype):
    try:
        torch.full((2,), value, dtype=dtype)
    except RuntimeError as e:
        return str(e)
    return None


@pytest.mark.parametrize("fill,dtype", [("300", "uint8"), ("nan", "int32"), ("-1.0", "uint8"),
                                        ("1e6", "float16"), ("1e40", "float32"),
                                        ("2147483648", "int32"), ("inf", "int64"),
                                        ("-1", "uint8"), ("3.7", "int32"), ("-255", "uint8"),
                                        ("nan", "bool"), ("65504", "float16"), ("-inf", "float32"),
                                        ("1e6", "bfloat16")])
def test_fill_converts_as_torch_full(pt2_edit, folder, fill, dtype):
    src = folder / "fill_source.pt2"
    if not src.exists():
        _save(torch.export.export(nn.Linear(2, 2), (torch.randn(1, 2),)), src)
    py_value = int(fill) if fill.lstrip("-").isdigit() else float(fill)
    torch_dtype = getattr(torch, dtype)
    out = folder / f"fill_{dtype}_{fill}.pt2"
    proc = pt2_edit.run("add-buffer", src, "--name", "b_fill", "--dtype", dtype, "--shape", "2",
                        "--fill", fill, "-o", out, check=False)
    error = _torch_full_error(py_value, torch_dtype)
    if error is not None:
        assert proc.returncode == 2
        assert proc.stderr == f"error: {error}\n"
        assert not out.exists()
    else:
        assert proc.returncode == 0, proc.stderr
        got = torch.export.load(str(out)).state_dict["fill"]
        torch.testing.assert_close(got, torch.full((2,), py_value, dtype=torch_dtype),
                                   equal_nan=True)


@pytest.mark.parametrize("name", ["self", "None"])
def test_unbindable_buffer_names_are_refused(pt2_edit, folder, name):
    src = folder / "names_source.pt2"
    if not src.exists():
        _save(torch.export.export(nn.Linear(2, 2), (torch.randn(1, 2),)), src)
    # torch's own naming keeps these names when asked for them (FX's create_node with a name, as
    # ExecuTorch's helpers name nodes), and the module cannot be built: the reason to refuse.
    ep = torch.export.load(str(src))
    node = ep.graph.create_node("placeholder", name, name=name)
    assert node.name == name
    with pytest.raises(SyntaxError):
        ep.graph_module.recompile()
    proc = pt2_edit.run("add-buffer", src, "--name", name, "--shape", "2", "-o",
                        folder / f"name_{name}.pt2", check=False)
    assert proc.returncode == 2
    assert proc.stderr.startswith(f"error: Buffer name '{name}' cannot be used: ")
    # A keyword FX renames ('class' -> 'class_1') is refused by pt2_edit, which gives the name
    # asked for or none (test_cli_errors.py); 'class_1' itself is fine, and torch runs the result.
    out = folder / "name_class.pt2"
    out.unlink(missing_ok=True)  # written by the other parameter's run
    proc = pt2_edit.run("add-buffer", src, "--name", "class", "--shape", "2", "-o", out,
                        check=False)
    assert proc.returncode == 2 and "would be named 'class_1'" in proc.stderr
    assert not out.exists()
    assert "'class_1'" in pt2_edit.run("add-buffer", src, "--name", "class_1", "--shape", "2",
                                       "-o", out).stdout
    torch.export.load(str(out)).module()(torch.randn(1, 2))


def test_broken_archives_and_tensor_metadata(pt2_edit, folder):
    empty = folder / "empty.pt2"
    empty.write_bytes(b"")
    with pytest.raises(Exception):
        torch.export.load(str(empty))
    proc = pt2_edit.run("show", empty, check=False)
    assert proc.returncode == 2
    assert proc.stderr == f"error: {empty}: not a zip file (no end of central directory record)\n"

    src = folder / "meta_source.pt2"
    _save(torch.export.export(nn.Sequential(nn.Linear(3, 2)), (torch.randn(1, 3),)), src)
    bad = folder / "meta_strides.pt2"

    def edit(text):
        doc = json.loads(text)
        doc["graph_module"]["graph"]["tensor_values"]["linear"]["strides"] = [{"as_int": 1}]
        return json.dumps(doc)

    _rewrite_model(src, bad, edit)
    with pytest.raises(RuntimeError):
        torch.export.load(str(bad))
    message = "dimensionality of sizes (2) must match dimensionality of strides (1)"
    with pytest.raises(RuntimeError, match=r"dimensionality of sizes \(2\)"):
        with torch._subclasses.fake_tensor.FakeTensorMode():
            torch.empty_strided((1, 2), (1,))
    proc = pt2_edit.run("show", bad, check=False)
    assert proc.returncode == 2
    assert proc.stderr.endswith(
        f"models/model.json: graph_module.graph.tensor_values.linear: {message}\n")


def _torch_message(call):
    """The message of what `call` raises (torch's own check for a value of tensor metadata)."""
    try:
        call()
    except (RuntimeError, KeyError) as e:
        return str(e)
    raise AssertionError("torch accepted the value")


@pytest.mark.parametrize("field,value,check", [
    # torch.empty_strided's refusal, as deserialize_tensor_meta calls it
    ("sizes", [{"as_int": 1}, {"as_int": -3}],
     lambda: torch.empty_strided((1, -3), (2, 1), device="meta")),
    # torch's deserializer has no dtype for ScalarType 0 (UNKNOWN)
    ("dtype", 0, lambda: _serde._SERIALIZE_TO_TORCH_DTYPE[_schema.ScalarType(0)]),
    ("device", {"type": "cpu", "index": -5}, lambda: torch.device("cpu", -5)),
])
def test_tensor_metadata_torch_refuses_is_refused(pt2_edit, folder, field, value, check):
    src = folder / "meta_source.pt2"
    _save(torch.export.export(nn.Sequential(nn.Linear(3, 2)), (torch.randn(1, 3),)), src)
    bad = folder / f"meta_{field}.pt2"

    def edit(text):
        doc = json.loads(text)
        doc["graph_module"]["graph"]["tensor_values"]["linear"][field] = value
        return json.dumps(doc)

    _rewrite_model(src, bad, edit)
    with pytest.raises(RuntimeError):
        torch.export.load(str(bad))
    torch_message = _torch_message(check)
    expected = {
        "sizes": ("sizes[1]", "Trying to create tensor with negative dimension -3: [1, -3]"),
        "dtype": ("dtype", "unknown ScalarType 0"),
        "device": ("device.index", "Device index must not be negative"),
    }[field]
    # epgraph's message is torch's (for dtype 0 torch has only a KeyError: epgraph names it).
    assert torch_message == (expected[1] if field != "dtype" else "<ScalarType.UNKNOWN: 0>")
    for command in ("show", "validate"):
        proc = pt2_edit.run(command, bad, check=False)
        assert proc.returncode == 2, command
        assert proc.stderr.endswith(
            f"models/model.json: graph_module.graph.tensor_values.linear.{expected[0]}: "
            f"{expected[1]}\n"), proc.stderr


@pytest.mark.parametrize("sizes", [[2**40, 2**40], [2**61, 4]])
def test_tensor_metadata_whose_numel_overflows_is_refused(pt2_edit, folder, sizes):
    """Sizes whose element count overflows int64: torch.export.load refuses them (torch's numel
    check); show and validate refuse them at the sizes, with torch's message."""
    src = folder / "numel_source.pt2"
    _save(torch.export.export(nn.Sequential(nn.Linear(3, 2)), (torch.randn(1, 3),)), src)
    bad = folder / f"numel_{sizes[0]}.pt2"

    def edit(text):
        doc = json.loads(text)
        doc["graph_module"]["graph"]["tensor_values"]["linear"]["sizes"] = [
            {"as_int": s} for s in sizes]
        return json.dumps(doc)

    _rewrite_model(src, bad, edit)
    # torch.export.load wraps its deserializer's error ("We ran into an error when deserializing
    # the saved file"); the cause is the numel check of torch.empty_strided.
    with pytest.raises(RuntimeError):
        torch.export.load(str(bad))
    assert _torch_message(lambda: torch.empty_strided(sizes, (sizes[1], 1), device="meta")) == (
        "numel: integer multiplication overflow")
    shown = "[" + ", ".join(str(s) for s in sizes) + "]"
    for command in ("show", "validate"):
        proc = pt2_edit.run(command, bad, check=False)
        assert proc.returncode == 2, command
        assert proc.stderr.endswith(
            "models/model.json: graph_module.graph.tensor_values.linear.sizes: numel: integer "
            f"multiplication overflow (sizes {shown})\n"), proc.stderr


# --- strict-mode input order (issue 13 items 4 and 12), ExecuTorch as a second oracle ----------

def _executorch_utils():
    """ExecuTorch 1.5.1's backends/transforms/utils.py, or a skip when it cannot be imported."""
    pytest.importorskip("executorch", exc_type=ImportError)
    try:
        from executorch.backends.transforms import utils
    except Exception as e:  # noqa: BLE001 - any import problem means: no oracle here
        pytest.skip(f"executorch cannot be used ({type(e).__name__}: {e})")
    return utils


def _inputs(ep):
    return [(s.kind.name, s.arg.name, s.target, s.persistent)
            for s in ep.graph_signature.input_specs]


def _outputs(ep):
    return [(s.kind.name, s.arg.name, s.target) for s in ep.graph_signature.output_specs]


def _placeholders(ep):
    return [n.name for n in ep.graph.nodes if n.op == "placeholder"]


ORDER_DEPARTURE = ("Input 'b_offset' (persistent BUFFER) comes after input 'c_gain' "
                   "(CONSTANT_TENSOR): inputs must be ordered TOKEN < PARAMETER < persistent "
                   "BUFFER < non-persistent BUFFER < CONSTANT_TENSOR < CUSTOM_OBJ < USER_INPUT")


def test_strict_order_add_buffer_adds_no_departure(pt2_edit, folder):
    path = folder / "strict_order.pt2"
    _save(torch.export.export(zoo.StrictOrder(), (torch.randn(3),), strict=True), path)
    reference = torch.export.load(str(path))
    # What torch 2.13 writes for strict=True: the lifted constant before the buffer.
    assert _inputs(reference) == [("PARAMETER", "p_w", "w", None),
                                  ("CONSTANT_TENSOR", "c_gain", "gain", None),
                                  ("BUFFER", "b_offset", "offset", True),
                                  ("USER_INPUT", "x", None, None)]
    reference.validate()  # torch's own verifier accepts the order

    # validate: no error (torch accepts it), the departure as a warning; --strict fails on it.
    proc = pt2_edit.run("validate", path)
    assert proc.stdout == (
        f"warning: {path} departs from torch's canonical input order (torch loads and verifies "
        "it; PyTorch's NativeRT runtime refuses it; --strict makes this an error):\n"
        f"  - {ORDER_DEPARTURE}\n"
        f"OK: {path} passes every check of verify\n")
    strict = pt2_edit.run("validate", path, "--strict", check=False)
    assert strict.returncode == 1
    assert strict.stdout == f"Exported program verification failed:\n  - {ORDER_DEPARTURE}\n"

    # add-buffer: torch loads, verifies and runs the result with the right numbers.
    out = folder / "strict_order_buffer.pt2"
    pt2_edit.run("add-buffer", path, "--name", "b_cache", "--shape", "3", "--fill", "0.5",
                 "-o", out)
    edited = torch.export.load(str(out))
    edited.validate()
    from torch._export.verifier import _verify_exported_program_signature
    _verify_exported_program_signature(edited)
    x = torch.tensor([1.0, -2.0, 4.0])
    m = zoo.StrictOrder()
    torch.testing.assert_close(edited.module()(x), x * m.gain + m.offset + m.w)
    torch.testing.assert_close(edited.module()(x), reference.module()(x))
    torch.testing.assert_close(edited.state_dict["cache"], torch.full((3,), 0.5))
    assert _placeholders(edited) == ["p_w", "b_cache", "c_gain", "b_offset", "x"]
    assert _outputs(edited) == [("BUFFER_MUTATION", "b_cache", "cache"),
                                ("USER_OUTPUT", "add_1", None)]
    # The departure the program had, and no second one.
    assert pt2_edit.run("validate", out).stdout.count("  - ") == 1
    assert f"  - {ORDER_DEPARTURE}\n" in pt2_edit.run("validate", out).stdout

    # ExecuTorch's create_mutable_buffer on the same program puts the buffer at the same place.
    utils = _executorch_utils()
    et = torch.export.load(str(path))
    node = utils.create_mutable_buffer(et, "b_cache", torch.full((3,), 0.5))
    assert node.name == "b_cache"
    assert _inputs(et) == _inputs(edited)
    assert _outputs(et) == _outputs(edited)
    assert _placeholders(et) == _placeholders(edited)
    assert list(et.state_dict) == list(edited.state_dict)

    # Twice the same name: ExecuTorch's own message, from both.
    again = pt2_edit.run("add-buffer", out, "--name", "b_cache", "--shape", "3",
                         "-o", folder / "strict_order_twice.pt2", check=False)
    assert again.returncode == 2
    with pytest.raises(RuntimeError) as et_error:
        utils.create_mutable_buffer(et, "b_cache", torch.zeros(3))
    assert str(et_error.value) == "Buffer target 'cache' already exists in state_dict"
    assert again.stderr == f"error: {et_error.value}\n"
    assert not (folder / "strict_order_twice.pt2").exists()


def test_requested_target_taken_but_assigned_target_free(pt2_edit, folder):
    """`b_npb` next to a non-persistent buffer `npb` (placeholder b_npb): FX names the request
    b_npb_1, target npb_1; ExecuTorch accepts it, torch verifies and runs its result, so epgraph
    accepts it too (it places the buffer before the non-persistent one, where ExecuTorch puts it
    after, an order NativeRT refuses)."""
    class NonPersistent(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("npb", torch.tensor([1.0, 2.0, 3.0]), persistent=False)

        def forward(self, x):
            return x + self.npb

    path = folder / "non_persistent_npb.pt2"
    _save(torch.export.export(NonPersistent(), (torch.randn(3),)), path)
    out = folder / "non_persistent_npb_buffer.pt2"
    # pt2_edit gives the name asked for or none: b_npb is refused, naming the clash; asking for
    # b_npb_1 gives what the library (and ExecuTorch) make of the request b_npb.
    proc = pt2_edit.run("add-buffer", path, "--name", "b_npb", "--shape", "3", "-o", out,
                        check=False)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == ("error: add-buffer: --name 'b_npb': the graph has a placeholder node "
                           "named 'b_npb' already, so the buffer would be named 'b_npb_1'; pick "
                           "another name (nothing written)\n")
    assert not out.exists()
    assert "'b_npb_1'" in pt2_edit.run("add-buffer", path, "--name", "b_npb_1", "--shape", "3",
                                       "-o", out).stdout
    edited = torch.export.load(str(out))
    edited.validate()
    x = torch.randn(3)
    torch.testing.assert_close(edited.module()(x), x + torch.tensor([1.0, 2.0, 3.0]))
    assert _inputs(edited) == [("BUFFER", "b_npb_1", "npb_1", True),
                               ("BUFFER", "b_npb", "npb", False),
                               ("USER_INPUT", "x", None, None)]
    assert "warning" not in pt2_edit.run("validate", out).stdout

    utils = _executorch_utils()
    et = torch.export.load(str(path))
    node = utils.create_mutable_buffer(et, "b_npb", torch.zeros(3))
    assert (node.name, node.target) == ("b_npb_1", "b_npb_1")
    et.validate()
    torch.testing.assert_close(et.module()(x), edited.module()(x))
    assert sorted(_inputs(et)) == sorted(_inputs(edited))
    assert _outputs(et) == _outputs(edited)
    # ExecuTorch's order: the persistent buffer after the non-persistent one.
    assert _placeholders(et) == ["b_npb", "b_npb_1", "x"]


class _RollInterpolate(nn.Module):
    def forward(self, x):
        y = torch.roll(x, 1, 1)
        z = nn.functional.interpolate(x.unsqueeze(0), scale_factor=2.0, mode="nearest")
        return y, z


def test_sym_scalar_as_wrapped_number_validates(pt2_edit, folder):
    """Regression: run_decompositions() of a dynamic program passes a SymInt (`mod`, from roll)
    to aten.add.Tensor; torch verifies and runs it, and epgraph refused it ("argument 'other'
    expects Tensor, got node 'mod' (a SymInt)"). Now it validates, and its copy runs in torch
    with eager's numbers."""
    x = torch.randn(3, 8, 5)
    dim = torch.export.Dim("s", min=2, max=64)
    ep = torch.export.export(_RollInterpolate(), (x,), dynamic_shapes={"x": {1: dim}})
    ep = ep.run_decompositions()
    targets = {(str(n.target), type(a.meta["val"]).__name__)
               for n in ep.graph.nodes if n.op == "call_function"
               for a in n.args
               if isinstance(a, torch.fx.Node) and not isinstance(a.meta["val"], torch.Tensor)}
    # The program has the calls this test is about (else it tests nothing).
    assert ("aten.add.Tensor", "SymInt") in targets
    path = folder / "roll_interpolate.pt2"
    _save(ep, path)
    assert pt2_edit.run("validate", path).stdout == f"OK: {path} passes every check of verify\n"
    copy = folder / "roll_interpolate_copy.pt2"
    pt2_edit.run("copy", path, "-o", copy)
    loaded = torch.export.load(str(copy))
    loaded.validate()
    for length in (8, 13):
        xi = torch.randn(3, length, 5)
        got = loaded.module()(xi)
        want = _RollInterpolate()(xi)
        assert all(torch.equal(g, w) for g, w in zip(got, want))
