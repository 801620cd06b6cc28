"""Graders of lab 3, "FSDP and tensor parallelism": one test per gradable fact, worth its points.

The public checks look at what the lab's own cells computed with the student's functions; the hidden
ones call those functions on inputs the student has never seen (values, layout, compiled collectives),
re-measure the benchmarked collectives, and build the student's TPLayer with the grader's own sizes.
"""

import re

import numpy as np
import pytest

from autograder.checks import (
    CheckFailure,
    Layout,
    assert_allclose,
    assert_blocked,
    assert_body_receives_blocks,
    assert_collectives,
    assert_jit_given_layouts,
    assert_jitted_shard_map,
    assert_layout,
    assert_median,
    assert_on_mesh,
    assert_shard_map_collectives,
    assert_time_consistent,
    assert_timed_on,
    assert_uses,
    assert_warm,
    collectives_in,
    describe_collectives,
    found_number,
    is_allclose,
)
from autograder.facts import Input
from autograder.labs.lab3_fsdp_tp import reference as ref

task, points, hidden = pytest.mark.task, pytest.mark.points, pytest.mark.hidden
# t4's text asks for "the median time in seconds", naming no type: a numpy or 0-d JAX median is one too.
NUMBER_TYPES = ("float", "int", "numpy.float32", "numpy.float16", "jax.Array", "numpy.ndarray")
OPS = ("all_gather", "psum", "psum_scatter", "all_to_all")
MLP_TOLERANCE = {"rtol": 1e-4, "atol": 1e-3}
LAYER_TOLERANCE = {"rtol": 1e-4, "atol": 1e-4}


def _mlp_of_inputs(submission, task_id, call_id):
    return ref.mlp(*submission.inputs(task_id, call_id))


def _assert_any_layout(submission, task_id, call_id, function, expected_spec, arguments):
    """The function, called on committed inputs laid out otherwise than its in_specs, gives the values and
    the output layout: a shard_map reshards them itself; jax.jit(in_shardings=...) refuses them."""
    call = submission.task(task_id).calls.get(call_id)
    inputs = submission.inputs(task_id, call_id)
    layouts = ", ".join(f"{arg} as {spec}" for arg, spec in arguments)
    if call is not None and call.error and not call.error.startswith("NameError"):
        raise CheckFailure(
            f"`{function}`: expected it to accept inputs in any layout on `mesh`, found it refusing"
            f" {layouts}: {call.error.splitlines()[0]}"
        )
    call = submission.call(task_id, call_id)
    label = f"{function}({', '.join(arg for arg, _ in arguments)}) on inputs laid out {layouts}"
    expected = ref.mlp(*inputs) if len(inputs) == 3 else np.asarray(inputs[0], np.float64) @ np.asarray(inputs[1])
    assert_allclose(call.output, expected, label, **MLP_TOLERANCE)
    assert_layout(call.output, Layout.of_spec(ref.MESH_2D, expected_spec, expected.shape), label)


# t1 — FSDP: gather the weight, keep the batch split


@task("t1")
@points(2)
def test_t1_lab_result(submission):
    """`B = fsdp_matmul(x, A)` is x @ A, laid out as P('data', None)"""
    arrays = ref.lab_arrays()
    found = submission.name("t1", "B")
    assert_allclose(found, arrays["x"].astype(np.float64) @ arrays["A"], "B", **MLP_TOLERANCE)
    assert_layout(found, Layout.of_spec(ref.MESH_2D, ("data", None), (ref.BATCH, ref.HIDDEN)), "B")


@task("t1")
@points(2)
def test_t1_jitted_shard_map(submission):
    """`fsdp_matmul` is a jax.shard_map wrapped in jax.jit"""
    assert_jitted_shard_map(submission.call("t1", "fsdp_matmul"), "fsdp_matmul")


@task("t1")
@points(1)
def test_t1_on_mesh(submission):
    """`fsdp_matmul` is a shard_map over `mesh`: its result lies on that mesh, axes 'data' and 'model'"""
    assert_on_mesh(submission.call("t1", "fsdp_matmul").output, ref.MESH_2D, "fsdp_matmul(x, A)", "`mesh`")


@task("t1")
@points(1)
@hidden
def test_t1_in_specs(submission):
    """`fsdp_matmul`'s shard_map cuts x and A by rows over `data`: in_specs=(P('data', None), P('data', None))"""
    blocks = (
        ((ref.BATCH, ref.HIDDEN), (ref.BATCH // 2, ref.HIDDEN)),
        ((ref.HIDDEN, ref.HIDDEN), (ref.HIDDEN // 2, ref.HIDDEN)),
    )
    assert_body_receives_blocks(
        submission.call("t1", "fsdp_matmul"), "fsdp_matmul", blocks, "in_specs=(P('data', None), P('data', None))"
    )


@task("t1")
@points(3)
@hidden
def test_t1_fresh_values(submission):
    """`fsdp_matmul` computes x @ A on the grader's own inputs"""
    call = submission.call("t1", "fsdp_matmul")
    x, A = submission.inputs("t1", "fsdp_matmul")
    assert_allclose(call.output, x.astype(np.float64) @ A, "fsdp_matmul(x, A)", **MLP_TOLERANCE)


@task("t1")
@points(1)
@hidden
def test_t1_any_layout(submission):
    """`fsdp_matmul` accepts inputs committed to another layout on `mesh` and gives x @ A, as P('data', None)"""
    _assert_any_layout(
        submission,
        "t1",
        "fsdp_matmul_other_layout",
        "fsdp_matmul",
        ("data", None),
        (("x", "P('model', None)"), ("A", "P(None, ('data', 'model'))")),
    )


@task("t1")
@points(2)
@hidden
def test_t1_fresh_layout(submission):
    """`fsdp_matmul` returns its result with the rows over `data`, replicated over `model`"""
    call = submission.call("t1", "fsdp_matmul")
    expected = Layout.of_spec(ref.MESH_2D, ("data", None), (ref.BATCH, ref.HIDDEN))
    assert_layout(call.output, expected, "fsdp_matmul(x, A)")


@task("t1")
@points(2)
@hidden
def test_t1_gathers_the_weight(submission):
    """`fsdp_matmul`'s shard_map body all-gathers the blocks of A over `data`, and its compiled program all-gathers"""
    call = submission.call("t1", "fsdp_matmul")
    assert_shard_map_collectives(call, "fsdp_matmul", uses=["all_gather"], axis="data")
    assert_collectives(call.hlo, required=["all-gather"], name="the compiled fsdp_matmul", compile_error=call.hlo_error)


# t2 — column-wise tensor parallelism


@task("t2")
@points(2)
def test_t2_lab_result(submission):
    """`C = tp_mlp(x, W1, W2)` is x @ W1 @ W2, laid out as P(None, 'model')"""
    arrays = ref.lab_arrays()
    found = submission.name("t2", "C")
    assert_allclose(found, ref.mlp(arrays["x"], arrays["W1"], arrays["W2"]), "C", **MLP_TOLERANCE)
    assert_layout(found, Layout.of_spec(ref.MESH_2D, (None, "model"), (ref.BATCH, ref.HIDDEN)), "C")


@task("t2")
@points(2)
def test_t2_jitted_shard_map(submission):
    """`tp_mlp` is a jax.shard_map wrapped in jax.jit"""
    assert_jitted_shard_map(submission.call("t2", "tp_mlp"), "tp_mlp")


@task("t2")
@points(1)
def test_t2_on_mesh(submission):
    """`tp_mlp` is a shard_map over `mesh`: its result lies on that mesh, axes 'data' and 'model'"""
    assert_on_mesh(submission.call("t2", "tp_mlp").output, ref.MESH_2D, "tp_mlp(x, W1, W2)", "`mesh`")


@task("t2")
@points(1)
@hidden
def test_t2_in_specs(submission):
    """`tp_mlp`'s shard_map cuts x and W1 by columns, W2 by rows, over `model`"""
    shapes = ((ref.BATCH, ref.HIDDEN), (ref.HIDDEN, ref.MLP_WIDTH), (ref.MLP_WIDTH, ref.HIDDEN))
    blocks = ((ref.BATCH, ref.HIDDEN // 4), (ref.HIDDEN, ref.MLP_WIDTH // 4), (ref.MLP_WIDTH // 4, ref.HIDDEN))
    assert_body_receives_blocks(
        submission.call("t2", "tp_mlp"),
        "tp_mlp",
        tuple(zip(shapes, blocks)),
        "in_specs=(P(None, 'model'), P(None, 'model'), P('model', None))",
    )


@task("t2")
@points(3)
@hidden
def test_t2_fresh_values(submission):
    """`tp_mlp` computes x @ W1 @ W2 on the grader's own inputs"""
    call = submission.call("t2", "tp_mlp")
    assert_allclose(call.output, _mlp_of_inputs(submission, "t2", "tp_mlp"), "tp_mlp(x, W1, W2)", **MLP_TOLERANCE)


@task("t2")
@points(1)
@hidden
def test_t2_any_layout(submission):
    """`tp_mlp` accepts inputs committed to another layout on `mesh` and gives x @ W1 @ W2, as P(None, 'model')"""
    _assert_any_layout(
        submission,
        "t2",
        "tp_mlp_other_layout",
        "tp_mlp",
        (None, "model"),
        (("x", "P('data', None)"), ("W1", "P('model', 'data')"), ("W2", "P(None, 'data')")),
    )


@task("t2")
@points(2)
@hidden
def test_t2_fresh_layout(submission):
    """`tp_mlp` returns its result with the columns over `model`, replicated over `data`"""
    call = submission.call("t2", "tp_mlp")
    expected = Layout.of_spec(ref.MESH_2D, (None, "model"), (ref.BATCH, ref.HIDDEN))
    assert_layout(call.output, expected, "tp_mlp(x, W1, W2)")


@task("t2")
@points(4)
@hidden
def test_t2_gathers_and_reduce_scatters(submission):
    """`tp_mlp`'s shard_map body all-gathers x and psum_scatters the partial sums over `model`, and its compiled
    program all-gathers and reduce-scatters"""
    call = submission.call("t2", "tp_mlp")
    assert_shard_map_collectives(call, "tp_mlp", uses=["all_gather", "psum_scatter"], axis="model")
    assert_collectives(
        call.hlo, required=["all-gather", "reduce-scatter"], name="the compiled tp_mlp", compile_error=call.hlo_error
    )


# t3 — FSDP and TP together, with shard_map and with jax.jit(in_shardings=..., out_shardings=...)

T3_FUNCTIONS = {"fsdp_tp_mlp": "D", "fsdp_tp_jit": "D_jit"}


@task("t3")
@points(1)
@pytest.mark.parametrize("function", list(T3_FUNCTIONS))
def test_t3_lab_result(submission, function):
    """`D = fsdp_tp_mlp(x, W1, W2)` and `D_jit = fsdp_tp_jit(x, W1, W2)` are x @ W1 @ W2, as P('data', 'model')"""
    arrays = ref.lab_arrays()
    name = T3_FUNCTIONS[function]
    found = submission.name("t3", name)
    assert_allclose(found, ref.mlp(arrays["x"], arrays["W1"], arrays["W2"]), name, **MLP_TOLERANCE)
    assert_layout(found, Layout.of_spec(ref.MESH_2D, ("data", "model"), (ref.BATCH, ref.HIDDEN)), name)


@task("t3")
@points(2)
@hidden
@pytest.mark.parametrize("function", list(T3_FUNCTIONS))
def test_t3_fresh_values(submission, function):
    """`fsdp_tp_mlp` and `fsdp_tp_jit` compute x @ W1 @ W2 on the grader's own (uncommitted) inputs"""
    call = submission.call("t3", function)
    assert_allclose(call.output, _mlp_of_inputs(submission, "t3", function), f"{function}(x, W1, W2)", **MLP_TOLERANCE)


@task("t3")
@points(1)
@hidden
@pytest.mark.parametrize("function", list(T3_FUNCTIONS))
def test_t3_fresh_layout(submission, function):
    """`fsdp_tp_mlp` and `fsdp_tp_jit` return the rows over `data` and the columns over `model`"""
    call = submission.call("t3", function)
    expected = Layout.of_spec(ref.MESH_2D, ("data", "model"), (ref.BATCH, ref.HIDDEN))
    assert_layout(call.output, expected, f"{function}(x, W1, W2)")


@task("t3")
@points(1)
def test_t3_jitted_shard_map(submission):
    """`fsdp_tp_mlp` is a jax.shard_map wrapped in jax.jit"""
    assert_jitted_shard_map(submission.call("t3", "fsdp_tp_mlp"), "fsdp_tp_mlp")


@task("t3")
@points(1)
def test_t3_on_mesh(submission):
    """`fsdp_tp_mlp` and `fsdp_tp_jit` lay their results out on `mesh`, axes 'data' and 'model'"""
    for function in T3_FUNCTIONS:
        assert_on_mesh(submission.call("t3", function).output, ref.MESH_2D, f"{function}(x, W1, W2)", "`mesh`")


@task("t3")
@points(1)
@hidden
def test_t3_in_specs(submission):
    """the shard_map of `fsdp_tp_mlp` (and of `fsdp_tp_jit`, the same program) cuts x and W1 as
    P('data', 'model'), W2 as P('model', 'data')"""
    shapes = ((ref.BATCH, ref.HIDDEN), (ref.HIDDEN, ref.MLP_WIDTH), (ref.MLP_WIDTH, ref.HIDDEN))
    blocks = (
        (ref.BATCH // 2, ref.HIDDEN // 4),
        (ref.HIDDEN // 2, ref.MLP_WIDTH // 4),
        (ref.MLP_WIDTH // 4, ref.HIDDEN // 2),
    )
    for function in T3_FUNCTIONS:
        assert_body_receives_blocks(
            submission.call("t3", function),
            function,
            tuple(zip(shapes, blocks)),
            "in_specs=(P('data', 'model'), P('data', 'model'), P('model', 'data'))",
        )


@task("t3")
@points(1)
@hidden
def test_t3_any_layout(submission):
    """`fsdp_tp_mlp`, like `fsdp_matmul`, accepts inputs committed to another layout on `mesh` (not only the
    layouts of its in_specs): x @ W1 @ W2, as P('data', 'model')"""
    _assert_any_layout(
        submission,
        "t3",
        "fsdp_tp_mlp_other_layout",
        "fsdp_tp_mlp",
        ("data", "model"),
        (("x", "P('model', 'data')"), ("W1", "P()"), ("W2", "P('data', 'model')")),
    )


@task("t3")
@points(2)
@hidden
def test_t3_gathers_and_reduce_scatters(submission):
    """`fsdp_tp_mlp`'s shard_map body all-gathers and psum_scatters, and its compiled program all-gathers (x over
    `model`, the weights over `data`) and reduce-scatters"""
    call = submission.call("t3", "fsdp_tp_mlp")
    assert_shard_map_collectives(call, "fsdp_tp_mlp", uses=["all_gather", "psum_scatter"])
    assert_collectives(
        call.hlo,
        required=["all-gather", "reduce-scatter"],
        name="the compiled fsdp_tp_mlp",
        compile_error=call.hlo_error,
    )


@task("t3")
@points(2)
def test_t3_jit_with_shardings(submission):
    """`fsdp_tp_jit` is the shard_map program under jax.jit(in_shardings=..., out_shardings=...) with the specs of the table"""  # noqa: E501 -- a check's title is its docstring's first line
    call = submission.call("t3", "fsdp_tp_jit")
    assert_uses(call, "shard_map", "fsdp_tp_jit")
    shapes = ((ref.BATCH, ref.HIDDEN), (ref.HIDDEN, ref.MLP_WIDTH), (ref.MLP_WIDTH, ref.HIDDEN))
    specs = (("data", "model"), ("data", "model"), ("model", "data"))
    expected_in = [Layout.of_spec(ref.MESH_2D, spec, shape) for spec, shape in zip(specs, shapes)]
    expected_out = [Layout.of_spec(ref.MESH_2D, ("data", "model"), (ref.BATCH, ref.HIDDEN))]
    assert_jit_given_layouts(call, expected_in, expected_out, "fsdp_tp_jit")


# t4 — the cost of the collectives

_KEY_PATH = re.compile(r"""^\[(['"])(.*)\1\]$""")


def _times_by_op(submission) -> dict:
    """`collective_times` as {key: fact}; fails unless it is a dict with one number per key."""
    fact = submission.name("t4", "collective_times")
    if fact.kind != "tree" or fact.type != "dict":
        raise CheckFailure(
            f"`collective_times`: expected a dict from op name to seconds per call, found {fact.describe()}"
        )
    entries = {}
    for path, leaf in zip(fact.paths, fact.leaves):
        match = _KEY_PATH.match(path)
        if match is None:
            raise CheckFailure(
                f"`collective_times`: expected one number per op, found the entry collective_times{path}"
            )
        entries[match.group(2)] = leaf
    return entries


@task("t4")
@points(2)
def test_t4_every_op_timed(submission):
    """`collective_times` has exactly the keys of the four ops, each a positive number of seconds"""
    entries = _times_by_op(submission)
    if set(entries) != set(OPS):
        missing, extra = [op for op in OPS if op not in entries], sorted(set(entries) - set(OPS))
        problems = ([f"missing {', '.join(map(repr, missing))}"] if missing else []) + (
            [f"unexpected {', '.join(map(repr, extra))}"] if extra else []
        )
        raise CheckFailure(
            f"`collective_times`: expected exactly the keys {', '.join(map(repr, OPS))},"
            f" found {', '.join(map(repr, entries)) or 'no keys'} ({'; '.join(problems)})"
        )
    for op, leaf in entries.items():
        found_number(leaf, f"collective_times['{op}']", accept=NUMBER_TYPES)


@task("t4")
@points(2)
@hidden
@pytest.mark.parametrize("op", OPS)
def test_t4_time_consistent(submission, per_grading, op):
    """each time agrees with the grader's own warm, blocked measurement of the same jitted op"""
    entries = _times_by_op(submission)
    if op not in entries:
        raise CheckFailure(f"`collective_times` has no key {op!r}")
    assert_time_consistent(
        entries[op],
        per_grading(ref.collective_times)[op],
        f"collective_times['{op}']",
        factor=ref.TIME_FACTOR,
        accept=NUMBER_TYPES,
    )


# t4's method, read from what its timing code did in the grading kernel (the timing record), whatever the
# machine's speed: the four functions applied to the 1000×1000 X give results of 1000×1000 (all_gather,
# all_to_all) or 125×1000 (psum and psum_scatter, out_specs P() and P(None, 'data') of a row block).
T4_RESULTS = [ref.X_SHAPE, (ref.X_SHAPE[0] // 8, ref.X_SHAPE[1])]


def _t4_claims(submission) -> dict[str, float]:
    """The ops' times, judged by their method; a time that is not a number loses its own check, not these."""
    claims = {}
    for op, leaf in _times_by_op(submission).items():
        try:
            claims[f"collective_times['{op}']"] = found_number(leaf, op, accept=NUMBER_TYPES)
        except CheckFailure:
            continue
    if not claims:
        raise CheckFailure("`collective_times`: no time per op to judge the method of")
    return claims


@task("t4")
@points(1)
@hidden
def test_t4_warm(submission):
    """each op was called, and compiled, before the clock reads its time comes from"""
    assert_warm(submission.timing("t4"), _t4_claims(submission))


@task("t4")
@points(1)
@hidden
def test_t4_blocked_inside(submission):
    """each timed call was waited for inside the timed region, before the clock stopped"""
    assert_blocked(submission.timing("t4"), _t4_claims(submission))


@task("t4")
@points(1)
@hidden
def test_t4_median(submission):
    """each op's time is the median of its timed calls' times, not their mean, their least or one call's"""
    assert_median(submission.timing("t4"), _t4_claims(submission))


@task("t4")
@points(1)
@hidden
def test_t4_applied_to_X(submission):
    """the timed calls were applied to `X`: their results are those of the 1000×1000 input"""
    assert_timed_on(submission.timing("t4"), _t4_claims(submission), T4_RESULTS, "`collective_fns[key]` applied to `X`")


@task("t4")
@points(1)
@hidden
@pytest.mark.parametrize("op", OPS)
def test_t4_function(submission, op):
    """`collective_fns[op]` is the table's function: a jitted shard_map that gives, on the grader's input,
    the values and layout of the table, and whose compiled program holds the op's collective"""
    name = f"collective_fns['{op}']"
    call = submission.call("t4", op)
    (x,) = submission.inputs("t4", op)
    values, spec = ref.op_result(op, x)
    assert_allclose(call.output, values, f"{name}(x)", rtol=1e-4, atol=1e-4)
    assert_layout(call.output, Layout.of_spec(ref.MESH_1D, spec, values.shape), f"{name}(x)")
    assert_jitted_shard_map(call, name)
    assert_collectives(
        call.hlo, required=[ref.OP_COLLECTIVES[op]], name=f"the compiled {name}", compile_error=call.hlo_error
    )


# t5 — all_to_all re-lays data out


@task("t5")
@points(2)
def test_t5_x_t_values(submission):
    """`X_t` holds the values of X at the same positions: all_to_all moved the blocks, it did not transpose"""
    assert_allclose(submission.name("t5", "X_t"), ref.lab_X(), "X_t")


@task("t5")
@points(2)
def test_t5_x_t_layout(submission):
    """`X_t` is laid out by columns over `data`, P(None, 'data')"""
    assert_layout(submission.name("t5", "X_t"), Layout.of_spec(ref.MESH_1D, (None, "data"), ref.X_SHAPE), "X_t")


@task("t5")
@points(2)
def test_t5_roundtrip(submission):
    """`X_roundtrip` holds the values of X, laid out by rows over `data` again"""
    found = submission.name("t5", "X_roundtrip")
    assert_allclose(found, ref.lab_X(), "X_roundtrip")
    assert_layout(found, Layout.of_spec(ref.MESH_1D, ("data", None), ref.X_SHAPE), "X_roundtrip")


@task("t5")
@points(1)
def test_t5_on_mesh(submission):
    """`all_to_all`, `X_t` and `X_roundtrip` are on `mesh1d`, the 1-D mesh of the 8 devices named 'data'"""
    found = {"all_to_all(X)": submission.call("t5", "all_to_all").output}
    found.update((name, submission.name("t5", name)) for name in ("X_t", "X_roundtrip"))
    for name, fact in found.items():
        assert_on_mesh(fact, ref.MESH_1D, name, "`mesh1d`")


@task("t5")
@points(1)
@hidden
def test_t5_fresh_relayout(submission):
    """on the grader's own input, `all_to_all` returns the same values, by columns over `data`"""
    call = submission.call("t5", "all_to_all")
    (X,) = submission.inputs("t5", "all_to_all")
    assert_allclose(call.output, X, "all_to_all(X)")
    assert_layout(call.output, Layout.of_spec(ref.MESH_1D, (None, "data"), ref.X_SHAPE), "all_to_all(X)")


@task("t5")
@points(1)
def test_t5_jitted_shard_map(submission):
    """`all_to_all` is a jax.shard_map wrapped in jax.jit"""
    assert_jitted_shard_map(submission.call("t5", "all_to_all"), "all_to_all")


@task("t5")
@points(1)
@hidden
def test_t5_all_to_all_collective(submission):
    """the compiled `all_to_all` contains an all-to-all"""
    call = submission.call("t5", "all_to_all")
    assert_collectives(call.hlo, required=["all-to-all"], name="the compiled all_to_all", compile_error=call.hlo_error)


# t6 — a tensor-parallel transformer layer with flax.nnx


def _lab_kernels(submission):
    """The kernels of the notebook's own `tp_layer` (read by the probe: not the grader's inputs)."""
    probe = submission.task("t6").probes.get("lab_layer")
    if probe is not None and probe.error:
        raise CheckFailure(f"the kernels of `tp_layer` could not be read: {probe.error}")
    return _kernels(submission.probe("t6", "lab_layer"))


def _kernels(probe):
    return {name: probe.values[name] for name in ref.KERNEL_NAMES}


def _assert_kernel_layouts(kernels, hidden_dim, owner):
    for name in ref.KERNEL_NAMES:
        shape = ref.kernel_shape(name, hidden_dim)
        spec = ref.KERNEL_SPECS[name]
        block = "attention" if name in ("Wq", "Wk", "Wv", "Wo") else "mlp"
        assert_layout(kernels[name], Layout.of_spec(ref.MESH_2D, spec, shape), f"{owner}.{block}.{name}.kernel")
        assert_on_mesh(kernels[name], ref.MESH_2D, f"{owner}.{block}.{name}.kernel", "`mesh`")


def _assert_layer_output(found, x, kernels, num_heads, name):
    """The output against the reference layer with the same weights; names the 1/sqrt(hidden_dim) mistake.

    The kernels' shapes are the layout checks' to judge: here the attention's must be (D, D), and the MLP's
    any (D, k) and (k, D), so that the math runs on the weights the layer holds."""
    hidden_dim = x.shape[-1]
    width = kernels["W1"].shape[1] if kernels["W1"].kind == "array" and len(kernels["W1"].shape or ()) == 2 else None
    for key, fact in kernels.items():
        expected = {"W1": (hidden_dim, width), "W2": (width, hidden_dim)}.get(key, (hidden_dim, hidden_dim))
        if fact.kind != "array" or fact.shape != expected:
            wanted = {"W1": "(D, k)", "W2": "(k, D) with W1 (D, k)"}.get(key, "(D, D)")
            raise CheckFailure(
                f"`{name}` cannot be checked: the kernel of {key} should be an array of shape {wanted}, D ="
                f" {hidden_dim}, found {fact.describe()}"
            )
    weights = {key: fact.values for key, fact in kernels.items()}
    try:
        assert_allclose(found, ref.tp_layer(x, weights, num_heads), name, **LAYER_TOLERANCE)
    except CheckFailure as failure:
        if is_allclose(found, ref.tp_layer(x, weights, num_heads, scale_dim=hidden_dim), **LAYER_TOLERANCE):
            raise CheckFailure(
                f"{failure} — it is the layer with scores scaled by 1/sqrt(hidden_dim) ="
                f" 1/sqrt({hidden_dim}); scale them by 1/sqrt(head_dim) ="
                f" 1/sqrt({hidden_dim // num_heads})"
            ) from None
        raise


@task("t6")
@points(5)
def test_t6_lab_kernel_layouts(submission):
    """`tp_layer` is TPLayer(256, 8, rngs=nnx.Rngs(0)) built under jax.set_mesh(mesh): its kernels Wq, Wk, Wv, W1 by
    columns over `model`, Wo, W2 by rows, on `mesh`, and those the class draws from nnx.Rngs(0)"""
    _assert_kernel_layouts(_lab_kernels(submission), ref.LAB_LAYER["hidden_dim"], "tp_layer")
    rebuilt = submission.probe("t6", "lab_layer").values.get("rebuilt")
    if rebuilt is None or rebuilt.kind != "value":
        raise CheckFailure("the grader could not build TPLayer(256, 8, rngs=nnx.Rngs(0)) again")
    if rebuilt.value:
        raise CheckFailure(
            "`tp_layer`: expected the layer TPLayer(256, 8, rngs=nnx.Rngs(0)) built under jax.set_mesh(mesh), found"
            f" one that is not: built so again, {rebuilt.value}"
        )


@task("t6")
@points(5)
def test_t6_layer_out(submission):
    """`layer_out` is the layer's output for X_layer, computed from the weights of `tp_layer`"""
    _assert_layer_output(
        submission.name("t6", "layer_out"),
        ref.lab_X_layer(),
        _lab_kernels(submission),
        ref.LAB_LAYER["num_heads"],
        "layer_out",
    )


@task("t6")
@points(5)
@hidden
def test_t6_fresh_kernel_layouts(submission):
    """a TPLayer of the grader's sizes, built under jax.set_mesh(mesh), has its kernels cut over `model`"""
    kernels = _kernels(submission.probe("t6", "fresh_layer"))
    _assert_kernel_layouts(kernels, ref.FRESH_LAYER["hidden_dim"], "TPLayer(...)")


@task("t6")
@points(1)
@hidden
def test_t6_no_biases(submission):
    """the linear layers of a TPLayer have no bias (use_bias=False)"""
    biases = submission.probe("t6", "fresh_layer").values.get("biases")
    if biases is None or biases.kind != "value":
        raise CheckFailure("the grader could not read whether the linear layers of TPLayer have biases")
    if biases.value:
        raise CheckFailure(
            f"TPLayer(...): expected linear layers without bias (nnx.Linear(..., use_bias=False)),"
            f" found a bias in {biases.value}"
        )


@task("t6")
@points(1)
@hidden
def test_t6_module_types(submission):
    """TPLayer is an nnx.Module whose two sub-modules hold nnx.Linear layers"""
    types = submission.probe("t6", "fresh_layer").values.get("types")
    if types is None or types.kind != "value":
        raise CheckFailure("the grader could not read the types of TPLayer's parts")
    if types.value:
        raise CheckFailure(
            "TPLayer(...): expected an nnx.Module with the nnx.Module sub-modules attention and mlp, each linear"
            f" layer an nnx.Linear, found: {types.value}"
        )


@task("t6")
@points(1)
@hidden
def test_t6_uses_rngs(submission):
    """TPLayer draws its kernels from the `rngs` it is given: other rngs, other kernels"""
    same = submission.probe("t6", "fresh_layer").values.get("same_for_other_rngs")
    if same is None or same.kind != "value":
        raise CheckFailure("the grader could not compare TPLayers built from different rngs")
    if same.value:
        raise CheckFailure(
            "TPLayer(...): expected kernels drawn from the `rngs` it is given, found the kernels of"
            f" {same.value} the same for two TPLayers built with different nnx.Rngs"
        )


@task("t6")
@points(5)
@hidden
def test_t6_fresh_values(submission):
    """a TPLayer of the grader's sizes computes the layer (attention scaled by 1/sqrt(head_dim)) on a fresh input"""
    probe = submission.probe("t6", "fresh_layer")
    x = Input(ref.FRESH_LAYER["shape"], key=ref.FRESH_LAYER["key"]).build(submission.seed("t6"))
    _assert_layer_output(probe.values["out"], x, _kernels(probe), ref.FRESH_LAYER["num_heads"], "TPLayer(...)(x)")


@task("t6")
@points(3)
@hidden
def test_t6_all_reduces(submission):
    """the compiled layer sums the partial results of tensor parallelism: an all-reduce after Wo and after W2"""
    hlo = submission.probe("t6", "fresh_layer").values["hlo"]
    if hlo.kind != "value" or not isinstance(hlo.value, str):
        raise CheckFailure("the compiled code of the layer could not be read")
    counts = collectives_in(hlo.value)
    if counts["all-reduce"] < 2:
        raise CheckFailure(
            f"the compiled TPLayer: expected at least 2 all-reduces over `model` (one summing the heads' partial"
            f" products with Wo, one after W2), found {describe_collectives(counts)} — are the kernels partitioned"
            " with nnx.with_partitioning, columns for Wq, Wk, Wv, W1 and rows for Wo, W2?"
        )
