#!/usr/bin/env python3
"""Expected results of epgraph's torch.fx toolkit (tests/test_fx_toolkit.cpp), from torch itself.

Builds small graphs with torch.fx.Graph, runs torch's own edits on them -- Graph.eliminate_dead_code,
Node.prepend/append, Graph.node_copy/graph_copy and torch._inductor's stable_topological_sort --
and writes what print(graph) shows to tests/data/fx_toolkit_cases.txt: one section per case,
"### <case>" followed by the text. Random graphs are also written as a structure the C++ test
rebuilds ("name;op-or-target;arg,arg;kw=arg" per node, in list order).

It also writes include/epgraph/ops/detail/impure_targets.hpp: the FX call_function targets torch
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


# --- SubgraphMatcher / replace_pattern --------------------------------------------------------
from torch.fx.passes.utils.matcher_utils import SubgraphMatcher  # noqa: E402
from torch.fx.subgraph_rewriter import replace_pattern_with_filters  # noqa: E402


def value_text(v):
    return v.name if isinstance(v, fx.Node) else repr(v)


def matches_text(matches):
    """One line per match: pattern node=graph value pairs in match order, then what the
    placeholders and returning nodes matched."""
    lines = []
    for m in matches:
        pairs = " ".join(f"{pn.name}={value_text(gn)}" for pn, gn in m.nodes_map.items())
        ph = ",".join(value_text(v) for v in m.placeholder_nodes)
        ret = ",".join(n.name for n in m.returning_nodes)
        lines.append(f"match {pairs} | placeholders {ph} | returning {ret}")
    return "\n".join(lines) if lines else "no match"


def replaced_text(replaced):
    """One line per ReplacedPatterns: anchor, placeholders' values, erased nodes, copies."""
    lines = []
    for r in replaced:
        ph = " ".join(f"{pn.name}={value_text(gn)}" for pn, gn in r.nodes_map.items()
                      if pn.op == "placeholder")
        erased = " ".join(f"{pn.name}={gn.name}" for pn, gn in r.nodes_map.items()
                          if pn.op != "placeholder")
        copies = ",".join(n.name for n in r.replacements)
        lines.append(f"anchor {r.anchor.name} | {ph} | erased {erased} | replacements {copies}")
    return "\n".join(lines) if lines else "none"


def graph_of(spec):
    """A graph from [(name, target or 'placeholder', args, kwargs)], args naming earlier nodes
    by a leading '%'; the last entry is ('output', results)."""
    g = fx.Graph()
    nodes = {}

    def arg(a):
        if isinstance(a, str) and a.startswith("%"):
            return nodes[a[1:]]
        if isinstance(a, list):
            return [arg(x) for x in a]
        return a

    for entry in spec:
        if entry[0] == "output":
            res = [arg(a) for a in entry[1]]
            g.output(res[0] if len(res) == 1 and entry[2] == "single" else tuple(res))
            continue
        name, target, args, kwargs = entry
        if target == "placeholder":
            nodes[name] = g.placeholder(name)
        else:
            nodes[name] = call(g, target, [arg(a) for a in args], name,
                               {k: arg(v) for k, v in kwargs.items()})
    return g


def spec_text(spec):
    """The spec as lines the C++ test rebuilds: "name|target|arg,arg|key=arg" ("output|tuple|..."
    or "output|single|..." last); an arg is %node, an int, a float (with a dot) or [a b c]."""

    def arg(a):
        if isinstance(a, list):
            return "[" + " ".join(arg(x) for x in a) + "]"
        return a if isinstance(a, str) else repr(a)

    lines = []
    for entry in spec:
        if entry[0] == "output":
            lines.append(f"output|{entry[2]}|" + ",".join(arg(a) for a in entry[1]) + "|")
            continue
        name, target, args, kwargs = entry
        what = "placeholder" if target == "placeholder" else _get_qualified_name(target)
        kw = ",".join(f"{k}={arg(v)}" for k, v in kwargs.items())
        lines.append(f"{name}|{what}|" + ",".join(arg(a) for a in args) + f"|{kw}")
    return "\n".join(lines)


def rewrite_case(name, graph_spec, pattern_spec, replacement_spec, filters=(), ignore_literals=False):
    case(f"{name}.graph", spec_text(graph_spec))
    case(f"{name}.pattern", spec_text(pattern_spec))
    case(f"{name}.replacement", spec_text(replacement_spec))
    g = graph_of(graph_spec)
    pattern = graph_of(pattern_spec)
    case(f"{name}.matches",
         matches_text(SubgraphMatcher(pattern, ignore_literals=ignore_literals).match(g)))
    gm = fx.GraphModule(torch.nn.Module(), g)
    replaced = replace_pattern_with_filters(gm, pattern, graph_of(replacement_spec), list(filters),
                                            ignore_literals=ignore_literals)
    case(f"{name}.replaced", replaced_text(replaced))
    case(f"{name}.after", gm.graph)


RELU_PATTERN = [("x", "placeholder", [], {}), ("relu", aten.relu.default, ["%x"], {}),
                ("output", ["%relu"], "single")]
CLAMP_REPLACEMENT = [("x", "placeholder", [], {}),
                     ("clamp_min", aten.clamp_min.default, ["%x", 0], {}),
                     ("output", ["%clamp_min"], "single")]
RELU_GRAPH = [
    ("x", "placeholder", [], {}), ("y", "placeholder", [], {}),
    ("relu", aten.relu.default, ["%x"], {}),
    ("relu_1", aten.relu.default, ["%relu"], {}),
    ("add", aten.add.Tensor, ["%relu_1", "%y"], {}),
    ("relu_2", aten.relu.default, ["%y"], {}),
    ("clamp_min", aten.clamp_min.default, ["%y", 1], {}),
    ("output", ["%add", "%relu_2", "%clamp_min"], "tuple"),
]
rewrite_case("rw_relu", RELU_GRAPH, RELU_PATTERN, CLAMP_REPLACEMENT)


def relu_of_computed(m, graph, pattern):
    return all(not (isinstance(v, fx.Node) and v.op == "placeholder") for v in m.placeholder_nodes)


rewrite_case("rw_filter", RELU_GRAPH, RELU_PATTERN, CLAMP_REPLACEMENT, [relu_of_computed])

rewrite_case(
    "rw_fuse",
    [("x", "placeholder", [], {}), ("y", "placeholder", [], {}), ("z", "placeholder", [], {}),
     ("mul", aten.mul.Tensor, ["%x", "%y"], {}), ("add", aten.add.Tensor, ["%mul", "%z"], {}),
     ("mul_1", aten.mul.Tensor, ["%y", "%z"], {}), ("add_1", aten.add.Tensor, ["%x", "%mul_1"], {}),
     ("mul_2", aten.mul.Tensor, ["%x", "%z"], {}), ("add_2", aten.add.Tensor, ["%mul_2", "%y"], {}),
     ("sub", aten.sub.Tensor, ["%mul_2", "%x"], {}),
     ("output", ["%add", "%add_1", "%add_2", "%sub"], "tuple")],
    [("a", "placeholder", [], {}), ("b", "placeholder", [], {}), ("c", "placeholder", [], {}),
     ("m", aten.mul.Tensor, ["%a", "%b"], {}), ("s", aten.add.Tensor, ["%m", "%c"], {}),
     ("output", ["%s"], "single")],
    [("a", "placeholder", [], {}), ("b", "placeholder", [], {}), ("c", "placeholder", [], {}),
     ("addcmul", aten.addcmul.default, ["%c", "%a", "%b"], {}), ("output", ["%addcmul"], "single")],
)

LITERAL_GRAPH = [
    ("x", "placeholder", [], {}),
    ("add", aten.add.Tensor, ["%x", 1], {}), ("add_1", aten.add.Tensor, ["%add", 2], {}),
    ("add_2", aten.add.Tensor, ["%add_1", 1.0], {}), ("add_3", aten.add.Tensor, ["%add_2", 1], {}),
    ("output", ["%add_3"], "tuple"),
]
ADD_ONE = [("x", "placeholder", [], {}), ("a", aten.add.Tensor, ["%x", 1], {}),
           ("output", ["%a"], "single")]
SUB_MINUS_ONE = [("x", "placeholder", [], {}), ("sub", aten.sub.Tensor, ["%x", -1], {}),
                 ("output", ["%sub"], "single")]
rewrite_case("rw_literals", LITERAL_GRAPH, ADD_ONE, SUB_MINUS_ONE)
rewrite_case("rw_ignore_literals", LITERAL_GRAPH, ADD_ONE, SUB_MINUS_ONE, ignore_literals=True)

rewrite_case(
    "rw_bind_literal",
    [("p", "placeholder", [], {}), ("q", "placeholder", [], {}),
     ("sub", aten.sub.Tensor, ["%p", "%q"], {}), ("sub_1", aten.sub.Tensor, ["%sub", 3], {}),
     ("output", ["%sub_1"], "tuple")],
    [("x", "placeholder", [], {}), ("y", "placeholder", [], {}),
     ("s", aten.sub.Tensor, ["%x", "%y"], {}), ("output", ["%s"], "single")],
    [("x", "placeholder", [], {}), ("y", "placeholder", [], {}),
     ("add", aten.add.Tensor, ["%x", "%y"], {"alpha": -1}), ("output", ["%add"], "single")],
)

rewrite_case(
    "rw_two_outputs",
    [("p", "placeholder", [], {}), ("q", "placeholder", [], {}), ("r", "placeholder", [], {}),
     ("add", aten.add.Tensor, ["%p", "%q"], {}), ("mul", aten.mul.Tensor, ["%p", "%q"], {}),
     ("mul_1", aten.mul.Tensor, ["%p", "%r"], {}), ("add_1", aten.add.Tensor, ["%p", "%r"], {}),
     ("cat", aten.cat.default, [["%add", "%mul", "%mul_1", "%add_1"]], {}),
     ("output", ["%cat"], "tuple")],
    [("x", "placeholder", [], {}), ("y", "placeholder", [], {}),
     ("a", aten.add.Tensor, ["%x", "%y"], {}), ("b", aten.mul.Tensor, ["%x", "%y"], {}),
     ("output", ["%a", "%b"], "tuple")],
    [("x", "placeholder", [], {}), ("y", "placeholder", [], {}),
     ("s", aten.sub.Tensor, ["%x", "%y"], {}), ("d", aten.div.Tensor, ["%x", "%y"], {}),
     ("output", ["%s", "%d"], "tuple")],
)

rewrite_case(
    "rw_overlap",
    [("x", "placeholder", [], {}), ("relu", aten.relu.default, ["%x"], {}),
     ("relu_1", aten.relu.default, ["%relu"], {}), ("relu_2", aten.relu.default, ["%relu_1"], {}),
     ("output", ["%relu_2"], "tuple")],
    [("x", "placeholder", [], {}), ("r1", aten.relu.default, ["%x"], {}),
     ("r2", aten.relu.default, ["%r1"], {}), ("output", ["%r2"], "single")],
    [("x", "placeholder", [], {}), ("relu", aten.relu.default, ["%x"], {}),
     ("output", ["%relu"], "single")],
)

rewrite_case(
    "rw_same_input",
    [("x", "placeholder", [], {}), ("add", aten.add.Tensor, ["%x", "%x"], {}),
     ("add_1", aten.add.Tensor, ["%add", "%x"], {}), ("output", ["%add_1"], "tuple")],
    [("a", "placeholder", [], {}), ("b", "placeholder", [], {}),
     ("s", aten.add.Tensor, ["%a", "%b"], {}), ("output", ["%s"], "single")],
    [("a", "placeholder", [], {}), ("b", "placeholder", [], {}),
     ("sub", aten.sub.Tensor, ["%a", "%b"], {}), ("output", ["%sub"], "single")],
)

rewrite_case(
    "rw_defaults",
    [("p", "placeholder", [], {}), ("q", "placeholder", [], {}),
     ("add", aten.add.Tensor, ["%p", "%q"], {"alpha": 1}),
     ("add_1", aten.add.Tensor, ["%add", "%q"], {"alpha": 2}),
     ("output", ["%add_1"], "tuple")],
    [("x", "placeholder", [], {}), ("y", "placeholder", [], {}),
     ("a", aten.add.Tensor, ["%x", "%y"], {}), ("output", ["%a"], "single")],
    [("x", "placeholder", [], {}), ("y", "placeholder", [], {}),
     ("sub", aten.sub.Tensor, ["%x", "%y"], {"alpha": -1}), ("output", ["%sub"], "single")],
)

TWO_ANCHORS = [("x", "placeholder", [], {}), ("y", "placeholder", [], {}),
               ("a", aten.relu.default, ["%x"], {}), ("b", aten.neg.default, ["%y"], {}),
               ("output", ["%a", "%b"], "tuple")]
TWO_ANCHORS_REPLACEMENT = [("x", "placeholder", [], {}), ("y", "placeholder", [], {}),
                           ("absolute", aten.abs.default, ["%x"], {}),
                           ("sine", aten.sin.default, ["%y"], {}),
                           ("output", ["%absolute", "%sine"], "tuple")]
rewrite_case(
    "rw_cycle",
    [("p", "placeholder", [], {}), ("relu", aten.relu.default, ["%p"], {}),
     ("sin", aten.sin.default, ["%relu"], {}), ("neg", aten.neg.default, ["%sin"], {}),
     ("output", ["%neg"], "tuple")],
    TWO_ANCHORS, TWO_ANCHORS_REPLACEMENT,
)
rewrite_case(
    "rw_no_cycle",
    [("p", "placeholder", [], {}), ("q", "placeholder", [], {}),
     ("relu", aten.relu.default, ["%p"], {}), ("neg", aten.neg.default, ["%q"], {}),
     ("cos", aten.cos.default, ["%relu"], {}), ("output", ["%cos", "%neg"], "tuple")],
    TWO_ANCHORS, TWO_ANCHORS_REPLACEMENT,
)


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
    with open(os.path.join(ROOT, "include", "epgraph", "ops", "detail", "impure_targets.hpp"), "w") as f:
        f.write(impure_header())
    print(f"wrote {len(cases)} cases to {path}")
