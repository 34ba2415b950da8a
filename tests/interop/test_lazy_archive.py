# Lazy weights (scale issue, item 1): torch 2.13 loads what epgraph writes by raw entry copies.
# SPDX-License-Identifier: BSD-3-Clause
"""epgraph's `copy` and `add-buffer` copy unchanged weight entries from the source archive raw
(no decompression, same bytes, same CRC) and write only new tensors; the output may be the source
itself (written to a temporary file and renamed). torch 2.13 is the oracle: it loads each result
with torch.export.load and runs it, and the outputs must equal the original program's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import zipfile

import pytest
import torch
from torch import nn


class _Net(nn.Module):
    """Three linears (one weight tied to another), a buffer and a constant tensor."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(7)
        self.a = nn.Linear(32, 32)
        self.b = nn.Linear(32, 32)
        self.c = nn.Linear(32, 32, bias=False)
        self.c.weight = self.a.weight  # tied: one storage file
        self.register_buffer("scale", torch.linspace(0.5, 1.5, 32))
        self.k = torch.arange(32, dtype=torch.float32) / 32

    def forward(self, x):
        y = torch.relu(self.a(x)) * self.scale
        return self.c(self.b(y)) + self.k


@pytest.fixture(scope="module")
def program(workdir):
    folder = workdir / "lazy_archive"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    x = torch.randn(4, 32, generator=torch.Generator().manual_seed(3))
    ep = torch.export.export(_Net(), (x,))
    path = folder / "torch.pt2"
    torch.export.save(ep, str(path))
    expected = ep.module()(x)
    return folder, path, x, expected


def _payloads(path):
    """{name: (compress_type, CRC, compressed size, raw bytes)} of the weight / constant files."""
    out = {}
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            base = info.filename.rsplit("/", 1)[-1]
            if "/data/weights/weight_" in info.filename or "/data/constants/tensor_" in info.filename:
                out[base] = (info.compress_type, info.CRC, info.compress_size, z.read(info))
    return out


def _deflated(src, dst):
    """`src` rewritten with its weight and constant files deflate-compressed."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            payload = "/data/weights/weight_" in info.filename or (
                "/data/constants/tensor_" in info.filename)
            info.compress_type = zipfile.ZIP_DEFLATED if payload else zipfile.ZIP_STORED
            zout.writestr(info, data)


def _run(path, x):
    loaded = torch.export.load(str(path))
    return loaded, loaded.module()(x)


def test_copy_is_raw_and_torch_runs_it(pt2_edit, program):
    folder, path, x, expected = program
    out = folder / "copy.pt2"
    pt2_edit.run("copy", path, "-o", out)
    assert _payloads(out) == _payloads(path)
    _, got = _run(out, x)
    torch.testing.assert_close(got, expected, rtol=0, atol=0)


def test_compressed_entries_stay_compressed(pt2_edit, program):
    folder, path, x, expected = program
    deflated = folder / "deflated.pt2"
    _deflated(path, deflated)
    out = folder / "deflated_copy.pt2"
    pt2_edit.run("add-buffer", deflated, "--name", "b_extra", "--dtype", "float32", "--shape",
                 "3", "--fill", "4", "-o", out)
    before, after = _payloads(deflated), _payloads(out)
    for name, entry in before.items():  # raw copies: same method, CRC, compressed bytes
        assert after[name][:3] == entry[:3], name
        assert entry[0] == zipfile.ZIP_DEFLATED
    new = set(after) - set(before)
    assert len(new) == 1 and after[new.pop()][0] == zipfile.ZIP_STORED
    loaded, got = _run(out, x)
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
    torch.testing.assert_close(loaded.state_dict["extra"], torch.full((3,), 4.0))


def test_add_buffer_over_its_own_source(pt2_edit, program):
    folder, path, x, expected = program
    own = folder / "own.pt2"
    shutil.copyfile(path, own)
    weights_before = _payloads(own)
    pt2_edit.run("add-buffer", own, "--name", "b_kv", "--dtype", "float32", "--shape", "2,5",
                 "--fill", "1.5", "-o", own)
    after = _payloads(own)
    for name, entry in weights_before.items():
        assert after[name] == entry, name
    loaded, got = _run(own, x)
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
    torch.testing.assert_close(loaded.state_dict["kv"], torch.full((2, 5), 1.5))
    # A copy over its own source as well; no temporary file is left behind.
    pt2_edit.run("copy", own, "-o", own)
    loaded, got = _run(own, x)
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
    torch.testing.assert_close(loaded.state_dict["kv"], torch.full((2, 5), 1.5))
    leftovers = [n for n in os.listdir(folder) if n.startswith("own.pt2")]
    assert leftovers == ["own.pt2"]


def test_refused_edit_over_the_source_leaves_it(pt2_edit, program):
    folder, path, x, expected = program
    own = folder / "own_fail.pt2"
    shutil.copyfile(path, own)
    original = own.read_bytes()
    # The new buffer's name is taken: the edit fails before anything is written.
    proc = pt2_edit.run("add-buffer", own, "--name", "b_scale", "--dtype", "float32", "--shape",
                        "32", "-o", own, check=False)
    assert proc.returncode != 0
    assert "scale" in proc.stderr + proc.stdout
    assert own.read_bytes() == original
    _, got = _run(own, x)
    torch.testing.assert_close(got, expected, rtol=0, atol=0)


def _records(path):
    """{name: (compress_type, CRC, compressed size, raw bytes)} of the entries epgraph passes
    through (everything but the program JSON, the configs and the weight / constant files)."""
    out = {}
    with zipfile.ZipFile(path) as z:
        for info in z.infolist():
            name = info.filename
            if ("/models/" in name or name.endswith("_config.json")
                    or "/data/weights/weight_" in name or "/data/constants/tensor_" in name):
                continue
            out[name] = (info.compress_type, info.CRC, info.compress_size, z.read(info))
    return out


def test_pass_through_records_are_copied_raw(pt2_edit, program):
    """Sample inputs, version records and an entry torch does not know are copied entry to entry
    (lazy records: never read into memory), compressed ones staying compressed; torch loads and
    runs the result, with its sample inputs intact."""
    folder, path, x, expected = program
    src = folder / "records.pt2"
    with zipfile.ZipFile(path) as zin, zipfile.ZipFile(src, "w") as zout:
        for info in zin.infolist():
            data = zin.read(info)
            if "/data/sample_inputs/" in info.filename:
                info.compress_type = zipfile.ZIP_DEFLATED
            zout.writestr(info, data)
        prefix = zin.infolist()[0].filename.split("/", 1)[0]
        zout.writestr(zipfile.ZipInfo(prefix + "/extra/notes.txt"), b"kept " * 100,
                      compress_type=zipfile.ZIP_DEFLATED)
    before = _records(src)
    assert any(v[0] == zipfile.ZIP_DEFLATED for k, v in before.items() if "sample_inputs" in k)
    out = folder / "records_copy.pt2"
    pt2_edit.run("copy", src, "-o", out)
    assert _records(out) == before
    _, got = _run(out, x)
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
    # Over its own source too.
    pt2_edit.run("add-buffer", src, "--name", "b_rec", "--dtype", "float32", "--shape", "2",
                 "-o", src)
    assert _records(src) == before
    loaded, got = _run(src, x)
    torch.testing.assert_close(got, expected, rtol=0, atol=0)
    assert loaded.example_inputs is not None


def _weight_entries(path):
    """{fqn: (compress_type, CRC, compressed size, raw bytes)} of the weight files, through the
    weights config."""
    with zipfile.ZipFile(path) as z:
        config_name = next(n for n in z.namelist() if n.endswith("_weights_config.json"))
        config = json.loads(z.read(config_name))["config"]
        folder = config_name.rsplit("/", 1)[0]
        out = {}
        for fqn, entry in config.items():
            info = z.getinfo(f"{folder}/{entry['path_name']}")
            out[fqn] = (info.compress_type, info.CRC, info.compress_size, z.read(info))
    return out


def test_renamed_tensor_is_copied_raw(edit_grid, program):
    """A weight renamed without being read (state_dict key and input spec target) is written under
    its new name from the source entry, raw: same method, CRC and bytes, deflated staying
    deflated; torch loads the result with the weight under its new name and runs it."""
    folder, path, x, expected = program
    deflated = folder / "rename_src.pt2"
    _deflated(path, deflated)
    out = folder / "renamed.pt2"
    proc = subprocess.run([edit_grid, str(deflated), "-o", str(out), "rename_state", "--from",
                           "b.weight", "--to", "b.weight_renamed"],
                          capture_output=True, text=True, check=False)
    assert (proc.returncode, proc.stdout, proc.stderr) == (
        0, "renamed b.weight -> b.weight_renamed\n", "")
    before, after = _weight_entries(deflated), _weight_entries(out)
    assert "b.weight" not in after
    assert after["b.weight_renamed"] == before["b.weight"]
    assert after["b.weight_renamed"][0] == zipfile.ZIP_DEFLATED
    loaded = torch.export.load(str(out))
    assert torch.equal(loaded.state_dict["b.weight_renamed"],
                       torch.export.load(str(path)).state_dict["b.weight"])
    torch.testing.assert_close(loaded.module()(x), expected, rtol=0, atol=0)


def test_validate_data_names_a_corrupt_weight_that_copy_passes_on(pt2_edit, program):
    """A raw copy passes a corrupt weight on unread, like cp (torch too reads stored entries
    without checking their CRC, and runs with the flipped value); `validate --data` reads every
    entry and names the corrupt one, while the untouched archive passes it."""
    folder, path, x, expected = program
    ok = pt2_edit.run("validate", "--data", path)
    assert "every CRC and size checked" in ok.stdout
    with zipfile.ZipFile(path) as z:
        info = next(i for i in z.infolist() if i.filename.endswith("/data/weights/weight_0"))
        assert info.compress_type == zipfile.ZIP_STORED
    raw = bytearray(path.read_bytes())
    # The data of a stored entry start after its local header (30 bytes + name + extra field).
    name_len = int.from_bytes(raw[info.header_offset + 26:info.header_offset + 28], "little")
    extra_len = int.from_bytes(raw[info.header_offset + 28:info.header_offset + 30], "little")
    raw[info.header_offset + 30 + name_len + extra_len + 5] ^= 0x40
    bad = folder / "corrupt_weight.pt2"
    bad.write_bytes(bytes(raw))
    copied = folder / "corrupt_copy.pt2"
    pt2_edit.run("copy", bad, "-o", copied)  # raw copy: the corrupt bytes go on as they are
    assert copied.read_bytes().count(bytes(raw[info.header_offset + 30 + name_len + extra_len:][:64])) == 1
    for target in (bad, copied):
        proc = pt2_edit.run("validate", target, "--data", check=False)
        assert proc.returncode == 2
        assert proc.stderr == f"error: {target}: {info.filename}: corrupt data (CRC mismatch)\n"
