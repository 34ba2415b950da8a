# pytest fixtures for epgraph's interop tests. SPDX-License-Identifier: BSD-3-Clause
"""Shared fixtures: the pt2_edit binary, the work folder and the exported zoo programs.

Environment:
  EPGRAPH_PT2_EDIT        path of the built pt2_edit tool (set by ctest); required.
  EPGRAPH_INTEROP_WORKDIR folder for every generated file (set by ctest to a folder in the build
                          tree); default: a pytest temporary folder.
  EPGRAPH_INTEROP_SHARD   "lowering" or "rest": run only that shard's tests (ctest runs the two
                          side by side, see CMakeLists.txt); unset: every test.
"""

from __future__ import annotations

import json
import os
import pathlib
import shutil
import subprocess
import sys
import zipfile

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import zoo  # noqa: E402

# The "lowering" shard: the ExecuTorch lowering of every zoo program, specialize and
# outline_partition (about half of the suite's time, measured with --durations=0); "rest" is the
# other half. Each test is in exactly one shard.
_LOWERING_FILES = {"test_specialize.py", "test_outline_partition.py"}
_LOWERING_TESTS = {"test_zoo_runs_in_executorch", "test_zoo_not_supported_by_executorch"}


def pytest_collection_modifyitems(config, items):
    shard = os.environ.get("EPGRAPH_INTEROP_SHARD")
    if not shard:
        return
    if shard not in ("lowering", "rest"):
        raise pytest.UsageError(f"EPGRAPH_INTEROP_SHARD={shard!r}: expected 'lowering' or 'rest'")
    keep, drop = [], []
    for item in items:
        lowering = (pathlib.Path(str(item.fspath)).name in _LOWERING_FILES
                    or getattr(item, "originalname", item.name) in _LOWERING_TESTS)
        (keep if lowering == (shard == "lowering") else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
    items[:] = keep


class Tool:
    """Runs one of epgraph's command-line programs and returns its CompletedProcess (text mode)."""

    def __init__(self, path: str, name: str = "pt2_edit") -> None:
        self.path = path
        self.name = name

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        proc = subprocess.run([self.path, *map(str, args)], capture_output=True, text=True)
        if check and proc.returncode != 0:
            raise AssertionError(
                f"{self.name} {' '.join(map(str, args))} exited with {proc.returncode}\n"
                f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
        return proc


def tool_path(variable: str) -> str:
    """The executable named by environment variable `variable` (set by ctest); skips the test when
    it is not set, fails when it is not an executable file."""
    path = os.environ.get(variable)
    if not path:
        pytest.skip(f"{variable} is not set (run through ctest, label 'interop')")
    if not os.access(path, os.X_OK):
        raise AssertionError(f"{variable}={path} is not an executable file")
    return path


def rewrite_model_json(src, dst, edit) -> None:
    """Copies archive `src` to `dst`, passing its models/model.json (parsed) through `edit`, which
    changes the document in place: how the tests make a file torch did not write."""
    with zipfile.ZipFile(src) as z, zipfile.ZipFile(dst, "w") as out:
        for info in z.infolist():
            data = z.read(info.filename)
            if info.filename.endswith("models/model.json"):
                doc = json.loads(data)
                edit(doc)
                data = json.dumps(doc).encode()
            out.writestr(info.filename, data)


@pytest.fixture(scope="session")
def pt2_edit() -> Tool:
    return Tool(tool_path("EPGRAPH_PT2_EDIT"))


@pytest.fixture(scope="session")
def edit_grid() -> str:
    """The edit_grid test tool (tests/interop/edit_grid.cpp): epgraph's edit helpers on a .pt2."""
    return tool_path("EPGRAPH_EDIT_GRID")


@pytest.fixture(scope="session")
def workdir(tmp_path_factory) -> pathlib.Path:
    """The session's work folder, empty when the first test gets it: what an earlier run left
    there (an output file a test checks is not written, say) must not decide a test."""
    path = os.environ.get("EPGRAPH_INTEROP_WORKDIR")
    if path:
        out = pathlib.Path(path)
        if out.exists():
            shutil.rmtree(out)
        out.mkdir(parents=True)
        return out
    return tmp_path_factory.mktemp("interop")


class Exported:
    """One zoo program: the in-memory ExportedProgram and the archive torch.export.save wrote."""

    def __init__(self, entry: zoo.ZooEntry, folder: pathlib.Path) -> None:
        self.entry = entry
        self.ep = zoo.export_entry(entry)
        self.folder = folder / entry.name
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path = self.folder / "torch.pt2"
        torch.export.save(self.ep, str(self.path))

    def load_fresh(self) -> "torch.export.ExportedProgram":
        """The program as torch.export.load reads it back from torch's own archive."""
        return torch.export.load(str(self.path))


@pytest.fixture(scope="session")
def exported(workdir):
    cache: dict[str, Exported] = {}

    def get(name: str) -> Exported:
        entry = zoo.BY_NAME[name]
        if entry.requires is not None:
            reason = entry.requires()
            if reason:
                pytest.skip(f"{name} cannot be exported here: {reason}")
        if name not in cache:
            cache[name] = Exported(zoo.BY_NAME[name], workdir)
        return cache[name]

    return get
