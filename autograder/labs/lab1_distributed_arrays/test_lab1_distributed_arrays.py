"""Graders of lab 1, "distributed arrays and automatic parallelization": one test per gradable fact.

Layouts are compared block by block (which device holds which block), never by the spelling of a spec.
What a compiled program needs is read from code the grader compiles itself, for the layouts recorded
from the student's arrays; functions are run by the kernel recorder on inputs the student has never seen.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from autograder.checks import (
    CheckFailure,
    Layout,
    assert_allclose,
    assert_axis_types,
    assert_collectives,
    assert_jitted,
    assert_layout,
    assert_no_collectives,
    assert_spec_equivalent,
    assert_speedup_claim,
    assert_time_consistent,
    assert_tree_allclose,
    assert_tree_layouts,
    assert_value_type,
    found_bool,
)
from autograder.labs.lab1_distributed_arrays import reference as ref

task, points, hidden = pytest.mark.task, pytest.mark.points, pytest.mark.hidden
SQUARE = (ref.N, ref.N)
# The lab's pictures A–D, as layouts on its (4, 2) mesh; students see only the pictures.
PICTURES = {
    "y_ba": ("A", ("b", "a")),
    "y_a_rep": ("B", ("a", None)),
    "y_cols_b": ("C", (None, "b")),
    "y_rows_ab": ("D", (("a", "b"), None)),
}
TP_SPECS = ((), ()), ((None, "model"), ("model",)), (("model", None), ()), ((), ())
TRAINED_RTOL, TRAINED_ATOL = 1e-3, 1e-5  # another layout changes the trained values by at most 2e-6
LOSS_RTOL = 1e-4  # another layout changes the loss by 2e-7 relative; other initial parameters by 8e-3


def _leaf_label(fact, name, index):
    """`batch_dp[0]`, from the leaf's key path."""
    return f"{name}{fact.paths[index]}" if index < len(fact.paths) and fact.paths[index] else f"{name} leaf {index}"


# t1 — shard x over the mesh


@task("t1")
@points(3)
def test_t1_values(submission):
    """`y` holds the values of x"""
    assert_allclose(submission.name("t1", "y"), ref.array_x(), "y")


@task("t1")
@points(5)
def test_t1_layout(submission):
    """`y` has its rows split over mesh axis 'a' and its columns over 'b'"""
    assert_layout(submission.name("t1", "y"), Layout.of_spec(ref.MESH, ("a", "b"), SQUARE), "y")


# t2 — from pictures to layouts


@task("t2")
@points(4)
@pytest.mark.parametrize("name", list(PICTURES))
def test_t2_layouts(submission, name):
    """each of `y_ba`, `y_a_rep`, `y_cols_b`, `y_rows_ab` holds x, laid out as its picture (A, B, C, D)"""
    picture, spec = PICTURES[name]
    found = submission.name("t2", name)
    assert_allclose(found, ref.array_x(), name)
    try:
        assert_layout(found, Layout.of_spec(ref.MESH, spec, SQUARE), name)
    except CheckFailure as failure:
        raise CheckFailure(
            f"{failure.message} (picture {picture})", failure.expected_picture, failure.found_picture
        ) from None


# t3 — predict, then compute, a sharded matrix product


@task("t3")
@points(2)
def test_t3_operands(submission):
    """`y_lhs` holds x with rows over 'a' (replicated over 'b'), `y_rhs` x with columns over 'b' (replicated over 'a')"""  # noqa: E501 -- a check's title is its docstring's first line
    for name, spec in (("y_lhs", ("a", None)), ("y_rhs", (None, "b"))):
        found = submission.name("t3", name)
        assert_allclose(found, ref.array_x(), name)
        assert_layout(found, Layout.of_spec(ref.MESH, spec, SQUARE), name)


@task("t3")
@points(1)
def test_t3_product_values(submission):
    """`w` is x @ x"""
    assert_allclose(submission.name("t3", "w"), ref.x_squared(), "w", rtol=1e-4, atol=1e-2)


@task("t3")
@points(1)
def test_t3_product_layout(submission):
    """`w` is the product of the sharded operands, laid out as the compiler chose: rows over 'a', columns over 'b'"""
    assert_layout(submission.name("t3", "w"), Layout.of_spec(ref.MESH, ("a", "b"), SQUARE), "w")


@task("t3")
@points(3)
def test_t3_layout_guess(submission):
    """`w_layout_guess` describes the layout the compiler chooses for the product: rows over 'a', columns over 'b'"""
    assert_spec_equivalent(submission.name("t3", "w_layout_guess"), ("a", "b"), ref.MESH, SQUARE, "w_layout_guess")


@task("t3")
@points(3)
def test_t3_no_communication(submission):
    """the product of your `y_lhs` and `y_rhs`, compiled by the grader for their layouts, contains no collective"""
    lhs, rhs = submission.name("t3", "y_lhs"), submission.name("t3", "y_rhs")
    args = (ref.abstract(lhs, "y_lhs"), ref.abstract(rhs, "y_rhs"))
    hlo = ref.compiled_text(jnp.dot, args, "jnp.dot(y_lhs, y_rhs)")
    assert_no_collectives(hlo, "jnp.dot(y_lhs, y_rhs), compiled for your layouts")


# t4 — arrays committed to different devices


@task("t4")
@points(8)
def test_t4_incompatible_devices(submission):
    """`err_msg` is str() of the ValueError JAX raises for x committed to device 0 and a copy on device 1"""
    fact = submission.name("t4", "err_msg")
    assert_value_type(fact, "str", "err_msg")
    expected = ref.incompatible_devices_errors()
    if fact.value in expected:
        return
    headline = expected[0].split(". ")[0] + "."
    found = fact.value[:300]
    if headline not in fact.value:
        raise CheckFailure(
            f"`err_msg`: expected the error JAX raises when adding arrays committed to devices 0 and 1,"
            f" which begins {headline!r}; found {found!r}"
        )
    if fact.value.startswith("ValueError("):
        hint = "that is repr(e): str(e) is the message alone"
    elif not fact.value.startswith(headline):
        hint = "the message has more than str(e) around it (the exception's type name?): bind str(e) alone"
    else:
        hint = "it names other devices or another array: commit x to device 0 and a copy of x to device 1"
    raise CheckFailure(f"`err_msg`: expected str() of the exception, {expected[0][:300]!r}; found {found!r} — {hint}")


# t5 — with_sharding_constraint


@task("t5")
@points(2)
@hidden
def test_t5_values(submission):
    """`f` and `f_replicated` add 1 to the grader's own input"""
    for call_id in ("f", "f_replicated"):
        (given,) = submission.inputs("t5", call_id)
        assert_allclose(submission.call("t5", call_id).output, np.asarray(given) + 1, f"{call_id}(x)")


@task("t5")
@points(2)
@hidden
def test_t5_f_layout(submission):
    """`f` returns its result with rows over 'b' and columns over 'a'"""
    expected = Layout.of_spec(ref.MESH, ("b", "a"), ref.FRESH_SHAPE)
    assert_layout(submission.call("t5", "f").output, expected, "f(x)")


@task("t5")
@points(2)
@hidden
def test_t5_f_replicated_layout(submission):
    """`f_replicated` returns its result fully replicated"""
    assert_layout(submission.call("t5", "f_replicated").output, Layout.replicated(ref.FRESH_SHAPE), "f_replicated(x)")


@task("t5")
@points(2)
def test_t5_jitted(submission):
    """`f` and `f_replicated` are jitted functions: the constraint is a hint to the compiler inside jax.jit"""
    for call_id in ("f", "f_replicated"):
        assert_jitted(submission.call("t5", call_id), call_id)


@task("t5")
@points(1)
@hidden
def test_t5_f_communication(submission):
    """compiled for an input laid out as P('a', 'b'), `f` exchanges blocks with an all-to-all"""
    call = submission.call("t5", "f")
    assert_collectives(call.hlo, required=("all-to-all",), name="the compiled f", compile_error=call.hlo_error)


@task("t5")
@points(1)
@hidden
def test_t5_f_replicated_communication(submission):
    """compiled for an input laid out as P('a', 'b'), `f_replicated` collects all blocks with an all-gather"""
    call = submission.call("t5", "f_replicated")
    assert_collectives(
        call.hlo, required=("all-gather",), name="the compiled f_replicated", compile_error=call.hlo_error
    )


# t6 — data-parallel training


def _check_batch(submission, task_id, name, spec, mesh):
    fact = submission.name(task_id, name)
    if task_id == "t6":  # the text asks for the tuple (inputs, targets)
        assert_value_type(fact, "tuple", name)
    leaves = ref.leaves_of(fact, name, ref.BATCH_SHAPES)
    for index, (leaf, value) in enumerate(zip(leaves, ref.batch_values())):
        label = _leaf_label(fact, name, index)
        assert_allclose(leaf, value, label)
        assert_layout(leaf, Layout.of_spec(mesh, spec, value.shape), label)
        assert_axis_types(leaf, "Auto", label)


@task("t6")
@points(3)
def test_t6_batch_sharded(submission):
    """`batch_dp` is the tuple of the batch's inputs and targets, their rows split 8 ways on a mesh with an Auto axis"""
    _check_batch(submission, "t6", "batch_dp", ("batch",), ref.MESH_DP)


@task("t6")
@points(3)
def test_t6_parameters_replicated(submission):
    """every array of `params_dp` is replicated on the 8 devices"""
    assert_tree_layouts(submission.name("t6", "params_dp"), lambda shape: Layout.replicated(shape), "params_dp")


@task("t6")
@points(3)
@hidden
def test_t6_trained_parameters(submission):
    """`params_dp` equals the grader's 10 steps of training on one device (same math, another layout)"""
    leaves, _ = ref.trained()
    assert_tree_allclose(submission.name("t6", "params_dp"), leaves, "params_dp", rtol=TRAINED_RTOL, atol=TRAINED_ATOL)


@task("t6")
@points(3)
@hidden
def test_t6_loss(submission):
    """`loss_dp` is a Python float, the loss after the grader's own training"""
    _, loss = ref.trained()
    found = submission.name("t6", "loss_dp")
    assert_value_type(found, "float", "loss_dp")
    assert_allclose(found, np.float32(loss), "loss_dp", rtol=LOSS_RTOL, atol=0)


@task("t6")
@points(3)
def test_t6_gradient_all_reduce(submission):
    """the gradient, compiled by the grader for the layouts of `params_dp` and `batch_dp`, sums over devices with an all-reduce"""  # noqa: E501 -- a check's title is its docstring's first line
    params_fact, batch_fact = submission.name("t6", "params_dp"), submission.name("t6", "batch_dp")
    params = [
        ref.abstract(leaf, _leaf_label(params_fact, "params_dp", i))
        for i, leaf in enumerate(ref.leaves_of(params_fact, "params_dp", ref.PARAM_SHAPES))
    ]
    batch = tuple(
        ref.abstract(leaf, _leaf_label(batch_fact, "batch_dp", i))
        for i, leaf in enumerate(ref.leaves_of(batch_fact, "batch_dp", ref.BATCH_SHAPES))
    )
    params = [(params[i], params[i + 1]) for i in range(0, len(params), 2)]
    hlo = ref.compiled_text(jax.grad(ref.loss), (params, batch), "the gradient of the loss")
    assert_collectives(hlo, required=("all-reduce",), name="the gradient compiled for params_dp and batch_dp")


@task("t6")
@points(1)
def test_t6_initial_values_left_alone(submission):
    """`params` and `batch` still hold the lab's initial parameters and batch after task 6: task 7 starts from them"""
    for bound in ("params_dp", "batch_dp"):  # the task was done: leaving the notebook as it was earns nothing
        submission.name("t6", bound)
    params, batch = ref.model_setup()
    for name, expected in (("params", params), ("batch", batch)):
        assert_tree_allclose(submission.name("t6", name), [np.asarray(a) for a in jax.tree.leaves(expected)], name)


# t7 — data + tensor parallel training


@task("t7")
@points(3)
def test_t7_batch_layout(submission):
    """`batch_tp` holds the batch with its rows split over 'batch' (4 ways) and replicated over 'model', on Auto axes"""
    _check_batch(submission, "t7", "batch_tp", ("batch", None), ref.MESH_TP)


def _tp_layouts() -> list[Layout]:
    return [
        Layout.of_spec(ref.MESH_TP, spec, shape)
        for spec, shape in zip((s for pair in TP_SPECS for s in pair), ref.PARAM_SHAPES)
    ]


@task("t7")
@points(3)
def test_t7_placed_layouts(submission):
    """`params_placed`: `W2` has its columns over 'model', `b2` is over 'model', `W3` its rows over 'model', the rest replicated"""  # noqa: E501 -- a check's title is its docstring's first line
    assert_tree_layouts(submission.name("t7", "params_placed"), _tp_layouts(), "params_placed")


@task("t7")
@points(2)
def test_t7_parameter_layouts(submission):
    """after training, `params_tp` keeps the placed layouts: `W2` by columns, `b2` and `W3` by rows over 'model', the rest replicated"""  # noqa: E501 -- a check's title is its docstring's first line
    assert_tree_layouts(submission.name("t7", "params_tp"), _tp_layouts(), "params_tp")


@task("t7")
@points(4)
@hidden
def test_t7_trained_parameters(submission):
    """`params_tp` equals the grader's 10 steps of training on one device from the same initial parameters"""
    leaves, _ = ref.trained()
    assert_tree_allclose(submission.name("t7", "params_tp"), leaves, "params_tp", rtol=TRAINED_RTOL, atol=TRAINED_ATOL)


@task("t7")
@points(4)
@hidden
def test_t7_loss(submission):
    """`loss_tp` is a Python float equal to the grader's loss, as `loss_dp` is (same math, another layout)"""
    _, loss = ref.trained()
    found = submission.name("t7", "loss_tp")
    assert_value_type(found, "float", "loss_tp")
    assert_allclose(found, np.float32(loss), "loss_tp", rtol=LOSS_RTOL, atol=0)


# t8 — timing the gradient


@task("t8")
@points(2)
@hidden
def test_t8_single_time(submission, per_grading):
    """`t_single` agrees with the grader's own warm, blocked measurement on one device"""
    t_single = submission.name("t8", "t_single")
    single, _ = per_grading(ref.gradient_times)
    assert_time_consistent(t_single, single, "t_single")


@task("t8")
@points(2)
@hidden
def test_t8_sharded_time(submission, per_grading):
    """`t_sharded` agrees with the grader's own warm, blocked measurement of the data-parallel layout"""
    t_sharded = submission.name("t8", "t_sharded")
    _, sharded = per_grading(ref.gradient_times)
    assert_time_consistent(t_sharded, sharded, "t_sharded")


@task("t8")
@points(1)
def test_t8_single_device_copies(submission):
    """`params_single` and `batch_single` hold every array whole on jax.devices()[0], the device the text names"""
    for name, shapes in (("params_single", ref.PARAM_SHAPES), ("batch_single", ref.BATCH_SHAPES)):
        fact = submission.name("t8", name)
        for index, (leaf, shape) in enumerate(zip(ref.leaves_of(fact, name, shapes), shapes)):
            assert_layout(leaf, Layout.single_device(0, shape), _leaf_label(fact, name, index))


@task("t8")
@points(3)
@hidden
def test_t8_speedup(submission, per_grading):
    """`speedup` is t_single / t_sharded, from sound times, and agrees with the grader's measured ratio"""
    t_single, t_sharded = submission.name("t8", "t_single"), submission.name("t8", "t_sharded")
    single, sharded = per_grading(ref.gradient_times)
    assert_speedup_claim(
        submission.name("t8", "speedup"),
        t_single,
        t_sharded,
        single.median / sharded.median,
        "speedup",
        a_name="t_single",
        b_name="t_sharded",
        measured_a=single,
        measured_b=sharded,
    )


# t9 — does the random number generator communicate?


def _assert_reading(submission, name, partitionable):
    expected = ref.rng_communicates(partitionable)
    found = found_bool(submission.name("t9", name), name)
    if found != expected:
        flag = "on" if partitionable else "off"
        raise CheckFailure(
            f"`{name}`: expected {expected}, found {found}: with jax_threefry_partitionable {flag},"
            f" the compiled f_rng {'contains' if expected else 'does not contain'} a collective-permute"
        )


@task("t9")
@points(3)
@hidden
def test_t9_stable(submission):
    """`communicating_stable` says what the compiled f_rng holds with jax_threefry_partitionable off"""
    _assert_reading(submission, "communicating_stable", partitionable=False)


@task("t9")
@points(3)
@hidden
def test_t9_partitionable(submission):
    """`communicating_partitionable` says what the compiled f_rng holds with jax_threefry_partitionable on"""
    _assert_reading(submission, "communicating_partitionable", partitionable=True)


@task("t9")
@points(2)
def test_t9_flag_set_back(submission):
    """`jax_threefry_partitionable` is set back to True after the task, as the cells below assume"""
    for name in ("communicating_stable", "communicating_partitionable"):  # the task was done: its flag was changed
        if submission.name("t9", name).is_missing:
            raise CheckFailure(f"`{name}` is not defined after this task: the task was not done")
    flag = submission.probe("t9", "flag").values["jax_threefry_partitionable"]
    if flag.kind != "value" or flag.value is not True:
        raise CheckFailure(
            f"`jax_threefry_partitionable`: expected True after this task (the default, which the cells below"
            f" assume), found {flag.describe()} — set it back with jax.config.update(..., True), in a finally:"
            " so that it is set back even if something fails"
        )
