"""Graders of lab 2, tasks 6 to 8: the layer by shard_map, data-parallel training and its timing
(test_lab2_three_ways.py holds tasks 1 to 5).

What each device receives is read from the trace of the student's function, its operands named by the
grader's inputs; training is compared with the grader's own on one device, times with its measurement.
"""

import numpy as np
import pytest

from autograder.checks import (
    Layout,
    assert_allclose,
    assert_blocked,
    assert_faster_verdict,
    assert_jitted,
    assert_layout,
    assert_made_once,
    assert_median,
    assert_no_collectives,
    assert_on_mesh,
    assert_operand_block,
    assert_operand_replicated,
    assert_speedup_claim,
    assert_time_consistent,
    assert_tree_allclose,
    assert_tree_layouts,
    assert_uses,
    assert_warm,
    claimed_times,
)
from autograder.labs.lab2_three_ways import reference as ref

task, points, hidden = pytest.mark.task, pytest.mark.points, pytest.mark.hidden


# t6 — shard_map

_MESH_1D_WORDS = "`mesh_1d`, the 1-D mesh of devices 0 to 7 with one Auto axis named 'x'"


@task("t6")
@points(2)
def test_t6_output_values(submission):
    """`out_man` is the layer's output"""
    assert_allclose(
        submission.name("t6", "out_man"), np.asarray(ref.layer(*ref.layer_data())), "out_man", rtol=1e-5, atol=1e-6
    )


@task("t6")
@points(1)
def test_t6_output_layout(submission):
    """`out_man` has its rows split over the 8 devices of `mesh_1d`, as out_specs=P('x') leaves it"""
    expected = Layout.of_spec(ref.MESH_1D, ("x",), (ref.N_DATA, ref.N_OUT))
    assert_layout(submission.name("t6", "out_man"), expected, "out_man")


@task("t6")
@points(1)
def test_t6_mesh(submission):
    """`layer_man` runs on `mesh_1d`: its outputs lie on the 1-D Auto mesh of the 8 devices with axis 'x'"""
    assert_on_mesh(submission.name("t6", "out_man"), ref.MESH_1D, "out_man", _MESH_1D_WORDS)
    call = submission.call("t6", "layer_man")
    assert_on_mesh(call.output, ref.MESH_1D, "layer_man(x, W, b)", _MESH_1D_WORDS)


@task("t6")
@points(2)
def test_t6_shard_map(submission):
    """`layer_man` is built with jax.shard_map"""
    assert_uses(submission.call("t6", "layer_man"), "shard_map", "layer_man")


@task("t6")
@points(2)
@hidden
def test_t6_in_specs(submission):
    """`layer_man`'s shard_map hands each device its own rows of x and all of W and b: in_specs=(P('x'), P(), P())"""
    call = submission.call("t6", "layer_man")
    n, features, out = ref.FRESH_N_DATA, ref.N_FEATURES, ref.N_OUT
    hint = "in_specs should be (P('x'), P(), P()): the rows of x split over 'x', W and b whole on every device"
    assert_operand_block(call, "layer_man", "x", (n, features), (n // 8, features), hint)
    assert_operand_replicated(call, "layer_man", "W", (features, out), hint)
    assert_operand_replicated(call, "layer_man", "b", (out,), hint)


@task("t6")
@points(1)
def test_t6_jitted(submission):
    """`layer_man` is wrapped in jax.jit"""
    assert_jitted(submission.call("t6", "layer_man"), "layer_man")


@task("t6")
@points(3)
@hidden
def test_t6_fresh_values(submission):
    """`layer_man` computes the layer on the grader's own inputs"""
    call = submission.call("t6", "layer_man")
    assert_allclose(
        call.output,
        np.asarray(ref.layer(*submission.inputs("t6", "layer_man"))),
        "layer_man(x, W, b)",
        rtol=1e-5,
        atol=1e-6,
    )


@task("t6")
@points(2)
@hidden
def test_t6_fresh_layout(submission):
    """`layer_man` returns its output with the rows split over the 8 devices of `mesh_1d`"""
    call = submission.call("t6", "layer_man")
    expected = Layout.of_spec(ref.MESH_1D, ("x",), (ref.FRESH_N_DATA, ref.N_OUT))
    assert_layout(call.output, expected, "layer_man(x, W, b)")


@task("t6")
@points(2)
@hidden
def test_t6_no_communication(submission):
    """the compiled `layer_man` contains no collective: data parallelism needs no communication here"""
    call = submission.call("t6", "layer_man")
    assert_no_collectives(call.hlo, "the compiled layer_man", call.hlo_error)


# t7 — data-parallel training


@task("t7")
@points(1)
def test_t7_mesh(submission):
    """`x_sh` and `y_sh` lie on `mesh_1d`, the 1-D Auto mesh of the 8 devices with axis 'x'"""
    for name in ("x_sh", "y_sh"):
        assert_on_mesh(submission.name("t7", name), ref.MESH_1D, name, _MESH_1D_WORDS)


@task("t7")
@points(3)
def test_t7_data_sharded(submission):
    """`x_sh` and `y_sh` hold the training data with rows split over the 8 devices of `mesh_1d`"""
    x, y, _ = ref.regression_setup()
    for name, value in (("x_sh", x), ("y_sh", y)):
        found = submission.name("t7", name)
        assert_allclose(found, np.asarray(value), name)
        assert_layout(found, Layout.of_spec(ref.MESH_1D, ("x",), value.shape), name)


@task("t7")
@points(2)
def test_t7_parameters_placed(submission):
    """`params_replicated` is `params`, every array replicated on the 8 devices"""
    _, _, params = ref.regression_setup()
    found = submission.name("t7", "params_replicated")
    expected = [np.asarray(leaf) for pair in params for leaf in pair]
    assert_tree_allclose(found, expected, "params_replicated", rtol=0, atol=0)
    assert_tree_layouts(found, lambda shape: Layout.replicated(shape), "params_replicated")


@task("t7")
@points(3)
def test_t7_parameters_replicated(submission):
    """every array of `params_sharded` is replicated on the 8 devices"""
    assert_tree_layouts(
        submission.name("t7", "params_sharded"), lambda shape: Layout.replicated(shape), "params_sharded"
    )


# Right answers (data split by rows over 8, 4 or 2x4 devices in any order, parameters placed at once or one by
# one, committed or not) agree with one-device training to 3.0e-8 (2e-9 beyond rtol=1e-5); a training one
# epoch short or long of `train`'s 50 differs by 2.4e-5, a step 1 % off by 1.2e-5: atol 2e-6 lies ~70x above
# the first and 6x below the last.
T7_RTOL, T7_ATOL = 1e-5, 2e-6


@task("t7")
@points(6)
@hidden
def test_t7_training_result(submission):
    """`params_sharded` equals the grader's training on one device (same math, another layout) up to rounding"""
    assert_tree_allclose(
        submission.name("t7", "params_sharded"), ref.trained_params(), "params_sharded", rtol=T7_RTOL, atol=T7_ATOL
    )


# t8 — timing


@task("t8")
@points(1)
@hidden
def test_t8_unsharded_time(submission, per_grading):
    """`t_unsharded` agrees with the grader's own warm, blocked measurement"""
    claimed = submission.name("t8", "t_unsharded")
    assert_time_consistent(claimed, per_grading(ref.grad_loss_times).single, "t_unsharded")


@task("t8")
@points(1)
@hidden
def test_t8_sharded_time(submission, per_grading):
    """`t_sharded` agrees with the grader's own warm, blocked measurement"""
    claimed = submission.name("t8", "t_sharded")
    assert_time_consistent(claimed, per_grading(ref.grad_loss_times).sharded, "t_sharded")


@task("t8")
@points(5)
@hidden
def test_t8_speedup(submission, per_grading):
    """`speedup` is t_unsharded / t_sharded, from sound times, and agrees with the grader's measured ratio"""
    claimed = submission.name("t8", "speedup")
    t_unsharded, t_sharded = submission.name("t8", "t_unsharded"), submission.name("t8", "t_sharded")
    measured = per_grading(ref.grad_loss_times)
    assert_speedup_claim(
        claimed,
        t_unsharded,
        t_sharded,
        measured.ratio.median,
        "speedup",
        a_name="t_unsharded",
        b_name="t_sharded",
        measured_a=measured.single,
        measured_b=measured.sharded,
    )


@task("t8")
@points(4)
def test_t8_verdict(submission, per_grading):
    """`cpu_faster` says whether sharding made grad_loss faster on this machine, as the grader measures it
    (either answer passes when its measurement cannot tell)"""
    assert_faster_verdict(submission.name("t8", "cpu_faster"), per_grading(ref.grad_loss_times).ratio, "cpu_faster")


# t8's method, read from what its timing code did in the grading kernel (the timing record), whatever the
# machine's speed.
T8_TIMES = ("t_unsharded", "t_sharded")


def _t8_claims(submission) -> dict[str, float]:
    return claimed_times(lambda name: submission.name("t8", name), T8_TIMES)


@task("t8")
@points(1)
@hidden
def test_t8_warm(submission):
    """each time was measured warm: the first call, which compiles, came before the clock started, and the
    jitted function was made once (a `jax.jit(jax.grad(...))` made inside the timed call compiles every time)"""
    record, claims = submission.timing("t8"), _t8_claims(submission)
    assert_warm(record, claims)
    assert_made_once(record, claims)


@task("t8")
@points(1)
@hidden
def test_t8_blocked_inside(submission):
    """each timed call was waited for inside the timed region, before the clock stopped"""
    assert_blocked(submission.timing("t8"), _t8_claims(submission))


@task("t8")
@points(2)
@hidden
def test_t8_median(submission):
    """each time is the median of the timed calls' times, not their mean, their least or one call's"""
    assert_median(submission.timing("t8"), _t8_claims(submission))
