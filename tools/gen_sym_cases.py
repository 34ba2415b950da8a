#!/usr/bin/env python3
# Writes tests/data/sym_cases.txt: symbolic size expressions as torch 2.13 builds and prints them
# (sympy with torch's functions), so tests/test_symbolic.cpp can check epgraph::sym against sympy.
# SPDX-License-Identifier: BSD-3-Clause
"""Usage: python3 tools/gen_sym_cases.py [OUTPUT]   (default tests/data/sym_cases.txt)

Every expression is built by sympy and torch's own functions (torch/utils/_sympy/functions.py:
FloorDiv, Mod, PythonMod, Max, Min, CeilToInt, IntTrueDiv, ...), so sympy's simplification, its
`srepr` (what torch 2.13 writes in `SymExpr.expr_str`) and its `str` (what older files hold) are
torch's. Three sources:
  - "export": every symbolic size, stride and SymInt value of small modules torch.export exports
    with dynamic dimensions (what real files hold);
  - "shape": expressions torch's shape functions write (conv and pool output sizes, padding,
    chunking, broadcasting), built by hand from torch's formulas;
  - "random": random trees over the operations torch's SymInt supports (fixed seed).

Format, one case per line, fields separated by a tab:
    NAME <TAB> SREPR <TAB> STR <TAB> V1 V2 ... Vn
V1..Vn are the expression's values at the POINTS below (in order; a boolean is 1 or 0; `Z` where
the value divides by zero). No value is written by hand.
"""

from __future__ import annotations

import os
import random
import sys

import sympy
import torch
from torch.utils._sympy import functions as F

# Where each case is evaluated: (s0, s1, u0). s0, s1 are backed sizes (positive integers), u0 an
# unbacked integer (any sign), as torch names them.
POINTS = [
    (1, 1, 0),
    (2, 3, -1),
    (3, 2, 4),
    (5, 7, -5),
    (8, 4, 3),
    (9, 9, -2),
    (16, 5, 1),
    (64, 3, -7),
]

S0 = sympy.Symbol("s0", positive=True, integer=True)
S1 = sympy.Symbol("s1", positive=True, integer=True)
U0 = sympy.Symbol("u0", integer=True)


def value_at(expr, point) -> str:
    subs = {S0: sympy.Integer(point[0]), S1: sympy.Integer(point[1]), U0: sympy.Integer(point[2])}
    try:
        v = expr.xreplace(subs)
        # xreplace re-evaluates torch's functions on integers; a leftover relation or And folds
        # with doit().
        v = v.doit() if hasattr(v, "doit") else v
    except ZeroDivisionError:
        return "Z"
    if v is sympy.true:
        return "1"
    if v is sympy.false:
        return "0"
    if isinstance(v, sympy.Rational) and not isinstance(v, sympy.Integer):
        raise AssertionError(f"fractional value {v} of {expr}")
    if not isinstance(v, sympy.Integer):
        if v == sympy.zoo or v == sympy.nan:
            return "Z"
        raise AssertionError(f"{expr} at {point} is {v!r}, not an integer")
    return str(int(v))


def line(name: str, expr) -> str:
    srepr = sympy.srepr(expr)
    text = str(expr)
    for field in (srepr, text):
        if "\t" in field or "\n" in field:
            raise AssertionError(field)
    values = " ".join(value_at(expr, p) for p in POINTS)
    return f"{name}\t{srepr}\t{text}\t{values}"


# --- export: what torch.export writes ------------------------------------------------------------


def exported_exprs():
    """Every distinct non-trivial symbolic expression in the node values of small exported
    modules with dynamic dimensions."""
    from torch.export import Dim, export

    class Convs(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.c1 = torch.nn.Conv2d(3, 4, 3, stride=2, padding=1)
            self.c2 = torch.nn.Conv2d(4, 4, 5, stride=3, dilation=2)
            self.pool = torch.nn.MaxPool2d(3, stride=2, ceil_mode=True)

        def forward(self, x):
            y = self.c1(x)
            z = self.pool(y)
            return self.c2(y), z.flatten(1)

    class Seq(torch.nn.Module):
        def forward(self, x, y):
            n = x.shape[1]
            a = torch.cat([x, y], dim=1)
            b = a[:, 1::2]
            c = torch.nn.functional.pad(x, (0, 0, 1, 2))
            d = x.reshape(x.shape[0], -1)
            e = torch.arange(n * 2)
            f = a.chunk(3, dim=1)[0]
            return b, c, d, e, f, a.unflatten(0, (1, -1)) if False else a.sum(1)

    out = []
    seen = set()

    def collect(ep):
        for node in ep.graph.nodes:
            vals = node.meta.get("val")
            vals = vals if isinstance(vals, (list, tuple)) else [vals]
            for v in vals:
                items = []
                if isinstance(v, torch.Tensor):
                    items = list(v.shape) + list(v.stride()) + [v.storage_offset()]
                elif isinstance(v, (torch.SymInt, torch.SymBool)):
                    items = [v]
                for s in items:
                    if isinstance(s, (torch.SymInt, torch.SymBool)):
                        e = s.node.expr
                        if not e.is_Atom and sympy.srepr(e) not in seen:
                            seen.add(sympy.srepr(e))
                            out.append(e)

    # Dim.AUTO: torch keeps a dimension dynamic unless the program forces it, and raises no
    # error for the guards the strided convolutions add.
    auto = Dim.AUTO
    collect(export(Convs(), (torch.randn(2, 3, 32, 40),), dynamic_shapes=({2: auto},)))
    collect(export(Convs(), (torch.randn(2, 3, 32, 40),), dynamic_shapes=({3: auto},)))
    collect(
        export(Seq(), (torch.randn(3, 6, 5), torch.randn(3, 4, 5)),
               dynamic_shapes=({1: auto}, {1: auto}))
    )
    # torch names its symbols s<k>; rename them to s0, s1 (positive, integer) so the values at
    # POINTS apply.
    renamed = []
    for e in out:
        syms = sorted(e.free_symbols, key=lambda s: s.name)
        mapping = {}
        for i, s in enumerate(syms[:2]):
            mapping[s] = (S0, S1)[i]
        if len(syms) > 2:
            continue
        renamed.append(e.xreplace(mapping))
    return renamed


# --- shape: torch's shape formulas ------------------------------------------------------------


def shape_exprs():
    def conv_out(size, k, s, p, d):
        return F.FloorDiv(size + 2 * p - d * (k - 1) - 1, s) + 1

    def pool_ceil(size, k, s, p):
        return F.CeilToInt(F.IntTrueDiv(size + 2 * p - k, s)) + 1

    cases = [
        ("conv_k3_s2_p1", conv_out(S0, 3, 2, 1, 1)),
        ("conv_k5_s3_d2", conv_out(S0, 5, 3, 0, 2)),
        ("conv_k1_s1", conv_out(S0, 1, 1, 0, 1)),
        ("conv_twice", conv_out(conv_out(S0 + 8, 3, 2, 1, 1), 3, 2, 1, 1)),
        ("pool_ceil", pool_ceil(S0 + 4, 3, 2, 0)),
        ("flatten", S0 * S1 * 4),
        ("cat", S0 + S1),
        ("cat_self", S0 + S0),
        ("slice_step2", F.FloorDiv(S0 + 1, 2)),
        ("slice_step3_from1", F.FloorDiv(S0 + 1, 3)),
        ("pad", S0 + 3),
        ("chunk3", F.FloorDiv(S0 + 2, 3)),
        ("chunk3_ceil", F.CeilToInt(F.IntTrueDiv(S0, 3))),
        ("stride_3d", S0 * S1),
        ("reshape_minus1", F.FloorDiv(S0 * S1 * 6, S1 * 2)),
        ("half", F.FloorDiv(2 * S0, 2)),
        ("broadcast_max", sympy.Max(1, S0)),
        ("broadcast_max2", sympy.Max(S0, S1)),
        ("min", sympy.Min(S0, 8)),
        ("mod_parity", F.Mod(2 * S0, 2)),
        ("mod", F.Mod(S0, 4)),
        ("python_mod", F.PythonMod(S0 + 3, 4)),
        ("python_mod_unbacked", F.PythonMod(U0, 3)),
        ("floordiv_unbacked", F.FloorDiv(U0 - 2, 3)),
        ("eq_mod", sympy.Eq(F.Mod(S0, 2), 0)),
        ("ne", sympy.Ne(S0, 1)),
        ("gt", S0 > 2),
        ("ge_sum", S0 + S1 >= 5),
        ("lt_unbacked", U0 < 0),
        ("and", sympy.And(S0 > 2, S1 < 4)),
        ("or", sympy.Or(sympy.Eq(S0, 1), sympy.Eq(S1, 1))),
        ("not", sympy.Not(sympy.Eq(S0, 3))),
        ("square", S0**2),
        ("poly", (S0 + 1) * (S1 + 2)),
        ("neg_coeff", 3 * U0 - 1),
        ("numel", 3 * S0 * S1 + S0),
        ("max_of_sum", sympy.Max(S0 + 1, S1)),
        ("ceil_div_expr", -F.FloorDiv(-S0, 4)),
        # SymFloat forms torch writes for a float scale or a true division of a size
        # (F.interpolate(scale_factor=...), x.size(1) / 3), evaluated in float64 by torch:
        # 0.7*10 and 0.3*30 truncate to 7 and 9, 1/0.1 floors to 10.
        ("interp_scale_1_5", F.TruncToInt(sympy.Float(1.5) * F.ToFloat(S0))),
        ("interp_scale_0_7", F.TruncToInt(sympy.Float(0.7) * F.ToFloat(S0 + 1))),
        ("interp_scale_0_3", F.TruncToInt(sympy.Float(0.3) * F.ToFloat(10 * S0))),
        ("interp_stride", 12 * sympy.Max(1, F.TruncToInt(sympy.Float(1.5) * F.ToFloat(S0)))),
        ("float_truediv_floor", F.FloorToInt(F.FloatTrueDiv(F.ToFloat(S0), sympy.Float(0.1)))),
        ("float_truediv_ceil", F.CeilToInt(F.FloatTrueDiv(F.ToFloat(S0 + S1), sympy.Float(2.0)))),
        ("int_truediv_trunc", F.TruncToInt(F.IntTrueDiv(S0 + 1, 3))),
        ("int_truediv_floor", F.FloorToInt(F.IntTrueDiv(U0, 4))),
        ("ceil_scaled_0_1", F.CeilToInt(sympy.Float(0.1) * F.ToFloat(10 * S0))),
    ]
    return cases


# --- random trees ---------------------------------------------------------------------------


def random_exprs(count: int, seed: int = 20261203):
    rng = random.Random(seed)
    positive_leaves = [S0, S1, sympy.Integer(1), sympy.Integer(2), sympy.Integer(3)]
    denominators = [sympy.Integer(2), sympy.Integer(3), sympy.Integer(4), S0, S1, S0 + 1]

    def positive(depth):
        """A tree whose value is a positive integer at every point (so Mod is defined)."""
        if depth == 0 or rng.random() < 0.3:
            return rng.choice(positive_leaves)
        op = rng.choice(["add", "mul", "max", "min", "floordiv1", "mod1", "ceil"])
        a, b = positive(depth - 1), positive(depth - 1)
        if op == "add":
            return a + b
        if op == "mul":
            return a * b
        if op == "max":
            return sympy.Max(a, b)
        if op == "min":
            return sympy.Min(a, b)
        if op == "floordiv1":  # (a + d) // d >= 1
            d = rng.choice(denominators)
            return F.FloorDiv(a + d, d)
        if op == "mod1":  # Mod(a, d) + 1 >= 1
            return F.Mod(a, rng.choice(denominators)) + 1
        d = rng.choice(denominators)
        return F.CeilToInt(F.IntTrueDiv(a, d))

    def anysign(depth):
        if depth == 0 or rng.random() < 0.3:
            return rng.choice([U0, S0, S1, sympy.Integer(-2), sympy.Integer(5)])
        op = rng.choice(["add", "sub", "mul", "neg", "floordiv", "pymod", "pos"])
        if op == "pos":
            return positive(depth - 1)
        a, b = anysign(depth - 1), anysign(depth - 1)
        if op == "add":
            return a + b
        if op == "sub":
            return a - b
        if op == "mul":
            return a * b
        if op == "neg":
            return -a
        d = rng.choice(denominators)
        if op == "floordiv":
            return F.FloorDiv(a, d)
        return F.PythonMod(a, d)

    def boolean(depth):
        op = rng.choice(["eq", "ne", "lt", "le", "gt", "ge", "and", "or", "not"])
        if op in ("and", "or") and depth > 0:
            f = sympy.And if op == "and" else sympy.Or
            return f(boolean(depth - 1), boolean(depth - 1))
        if op == "not" and depth > 0:
            return sympy.Not(boolean(depth - 1))
        a, b = anysign(1), anysign(1)
        rel = {"eq": sympy.Eq, "ne": sympy.Ne, "lt": sympy.Lt, "le": sympy.Le,
               "gt": sympy.Gt, "ge": sympy.Ge}.get(op, sympy.Eq)
        return rel(a, b)

    out = []
    seen = set()
    while len(out) < count:
        kind = rng.random()
        e = positive(3) if kind < 0.45 else (anysign(3) if kind < 0.85 else boolean(2))
        key = sympy.srepr(e)
        if key in seen or e.is_Atom:
            continue
        seen.add(key)
        out.append(e)
    return out


def main() -> int:
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(__file__), "..", "tests", "data", "sym_cases.txt")
    lines = [
        "# Generated by tools/gen_sym_cases.py with torch " + torch.__version__ + " and sympy "
        + sympy.__version__ + "; do not edit.",
        "# NAME<TAB>SREPR<TAB>STR<TAB>values at (s0,s1,u0) = "
        + " ".join(f"{a},{b},{c}" for a, b, c in POINTS),
    ]
    for i, e in enumerate(exported_exprs()):
        lines.append(line(f"export_{i}", e))
    for name, e in shape_exprs():
        lines.append(line("shape_" + name, e))
    for i, e in enumerate(random_exprs(300)):
        lines.append(line(f"random_{i}", e))
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    print(f"wrote {len(lines) - 2} cases to {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
