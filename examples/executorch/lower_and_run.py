#!/usr/bin/env python3
# epgraph ExecuTorch walk-through, step 3 of 3. SPDX-License-Identifier: BSD-3-Clause
"""Lowers a .pt2 with a KV cache (the output of `pt2_passes kv-cache`) to an ExecuTorch .pte, runs
it twice in ExecuTorch's runtime and compares every output and the cache state with torch.

    python3 examples/executorch/lower_and_run.py model_kv.pt2 [-o model_kv.pte]

1. torch.export.load reads the program epgraph wrote (torch's verifier runs on it);
2. to_edge(...).to_executorch(...) lowers it (Edge dialect, out variants, memory planning) and the
   .pte is written. Two ExecuTorch-specific settings: every mutable buffer is marked
   node.meta["et_init_buffer"] = True (ExecuTorch's InitializedMutableBufferPass), without which
   ExecuTorch serializes only the shape and dtype of a mutated buffer, not its initial value; and
   emit_mutable_buffer_names=True, so the runtime can show the buffers (Method.get_attribute);
3. the .pte is loaded by ExecuTorch's runtime (the pybindings of the portable kernels) and ONE
   loaded method is called twice: positions 0..T-1, then T..2T-1. The KV cache is a mutable buffer
   of the method, so the second call sees what the first wrote;
4. torch runs the same program (ExportedProgram.module()) on the same inputs: the outputs and the
   caches after each call must agree (torch.testing.assert_close). Exit status 1 if not.

The program must have one float user input x [B, T, D] and one 1-d int64 user input (positions).
"""

from __future__ import annotations

import argparse
import pathlib
import sys

import torch


def user_inputs(ep):
    """(x, positions): the placeholders of the float input and of the 1-d int64 input."""
    names = set(ep.graph_signature.user_inputs)
    vals = {n.name: n.meta["val"] for n in ep.graph.nodes if n.op == "placeholder"
            and n.name in names}
    positions = [n for n, v in vals.items() if v.dtype == torch.int64 and v.dim() == 1]
    floats = [n for n, v in vals.items() if v.dtype.is_floating_point]
    if len(positions) != 1 or len(floats) != 1 or len(vals) != 2:
        raise SystemExit(f"error: expected user inputs (x, input_pos), found {sorted(vals)}")
    return vals[floats[0]], vals[positions[0]]


def per_position(cache: torch.Tensor) -> str:
    """The norm of each cache row [B, H, S, D] -> S numbers: 0 where nothing was written."""
    norms = cache.float().pow(2).sum(dim=(0, 1, 3)).sqrt()
    return " ".join(f"{v:5.2f}" if v else "    0" for v in norms.tolist())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("program", help="the .pt2 archive (e.g. model_kv.pt2)")
    parser.add_argument("-o", "--output", help=".pte to write (default: the program's name)")
    parser.add_argument("--no-init-buffers", action="store_true",
                        help="do not mark the mutable buffers et_init_buffer (their initial "
                             "values are then not in the .pte)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the random inputs")
    args = parser.parse_args()
    src = pathlib.Path(args.program)
    pte = pathlib.Path(args.output) if args.output else src.with_suffix(".pte")

    from executorch.exir import ExecutorchBackendConfig, to_edge
    from executorch.exir.passes.init_mutable_pass import InitializedMutableBufferPass
    from executorch.extension.pybindings.portable_lib import _load_program

    # 1. torch's view of the program (also the reference the runtime is compared with).
    ep = torch.export.load(str(src))
    caches = sorted(set(ep.graph_signature.buffers_to_mutate.values()))
    x_val, pos_val = user_inputs(ep)
    batch, tokens, dim = x_val.shape
    print(f"{src}: user inputs x{list(x_val.shape)}, input_pos{list(pos_val.shape)}; "
          f"mutable buffers {caches}")
    for name in caches:
        if ep.state_dict[name].shape[2] < 2 * tokens:
            raise SystemExit(f"error: {name} has room for {ep.state_dict[name].shape[2]} "
                             f"positions, two calls need {2 * tokens}")

    # 2. Lower, under no_grad: ExecuTorch re-traces the graph with fake tensors, and under grad
    #    mode a program that writes a buffer in place (copy_) next to parameters that require grad
    #    fails there ("a leaf Variable that requires grad is being used in an in-place
    #    operation"). kv-cache's functional index_copy does not, but no_grad costs nothing.
    passes = [] if args.no_init_buffers or not caches else [InitializedMutableBufferPass(caches)]
    config = ExecutorchBackendConfig(emit_mutable_buffer_names=True, passes=passes)
    with torch.no_grad():
        program = to_edge(torch.export.load(str(src))).to_executorch(config)
    pte.write_bytes(program.buffer)
    print(f"lowered -> {pte} ({len(program.buffer)} bytes); et_init_buffer on "
          f"{[] if not passes else caches}")

    # 3. + 4. One loaded method, two calls; torch runs the same program alongside.
    runtime = _load_program(str(pte))  # kept alive as long as its method
    method = runtime.load_method("forward")
    module = ep.module()
    ok = True

    def check(what: str, actual, expected) -> None:
        nonlocal ok
        try:
            torch.testing.assert_close(actual, expected)
        except AssertionError as e:
            ok = False
            print(f"MISMATCH {what}: {e}")

    for name in caches:
        check(f"{name} before the first call", method.get_attribute(name), ep.state_dict[name])
    gen = torch.Generator().manual_seed(args.seed)
    torch.set_printoptions(precision=4, sci_mode=False, linewidth=120)
    for call in range(2):
        x = torch.randn(batch, tokens, dim, generator=gen)
        pos = torch.arange(call * tokens, (call + 1) * tokens)
        (out,) = method((x, pos))
        with torch.no_grad():
            expected = module(x, pos)
        print(f"\ncall {call + 1}: input_pos = {pos.tolist()}")
        print(f"  ExecuTorch output[0, :, :6] =\n{out[0, :, :6]}")
        print(f"  max |ExecuTorch - torch| = {(out - expected).abs().max().item():.3g}")
        check(f"output of call {call + 1}", out, expected)
        buffers = dict(module.named_buffers())
        for name in caches:
            state = method.get_attribute(name)
            print(f"  {name} norm per position (ExecuTorch): {per_position(state)}")
            check(f"{name} after call {call + 1}", state, buffers[name])
    print()
    if not ok:
        print("FAILED: ExecuTorch and torch disagree")
        return 1
    print(f"OK: ExecuTorch's runtime matches torch on both calls; the caches carried positions "
          f"0..{tokens - 1} of call 1 into call 2")
    return 0


if __name__ == "__main__":
    sys.exit(main())
