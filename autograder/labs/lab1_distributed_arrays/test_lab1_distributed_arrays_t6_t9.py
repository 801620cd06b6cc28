"""Graders of lab 1, tasks 6 to 9: data- and tensor-parallel training, timing the gradient, and whether
the random number generator communicates (test_lab1_distributed_arrays.py holds tasks 1 to 5).

Trained parameters are compared with the grader's own training on one device; what the gradient needs
to communicate is read from code the grader compiles itself, for the layouts of the student's arrays.
"""

import jax
import numpy as np
import pytest

from autograder.checks import (
    CheckFailure,
    Layout,
    assert_allclose,
    assert_blocked,
    assert_collectives,
    assert_layout,
    assert_median,
    assert_speedup_claim,
    assert_time_consistent,
    assert_tree_allclose,
    assert_tree_layouts,
    assert_value_type,
    assert_warm,
    claimed_times,
    found_bool,
)
from autograder.labs.lab1_distributed_arrays import reference as ref

task, points, hidden = pytest.mark.task, pytest.mark.points, pytest.mark.hidden
TP_SPECS = ((), ()), ((None, "model"), ("model",)), (("model", None), ()), ((), ())
# Measured on the lab's 10 steps: right answers in other styles (data-parallel, tensor-parallel, on another
# device order, jax.tree.map updates, the whole loop under one jax.jit with lax.fori_loop) differ from the
# grader's one-device training by at most 3e-8 in a parameter (2.6e-5 of its magnitude + 1e-6) and 9e-8 in
# the loss, relative; one step more or fewer moves a parameter by 1.2e-4 and the loss by 1.3e-3, a step size
# of 1.1e-3 by 6e-4. The tolerances keep 30× over the first and 100× under the second.
TRAINED_RTOL, TRAINED_ATOL = 1e-5, 1e-6
LOSS_RTOL = 1e-5
# The lab's `params`: a list of (W, b) tuples, as `train` returns it.
PARAM_PAIRS = "PyTreeDef([(*, *), (*, *), (*, *), (*, *)])"


def _leaf_label(fact, name, index):
    """`batch_dp[0]`, from the leaf's key path."""
    return f"{name}{fact.paths[index]}" if index < len(fact.paths) and fact.paths[index] else f"{name} leaf {index}"


def _assert_pairs(fact, name):
    """A list of the 4 layers' (W, b) tuples, as `params` is."""
    if fact.is_missing:
        raise CheckFailure(f"`{name}` is not defined after this task")
    if fact.kind != "tree" or fact.type != "list" or fact.treedef != PARAM_PAIRS:
        shape = f" structured as {fact.treedef.removeprefix('PyTreeDef')}" if fact.kind == "tree" else ""
        raise CheckFailure(
            f"`{name}`: expected a list of 4 (W, b) pairs, [(W1, b1), ..., (W4, b4)] as `params` is, found"
            f" {fact.describe()}{shape}"
        )


# t6 — data-parallel training


def _batch_leaves(submission, task_id, name):
    fact = submission.name(task_id, name)
    return fact, ref.leaves_of(fact, name, ref.BATCH_SHAPES)


def _assert_mesh(submission, task_id, name, expected, wanted):
    """The arrays of the batch lie on the mesh the text asks for, in any device order (the text fixes none)."""
    fact, leaves = _batch_leaves(submission, task_id, name)
    for index, leaf in enumerate(leaves):
        label = _leaf_label(fact, name, index)
        found = ref.recorded_mesh(leaf, label)
        differences = ref.mesh_differences(found, expected, device_order=False)
        if differences:
            raise CheckFailure(
                f"`{label}`: expected it on {wanted}; found it on {ref.describe_mesh(found)}: {'; '.join(differences)}"
            )


def _check_batch(submission, task_id, name, spec, mesh):
    """The batch's values, each split as ``spec`` on ``mesh``'s shape and names over the student's own device
    order (the text fixes none; which mesh it is, is the mesh check's)."""
    fact, leaves = _batch_leaves(submission, task_id, name)
    if task_id == "t6":  # the text asks for the tuple (inputs, targets)
        assert_value_type(fact, "tuple", name)
    for index, (leaf, value) in enumerate(zip(leaves, ref.batch_values())):
        label = _leaf_label(fact, name, index)
        assert_allclose(leaf, value, label)
        assert_layout(leaf, Layout.of_spec(ref.in_device_order_of(leaf, mesh), spec, value.shape), label)


@task("t6")
@points(2)
def test_t6_mesh(submission):
    """`batch_dp` lies on a 1-D mesh of the 8 devices with one axis, named 'batch', of type Auto"""
    _assert_mesh(submission, "t6", "batch_dp", ref.MESH_DP, "a 1-D mesh of the 8 devices with one Auto axis 'batch'")


@task("t6")
@points(2)
def test_t6_batch_sharded(submission):
    """`batch_dp` is the tuple of the batch's inputs and targets, their rows split 8 ways over the mesh's axis"""
    _check_batch(submission, "t6", "batch_dp", ("batch",), ref.MESH_DP)


@task("t6")
@points(2)
def test_t6_parameters_replicated(submission):
    """every array of `params_dp` is replicated on the 8 devices, on the mesh `batch_dp` lies on"""
    fact = submission.name("t6", "params_dp")
    assert_tree_layouts(fact, lambda shape: Layout.replicated(shape), "params_dp")
    batch = submission.name("t6", "batch_dp")
    first = batch.leaves[0] if batch.kind == "tree" and batch.leaves else None
    if first is None or first.kind != "array" or first.sharding is None or first.sharding.mesh is None:
        return  # no mesh to compare with: the batch's own checks say why
    for index, leaf in enumerate(fact.leaves):
        label = _leaf_label(fact, "params_dp", index)
        found = ref.recorded_mesh(leaf, label)
        if not ref.same_mesh(found, first.sharding.mesh):
            raise CheckFailure(
                f"`{label}`: expected it replicated on the mesh `batch_dp` lies on,"
                f" {ref.describe_mesh(first.sharding.mesh)}; found it on {ref.describe_mesh(found)} — place the"
                " initial params on that mesh: NamedSharding(that mesh, P())"
            )


@task("t6")
@points(1)
def test_t6_parameter_pairs(submission):
    """`params_dp` is a list of (W, b) pairs, as `params` is"""
    _assert_pairs(submission.name("t6", "params_dp"), "params_dp")


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
@points(2)
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
@points(2)
def test_t7_mesh(submission):
    """`batch_tp` lies on a 4×2 mesh of the 8 devices with Auto axes ('batch', 'model')"""
    wanted = "a 4×2 mesh of the 8 devices with Auto axes ('batch', 'model')"
    _assert_mesh(submission, "t7", "batch_tp", ref.MESH_TP, wanted)


@task("t7")
@points(2)
def test_t7_batch_layout(submission):
    """`batch_tp` holds the batch with its rows split over 'batch' (4 ways) and replicated over 'model'"""
    _check_batch(submission, "t7", "batch_tp", ("batch", None), ref.MESH_TP)


def _tp_layouts(submission) -> list[Layout]:
    """The layouts the text asks for, on the device order of the student's mesh (that of `batch_tp`)."""
    batch = submission.name("t7", "batch_tp")
    first = batch.leaves[0] if batch.kind == "tree" and batch.leaves else None
    mesh = ref.in_device_order_of(first, ref.MESH_TP)
    return [
        Layout.of_spec(mesh, spec, shape)
        for spec, shape in zip((s for pair in TP_SPECS for s in pair), ref.PARAM_SHAPES)
    ]


@task("t7")
@points(3)
def test_t7_placed_layouts(submission):
    """`params_placed`: `W2` has its columns over 'model', `b2` is over 'model', `W3` its rows over 'model', the rest replicated"""  # noqa: E501 -- a check's title is its docstring's first line
    assert_tree_layouts(submission.name("t7", "params_placed"), _tp_layouts(submission), "params_placed")


@task("t7")
@points(2)
def test_t7_parameter_layouts(submission):
    """after training, `params_tp` keeps the placed layouts: `W2` by columns, `b2` and `W3` by rows over 'model', the rest replicated"""  # noqa: E501 -- a check's title is its docstring's first line
    assert_tree_layouts(submission.name("t7", "params_tp"), _tp_layouts(submission), "params_tp")


@task("t7")
@points(1)
def test_t7_parameter_pairs(submission):
    """`params_placed` and `params_tp` are lists of (W, b) pairs, as `params` is"""
    for name in ("params_placed", "params_tp"):
        _assert_pairs(submission.name("t7", name), name)


@task("t7")
@points(3)
@hidden
def test_t7_trained_parameters(submission):
    """`params_tp` equals the grader's 10 steps of training on one device from the same initial parameters"""
    leaves, _ = ref.trained()
    assert_tree_allclose(submission.name("t7", "params_tp"), leaves, "params_tp", rtol=TRAINED_RTOL, atol=TRAINED_ATOL)


@task("t7")
@points(3)
@hidden
def test_t7_loss(submission):
    """`loss_tp` is a Python float equal to the grader's loss, as `loss_dp` is (same math, another layout)"""
    _, loss = ref.trained()
    found = submission.name("t7", "loss_tp")
    assert_value_type(found, "float", "loss_tp")
    assert_allclose(found, np.float32(loss), "loss_tp", rtol=LOSS_RTOL, atol=0)


# t8 — timing the gradient


@task("t8")
@points(1)
@hidden
def test_t8_single_time(submission, per_grading):
    """`t_single` agrees with the grader's own warm, blocked measurement on one device"""
    t_single = submission.name("t8", "t_single")
    single, _ = per_grading(ref.gradient_times)
    assert_time_consistent(t_single, single, "t_single")


@task("t8")
@points(1)
@hidden
def test_t8_sharded_time(submission, per_grading):
    """`t_sharded` agrees with the grader's own warm, blocked measurement of the data-parallel layout"""
    t_sharded = submission.name("t8", "t_sharded")
    _, sharded = per_grading(ref.gradient_times)
    assert_time_consistent(t_sharded, sharded, "t_sharded")


@task("t8")
@points(1)
def test_t8_single_device_copies(submission):
    """`params_single` and `batch_single` hold every array whole on jax.devices()[0], the device the text names,
    copied there (committed to it), not left there by default"""
    for name, shapes in (("params_single", ref.PARAM_SHAPES), ("batch_single", ref.BATCH_SHAPES)):
        fact = submission.name("t8", name)
        for index, (leaf, shape) in enumerate(zip(ref.leaves_of(fact, name, shapes), shapes)):
            label = _leaf_label(fact, name, index)
            assert_layout(leaf, Layout.single_device(0, shape), label)
            if leaf.committed is False:
                raise CheckFailure(
                    f"{label}: expected a copy committed to jax.devices()[0] (jax.device_put), found an array JAX "
                    "left on its default device uncommitted (jnp.asarray of host data): a computation moves it to "
                    "wherever its other inputs are, so it does not pin the call to one device"
                )


@task("t8")
@points(1)
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


# t8's method, read from what its timing code did in the grading kernel (the timing record), whatever the
# machine's speed.
T8_TIMES = ("t_single", "t_sharded")


def _t8_claims(submission) -> dict[str, float]:
    return claimed_times(lambda name: submission.name("t8", name), T8_TIMES)


@task("t8")
@points(1)
@hidden
def test_t8_called_once_before_timing(submission):
    """each time was measured after a first call that compiled, outside the clock reads it comes from"""
    assert_warm(submission.timing("t8"), _t8_claims(submission))


@task("t8")
@points(1)
@hidden
def test_t8_waited_inside(submission):
    """each timed call was waited for inside the timed region, before the clock stopped"""
    assert_blocked(submission.timing("t8"), _t8_claims(submission))


@task("t8")
@points(2)
@hidden
def test_t8_median(submission):
    """each time is the median of several timed calls' times, not their mean, their least or one call's"""
    assert_median(submission.timing("t8"), _t8_claims(submission))


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
