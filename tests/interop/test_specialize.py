# pt2_edit specialize against torch 2.13 and ExecuTorch 1.5.1. SPDX-License-Identifier: BSD-3-Clause
"""`pt2_edit specialize FILE --dim <sym>=16 -o OUT` on the Llama-style decoder of
test_propagate_meta.py exported with a dynamic sequence length (both attention forms, default
IR and `run_decompositions()`):
torch.export.load accepts the result, every node's value has concrete sizes, no range constraint
is left, `arange(sym_size_int)` became `arange(16)`, `ep.module()` at length 16 gives the
dynamic program's numbers and refuses another length; the value outside the range and a symbol
the program does not have are refused with the message naming them, nothing written. When
ExecuTorch can be imported, the specialized program lowers with `to_edge(...).to_executorch()`
and the runtime gives the same numbers.

Environment: EPGRAPH_PT2_EDIT (set by ctest; skipped without it).
"""

from __future__ import annotations

import re

import pytest

from test_propagate_meta import export_decoder

torch = pytest.importorskip("torch")


def exported_decoder(sdpa: bool, workdir, decompose: bool = False):
    """The decoder, its dynamic program saved by torch, and the name of its sequence symbol."""
    model, ep, _ = export_decoder(sdpa, decompose)
    ((sym, vr),) = ep.range_constraints.items()
    assert (int(vr.lower), int(vr.upper)) == (2, 64)
    symbol = str(sym)
    tag = f"{'sdpa' if sdpa else 'matmul'}_{'decomposed' if decompose else 'default'}"
    src = workdir / f"specialize_src_{tag}.pt2"
    torch.export.save(ep, str(src))
    return model, src, symbol


def executorch_api():
    """(to_edge, _load_for_executorch_from_buffer), or None when ExecuTorch cannot be used."""
    try:
        from executorch.exir import to_edge
        from executorch.extension.pybindings.portable_lib import _load_for_executorch_from_buffer
    except Exception:  # noqa: BLE001 - missing or broken: that part is skipped
        return None
    return to_edge, _load_for_executorch_from_buffer


@pytest.mark.parametrize("decompose", [False, True], ids=["default_ir", "decomposed"])
@pytest.mark.parametrize("sdpa", [False, True], ids=["matmul", "sdpa"])
def test_specialize_decoder_to_a_static_length(sdpa, decompose, pt2_edit, workdir):
    model, src, symbol = exported_decoder(sdpa, workdir, decompose)
    dst = src.with_name(src.name.replace("_src_", "_static_"))
    out = pt2_edit.run("specialize", src, "--dim", f"{symbol}=16", "-o", dst).stdout
    print(out)
    assert f"specialized {symbol} = 16 (range [2, 64])\n" in out, out
    folded = re.search(r"folded (\d+) SymInt/SymBool node\(s\): (.*)\n", out)
    assert folded and int(folded.group(1)) >= 1, out
    assert "sym_size_int" in folded.group(2), out
    assert f"dropped 1 range constraint(s): {symbol}\n" in out, out
    assert "symbolic_values=0\n" in out, out
    assert f"specialized -> {dst}\n" in out, out

    static = torch.export.load(str(dst))
    dynamic = torch.export.load(str(src))
    assert dict(static.range_constraints) == {}
    # every value concrete; no SymInt node left
    for node in static.graph.nodes:
        val = node.meta.get("val")
        if isinstance(val, torch.Tensor):
            assert all(isinstance(s, int) for s in val.shape), (node.name, val.shape)
            assert all(isinstance(s, int) for s in val.stride()), (node.name, val.stride())
        assert not isinstance(val, torch.SymInt), node.name
        assert "sym_size" not in str(node.target), node.name
    # arange(sym_size_int) is arange(16) (run_decompositions writes arange.start_step(0, 16))
    aranges = [n for n in static.graph.nodes if str(n.target).startswith("aten.arange.")]
    assert aranges and all(n.args in ((16,), (0, 16), (0, 16, 1)) for n in aranges), \
        [n.args for n in aranges]
    placeholder = next(n for n in static.graph.nodes if n.op == "placeholder"
                       and n.name == "tokens")
    assert tuple(placeholder.meta["val"].shape) == (2, 16)

    torch.manual_seed(1)
    inputs = [torch.randint(0, 64, (2, 16)) for _ in range(3)]
    with torch.no_grad():
        for x in inputs:
            want = dynamic.module()(x)
            torch.testing.assert_close(static.module()(x), want, rtol=1e-5, atol=1e-5)
            torch.testing.assert_close(want, model(x), rtol=1e-4, atol=1e-4)
        with pytest.raises(Exception, match=r"tokens.size\(\)\[1\] == 16"):
            static.module()(torch.randint(0, 64, (2, 12)))

    api = executorch_api()
    if api is None:
        pytest.skip("executorch cannot be imported: the lowering part is not run")
    to_edge, load_pte = api
    with torch.no_grad():
        program = to_edge(static).to_executorch()
    buffer = program.buffer
    runtime = load_pte(buffer)
    for x in inputs:
        (got,) = runtime.forward((x,))
        with torch.no_grad():
            torch.testing.assert_close(got, dynamic.module()(x), rtol=1e-4, atol=1e-4)


def test_specialize_refuses_a_value_outside_the_range(pt2_edit, workdir):
    _, src, symbol = exported_decoder(False, workdir)
    dst = workdir / "specialize_refused.pt2"
    for dim, message in [
        (f"{symbol}=65", f"error: Cannot specialize {symbol} to 65: outside its range constraint "
                         "[2, 64]\n"),
        (f"{symbol}=1", f"error: Cannot specialize {symbol} to 1: outside its range constraint "
                        "[2, 64]\n"),
        ("s9999=16", "error: Cannot specialize 's9999': it is not a symbol of the program's "
                     f"range_constraints (its symbols: {symbol})\n"),
        (f"{symbol}=x", f"error: --dim '{symbol}=x': expected SYMBOL=VALUE, e.g. s70=16\n"),
    ]:
        proc = pt2_edit.run("specialize", src, "--dim", dim, "-o", dst, check=False)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert proc.stderr == message, proc.stderr
        assert proc.stdout == ""
        assert not dst.exists()


class _Interpolate(torch.nn.Module if torch else object):
    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return torch.nn.functional.interpolate(x, scale_factor=self.scale, mode="nearest")


class _TrueDiv(torch.nn.Module if torch else object):
    def forward(self, x):
        return x * (x.size(2) / 3)  # a SymFloat node: IntTrueDiv(s, 3)


def _shapes_and_scalars(ep):
    """node name -> concrete shape and strides, or the SymFloat/SymInt value as a Python number."""
    out = {}
    for node in ep.graph.nodes:
        val = node.meta.get("val")
        if isinstance(val, torch.Tensor):
            out[node.name] = (tuple(val.shape), tuple(val.stride()))
        elif isinstance(val, (int, float, torch.SymInt, torch.SymFloat)):
            out[node.name] = val
    return out


@pytest.mark.parametrize("decompose", [False, True], ids=["default_ir", "decomposed"])
@pytest.mark.parametrize("module", ["interp1.5", "interp0.3", "interp0.7", "interp2.5", "truediv"])
def test_specialize_sym_float_expressions(module, decompose, pt2_edit, workdir):
    """torch writes SymFloat expressions (Float('1.5', precision=53), ToFloat, IntTrueDiv,
    TruncToInt) for a float scale or a true division of a dynamic size: specialize reads them and
    gives every node the value torch gives the program exported with that static size."""
    model = _TrueDiv() if module == "truediv" else _Interpolate(float(module[len("interp"):]))
    example = torch.randn(1, 3, 8, 8)
    low = 7 if module == "interp0.3" else 3  # torch needs trunc(scale * h) >= 2
    dyn = {"x": {2: torch.export.Dim("h", min=low, max=64)}}
    ep = torch.export.export(model, (example,), dynamic_shapes=dyn)
    if decompose:
        ep = ep.run_decompositions()
    ((sym, _),) = ep.range_constraints.items()
    src = workdir / f"specialize_float_{module}_{decompose}.pt2"
    torch.export.save(ep, str(src))
    text = src.read_bytes()
    assert b"Float(" in text or b"TrueDiv" in text or module != "interp1.5"
    # 10 and 30: 0.7 * 10 and 0.3 * 30 are 7 and 9 only in float64 (exactly, 0.7 is below 7/10)
    for size in (7, 10, 13, 30, 64):
        dst = workdir / f"specialize_float_{module}_{decompose}_{size}.pt2"
        out = pt2_edit.run("specialize", src, "--dim", f"{sym}={size}", "-o", dst).stdout
        assert f"specialized -> {dst}\n" in out, out
        static = torch.export.load(str(dst))
        want_ep = torch.export.export(model, (torch.randn(1, 3, size, 8),))
        if decompose:
            want_ep = want_ep.run_decompositions()
        got, want = _shapes_and_scalars(static), _shapes_and_scalars(want_ep)
        # the static export folds the SymFloat node away; the outputs' shapes must agree
        for name in want:
            if name in got:
                assert got[name] == want[name], (size, name, got[name], want[name])
        x = torch.randn(1, 3, size, 8)
        torch.testing.assert_close(static.module()(x), model(x))
        if module == "truediv":
            assert got["truediv"] == size / 3, (size, got["truediv"])


class _CheckedItem(torch.nn.Module if torch else object):
    """A data-dependent size k = n.item() with runtime checks 1 <= k <= x.shape[0]: torch writes
    the unbacked symbol u0 with range_constraints u0 in [1, 100] (what the checks establish) and
    asserts u0 >= 1, u0 <= 100 (from the bound of s77) and u0 <= s77."""

    def forward(self, x, n):
        k = n.item()
        torch._check(k >= 1)
        torch._check(k <= x.shape[0])
        return x[:k] * 2


def _asserts(ep):
    """The conditions the program's runtime asserts check, as torch prints them."""
    return sorted(str(n.args[0].meta["val"]) for n in ep.graph.nodes
                  if n.target is torch.ops.aten._assert_scalar.default)


def test_specialize_keeps_the_asserts_that_check_a_data_dependent_size(pt2_edit, workdir):
    """Regression (found by a break test): fixing the input size s77 to 6 also erased the asserts
    u0 >= 1 and u0 <= 100, which do not involve s77: they were decided with u0's range [1, 100],
    which holds only because of them, and the specialized program returned an empty result for
    n = 0 where the dynamic one raised. Conditions are now decided with the input symbols' ranges
    only: the two asserts stay, u0 <= s77 becomes u0 <= 6 and stays."""
    ep = torch.export.export(_CheckedItem(), (torch.randn(6, 3), torch.tensor(2)),
                             dynamic_shapes={"x": {0: torch.export.Dim("N", min=2, max=100)},
                                             "n": None})
    (size,) = [s for s in map(str, ep.range_constraints) if s.startswith("s")]
    src, dst = workdir / "checked_item.pt2", workdir / "checked_item_static.pt2"
    torch.export.save(ep, str(src))
    before = _asserts(ep)
    assert before == sorted(["u0 >= 1", "u0 <= 100", f"u0 <= {size}"]), before
    pt2_edit.run("specialize", src, "--dim", f"{size}=6", "-o", dst)
    static = torch.export.load(str(dst))
    assert _asserts(static) == sorted(["u0 >= 1", "u0 <= 100", "u0 <= 6"])
    module, x = static.module(), torch.randn(6, 3)
    torch.testing.assert_close(module(x, torch.tensor(3)), x[:3] * 2)
    for bad in (0, 7):  # below 1, above the fixed size: refused at run time as before
        with pytest.raises(RuntimeError, match="Runtime assertion failed"):
            module(x, torch.tensor(bad))


def test_specialize_refuses_a_data_dependent_symbol_or_a_derived_dimension(pt2_edit, workdir):
    """Regression (found by a break test): `--dim u0=2` turned item() into the constant 2 and
    dropped its checks (the program then ignored n), and `--dim 2*s27=14`, a derived dimension's
    range_constraints key, was reported as specialized while nothing was (an odd value and a
    contradicting second --dim were accepted too). Both are refused, naming the key."""
    ep = torch.export.export(_CheckedItem(), (torch.randn(6, 3), torch.tensor(2)),
                             dynamic_shapes={"x": {0: torch.export.Dim("N", min=2, max=100)},
                                             "n": None})
    (size,) = [s for s in map(str, ep.range_constraints) if s.startswith("s")]
    src = workdir / "checked_item_refused.pt2"
    torch.export.save(ep, str(src))

    class Two(torch.nn.Module):
        def forward(self, x, y):
            return x + y.view(y.shape[0], -1, 2).sum(-1)

    t = torch.export.Dim("T", min=2, max=64)
    two = torch.export.export(Two(), (torch.randn(3, 5), torch.randn(3, 10)),
                              dynamic_shapes={"x": {1: t}, "y": {1: 2 * t}})
    keys = [str(k) for k in two.range_constraints]
    (base,) = [k for k in keys if k.isidentifier()]
    (derived,) = [k for k in keys if not k.isidentifier()]
    src_two = workdir / "derived_dim.pt2"
    torch.export.save(two, str(src_two))

    dst = workdir / "specialize_refused_keys.pt2"
    for path, dim, message in [
        (src, "u0=2", "error: Cannot specialize 'u0': it is a data-dependent (unbacked) symbol, "
                      "whose value a tensor's data gives at run time, not an input size (its "
                      f"symbols: {size})\n"),
        (src_two, f"{derived}=14", f"error: Cannot specialize '{derived}': it is an expression "
                                   "(a derived dimension), not a symbol; fix the symbols it is "
                                   f"made of (its symbols: {base})\n"),
    ]:
        proc = pt2_edit.run("specialize", path, "--dim", dim, "-o", dst, check=False)
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert proc.stderr == message, proc.stderr
        assert proc.stdout == ""
        assert not dst.exists()

    # without --dim: the symbols that can be fixed, with their ranges (not u0, not 2*s27)
    for path, listed in [(src, f"{size} [2, 100]"), (src_two, f"{base} [2, 64]")]:
        proc = pt2_edit.run("specialize", path, check=False)
        assert proc.returncode == 2
        assert proc.stderr.startswith("error: specialize needs at least one --dim SYMBOL=VALUE "
                                      f"(the symbols of {path}: {listed})\nusage:"), proc.stderr
    # without -o: a dry run, which says so
    proc = pt2_edit.run("specialize", src_two, "--dim", f"{base}=7")
    assert proc.stdout.endswith("nothing written (no -o OUT: a dry run)\n"), proc.stdout

    # the derived dimension follows its symbol: fixing s27 to 7 fixes y's size to 14
    pt2_edit.run("specialize", src_two, "--dim", f"{base}=7", "-o", dst)
    static = torch.export.load(str(dst))
    assert static.range_constraints == {}
    x, y = torch.randn(3, 7), torch.randn(3, 14)
    torch.testing.assert_close(static.module()(x, y), Two()(x, y))


def nested_graph_values(gm, prefix=""):
    """(name, meta["val"]) of every node of `gm`'s nested graphs (submodules), recursively."""
    out = []
    for name, sub in gm.named_children():
        if isinstance(sub, torch.fx.GraphModule):
            out += [(f"{prefix}{name}.{n.name}", n.meta.get("val")) for n in sub.graph.nodes]
            out += nested_graph_values(sub, f"{prefix}{name}.")
    return out


@pytest.mark.parametrize("name", ["cond_branches", "map_body", "repeated_block"])
def test_specialize_enters_nested_graphs(name, pt2_edit, workdir):
    """specialize on programs whose dynamic sizes flow into nested graphs (cond's branches,
    map's body, invoke_subgraph's subgraph): the nested graphs' values become concrete too (they
    are made Graphs of the program, specialized and recomputed); a cond whose predicate
    (x.shape[0] > 4) becomes constant is replaced by the branch it takes. torch loads the result
    and gives the dynamic program's numbers at the fixed size; ExecuTorch lowers the cond and
    map ones."""
    from test_propagate_meta import PROGRAMS
    model, ep, _ = PROGRAMS[name](False)
    src = workdir / f"specialize_nested_{name}.pt2"
    torch.export.save(ep, str(src))
    dims = {str(s): int(vr.lower) + 3 for s, vr in ep.range_constraints.items()}
    args = [a for s, v in dims.items() for a in ("--dim", f"{s}={v}")]
    dst = workdir / f"specialize_nested_{name}_static.pt2"
    out = pt2_edit.run("specialize", src, *args, "-o", dst).stdout
    print(out)
    assert "symbolic_values=0\n" in out, out
    static = torch.export.load(str(dst))
    assert dict(static.range_constraints) == {}
    nested = nested_graph_values(static.graph_module)
    assert nested or name == "cond_branches", "the program keeps its nested graphs"
    for node, val in nested + [(n.name, n.meta.get("val")) for n in static.graph.nodes]:
        if isinstance(val, torch.Tensor):
            assert all(isinstance(s, int) for s in val.shape), (node, val.shape)
            assert all(isinstance(s, int) for s in val.stride()), (node, val.stride())
        assert not isinstance(val, (torch.SymInt, torch.SymBool)), (node, val)
    # the inputs at the fixed sizes
    dynamic = torch.export.load(str(src))
    sizes = list(dims.values())
    inputs = {"cond_branches": lambda: (torch.randn(sizes[0], 3), torch.randn(sizes[0], 3)),
              "map_body": lambda: (torch.randn(sizes[0], sizes[1], 4),),
              "repeated_block": lambda: (torch.randn(sizes[0], 8),)}[name]
    torch.manual_seed(2)
    for _ in range(2):
        x = inputs()
        torch.testing.assert_close(static.module()(*x), dynamic.module()(*x))
    api = executorch_api()
    if name == "cond_branches":
        # x.shape[0] > 4 is decided: the cond is replaced by the branch it takes, as exporting
        # with the static size gives (ExecuTorch's emitter refuses a cond on a Python bool)
        assert "took the branch of 1 cond(s) whose predicate became constant: cond " \
               "(true_graph_0)\n" in out, out
        assert not [n for n in static.graph.nodes if "cond" in str(n.target)]
        assert not nested
    if api is None or name == "repeated_block":
        return  # ExecuTorch 1.5.1's emitter has no invoke_subgraph
    to_edge, load_pte = api
    runtime = load_pte(to_edge(static).to_executorch().buffer)
    x = inputs()
    got = runtime.forward(x)
    want = dynamic.module()(*x)
    want = want if isinstance(want, (tuple, list)) else (want,)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-5)


def test_specialize_refuses_a_nested_graph_it_cannot_enter(pt2_edit, workdir):
    """A cond inside a cond's branch stays a record of the file (epgraph enters the program's own
    nested graphs, not those inside them): specializing the symbol its values use is refused,
    naming it, nothing written. (It wrote a program with the inner cond's values still over the
    dropped symbol, which validate --meta then failed and ExecuTorch refused.)"""
    from test_propagate_meta import CondInCond
    ep = torch.export.export(CondInCond(), (torch.randn(5, 4),),
                             dynamic_shapes={"x": {0: torch.export.Dim("batch", min=2, max=64)}})
    src = workdir / "specialize_cond_in_cond.pt2"
    torch.export.save(ep, str(src))
    ((sym, _),) = ep.range_constraints.items()
    dst = workdir / "specialize_cond_in_cond_static.pt2"
    proc = pt2_edit.run("specialize", src, "--dim", f"{sym}=12", "-o", dst, check=False)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr == (
        f"error: Cannot specialize {sym}: the nested graph 'true_graph_0' that get_attr node "
        f"'true_graph_0' of nested graph 'true_graph_0' reads is kept as the record of the file "
        f"it was read from (a nested graph inside another, or a program not given to "
        f"epgraph::json::materialize_nested_graphs) and its values use {sym}; epgraph does not "
        f"enter it\n"), proc.stderr
    assert not dst.exists()
