# epgraph's printed symbolic expressions (include/epgraph/ir/symbolic.hpp) through torch's loader:
# every case of tests/data/sym_cases.txt (tools/gen_sym_cases.py) is read by epgraph in both of
# torch's printed forms, printed back by epgraph (sym_print), and the result is parsed the way
# torch.export.load parses SymExpr.expr_str (sympy.sympify with torch's functions). It must be the
# expression torch wrote: the same value at every point, the same symbols with the same
# assumptions.
# SPDX-License-Identifier: BSD-3-Clause
from __future__ import annotations

import inspect
import os
import pathlib
import re
import subprocess

import pytest

sympy = pytest.importorskip("sympy")
torch = pytest.importorskip("torch")

from conftest import tool_path  # noqa: E402

SOURCE = pathlib.Path(os.environ.get("EPGRAPH_SOURCE_DIR", pathlib.Path(__file__).parents[2]))


def torch_loader_locals() -> dict:
    """The functions torch's deserializer gives sympy.sympify (serialize.py's sympy_functions),
    read from torch's own source so the list cannot drift from it."""
    import torch._export.serde.serialize as serialize
    import torch.utils._sympy.functions as functions

    names = re.findall(r'"(\w+)": torch\.utils\._sympy\.functions\.\1\b',
                       inspect.getsource(serialize))
    assert len(names) >= 20, names
    return {n: getattr(functions, n) for n in names}


# s0, s1 in 1..12 (backed sizes), u0 in -4..5 (unbacked, any sign).
GRID = [(a, b, c) for a in range(1, 13) for b in range(1, 13) for c in range(-4, 6)]


def read_cases():
    lines = (SOURCE / "tests" / "data" / "sym_cases.txt").read_text().splitlines()
    points = [tuple(int(v) for v in p.split(",")) for p in lines[1].split("=", 1)[1].split()]
    cases = []
    for line in lines:
        if line.startswith("#") or not line:
            continue
        name, srepr, text, values = line.split("\t")
        cases.append((name, srepr, text, values.split()))
    return points, cases


def value(expr, point):
    syms = {s.name: s for s in expr.free_symbols}
    subs = {syms[n]: sympy.Integer(v) for n, v in zip(("s0", "s1", "u0"), point) if n in syms}
    try:
        v = expr.xreplace(subs)
        v = v.doit() if hasattr(v, "doit") else v
    except ZeroDivisionError:
        return "Z"
    if v is sympy.true:
        return "1"
    if v is sympy.false:
        return "0"
    if v in (sympy.zoo, sympy.nan):
        return "Z"
    return str(int(v))


def test_printed_expressions_load_in_torch_as_written():
    sym_print = tool_path("EPGRAPH_SYM_PRINT")
    points, cases = read_cases()
    assert len(cases) > 300
    given = [c[1] for c in cases] + [c[2] for c in cases]
    out = subprocess.run([sym_print], input="\n".join(given) + "\n", capture_output=True,
                         text=True, check=True).stdout.splitlines()
    assert len(out) == len(given)
    local = torch_loader_locals()
    checked = 0
    identical = 0
    simpler = []
    for i, line in enumerate(out):
        name, srepr, text, values = cases[i % len(cases)]
        fields = line.split("\t")
        assert fields[0] == "OK", f"{name}: epgraph refused {given[i]!r}: {line}"
        original = sympy.sympify(srepr, locals=local)
        for form, printed in (("srepr", fields[1]), ("str", fields[2])):
            # torch's loader: symbols by name from the program, functions from its table. For the
            # str form the symbols come from `locals`, as torch's symbol_name_to_symbol gives them.
            names = {s.name: s for s in original.free_symbols}
            loaded = sympy.sympify(printed, locals={**local, **names})
            where = f"{name} ({form} of {'srepr' if i < len(cases) else 'str'}): {printed}"
            # (sympy's floor may fold the str form further: floor(s0/(s0 + 1)) is 0.)
            if form == "srepr":
                # A simplification may drop a symbol (s0*Max(3, Mod(s1, 3) + 1) is 3*s0), never
                # add one or change its assumptions.
                assert {(s.name, s.is_positive, s.is_integer) for s in loaded.free_symbols} <= {
                    (s.name, s.is_positive, s.is_integer) for s in original.free_symbols}, where
            assert [value(loaded, p) for p in points] == values, where
            # The srepr form (what torch 2.13 writes) loads to torch's expression itself; the str
            # form of older files loads `a//b` as sympy's floor(a/b), torch's own str included,
            # so there the values decide.
            # Where epgraph's canonical form is simpler than torch's (it folds
            # `Max(s0 + Max(s0, s1), Min(2, s0))` to `s0 + Max(s0, s1)` with the symbols'
            # bounds), sympy cannot always prove the two equal; then they must agree on a grid
            # of 1,440 points.
            if form == "srepr":
                same = loaded == original or (
                    not isinstance(original, sympy.logic.boolalg.Boolean)
                    and sympy.expand(loaded - original) == 0)
                if same:
                    identical += 1
                else:
                    assert [value(loaded, p) for p in GRID] == [value(original, p) for p in GRID], where
                    simpler.append(name)
            checked += 1
    print(f"symbolic expressions checked through torch's loader: {checked}; srepr forms equal to "
          f"torch's in sympy: {identical}; simpler than torch's, equal on the grid: {len(simpler)}")
    assert identical >= 0.8 * len(given)
