#!/usr/bin/env python3
# epgraph: read, edit, validate and write torch.export exported programs from C++.
# SPDX-License-Identifier: BSD-3-Clause
"""Writes examples/data/decoder_block.json: a small decoder block exported with torch.export.

The module is written by the epgraph project: a pre-norm attention block and an MLP with
parameters, a BatchNorm1d in training mode (its three buffers come back as BUFFER_MUTATION
outputs), and one user input. The program is saved with torch.export.save and the exported-program
JSON record (`models/model.json` in the PT2 archive) is extracted, so the file is exactly what
torch.export writes. Weights are not kept: the JSON record carries none.

Usage: python3 tools/make_example_data.py [OUT_JSON]   (needs torch >= 2.6; written with 2.13)
"""
import io
import json
import pathlib
import sys
import zipfile

import torch


class DecoderBlock(torch.nn.Module):
    def __init__(self, dim: int = 16, hidden: int = 32) -> None:
        super().__init__()
        self.norm = torch.nn.LayerNorm(dim)
        self.qkv = torch.nn.Linear(dim, 3 * dim)
        self.proj = torch.nn.Linear(dim, dim)
        self.bn = torch.nn.BatchNorm1d(dim)
        self.up = torch.nn.Linear(dim, hidden)
        self.down = torch.nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm(x)
        q, k, v = self.qkv(h).chunk(3, dim=-1)
        att = torch.softmax(q @ k.transpose(-2, -1) * 0.25, dim=-1)
        x = x + self.proj(att @ v)
        x = self.bn(x.transpose(1, 2)).transpose(1, 2)
        return x + self.down(torch.relu(self.up(x)))


def main() -> None:
    out = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else (
        pathlib.Path(__file__).resolve().parent.parent / "examples" / "data" / "decoder_block.json")
    torch.manual_seed(0)
    module = DecoderBlock().train()
    # run_decompositions({}) gives the functional ATen IR: BatchNorm becomes
    # _native_batch_norm_legit_functional (a multi-output op, read through getitem nodes) and its
    # three buffer updates become BUFFER_MUTATION outputs.
    ep = torch.export.export(module, (torch.randn(2, 4, 16),)).run_decompositions({})
    buf = io.BytesIO()
    torch.export.save(ep, buf)
    with zipfile.ZipFile(io.BytesIO(buf.getvalue())) as z:
        name = next(n for n in z.namelist() if n.endswith("models/model.json"))
        record = json.loads(z.read(name))
    out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"wrote {out} ({out.stat().st_size} bytes), torch {torch.__version__}")


if __name__ == "__main__":
    main()
