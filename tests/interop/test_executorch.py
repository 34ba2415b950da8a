# epgraph's output through ExecuTorch, end to end. SPDX-License-Identifier: BSD-3-Clause
"""What epgraph writes lowers to an ExecuTorch program (.pte) and runs in ExecuTorch's runtime.

Skipped when ExecuTorch (pip package executorch 1.5.1, see .ci/run) cannot be imported. Every
program is lowered the way ExecuTorch's documentation does it,
`to_edge(torch.export.load(f)).to_executorch()`, under torch.no_grad() (see
test_lowering_needs_no_grad), and run by the runtime's Python bindings (portable kernels):

- zoo (zoo.py): for every zoo program ExecuTorch can lower, the file `pt2_edit copy` wrote and
  the file `pt2_edit add-buffer` wrote are lowered and run on the random inputs of test_zoo.py,
  twice in one loaded module (state carried over; afresh per call for a PARAMETER_MUTATION),
  with outputs equal to torch's `ep.module()`.
  The programs ExecuTorch itself cannot lower (or run), even straight from torch.export.save,
  are in NOT_SUPPORTED with ExecuTorch's error, and the test checks that they still fail so;
- passes (test_passes.py's modules): the kv-cache pass output runs in ONE loaded method twice at
  different positions, the k/v caches (mutable buffers) carried between the calls, with outputs
  and caches equal to torch's and to test_passes.py's Python reference; the conv + batch-norm
  fold gives torch's numbers;
- what ExecuTorch needs that torch does not: a mutated buffer's initial value is written into the
  .pte only when its placeholder has node.meta["et_init_buffer"] = True (ExecuTorch's
  InitializedMutableBufferPass; exir/emit/_emitter.py); without it the value epgraph stored
  (`pt2_edit add-buffer --fill 1`) is lost and the runtime starts from its planned memory
  (zeros in the Python runtime). Programs writing a buffer in place lower only under no_grad. A
  PARAMETER_MUTATION is returned but not written back. A new buffer nothing writes yet next to a
  user-input mutation is mislowered (ExecuTorch's own create_mutable_buffer gives the same);
- the walk-through of examples/executorch/ (export_model.py, pt2_passes kv-cache,
  lower_and_run.py) runs end to end as its README says.
"""

from __future__ import annotations

import copy
import os
import pathlib
import re
import subprocess
import sys

import pytest
import torch
import torch.utils._pytree as pytree
from torch.export.graph_signature import InputKind, OutputKind

# exc_type=ImportError: skip (not error) on any import failure of the package itself.
pytest.importorskip("executorch", exc_type=ImportError)
try:
    from executorch.exir import ExecutorchBackendConfig, to_edge
    from executorch.exir.passes.init_mutable_pass import InitializedMutableBufferPass
    from executorch.extension.pybindings.portable_lib import (
        _load_for_executorch_from_buffer,
        _load_program_from_buffer,
    )
except Exception as e:  # noqa: BLE001 - a broken install skips too, with the reason
    pytest.skip(f"executorch cannot be used ({type(e).__name__}: {e})", allow_module_level=True)

import test_passes  # noqa: E402
import test_zoo  # noqa: E402
import zoo  # noqa: E402
from test_passes import folder, pt2_passes  # noqa: E402,F401 - fixtures

pytestmark = pytest.mark.filterwarnings(
    "ignore:Mutation on a buffer in the model is detected:UserWarning")

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "executorch"

# Zoo programs ExecuTorch 1.5.1 cannot lower (or run), whatever wrote the file: torch's own
# archive fails exactly like epgraph's copy. name -> (stage, text of ExecuTorch's error, why).
NOT_SUPPORTED = {
    "linear_bn_train": (
        "lower", "aten._native_batch_norm_legit_functional.default is not in Core ATen opset",
        "batch norm in training mode: to_edge's verifier rejects "
        "_native_batch_norm_legit_functional (not Core ATen)"),
    "linear_bn_train_decomposed": (
        "lower", "aten._native_batch_norm_legit_functional.default is not in Core ATen opset",
        "batch norm in training mode (as above)"),
    "conv_bn_train_decomposed": (
        "lower", "aten._native_batch_norm_legit_functional.default is not in Core ATen opset",
        "batch norm in training mode (as above)"),
    "effect_tokens": (
        "lower", "'WithEffects' object has no attribute '_schema'",
        "effect tokens: the with_effects wrapper of aten._print is not supported"),
    "effect_only": (
        "lower", "'WithEffects' object has no attribute '_schema'",
        "effect tokens (as effect_tokens)"),
    "custom_obj_first": (
        "lower", "unhashable type: 'CustomObjArgument'",
        "TorchBind objects (as torchbind)"),
    "custom_ops": (
        "lower", "'NoneType' object has no attribute 'kind'",
        "ToOutVarPass finds no out variant for the mutating custom op epgraph_zoo::accumulate_"),
    "custom_ops_decomposed": (
        "lower", "'NoneType' object has no attribute 'kind'",
        "as custom_ops (auto_functionalized_v2 is turned back into accumulate_)"),
    "constant_inputs": (
        "run", "Unsupported python type <class 'str'>",
        "lowers, but the int/float/bool/str/None inputs stay method inputs and the runtime "
        "accepts no str input"),
    "unbacked_symints": (
        "lower", "Cannot evaluate a finite upper bound for symbolic expression",
        "memory planning needs an upper bound for the data-dependent (nonzero/item) sizes"),
    "while_loop": (
        "lower", "Unsupported control flow operator: while_loop",
        "the emitter supports cond and map, not while_loop"),
    "complex_scalar": (
        "lower", "aten.view_as_real.default is not in Core ATen opset",
        "complex tensors: view_as_real is not Core ATen"),
    "torchbind": (
        "lower", "unhashable type: 'CustomObjArgument'",
        "TorchBind objects: ExecuTorch's re-trace of with_effects(takes_foo, obj) fails"),
    "torchbind_decomposed": (
        "lower", "unhashable type: 'CustomObjArgument'", "TorchBind objects (as above)"),
    "list_arguments": (
        "lower", "Missing out variants: {'epgraph_zoo::tagged'}",
        "the custom op epgraph_zoo::tagged has no out variant"),
}
SUPPORTED = [n for n in test_zoo.NAMES if n not in NOT_SUPPORTED]

# ExecuTorch mislowers a buffer mutation whose value is the buffer itself (what add-buffer and
# ExecuTorch's own create_mutable_buffer add: a buffer nothing writes yet) next to a
# USER_INPUT_MUTATION: the lowered program returns the buffer where the mutated input belongs
# (test_identity_buffer_mutation_next_to_input_mutation). The other outputs are right.
INPUT_MUTATION_SLOT_GETS_BUFFER = {"user_input_mutation", "user_input_mutation_decomposed"}

# Outputs ExecuTorch computes with other kernels than torch, and their tolerances.
TOLERANCES = {
    # the bfloat16 linear of the autocast region: one bfloat16 rounding step apart
    "autocast_region": {"rtol": 2e-2, "atol": 1e-2},
}


# --- helpers ------------------------------------------------------------------------------------

class Runtime:
    """A lowered program in ExecuTorch's runtime: `module` (ExecuTorchModule: forward) and
    `method` (ExecuTorchMethod of forward: call, get_attribute; separate state). The pybindings
    read the .pte bytes in place without keeping them alive, so they are held here (a module
    loaded from a temporary buffer fails: "Program identifier '' != expected 'ET12'")."""

    def __init__(self, program) -> None:
        self.buffer = program.buffer
        self.module = _load_for_executorch_from_buffer(self.buffer)
        self.program = _load_program_from_buffer(self.buffer)
        self.method = self.program.load_method("forward")


def lower(path, init_buffers=(), emit_names: bool = False):
    """`to_edge(torch.export.load(path)).to_executorch()` under no_grad. init_buffers: names of
    mutable buffers to mark et_init_buffer (InitializedMutableBufferPass: substrings of the
    placeholder names); emit_names: emit_mutable_buffer_names, for Method.get_attribute."""
    passes = [InitializedMutableBufferPass(list(init_buffers))] if init_buffers else []
    config = ExecutorchBackendConfig(emit_mutable_buffer_names=emit_names, passes=passes)
    with torch.no_grad():
        return to_edge(torch.export.load(str(path))).to_executorch(config)


def serialized_buffer(program, fqn: str):
    """The tensor of mutable buffer `fqn` in the serialized program (emitted with its name)."""
    (plan,) = program.executorch_program.execution_plan
    found = [v.val for v in plan.values
             if getattr(v.val, "extra_tensor_info", None) is not None
             and v.val.extra_tensor_info.fully_qualified_name == fqn]
    assert len(found) == 1, fqn
    return found[0]


def leaves(tree):
    """pytree leaves with None kept as a leaf (ExecuTorch returns None outputs as values)."""
    return pytree.tree_leaves(tree, is_leaf=lambda v: v is None)


def torch_outputs(ep, lowered_signature, entry: zoo.ZooEntry, args, kwargs, module):
    """What the ExecuTorch method returns, computed by torch, as (output kind, value): one per
    output of the lowered program's signature except the BUFFER_MUTATION ones (the runtime writes
    those into its buffers instead of returning them). The lowered signature, not torch's, says
    what is returned: to_edge functionalizes the training IR, so an in-place update of a user
    input becomes a USER_INPUT_MUTATION output there. Values: user outputs of `module`
    (ep.module(), flattened), the user inputs and parameters after the call; a joint program
    (entry.run == "graph") runs as its graph, and ExecuTorch appends its parameters as TOKEN
    outputs (exir/passes/weights_to_outputs_pass.py)."""
    args, kwargs = copy.deepcopy((args, kwargs))
    if entry.run == "graph":
        with torch.no_grad():
            flat = zoo.run_graph(ep, args, kwargs)
        graph_out = iter(o for s, o in zip(ep.graph_signature.output_specs, flat)
                         if s.kind != OutputKind.BUFFER_MUTATION)
    else:
        with torch.no_grad():
            user_out = iter(leaves(module(*args, **kwargs)))
    user_names = [s.arg.name for s in ep.graph_signature.input_specs
                  if s.kind == InputKind.USER_INPUT]
    inputs = dict(zip(user_names, leaves((args, kwargs))))
    result = []
    for s in lowered_signature.output_specs:
        if s.kind == OutputKind.BUFFER_MUTATION:
            continue
        if s.kind == OutputKind.TOKEN and s.arg.name in lowered_signature.inputs_to_parameters:
            value = ep.state_dict[lowered_signature.inputs_to_parameters[s.arg.name]]
        elif entry.run == "graph":
            value = next(graph_out)
        elif s.kind == OutputKind.USER_OUTPUT:
            value = next(user_out)
        elif s.kind == OutputKind.USER_INPUT_MUTATION:
            value = inputs[s.target]
        elif s.kind == OutputKind.PARAMETER_MUTATION:
            value = dict(module.named_parameters())[s.target].detach().clone()
        else:
            raise AssertionError(f"unexpected output kind {s.kind}")
        result.append((s.kind, value))
    assert next(graph_out if entry.run == "graph" else user_out, "end") == "end"
    return result


def assert_outputs_close(actual, expected, what: str, **tolerance) -> None:
    assert len(actual) == len(expected), f"{what}: {len(actual)} outputs, torch {len(expected)}"
    for i, (a, e) in enumerate(zip(actual, expected)):
        if isinstance(e, torch.Tensor):
            assert isinstance(a, torch.Tensor), f"{what}[{i}]: {type(a)} is not a tensor"
            torch.testing.assert_close(a, e, msg=lambda m, i=i: f"{what}[{i}]: {m}", **tolerance)
        else:
            assert a == e, f"{what}[{i}]: {a!r} != {e!r}"


def edited_file(prog, pt2_edit, variant: str) -> pathlib.Path:
    """The file epgraph wrote for `variant`: "copy" (pt2_edit copy) or "add_buffer" (pt2_edit
    add-buffer with the buffer test_zoo.py adds to this program)."""
    out = prog.folder / f"executorch_{variant}.pt2"
    if variant == "copy":
        pt2_edit.run("copy", prog.path, "-o", out)
    else:
        node_name, dtype, shape, fill = test_zoo.ADDED.get(prog.entry.name,
                                                           test_zoo.DEFAULT_ADDED)
        pt2_edit.run("add-buffer", prog.path, "--name", node_name,
                     "--dtype", test_zoo.DTYPE_NAMES[dtype],
                     "--shape", ",".join(map(str, shape)), "--fill", repr(fill), "-o", out)
    return out


# --- (a) the zoo --------------------------------------------------------------------------------

@pytest.mark.parametrize("variant", ["copy", "add_buffer"])
@pytest.mark.parametrize("name", SUPPORTED)
def test_zoo_runs_in_executorch(name, variant, exported, pt2_edit):
    prog = exported(name)
    path = edited_file(prog, pt2_edit, variant)
    ep = torch.export.load(str(path))
    program = lower(path)
    lowered = program.exported_program().graph_signature
    # ExecuTorch returns a PARAMETER_MUTATION but does not write it back into the parameter
    # (test_parameter_mutation_is_not_written_back): such a program starts afresh for each call.
    # Every other program keeps ONE loaded module in ExecuTorch and one in torch for both calls,
    # so mutated buffers carry over in both.
    fresh = any(s.kind == OutputKind.PARAMETER_MUTATION for s in lowered.output_specs)
    runtime = module = None
    for seed in test_zoo.SEEDS:
        if runtime is None or fresh:
            runtime = Runtime(program)
            # ep.module() shares ep's tensors: a copy keeps ep's state as loaded.
            module = copy.deepcopy(ep).module() if prog.entry.run == "module" else None
        args, kwargs = test_zoo.draw_inputs(prog.entry, seed)
        actual = list(runtime.module.forward(tuple(leaves(copy.deepcopy((args, kwargs))))))
        expected = torch_outputs(ep, lowered, prog.entry, args, kwargs, module)
        if variant == "add_buffer" and name in INPUT_MUTATION_SLOT_GETS_BUFFER:
            (i,) = [i for i, (k, _) in enumerate(expected)
                    if k == OutputKind.USER_INPUT_MUTATION]
            assert actual[i].shape == test_zoo.DEFAULT_ADDED[2]  # the buffer, not the input
            del actual[i], expected[i]
        assert_outputs_close(actual, [v for _, v in expected],
                             f"{name} {variant} outputs (seed {seed})", **TOLERANCES.get(name, {}))


@pytest.mark.parametrize("name", sorted(NOT_SUPPORTED))
def test_zoo_not_supported_by_executorch(name, exported, pt2_edit):
    """ExecuTorch fails on torch's own archive, and identically on epgraph's copy."""
    stage, message, _why = NOT_SUPPORTED[name]
    prog = exported(name)
    for path in (prog.path, edited_file(prog, pt2_edit, "copy")):
        if stage == "lower":
            with pytest.raises(Exception, match=re.escape(message)):
                lower(path)
        else:
            runtime = Runtime(lower(path))
            args, kwargs = test_zoo.draw_inputs(prog.entry, test_zoo.SEEDS[0])
            with pytest.raises(Exception, match=re.escape(message)):
                runtime.module.forward(tuple(leaves((args, kwargs))))


def test_lowering_needs_no_grad(exported):
    """A program that writes a buffer in place (decoder_kv_cache: index_copy_ / copy_ into the
    caches) fails ExecuTorch's fake-tensor re-trace under grad mode; under no_grad it lowers."""
    path = exported("decoder_kv_cache").path
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used"):
        to_edge(torch.export.load(str(path))).to_executorch()
    lower(path)


def test_parameter_mutation_is_not_written_back(exported):
    """torch's module writes a PARAMETER_MUTATION back (w += 1 per call); ExecuTorch returns the
    new value as an output but the next call sees the original parameter again."""
    prog = exported("parameter_mutation_decomposed")
    runtime = Runtime(lower(prog.path))
    module = prog.load_fresh().module()
    x = torch.ones(3)
    for call in (1, 2):
        new_w, out = runtime.module.forward((x,))
        with torch.no_grad():
            expected = module(x)
        torch.testing.assert_close(expected, torch.full((3,), 1.0 + call))
        torch.testing.assert_close(new_w, torch.full((3,), 2.0))
        torch.testing.assert_close(out, torch.full((3,), 2.0))  # equal to torch's only at call 1


def test_identity_buffer_mutation_next_to_input_mutation(exported, pt2_edit):
    """ExecuTorch's lowering of a program with a buffer mutation that returns the buffer itself
    (a new mutable buffer nothing writes yet) and a user input mutation returns the buffer in the
    mutated input's place. ExecuTorch's own create_mutable_buffer (backends/transforms/utils.py)
    gives the same lowered program as epgraph's add-buffer: the bug is not epgraph's."""
    from executorch.backends.transforms.utils import create_mutable_buffer

    prog = exported("user_input_mutation_decomposed")
    ours = torch.export.load(str(edited_file(prog, pt2_edit, "add_buffer")))
    theirs = prog.load_fresh()
    create_mutable_buffer(theirs, "b_epgraph_state", torch.full((2, 3), 1.5))
    x, y = torch.randn(3), torch.randn(3)
    for ep in (ours, theirs):
        with torch.no_grad():
            program = to_edge(ep).to_executorch()
        lowered = [(s.kind, s.arg.name, s.target)
                   for s in program.exported_program().graph_signature.output_specs]
        assert (OutputKind.USER_INPUT_MUTATION, "b_epgraph_state", "x") in lowered, lowered
        mutated_x, out = Runtime(program).module.forward((x, y))
        assert mutated_x.shape == (2, 3)  # the buffer, where x + y belongs
        torch.testing.assert_close(out, (x + y) * 2.0 + y)


# --- (b) the pass families ------------------------------------------------------------------------

@pytest.mark.parametrize("init_buffers", [False, True], ids=["plain", "et_init_buffer"])
def test_kv_cache_in_executorch(pt2_passes, folder, init_buffers):
    torch.manual_seed(0)
    model = test_passes.Attention().eval()
    steps, max_seq = 3, 8
    src, dst = folder / "executorch_attention.pt2", folder / "executorch_attention_kv.pt2"
    test_passes.export_and_save(model, (torch.randn(1, steps, 8), torch.arange(steps)), src)
    ep = test_passes.apply_pass(pt2_passes, "kv-cache", src, dst, "--max-seq", max_seq)
    caches = ("k_cache", "v_cache")
    program = lower(dst, init_buffers=caches if init_buffers else (), emit_names=True)

    # The caches' zeros are in the .pte only with et_init_buffer; the runtime starts at zeros
    # either way (without it, from the freshly allocated planned memory).
    zeros = torch.zeros(1, 2, max_seq, 4)
    for name in caches:
        assert (serialized_buffer(program, name).data_buffer_idx > 0) == init_buffers, name
    runtime = Runtime(program)
    method = runtime.method
    for name in caches:
        assert torch.equal(method.get_attribute(name), zeros), name

    # ONE loaded method, two calls at different positions: the caches carry over.
    module = ep.module()
    k_cache = v_cache = zeros
    gen = torch.Generator().manual_seed(1)
    for call in range(2):
        x = torch.randn(1, steps, 8, generator=gen)
        pos = torch.arange(call * steps, (call + 1) * steps)
        (out,) = method((x, pos))
        with torch.no_grad():
            torch_out = module(x, pos)
            expected, k_cache, v_cache = model.reference(x, pos, k_cache, v_cache)
        torch.testing.assert_close(out, torch_out)
        torch.testing.assert_close(out, expected)
        buffers = dict(module.named_buffers())
        for name, reference in zip(caches, (k_cache, v_cache)):
            state = method.get_attribute(name)
            torch.testing.assert_close(state, buffers[name])
            torch.testing.assert_close(state, reference)
    assert torch.count_nonzero(method.get_attribute("k_cache")[:, :, :steps]) > 0  # call 1 kept
    assert torch.count_nonzero(method.get_attribute("k_cache")[:, :, 2 * steps:]) == 0


@pytest.mark.parametrize("decompose", [False, True], ids=["training_ir", "decomposed"])
def test_fold_conv_bn_in_executorch(pt2_passes, folder, decompose):
    torch.manual_seed(0)
    model = test_passes.ConvBN().eval()
    x = torch.randn(2, 3, 8, 8)
    name = "executorch_conv_bn_decomposed" if decompose else "executorch_conv_bn"
    src, dst = folder / f"{name}.pt2", folder / f"{name}_folded.pt2"
    test_passes.export_and_save(model, (x,), src, decompose)
    ep = test_passes.apply_pass(pt2_passes, "fold-conv-bn", src, dst)
    program = lower(dst)
    lowered_ops = [str(n.target) for n in program.exported_program().graph.nodes
                   if n.op == "call_function"]
    assert not [t for t in lowered_ops if "batch_norm" in t], lowered_ops
    runtime = Runtime(program)
    gen = torch.Generator().manual_seed(2)
    for _ in range(2):
        x = torch.randn(2, 3, 8, 8, generator=gen)
        (out,) = runtime.module.forward((x,))
        with torch.no_grad():
            torch.testing.assert_close(out, ep.module()(x))
            torch.testing.assert_close(out, model(x), rtol=1e-5, atol=1e-5)


# --- what ExecuTorch needs that torch does not ----------------------------------------------------

@pytest.mark.parametrize("init_buffers", [False, True], ids=["plain", "et_init_buffer"])
def test_add_buffer_initial_value(exported, pt2_edit, init_buffers):
    """`pt2_edit add-buffer --fill 1`: torch's program has the buffer at ones. ExecuTorch writes
    those ones into the .pte only for a placeholder marked et_init_buffer; without it the .pte
    holds no data for the buffer (data_buffer_idx 0) and the runtime's buffer is not ones (it reads
    zeros: the planned memory). The mark cannot travel in the .pt2: torch's schema keeps no
    metadata for placeholders, so it is set after torch.export.load (here: the pass)."""
    prog = exported("conv_bn_eval")
    path = prog.folder / "executorch_fill_1.pt2"
    pt2_edit.run("add-buffer", prog.path, "--name", "b_state", "--dtype", "float32",
                 "--shape", "2,3", "--fill", "1", "-o", path)
    ep = torch.export.load(str(path))
    ones = torch.ones(2, 3)
    assert torch.equal(ep.state_dict["state"], ones)
    assert torch.equal(dict(ep.module().named_buffers())["state"], ones)
    (placeholder,) = [n for n in ep.graph.nodes if n.name == "b_state"]
    assert "et_init_buffer" not in placeholder.meta

    program = lower(path, init_buffers=("b_state",) if init_buffers else (), emit_names=True)
    assert (serialized_buffer(program, "state").data_buffer_idx > 0) == init_buffers
    runtime = Runtime(program)
    method = runtime.method
    x = torch.randn(2, 3, 8, 8, generator=torch.Generator().manual_seed(3))
    for _ in range(2):  # before and after a call: add-buffer's mutation writes the buffer back
        state = method.get_attribute("state")
        if init_buffers:
            assert torch.equal(state, ones)
        else:
            assert torch.equal(state, torch.zeros(2, 3))  # the fill value is lost
        (out,) = method((x,))
        with torch.no_grad():
            torch.testing.assert_close(out, ep.module()(x))


# --- the walk-through of examples/executorch/ -----------------------------------------------------

def test_walkthrough(pt2_passes, workdir):
    """examples/executorch/README.md's commands, in a fresh folder."""
    out = workdir / "executorch_walkthrough"
    out.mkdir(parents=True, exist_ok=True)
    for f in out.iterdir():
        f.unlink()

    def python(*args):
        proc = subprocess.run([sys.executable, *map(str, args)], cwd=out, capture_output=True,
                              text=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
        assert proc.returncode == 0, f"{args}:\n{proc.stdout}\n{proc.stderr}"
        return proc.stdout

    assert "-> model.pt2" in python(EXAMPLES / "export_model.py", "-o", "model.pt2")
    pt2_passes.run("kv-cache", out / "model.pt2", "-o", out / "model_kv.pt2")
    log = python(EXAMPLES / "lower_and_run.py", "model_kv.pt2")
    assert "et_init_buffer on ['k_cache', 'v_cache']" in log
    assert "call 2: input_pos = [3, 4, 5]" in log
    assert log.rstrip().endswith("into call 2"), log
    assert "MISMATCH" not in log
    assert (out / "model_kv.pte").stat().st_size > 0
