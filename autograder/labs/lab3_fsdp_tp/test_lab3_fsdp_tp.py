"""Graders of lab 3, "FSDP and tensor parallelism": one test per gradable fact, worth its points, tasks
1 to 3 here, 4 and 5 in test_lab3_fsdp_tp_t4_t5.py, 6 in test_lab3_fsdp_tp_t6.py.

The public checks look at what the lab's own cells computed with the student's functions; the hidden
ones call those functions on inputs the student has never seen (values, layout, compiled collectives),
re-measure the benchmarked collectives, and build the student's TPLayer with the grader's own sizes.
"""

import numpy as np
import pytest

from autograder.checks import (
    CheckFailure,
    Layout,
    assert_allclose,
    assert_body_receives_blocks,
    assert_collectives,
    assert_jit_given_layouts,
    assert_jitted_shard_map,
    assert_layout,
    assert_on_mesh,
    assert_shard_map_collectives,
    assert_uses,
)
from autograder.labs.lab3_fsdp_tp import reference as ref

task, points, hidden = pytest.mark.task, pytest.mark.points, pytest.mark.hidden
MLP_TOLERANCE = {"rtol": 1e-4, "atol": 1e-3}


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
        ("x", (ref.BATCH, ref.HIDDEN), (ref.BATCH // 2, ref.HIDDEN)),
        ("A", (ref.HIDDEN, ref.HIDDEN), (ref.HIDDEN // 2, ref.HIDDEN)),
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
        tuple(zip(("x", "W1", "W2"), shapes, blocks)),
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
            tuple(zip(("x", "W1", "W2"), shapes, blocks)),
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
