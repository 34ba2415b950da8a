# epgraph::infer_meta's expected values against the installed torch. SPDX-License-Identifier: BSD-3-Clause
"""tests/data/infer_meta_cases.json holds torch 2.13's metadata for every infer_meta case (the C++
test tests/json/test_infer_meta.cpp compares epgraph with it). Here the cases are computed again
with the installed torch, in memory, by tools/gen_infer_meta_cases.py's own function, and compared
with the committed file: a torch change (or a hand edit of the file) shows up as a failure naming
the case.
"""

from __future__ import annotations

import importlib.util
import json
import pathlib

import pytest

torch = pytest.importorskip("torch")

ROOT = pathlib.Path(__file__).resolve().parents[2]
GENERATOR = ROOT / "tools" / "gen_infer_meta_cases.py"
COMMITTED = ROOT / "tests" / "data" / "infer_meta_cases.json"


def load_generator():
    spec = importlib.util.spec_from_file_location("gen_infer_meta_cases", GENERATOR)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def generator():
    return load_generator()


@pytest.fixture(scope="module")
def committed():
    return json.loads(COMMITTED.read_text(encoding="utf-8"))


def test_committed_cases_match_installed_torch(generator, committed):
    if torch.__version__.split("+")[0] != committed["torch_version"]:
        pytest.skip(f"the cases are from torch {committed['torch_version']}, "
                    f"torch {torch.__version__} is installed")
    fresh = generator.build_cases()
    old = {c["name"]: c for c in committed["cases"]}
    new = {c["name"]: c for c in fresh}
    assert sorted(old) == sorted(new), "the generator's case list differs from the committed file"
    differ = [name for name in new if new[name] != old[name]]
    assert not differ, (
        f"{len(differ)} cases differ from torch {torch.__version__} (regenerate with "
        f"tools/gen_infer_meta_cases.py and check infer_meta): "
        + "; ".join(f"{n}: committed {old[n]['out']} torch {new[n]['out']}" for n in differ[:5]))


def test_committed_file_is_the_generators_text(generator, committed):
    # The committed file is exactly what the generator writes (no hand edits).
    if torch.__version__.split("+")[0] != committed["torch_version"]:
        pytest.skip("another torch version")
    assert generator.dumps(generator.build_cases()) == COMMITTED.read_text(encoding="utf-8")


def test_cases_cover_every_op_family(committed):
    targets = {c["target"] for c in committed["cases"]}
    assert len(committed["cases"]) >= 150
    for needed in [
            "torch.ops.aten.add.Tensor", "torch.ops.aten.div.Tensor_mode",
            "torch.ops.aten.where.self", "torch.ops.aten.view.default",
            "torch.ops.aten.slice.Tensor", "torch.ops.aten.cat.default",
            "torch.ops.aten.matmul.default", "torch.ops.aten.convolution.default",
            "torch.ops.aten._native_batch_norm_legit_no_training.default",
            "torch.ops.aten.native_layer_norm.default", "torch.ops.aten.sum.dim_IntList",
            "torch.ops.aten._to_copy.default", "torch.ops.aten.arange.start_step",
            "torch.ops.quantized_decomposed.quantize_per_tensor.default",
            "torch.ops.quantized_decomposed.dequantize_per_tensor.tensor"]:
        assert needed in targets, needed


SYM_COMMITTED = ROOT / "tests" / "data" / "infer_meta_sym_cases.json"


def test_committed_symbolic_cases_are_the_generators_text(generator):
    # tests/data/infer_meta_sym_cases.json (FakeTensorMode with a ShapeEnv) is exactly what the
    # installed torch computes.
    committed = json.loads(SYM_COMMITTED.read_text(encoding="utf-8"))
    if torch.__version__.split("+")[0] != committed["torch_version"]:
        pytest.skip("another torch version")
    assert generator.dumps(generator.build_sym_cases()) == SYM_COMMITTED.read_text(
        encoding="utf-8")
    names = {c["name"] for c in committed["cases"]}
    assert len(names) == len(committed["cases"]) >= 60
