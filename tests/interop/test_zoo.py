# epgraph against PyTorch itself, program by program. SPDX-License-Identifier: BSD-3-Clause
"""For every zoo program (see zoo.py), exported by torch.export and saved by torch.export.save:

1. epgraph loads it and epgraph::verify passes (`pt2_edit validate`);
2. epgraph prints the graph and signature exactly as PyTorch does (`pt2_edit show` against
   `str(ep.graph)` and `str(ep.graph_signature)`);
3. epgraph saves it unchanged (`pt2_edit copy`) and torch.export.load reads back the same
   program: graph, signature, state_dict, constants, range constraints, and equal outputs (and
   equal mutated state) on random inputs;
4. epgraph adds a mutable buffer (`pt2_edit add-buffer`, i.e. epgraph::create_mutable_buffer and
   epgraph::archive::save_archive) and PyTorch loads the result, its verifier passes, the module
   runs, the buffer is in state_dict with its data and in buffers_to_mutate, and every other
   output is unchanged.
"""

from __future__ import annotations

import copy
import re

import pytest
import torch
import torch.utils._pytree as pytree

import zoo

NAMES = [e.name for e in zoo.ZOO]
SEEDS = (11, 12)


# --- helpers ------------------------------------------------------------------------------------

# epgraph's one printing normalisation: its Argument has no complex type, so a complex scalar
# argument (schema `as_complex`) is the list [real, imag] and prints as such, where torch.fx
# prints Python's complex repr: `(1.5-2j)` is `[1.5, -2.0]`, `2j` is `[0.0, 2.0]`.
_NUMBER = r"(?:\d+(?:\.\d*)?(?:e[+-]?\d+)?|inf|nan)"
_COMPLEX = re.compile(rf"\((-?{_NUMBER})([+-]{_NUMBER})j\)")
_IMAGINARY = re.compile(rf"(?<=[(\[, ])(-?{_NUMBER})j(?=[,)\]])")


def complex_as_list(text: str) -> str:
    text = _COMPLEX.sub(lambda m: f"[{float(m[1])!r}, {float(m[2])!r}]", text)
    return _IMAGINARY.sub(lambda m: f"[0.0, {float(m[1])!r}]", text)


def expected_show(ep) -> str:
    """What `pt2_edit show` must print: torch's graph text, a blank line, torch's signature (with
    complex scalars as epgraph prints them, see complex_as_list)."""
    return complex_as_list(str(ep.graph)) + "\n" + str(ep.graph_signature)


# --- torch's own save/load normalisations ---------------------------------------------------------
#
# epgraph prints the program that is in the file, i.e. what torch.export.load returns, and that is
# compared exactly. The program torch.export.export returned in memory differs from it in three
# ways that come from torch's serializer itself (torch/_export/serde/serialize.py), not from
# epgraph; to compare with the in-memory program too, both sides are brought to one form:
#  1. every unused output of a multi-output node (and every None output) comes back as an extra
#     `<node>_unused_<i>` / `as_none` getitem node with no users (generate_getitems), raising the
#     source's num_users: those nodes are dropped and the counts lowered again;
#  2. a tuple argument comes back as a list (the schema has only lists; e.g. torch.cond operands):
#     tuples in call_function arguments are printed as lists;
#  3. a get_attr node of a nested graph comes back named after its target (deserialize_input's
#     as_graph case): get_attr nodes are renamed to their target.

_UNUSED_GETITEM = re.compile(
    r"^    %(?P<name>(?P<src>\w+)_unused_(?P<idx>\d+)|as_none(?:_\d+)?) : \[num_users=0\] = "
    r"call_function\[target=operator\.getitem\]\(args = \(%(?P<src2>\w+), \d+\), "
    r"kwargs = \{\}\)$")
_NUM_USERS = re.compile(r"^(    %(\w+) : \[num_users=)(\d+)(\].*)$")


def without_unused_getitems(text: str) -> str:
    """Normalisation 1 (see above), on printed graph text."""
    extra: dict[str, int] = {}
    kept = []
    for line in text.split("\n"):
        m = _UNUSED_GETITEM.match(line)
        if m and (m["src"] is None or m["src"] == m["src2"]):
            extra[m["src2"]] = extra.get(m["src2"], 0) + 1
        else:
            kept.append(line)
    out = []
    for line in kept:
        m = _NUM_USERS.match(line)
        if m and m[2] in extra:
            line = f"{m[1]}{int(m[3]) - extra[m[2]]}{m[4]}"
        out.append(line)
    return "\n".join(out)


def _tuples_to_lists(a):
    if isinstance(a, (tuple, list)):
        return [_tuples_to_lists(x) for x in a]
    if isinstance(a, dict):
        return {k: _tuples_to_lists(v) for k, v in a.items()}
    return a


def normalised_graph_text(ep) -> str:
    """The graph of `ep` with torch's save/load normalisations 1-3 applied."""
    gm = copy.deepcopy(ep.graph_module)
    names = {n.name for n in gm.graph.nodes}
    for n in gm.graph.nodes:
        if n.op == "call_function":
            n.args = tuple(_tuples_to_lists(a) for a in n.args)
            n.kwargs = {k: _tuples_to_lists(v) for k, v in n.kwargs.items()}
        elif n.op == "get_attr" and n.name != n.target and n.target not in names:
            names.discard(n.name)
            n.name = n.target
            names.add(n.name)
    return without_unused_getitems(str(gm.graph))


def draw_inputs(entry: zoo.ZooEntry, seed: int):
    return entry.inputs(torch.Generator().manual_seed(seed))


def run(ep, entry: zoo.ZooEntry, args, kwargs, skip_output: str = ""):
    """Runs a copy of `ep` (its state is not touched) on copies of the inputs; returns the
    outputs, the inputs afterwards (in-place updates show there) and the module's final state.
    A program without an unlifted module (entry.run == "graph") is run as its graph module; its
    outputs are all graph outputs except the one named `skip_output`, and its state is empty."""
    ep = copy.deepcopy(ep)
    args, kwargs = copy.deepcopy((args, kwargs))
    with torch.no_grad():
        if entry.run == "graph":
            out = zoo.run_graph(ep, args, kwargs)
            specs = ep.graph_signature.output_specs
            assert len(specs) == len(out)
            out = [o for s, o in zip(specs, out) if getattr(s.arg, "name", None) != skip_output]
            return out, (args, kwargs), {}
        module = ep.module()
        out = module(*args, **kwargs)
    state = {k: v.detach().clone() for k, v in module.state_dict().items()}
    return out, (args, kwargs), state


def assert_same_values(actual, expected, what: str) -> None:
    flat_a, spec_a = pytree.tree_flatten(actual)
    flat_e, spec_e = pytree.tree_flatten(expected)
    assert spec_a == spec_e, f"{what}: structure {spec_a} != {spec_e}"
    for i, (a, e) in enumerate(zip(flat_a, flat_e)):
        if isinstance(e, torch.Tensor):
            assert isinstance(a, torch.Tensor), f"{what}[{i}]: {type(a)} is not a tensor"
            assert a.dtype == e.dtype and a.shape == e.shape, \
                f"{what}[{i}]: {a.dtype}{list(a.shape)} != {e.dtype}{list(e.shape)}"
            assert torch.equal(a, e), f"{what}[{i}]: values differ"
        else:
            assert a == e, f"{what}[{i}]: {a!r} != {e!r}"


def assert_same_tensor_dict(actual, expected, what: str) -> None:
    assert list(actual.keys()) == list(expected.keys()), f"{what}: keys differ"
    for k, e in expected.items():
        a = actual[k]
        if isinstance(e, torch.Tensor):
            assert isinstance(a, torch.Tensor), f"{what}[{k!r}] is not a tensor"
            assert type(a) is type(e), f"{what}[{k!r}]: {type(a)} != {type(e)}"
            assert a.dtype == e.dtype and a.shape == e.shape, \
                f"{what}[{k!r}]: {a.dtype}{list(a.shape)} != {e.dtype}{list(e.shape)}"
            assert a.requires_grad == e.requires_grad, f"{what}[{k!r}]: requires_grad differs"
            assert torch.equal(a, e), f"{what}[{k!r}]: values differ"
        elif isinstance(e, torch.ScriptObject):  # a TorchBind object: same class and state
            assert isinstance(a, torch.ScriptObject), f"{what}[{k!r}] is not a ScriptObject"
            assert a._type().qualified_name() == e._type().qualified_name()
            assert a.__getstate__() == e.__getstate__(), f"{what}[{k!r}]: state differs"
        else:
            assert a == e, f"{what}[{k!r}]: {a!r} != {e!r}"


def specs(spec_list):
    """Input or output specs as comparable tuples. A CustomObjArgument's fake_val (the fake
    object export traced with) is left out: torch's serializer does not write it."""
    def arg_key(a):
        fields = dict(vars(a)) if hasattr(a, "__dict__") else {"value": a}
        fields.pop("fake_val", None)
        return type(a).__name__, tuple(sorted((k, repr(v)) for k, v in fields.items()))
    return [(s.kind, arg_key(s.arg), s.target, getattr(s, "persistent", None)) for s in spec_list]


def assert_same_program(actual, expected, expected_loaded) -> None:
    """`actual` (torch.export.load of epgraph's file) against the exported program `expected`
    and torch.export.load of torch's own file `expected_loaded`."""
    assert str(actual.graph) == str(expected_loaded.graph)
    assert normalised_graph_text(actual) == normalised_graph_text(expected)
    assert specs(actual.graph_signature.input_specs) == specs(expected.graph_signature.input_specs)
    assert specs(actual.graph_signature.output_specs) == \
        specs(expected.graph_signature.output_specs)
    assert_same_tensor_dict(actual.state_dict, expected.state_dict, "state_dict")
    assert_same_tensor_dict(actual.constants, expected.constants, "constants")
    assert {str(k): str(v) for k, v in actual.range_constraints.items()} == \
        {str(k): str(v) for k, v in expected.range_constraints.items()}
    assert [e.fqn for e in actual.module_call_graph] == [e.fqn for e in expected.module_call_graph]
    assert actual.call_spec == expected.call_spec
    # Nested graphs (torch.cond branches, no_grad regions) are attributes of the graph module.
    def nested(ep):
        return {name: str(m.graph) for name, m in ep.graph_module.named_modules() if name}
    assert nested(actual) == nested(expected_loaded)


def assert_runs_like(actual, expected, entry: zoo.ZooEntry, extra_state=()) -> None:
    """Same outputs, same mutated inputs and same final module state on random inputs."""
    for seed in SEEDS:
        args, kwargs = draw_inputs(entry, seed)
        out_a, inputs_a, state_a = run(actual, entry, args, kwargs)
        out_e, inputs_e, state_e = run(expected, entry, args, kwargs)
        assert_same_values(out_a, out_e, f"outputs (seed {seed})")
        assert_same_values(inputs_a, inputs_e, f"inputs after the call (seed {seed})")
        for k in extra_state:
            state_a.pop(k)
        assert_same_tensor_dict(state_a, state_e, f"module state after the call (seed {seed})")


# --- step 1: load + verify ----------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_1_load_and_verify(name, exported, pt2_edit):
    prog = exported(name)
    proc = pt2_edit.run("validate", prog.path)
    assert proc.stdout == f"OK: {prog.path} passes every check of verify\n"


# --- step 2: printing -------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_2_print_matches_torch(name, exported, pt2_edit):
    prog = exported(name)
    shown = pt2_edit.run("show", prog.path).stdout
    loaded = prog.load_fresh()
    # Exactly what PyTorch prints for the program torch.export.load reads from the same file ...
    assert shown.splitlines() == expected_show(loaded).splitlines()
    assert shown == expected_show(loaded)
    # ... which is, up to torch's own save/load normalisations, what it prints for the program
    # torch.export produced in memory.
    assert normalised_graph_text(loaded) == normalised_graph_text(prog.ep)
    assert str(loaded.graph_signature) == str(prog.ep.graph_signature)


# --- step 3: unchanged round trip ---------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_3_roundtrip_unchanged(name, exported, pt2_edit):
    prog = exported(name)
    out = prog.folder / "epgraph_copy.pt2"
    pt2_edit.run("copy", prog.path, "-o", out)
    loaded = torch.export.load(str(out))
    loaded.validate()
    assert_same_program(loaded, prog.ep, prog.load_fresh())
    assert_runs_like(loaded, prog.ep, prog.entry)
    # epgraph reads its own output back as the same program.
    assert pt2_edit.run("show", out).stdout == expected_show(loaded)


# --- step 4: add a mutable buffer ---------------------------------------------------------------

# Buffer added to each program: (requested name, dtype, shape, fill).
ADDED = {
    "decoder_kv_cache": ("b_kv_cache", torch.float32, (1, 8, 128, 64), 0.0),
    "decoder_kv_cache_decomposed": ("b_kv_cache", torch.float32, (1, 8, 128, 64), 0.0),
    "tied_and_strided": ("b_step", torch.int64, (2,), 7.0),
    "dynamic_shapes": ("b_flags", torch.bool, (3,), 1.0),
}
DEFAULT_ADDED = ("b_epgraph_state", torch.float32, (2, 3), 1.5)
DTYPE_NAMES = {torch.float32: "float32", torch.int64: "int64", torch.bool: "bool"}


@pytest.mark.parametrize("name", NAMES)
def test_4_add_mutable_buffer(name, exported, pt2_edit):
    prog = exported(name)
    node_name, dtype, shape, fill = ADDED.get(name, DEFAULT_ADDED)
    target = node_name[2:]
    out = prog.folder / "epgraph_add_buffer.pt2"
    proc = pt2_edit.run("add-buffer", prog.path, "--name", node_name,
                        "--dtype", DTYPE_NAMES[dtype], "--shape", ",".join(map(str, shape)),
                        "--fill", repr(fill), "-o", out)
    assert proc.stdout == f"added buffer placeholder '{node_name}' -> {out}\n"

    edited = torch.export.load(str(out))
    edited.validate()  # PyTorch's own verifier

    original = prog.ep
    sig, before = edited.graph_signature, original.graph_signature
    # The new buffer: state_dict entry with its data, a persistent BUFFER input and a
    # BUFFER_MUTATION output, placed where torch's canonical order wants them.
    assert target in edited.state_dict
    assert torch.equal(edited.state_dict[target], torch.full(shape, fill, dtype=dtype))
    assert sig.buffers_to_mutate[node_name] == target
    assert sig.inputs_to_buffers[node_name] == target
    assert target not in sig.non_persistent_buffers
    new_in = [s for s in sig.input_specs if s.arg.name == node_name]
    assert len(new_in) == 1 and new_in[0].kind == torch.export.graph_signature.InputKind.BUFFER
    assert new_in[0].persistent is True
    # Every other spec, state entry and constant is unchanged and in the same order.
    assert specs([s for s in sig.input_specs if s.arg.name != node_name]) == \
        specs(before.input_specs)
    assert specs([s for s in sig.output_specs if getattr(s.arg, "name", None) != node_name]) == \
        specs(before.output_specs)
    assert list(edited.state_dict) == [k for k in list(before_state_keys(original, target))]
    for k, v in original.state_dict.items():
        assert torch.equal(edited.state_dict[k], v), k
    assert_same_tensor_dict(edited.constants, original.constants, "constants")
    kinds = [s.kind for s in sig.input_specs]
    order = [torch.export.graph_signature.InputKind.TOKEN,
             torch.export.graph_signature.InputKind.PARAMETER,
             torch.export.graph_signature.InputKind.BUFFER]
    first_user = kinds.index(torch.export.graph_signature.InputKind.USER_INPUT) \
        if torch.export.graph_signature.InputKind.USER_INPUT in kinds else len(kinds)
    position = sig.input_specs.index(new_in[0])
    assert position < first_user
    assert all(k in order for k in kinds[:position])

    # The edited program runs, gives the original's outputs, and the buffer keeps its data.
    for seed in SEEDS:
        args, kwargs = draw_inputs(prog.entry, seed)
        out_e, inputs_e, state_e = run(edited, prog.entry, args, kwargs, skip_output=node_name)
        out_o, inputs_o, state_o = run(original, prog.entry, args, kwargs)
        assert_same_values(out_e, out_o, f"outputs (seed {seed})")
        assert_same_values(inputs_e, inputs_o, f"inputs after the call (seed {seed})")
        if prog.entry.run == "module":
            assert torch.equal(state_e.pop(target), torch.full(shape, fill, dtype=dtype))
        assert_same_tensor_dict(state_e, state_o, f"module state after the call (seed {seed})")

    # epgraph reads the edited program back and prints what PyTorch prints for it.
    assert pt2_edit.run("show", out).stdout == expected_show(edited)
    assert pt2_edit.run("validate", out).returncode == 0


def before_state_keys(original, target):
    """The expected state_dict order after the edit: the new target after the persistent
    buffers' and parameters' entries, i.e. appended at the end of state_dict."""
    return list(original.state_dict) + [target]


# --- step 5: every value epgraph recomputes is torch's ------------------------------------------

# The ops of zoo programs epgraph has no value rule for: the zoo's own custom ops, and
# higher-order ops, whose values come from running their nested graphs (a cond's branches, a
# map's body), which a loaded program keeps as their records (NodeMeta::serialized), not as
# graphs propagate_meta could enter. `validate --meta` reports their nodes as not computed and
# uses their stored values below them.
NO_RULE = {
    "effect_tokens": {"torch.ops.higher_order.with_effects"},
    "custom_ops": {"torch.ops.epgraph_zoo.accumulate_.default",
                   "torch.ops.epgraph_zoo.scaled_add.default"},
    "custom_ops_decomposed": {"torch.ops.epgraph_zoo.scaled_add.default",
                              "torch.ops.higher_order.auto_functionalized_v2"},
    "autocast_region": {"torch.ops.higher_order.wrap_with_autocast"},
    "torchbind": {"torch.ops._TorchScriptTesting.takes_foo.default",
                  "torch.ops.higher_order.call_torchbind"},
    "torchbind_decomposed": {"torch.ops.higher_order.with_effects"},
    "list_arguments": {"torch.ops.epgraph_zoo.tagged.default"},
    "effect_only": {"torch.ops.higher_order.with_effects"},
    "custom_obj_first": {"torch.ops._TorchScriptTesting.takes_foo.default"},
}
# The higher-order ops whose nested graphs propagate_meta runs (each graph once).
ENTERED = {"cond", "while_loop", "map_impl", "invoke_subgraph", "wrap_with_set_grad_enabled"}


def meta_node_count(ep):
    """The call_function nodes propagate_meta visits: the program's graph's, and those of each
    nested graph a higher-order op of ENTERED calls from it (once per graph)."""
    count = sum(1 for n in ep.graph.nodes if n.op == "call_function")
    entered = set()
    for n in ep.graph.nodes:
        if n.op == "call_function" and getattr(n.target, "__name__", "") in ENTERED:
            for a in n.args:
                if isinstance(a, torch.fx.Node) and a.op == "get_attr" and a.target not in entered:
                    entered.add(a.target)
                    sub = getattr(ep.graph_module, a.target)
                    count += sum(1 for m in sub.graph.nodes if m.op == "call_function")
    return count


META_SUMMARY = re.compile(r"meta: nodes=(\d+) computed=(\d+) equal=(\d+) differ=(\d+) "
                          r"uncomputed=(\d+) invalid=(\d+)")


@pytest.mark.parametrize("name", NAMES)
def test_5_validate_meta(name, exported, pt2_edit):
    """propagate_meta in check mode (`pt2_edit validate --meta`) on the program torch saved:
    every value epgraph computes equals torch's stored one, nested graphs included (cond's
    branches, map's and while_loop's bodies, no_grad regions), every call_function node is
    computed but those of the ops above, and none is refused."""
    prog = exported(name)
    proc = pt2_edit.run("validate", prog.path, "--meta", check=False)
    summary = META_SUMMARY.search(proc.stdout)
    assert summary, proc.stdout + proc.stderr
    nodes, computed, equal, differ, uncomputed, invalid = map(int, summary.groups())
    print(f"{name}: nodes={nodes} equal={equal}")
    assert nodes == meta_node_count(prog.load_fresh())
    assert (differ, invalid) == (0, 0), proc.stdout
    assert equal == computed == nodes - uncomputed, proc.stdout
    no_rule = set(re.findall(r"meta: no value computed for \d+ node\(s\) of (\S+)", proc.stdout))
    assert no_rule == NO_RULE.get(name, set()), proc.stdout
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout.endswith(f"OK: {prog.path} passes every check of verify and --meta\n")
