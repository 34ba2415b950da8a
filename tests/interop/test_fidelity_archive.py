# Fidelity with torch 2.13 (issue 13 items 3, 7, 8), torch being the oracle.
# SPDX-License-Identifier: BSD-3-Clause
"""Programs made by torch at test time (as ../shared/cases/fidelity/make_cases.py makes them):

- a `torch.compiler.nested_compile_region` subgraph called twice: pt2_edit prints what torch
  prints, and its copy and its add-buffer output load in torch and run with equal outputs;
- an archive of two programs (`package_pt2(exported_programs={"helper": ..., "model": ...})`):
  `show` lists both and shows `model` (or the one `--program` names), as torch.export.load
  returns `model`; `copy` / `add-buffer` keep `helper`'s entries byte for byte, and torch loads
  both programs of the result and runs them with equal outputs;
- a program of a newer minor schema version (8.21, which torch 2.13 loads, ignoring fields it
  does not know): `copy` keeps the version and an unknown node field, torch loads and runs the
  copy; a field epgraph could only drop is refused, naming it.
"""

from __future__ import annotations

import json
import zipfile

import pytest
import torch
from torch import nn
from torch.export.pt2_archive._package import load_pt2, package_pt2

from conftest import rewrite_model_json
from test_zoo import expected_show


def _strip(gm):
    """No stack traces: they hold this machine's file paths."""
    for n in gm.graph.nodes:
        n.meta.pop("stack_trace", None)
    for _, sub in gm.named_children():
        if hasattr(sub, "graph"):
            _strip(sub)


def _save(ep, path):
    _strip(ep.graph_module)
    torch.export.save(ep, str(path))


def _entries(path):
    with zipfile.ZipFile(path) as z:
        return [(i.filename, z.read(i.filename)) for i in z.infolist()]


def _model_json(path):
    for name, data in _entries(path):
        if name.endswith("models/model.json"):
            return json.loads(data)
    raise AssertionError(f"no models/model.json in {path}")


@pytest.fixture()
def folder(workdir):
    out = workdir / "fidelity_archive"
    out.mkdir(parents=True, exist_ok=True)
    return out


@torch.compiler.nested_compile_region
def _block(x):
    return torch.sigmoid(x) + 1.0


class _Stack(nn.Module):
    def forward(self, x):
        return _block(_block(x))


def test_shared_subgraph(pt2_edit, folder):
    path = folder / "shared_subgraph.pt2"
    with torch._dynamo.config.patch(inline_single_use_invoke_subgraph=False):
        _save(torch.export.export(_Stack(), (torch.randn(4),), strict=False), path)
    reference = torch.export.load(str(path))
    assert [n.name for n in reference.graph.nodes if n.op == "get_attr"] == [
        "repeated_subgraph0", "repeated_subgraph0_1"]
    assert pt2_edit.run("show", path).stdout == expected_show(reference)

    x = torch.randn(4)
    copy = folder / "shared_subgraph_copy.pt2"
    pt2_edit.run("copy", path, "-o", copy)
    loaded = torch.export.load(str(copy))
    assert str(loaded.graph) == str(reference.graph)
    assert str(loaded.graph_signature) == str(reference.graph_signature)
    torch.testing.assert_close(loaded.module()(x), reference.module()(x))
    # torch's own serializer names both calls' graph `repeated_subgraph0`; so does epgraph.
    names = [i["arg"]["as_graph"]["name"] for n in _model_json(copy)["graph_module"]["graph"]["nodes"]
             for i in n["inputs"] if "as_graph" in i["arg"]]
    assert names == ["repeated_subgraph0", "repeated_subgraph0"]

    edited = folder / "shared_subgraph_buffer.pt2"
    pt2_edit.run("add-buffer", path, "--name", "b_cache", "--shape", "4", "--fill", "2", "-o",
                 edited)
    program = torch.export.load(str(edited))
    assert "cache" in program.state_dict
    torch.testing.assert_close(program.state_dict["cache"], torch.full((4,), 2.0))
    torch.testing.assert_close(program.module()(x), reference.module()(x))


def _two_programs(path):
    torch.manual_seed(0)
    model = torch.export.export(nn.Linear(2, 2), (torch.randn(1, 2),))
    helper = torch.export.export(nn.Tanh(), (torch.randn(2),))
    _strip(model.graph_module)
    _strip(helper.graph_module)
    package_pt2(str(path), exported_programs={"helper": helper, "model": model})


def test_two_programs(pt2_edit, folder):
    path = folder / "two_programs.pt2"
    _two_programs(path)
    contents = load_pt2(str(path))
    assert list(contents.exported_programs) == ["helper", "model"]
    reference = torch.export.load(str(path))  # torch returns `model`
    helper = contents.exported_programs["helper"]
    assert str(reference.graph) == str(contents.exported_programs["model"].graph)

    listing = "# programs: helper, model (shown: {})\n"
    assert pt2_edit.run("show", path).stdout == listing.format("model") + expected_show(reference)
    assert (pt2_edit.run("show", path, "--program", "helper").stdout ==
            listing.format("helper") + expected_show(helper))
    proc = pt2_edit.run("show", path, "--program", "other", check=False)
    assert proc.returncode == 2
    assert proc.stderr == f"error: {path}: no program 'other' (the archive holds helper, model)\n"

    x, h = torch.randn(1, 2), torch.randn(2)
    helper_entries = [e for e in _entries(path) if "helper" in e[0]]
    assert len(helper_entries) == 4

    copy = folder / "two_programs_copy.pt2"
    pt2_edit.run("copy", path, "-o", copy)
    assert [e[0] for e in _entries(copy)] == [e[0] for e in _entries(path)]
    assert [e for e in _entries(copy) if "helper" in e[0]] == helper_entries
    copied = load_pt2(str(copy)).exported_programs
    assert list(copied) == ["helper", "model"]
    torch.testing.assert_close(torch.export.load(str(copy)).module()(x), reference.module()(x))
    torch.testing.assert_close(copied["helper"].module()(h), helper.module()(h))

    edited = folder / "two_programs_buffer.pt2"
    pt2_edit.run("add-buffer", path, "--name", "b_cache", "--shape", "2", "-o", edited)
    assert [e for e in _entries(edited) if "helper" in e[0]] == helper_entries
    both = load_pt2(str(edited)).exported_programs
    assert "cache" in both["model"].state_dict
    torch.testing.assert_close(both["model"].module()(x), reference.module()(x))
    torch.testing.assert_close(both["helper"].module()(h), helper.module()(h))

    # Editing `helper` keeps `model` (its weights included) byte for byte.
    helper_edit = folder / "two_programs_helper_buffer.pt2"
    pt2_edit.run("add-buffer", path, "--program", "helper", "--name", "b_cache", "--shape", "2",
                 "-o", helper_edit)
    model_entries = [e for e in _entries(path) if "helper" not in e[0]]
    out = _entries(helper_edit)
    assert [e for e in out if e[0] in dict(model_entries)] == model_entries
    # The helper's new buffer has a file of its own, next to model's weight_0 and weight_1.
    assert [n for n, _ in out if n not in dict(model_entries) and "helper" not in n] == [
        "two_programs/data/weights/weight_2"]
    both = load_pt2(str(helper_edit)).exported_programs
    assert "cache" in both["helper"].state_dict
    torch.testing.assert_close(both["helper"].module()(h), helper.module()(h))
    torch.testing.assert_close(both["model"].module()(x), reference.module()(x))


def test_newer_minor_version(pt2_edit, folder):
    torch.manual_seed(0)
    src = folder / "minor_src.pt2"
    _save(torch.export.export(nn.Sequential(nn.Linear(3, 2), nn.ReLU()), (torch.randn(1, 3),)),
          src)

    def newer(doc):
        doc["schema_version"]["minor"] = 21
        doc["graph_module"]["graph"]["nodes"][0]["placement"] = {"stream": 1}

    path = folder / "minor_21.pt2"
    rewrite_model_json(src, path, newer)
    reference = torch.export.load(str(path))  # torch 2.13 reads 8.21, ignoring `placement`
    x = torch.randn(1, 3)
    assert pt2_edit.run("show", path).stdout == expected_show(reference)
    copy = folder / "minor_21_copy.pt2"
    pt2_edit.run("copy", path, "-o", copy)
    doc = _model_json(copy)
    assert doc["schema_version"] == {"major": 8, "minor": 21}
    assert doc["graph_module"]["graph"]["nodes"][0]["placement"] == {"stream": 1}
    assert doc == _model_json(path)
    loaded = torch.export.load(str(copy))
    assert str(loaded.graph) == str(reference.graph)
    torch.testing.assert_close(loaded.module()(x), reference.module()(x))

    # A field torch ignores and epgraph could only drop: refused, naming it.
    def unknown_tensor_field(doc):
        doc["schema_version"]["minor"] = 21
        doc["graph_module"]["graph"]["tensor_values"]["input"]["memory_kind"] = "pinned"

    bad = folder / "minor_21_tensor_field.pt2"
    rewrite_model_json(src, bad, unknown_tensor_field)
    torch.export.load(str(bad))  # torch loads it
    proc = pt2_edit.run("copy", bad, "-o", folder / "never.pt2", check=False)
    assert proc.returncode == 2
    entry = next(n for n, _ in _entries(bad) if n.endswith("models/model.json"))
    assert proc.stderr == (
        f"error: {bad}: {entry}: graph_module.graph.tensor_values.input: field 'memory_kind' of "
        "schema 8.21 is unknown to epgraph, which implements schema 8.20 and keeps unknown fields "
        "only on nodes, at the top level and in graph_module: refusing the file rather than "
        "dropping the field\n")
    assert not (folder / "never.pt2").exists()
