#!/usr/bin/env python3
# epgraph ExecuTorch walk-through, step 1 of 3. SPDX-License-Identifier: BSD-3-Clause
"""Exports a small attention module with torch.export (torch 2.13) and saves it as a .pt2 archive.

    python3 examples/executorch/export_model.py -o model.pt2

The module takes `x` [1, T, D] and `input_pos` [T] (int64, the positions of x's tokens). As
exported it has no KV cache and does not use input_pos yet: step 2, the C++ pass
`pt2_passes kv-cache model.pt2 -o model_kv.pt2`, adds the k/v cache buffers, writes k and v at
input_pos and makes the attention read the whole cache. Step 3 (lower_and_run.py) lowers the
result to an ExecuTorch .pte and runs it.
"""

from __future__ import annotations

import argparse

import torch
import torch.nn.functional as F
from torch import nn


class Attention(nn.Module):
    """Multi-head self-attention over x [B, T, D] (no mask), followed by an output projection."""

    def __init__(self, dim: int = 16, heads: int = 2) -> None:
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.wq, self.wk, self.wv = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.wo = nn.Linear(dim, dim)

    def split(self, t: torch.Tensor) -> torch.Tensor:
        b, s, _ = t.shape
        return t.view(b, s, self.heads, self.head_dim).transpose(1, 2)  # [B, H, T, D/H]

    def forward(self, x: torch.Tensor, input_pos: torch.Tensor) -> torch.Tensor:
        q, k, v = self.split(self.wq(x)), self.split(self.wk(x)), self.split(self.wv(x))
        y = F.scaled_dot_product_attention(q, k, v)
        return self.wo(y.transpose(1, 2).reshape(x.shape))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-o", "--output", default="model.pt2", help="archive to write")
    parser.add_argument("--dim", type=int, default=16, help="model width D")
    parser.add_argument("--heads", type=int, default=2, help="attention heads")
    parser.add_argument("--tokens", type=int, default=3, help="tokens per call T")
    args = parser.parse_args()

    torch.manual_seed(0)
    model = Attention(args.dim, args.heads).eval()
    example = (torch.randn(1, args.tokens, args.dim), torch.arange(args.tokens))
    ep = torch.export.export(model, example)
    torch.export.save(ep, args.output)
    print(f"torch {torch.__version__}: exported Attention(dim={args.dim}, heads={args.heads}) "
          f"with inputs x{list(example[0].shape)}, input_pos{list(example[1].shape)} "
          f"-> {args.output}")
    print(ep.graph_signature)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
