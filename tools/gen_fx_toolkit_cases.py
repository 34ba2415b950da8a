#!/usr/bin/env python3
"""Expected results of epgraph's torch.fx toolkit (tests/test_fx_toolkit.cpp), from torch itself.

Builds small graphs with torch.fx.Graph, runs torch's own edits on them -- Graph.eliminate_dead_code,
Node.prepend/append, Graph.node_copy/graph_copy and torch._inductor's stable_topological_sort --
and writes what print(graph) shows to tests/data/fx_toolkit_cases.txt: one section per case,
"### <case>" followed by the text. Random graphs are also written as a structure the C++ test
rebuilds ("name;op-or-target;arg,arg;kw=arg" per node, in list order).

It also writes include/epgraph/detail/impure_targets.hpp: the FX call_function targets torch
treats as impure by name (torch.fx.node._side_effectful_functions, the operators tagged
nondeterministic_seeded, torch._library.utils._RANDOM_FUNCTIONS).

Usage: python3 tools/gen_fx_toolkit_cases.py   (torch 2.13.0; run from anywhere)
"""
import os
import random

import torch
import torch.fx as fx
import torch._library.utils as library_utils
from torch._inductor.pattern_matcher import stable_topological_sort
from torch.fx.node import _get_qualified_name, _side_effectful_functions

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
aten = torch.ops.aten

# A custom operator with a keyword-only tensor argument (its schema is not registered in the C++
# test, so epgraph does not check its calls).
torch.library.define("fxtk::combine", "(Tensor a, Tensor b, *, Tensor c) -> Tensor")

cases = []


def case(name, text):
    cases.append((name, str(text).rstrip("\n")))


def call(g, target, args, name, kwargs=None):
    return g.call_function(target, tuple(args), kwargs or {}, name=name)


# --- eliminate_dead_code ----------------------------------------------------------------------
def dce_graph():
    g = fx.Graph()
    x = g.placeholder("x")
    y = g.placeholder("y")
    add = call(g, aten.add.Tensor, (x, y), "add")
    mul = call(g, aten.mul.Tensor, (add, y), "mul")  # unused chain: mul -> neg
    call(g, aten.neg.default, (mul,), "neg")
    call(g, aten.add_.Tensor, (x, 1), "add_")  # in-place: mutable schema
    call(g, aten.rand.default, ([2],), "rand")  # random: impure
    call(g, aten._assert_scalar.default, (True, "msg"), "_assert_scalar")  # side effect
    call(g, aten.sin.default, (y,), "sin")  # unused
    cos = call(g, aten.cos.default, (y,), "cos")
    call(g, aten.sub.Tensor, (cos, x), "sub")  # unused, and so cos
    relu = call(g, aten.relu.default, (add,), "relu")
    g.output((relu,))
    return g


g = dce_graph()
case("dce.before", g)
case("dce.changed", g.eliminate_dead_code())
case("dce.after", g)
case("dce.again", g.eliminate_dead_code())
g = dce_graph()
# epgraph's predicate adds to Node.is_impure; in FX it replaces it, hence the `or`.
case("dce_keep_sin.changed", g.eliminate_dead_code(lambda n: n.is_impure() or n.name == "sin"))
case("dce_keep_sin.after", g)


# --- prepend / append ------------------------------------------------------------------------
def move_graph():
    g = fx.Graph()
    x = g.placeholder("x")
    y = g.placeholder("y")
    a = call(g, aten.add.Tensor, (x, y), "a")
    b = call(g, aten.mul.Tensor, (x, y), "b")
    c = call(g, aten.sub.Tensor, (a, b), "c")
    d = call(g, aten.relu.default, (y,), "d")
    g.output((c, d))
    return g


g = move_graph()
n = {node.name: node for node in g.nodes}
n["a"].prepend(n["b"])  # b before a
case("move.1", g)
n["a"].prepend(n["d"])  # d before a
case("move.2", g)
n["x"].prepend(n["y"])  # placeholders swap
case("move.3", g)
n["a"].append(n["d"])  # d after a
case("move.4", g)
g = move_graph()
n = {node.name: node for node in g.nodes}
n["c"].prepend(n["d"])  # d before c
n["d"].prepend(n["d"])  # no-op
n["c"].prepend(n["d"])  # already in place
n["b"].append(n["a"])  # a after b
case("move.5", g)


# --- node_copy / graph_copy ------------------------------------------------------------------
def source_graph():
    g = fx.Graph()
    x = g.placeholder("x")
    y = g.placeholder("y")
    add = call(g, aten.add.Tensor, (x, y), "add")
    add_1 = call(g, aten.mul.Tensor, (add, y), "add_1")
    add_2 = call(g, aten.sub.Tensor, (add_1, x), "add_2")
    cat = call(g, aten.cat.default, ([add, add_2],), "cat")
    g.output((cat, add_1))
    return g


src = source_graph()
case("copy.source", src)
# Into a graph with only placeholders (clashing names): placeholders are copied too.
dst = fx.Graph()
dst.placeholder("x")
dst.placeholder("add")
val_map = {}
rv = dst.graph_copy(src, val_map)
dst.output(rv)
case("graph_copy_placeholders", dst)
# Into a graph with compute nodes, placeholders mapped in advance.
dst = fx.Graph()
dx = dst.placeholder("x")
call(dst, aten.add.Tensor, (dx, dx), "add")
call(dst, aten.add.Tensor, (dx, 2), "add_1")
src_nodes = {node.name: node for node in src.nodes}
val_map = {src_nodes["x"]: dx, src_nodes["y"]: dx}
rv = dst.graph_copy(src, val_map)
dst.output(rv)
case("graph_copy_mapped", dst)
# node_copy, one node at a time, with an arg_transform.
dst = fx.Graph()
dx = dst.placeholder("x")
dadd = call(dst, aten.add.Tensor, (dx, dx), "add")
c1 = dst.node_copy(src_nodes["add"], lambda _: dx)  # -> add_1
c2 = dst.node_copy(src_nodes["add_1"], lambda m: c1 if m is src_nodes["add"] else dadd)
c3 = dst.node_copy(src_nodes["add_2"], lambda m: c2 if m is src_nodes["add_1"] else dx)
c4 = dst.node_copy(src_nodes["cat"], lambda m: c3)
c5 = dst.node_copy(c4)  # within the graph: identity transform
dst.output((c5, dadd))
case("node_copy", dst)


# --- stable_topological_sort -----------------------------------------------------------------
def structure_lines(g):
    out = []
    for node in g.nodes:
        if node.op == "placeholder":
            what = "placeholder"
        elif node.op == "output":
            what = "output"
        else:
            what = _get_qualified_name(node.target)
        args_list = node.args[0] if node.op == "output" else node.args
        args = ",".join(a.name for a in args_list)
        kwargs = ",".join(f"{k}={v.name}" for k, v in node.kwargs.items())
        out.append(f"{node.name};{what};{args};{kwargs}")
    return "\n".join(out)


def shuffled_graph(seed, n_compute):
    """A random DAG written in a random order (uses of later nodes set afterwards)."""
    rng = random.Random(seed)
    names = ["x", "y", "z"] + [f"n{i}" for i in range(n_compute)]
    deps = {}
    for i in range(n_compute):
        earlier = names[: 3 + i]
        kind = rng.randrange(4)
        if kind == 0:
            deps[names[3 + i]] = (aten.neg.default, [rng.choice(earlier)], {})
        elif kind == 1:
            deps[names[3 + i]] = (aten.add.Tensor, [rng.choice(earlier), rng.choice(earlier)], {})
        elif kind == 2:
            deps[names[3 + i]] = (aten.mul.Tensor, [rng.choice(earlier), rng.choice(earlier)], {})
        else:
            deps[names[3 + i]] = (
                torch.ops.fxtk.combine.default,
                [rng.choice(earlier), rng.choice(earlier)],
                {"c": rng.choice(earlier)},
            )
    compute = names[3:]
    rng.shuffle(compute)
    g = fx.Graph()
    nodes = {}
    for p in names[:3]:
        nodes[p] = g.placeholder(p)
    for name in compute:
        target, args, kwargs = deps[name]
        nodes[name] = call(g, target, [nodes["x"]] * len(args), name,
                           {k: nodes["x"] for k in kwargs})
    for name in compute:
        target, args, kwargs = deps[name]
        nodes[name].args = tuple(nodes[a] for a in args)
        nodes[name].kwargs = {k: nodes[v] for k, v in kwargs.items()}
    used = {a for _, args, kw in deps.values() for a in list(args) + list(kw.values())}
    g.output(tuple(nodes[m] for m in names[3:] if m not in used))
    return g


g = fx.Graph()
x = g.placeholder("x")
y = g.placeholder("y")
d = call(g, aten.neg.default, (x,), "d")
c = call(g, aten.sub.Tensor, (x, x), "c")
a = call(g, aten.add.Tensor, (x, y), "a")
e = call(g, aten.relu.default, (x,), "e")
b = call(g, aten.mul.Tensor, (x, y), "b")
f = call(g, torch.ops.fxtk.combine.default, (a, a), "f", {"c": c})
g.output((d, e, f))
d.args = (c,)
c.args = (b, a)
b.args = (a, y)
case("sort.before", g)
stable_topological_sort(g)
case("sort.after", g)
for seed, size in [(1, 12), (2, 30), (3, 60)]:
    g = shuffled_graph(seed, size)
    case(f"sort_random_{seed}.structure", structure_lines(g))
    case(f"sort_random_{seed}.before", g)
    stable_topological_sort(g)
    case(f"sort_random_{seed}.after", g)


def dce_random(seed, n_compute):
    rng = random.Random(seed)
    g = fx.Graph()
    values = [g.placeholder(p) for p in ("x", "y")]
    for i in range(n_compute):
        kind = rng.randrange(5)
        a, b = rng.choice(values), rng.choice(values)
        name = f"n{i}"
        if kind == 0:
            v = call(g, aten.neg.default, (a,), name)
        elif kind == 1:
            v = call(g, aten.add.Tensor, (a, b), name)
        elif kind == 2:
            v = call(g, aten.mul.Tensor, (a, b), name)
        elif kind == 3:
            v = call(g, aten.add_.Tensor, (a, b), name)
        else:
            v = call(g, aten.sin.default, (a,), name)
        values.append(v)
    g.output(tuple(rng.sample(values[2:], 2)))
    return g


for seed in (1, 2, 3):
    g = dce_random(seed, 40)
    case(f"dce_random_{seed}.structure", structure_lines(g))
    case(f"dce_random_{seed}.changed", g.eliminate_dead_code())
    case(f"dce_random_{seed}.after", g)


def impure_targets():
    seeded = set()
    for ns in ("aten", "prims"):
        packets = getattr(torch.ops, ns)
        for name in dir(packets):
            try:
                packet = getattr(packets, name)
            except Exception:
                continue
            if not isinstance(packet, torch._ops.OpOverloadPacket):
                continue
            for overload in packet.overloads():
                if getattr(getattr(packet, overload), "_nondeterministic_seeded", False):
                    seeded.add(f"torch.ops.{ns}.{name}.{overload}")
    effectful = set()
    for f in _side_effectful_functions:
        q = _get_qualified_name(f)
        effectful.add(q)
        if q.startswith("_operator."):
            effectful.add(q[1:])  # epgraph spells it operator.setitem, as operator.getitem
    randoms = {_get_qualified_name(f) for f in library_utils._RANDOM_FUNCTIONS}
    return sorted(effectful), sorted(seeded | randoms)


def impure_header():
    effectful, randoms = impure_targets()
    out = [
        "// FX targets torch 2.13 treats as impure by name (generated; do not edit).",
        "// Written by tools/gen_fx_toolkit_cases.py from torch.fx.node._side_effectful_functions,",
        "// the ops tagged nondeterministic_seeded and torch._library.utils._RANDOM_FUNCTIONS.",
        "// SPDX-License-Identifier: BSD-3-Clause",
        "// clang-format off",
        "#pragma once",
        "",
        "#include <string_view>",
        "",
        "namespace epgraph {",
        "namespace detail {",
        "",
        "// torch.fx.node._side_effectful_functions as FX call_function targets, sorted.",
        "inline constexpr std::string_view side_effectful_targets[] = {",
    ]
    out += [f'    "{t}",' for t in effectful]
    out += [
        "};",
        "",
        "// Random operators (tag nondeterministic_seeded, and the torch.* random functions), which",
        "// FX's is_impure treats as impure (impure_random=True outside a tracing context), sorted.",
        "inline constexpr std::string_view random_targets[] = {",
    ]
    out += [f'    "{t}",' for t in randoms]
    out += ["};", "", "}  // namespace detail", "}  // namespace epgraph", "// clang-format on", ""]
    return "\n".join(out)


if __name__ == "__main__":
    assert torch.__version__.startswith("2.13"), torch.__version__
    path = os.path.join(ROOT, "tests", "data", "fx_toolkit_cases.txt")
    with open(path, "w") as f:
        f.write(f"# Written by tools/gen_fx_toolkit_cases.py with torch {torch.__version__}.\n")
        for name, text in cases:
            f.write(f"### {name}\n{text}\n")
    with open(os.path.join(ROOT, "include", "epgraph", "detail", "impure_targets.hpp"), "w") as f:
        f.write(impure_header())
    print(f"wrote {len(cases)} cases to {path}")
