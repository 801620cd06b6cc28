"""Graders of lab 4, communication inside shard_map: values on the grader's own inputs on every device,
layouts, jitted functions, which collectives each shard_map body writes and how (read from the trace, so
XLA's own collectives do not count: a ppermute's pairs and steps, an operand never held whole), and a
timing claim judged by the grader's own measurement. One check per requirement of a task's text."""

import numpy as np
import pytest

from autograder.checks import (
    CheckFailure,
    Layout,
    assert_allclose,
    assert_blocked,
    assert_body_never_holds_whole,
    assert_body_receives_blocks,
    assert_calls,
    assert_faster_verdict,
    assert_fully_replicated,
    assert_jitted,
    assert_layout,
    assert_ppermute_ring,
    assert_shard_map_collectives,
    assert_speedup_claim,
    assert_time_consistent,
    assert_timed_on,
    assert_warm,
    claimed_times,
    found_tuple,
)
from autograder.labs.lab4_collectives import reference as ref

task, points, hidden = pytest.mark.task, pytest.mark.points, pytest.mark.hidden
# t5's text names no type for its times and verdict: a numpy or 0-d JAX number, numpy's bool, pass too.
NUMBER_TYPES = ("float", "int", "numpy.float32", "numpy.float16", "jax.Array", "numpy.ndarray")
# t5's speedup against the grader's ratio (about 0.25): the two measurements of a ratio this far from 1 may
# differ by up to 3× on a loaded machine, and an inverted one (about 4) is still 16× away.
SPEEDUP_FACTOR = 3.0


# t1 — a ring all-gather built from ppermute


@task("t1")
@points(5)
def test_t1_gathered(submission):
    """`gathered` is the whole of `v`"""
    assert_allclose(submission.name("t1", "gathered"), ref.lab_v(), "gathered")


@task("t1")
@points(7)
@hidden
def test_t1_fresh_values_on_every_device(submission):
    """`ring_gather` gives every device the whole of the grader's own input, in order"""
    call = submission.call("t1", "ring_gather")
    (v,) = submission.inputs("t1", "ring_gather")
    assert_allclose(call.output, np.asarray(v), "ring_gather(v)")  # each device's copy, not device 0's alone
    assert_fully_replicated(call.output, "ring_gather(v)")


@task("t1")
@points(3)
def test_t1_jitted(submission):
    """`ring_gather` is jitted"""
    assert_jitted(submission.call("t1", "ring_gather"), "ring_gather")


@task("t1")
@points(1)
def test_t1_in_specs(submission):
    """`ring_gather`'s shard_map gives each device its own block of v (in_specs=P('x')), not the whole of it"""
    v = ("v", (ref.FRESH_N,), (ref.FRESH_N // 8,))
    assert_body_receives_blocks(submission.call("t1", "ring_gather"), "ring_gather", (v,), "in_specs=P('x')")


@task("t1")
@points(5)
def test_t1_ring_of_ppermutes(submission):
    """`ring_gather`'s shard_map body moves blocks with jax.lax.ppermute, not jax.lax.all_gather"""
    assert_shard_map_collectives(
        submission.call("t1", "ring_gather"), "ring_gather", uses=["ppermute"], avoids=["all_gather"], axis="x"
    )


@task("t1")
@points(4)
def test_t1_seven_steps_around_the_ring(submission):
    """each ppermute passes blocks one device along the ring (`RING`, or the other way round), 7 steps in all"""
    assert_ppermute_ring(submission.call("t1", "ring_gather"), "ring_gather", axis="x", axis_size=8, steps=7)


# t2 — psum and psum_scatter


def _row_sum(submission, call_id):
    (rows,) = submission.inputs("t2", call_id)
    return np.asarray(rows).sum(axis=0)


@task("t2")
@points(7)
@hidden
def test_t2_everywhere_values(submission):
    """`summed_everywhere` adds the grader's rows, and every device holds the whole sum"""
    call = submission.call("t2", "summed_everywhere")
    assert_allclose(call.output, _row_sum(submission, "summed_everywhere"), "summed_everywhere(rows)", rtol=1e-4)
    assert_fully_replicated(call.output, "summed_everywhere(rows)")


@task("t2")
@points(7)
@hidden
def test_t2_scattered_values(submission):
    """`summed_scattered` adds the grader's rows, each device holding its slice of the sum"""
    call = submission.call("t2", "summed_scattered")
    assert_allclose(call.output, _row_sum(submission, "summed_scattered"), "summed_scattered(rows)", rtol=1e-4)
    assert_layout(call.output, Layout.of_spec(ref.MESH, ("x",), (ref.FRESH_ROWS[1],)), "summed_scattered(rows)")


@task("t2")
@points(3)
@pytest.mark.parametrize("name", ["summed_everywhere", "summed_scattered"])
def test_t2_jitted(submission, name):
    """`summed_everywhere` and `summed_scattered` are jitted"""
    assert_jitted(submission.call("t2", name), name)


@task("t2")
@points(1)
@pytest.mark.parametrize("name", ["summed_everywhere", "summed_scattered"])
def test_t2_in_specs(submission, name):
    """the shard_maps of `summed_everywhere` and `summed_scattered` give each device one row of `rows`: (1, n)"""
    rows = ("rows", ref.FRESH_ROWS, (1, ref.FRESH_ROWS[1]))
    assert_body_receives_blocks(submission.call("t2", name), name, (rows,), "in_specs=P('x', None)")


@task("t2")
@points(4)
def test_t2_everywhere_psum(submission):
    """`summed_everywhere`'s shard_map body reduces with jax.lax.psum"""
    assert_shard_map_collectives(
        submission.call("t2", "summed_everywhere"), "summed_everywhere", uses=["psum"], axis="x"
    )


@task("t2")
@points(4)
def test_t2_scattered_psum_scatter(submission):
    """`summed_scattered`'s shard_map body reduces with jax.lax.psum_scatter, never a whole psum"""
    assert_shard_map_collectives(
        submission.call("t2", "summed_scattered"), "summed_scattered", uses=["psum_scatter"], avoids=["psum"], axis="x"
    )


# t3 — what each leaves on each device


@task("t3")
@points(5)
@pytest.mark.parametrize("name, expected", [("psum_block_shape", (16,)), ("scatter_block_shape", (2,))])
def test_t3_block_shapes(submission, name, expected):
    """the block one device holds after psum (the whole sum) and after psum_scatter (an eighth of it), as a tuple"""
    found = found_tuple(submission.name("t3", name), name)
    if found != expected:
        raise CheckFailure(f"`{name}`: expected {expected}, found {found}")


# t4 — a collective matmul: ppermute beside the compute, never a gathered rhs


@task("t4")
@points(7)
@hidden
def test_t4_fresh_product(submission):
    """`collective_matmul` gives lhs @ rhs on the grader's own inputs, split by rows"""
    call = submission.call("t4", "collective_matmul")
    lhs, rhs = submission.inputs("t4", "collective_matmul")
    expected = np.asarray(lhs, np.float64) @ np.asarray(rhs, np.float64)
    assert_allclose(call.output, expected, "collective_matmul(lhs, rhs)", rtol=1e-4, atol=1e-3)
    assert_layout(call.output, Layout.of_spec(ref.MESH, ("x", None), expected.shape), "collective_matmul(lhs, rhs)")


@task("t4")
@points(2)
def test_t4_jitted(submission):
    """`collective_matmul` is jitted"""
    assert_jitted(submission.call("t4", "collective_matmul"), "collective_matmul")


@task("t4")
@points(1)
def test_t4_in_specs(submission):
    """`collective_matmul`'s shard_map gives each device its own rows of lhs and of rhs, as P('x', None) cuts them"""
    operands = (
        ("lhs", ref.FRESH_LHS, (ref.FRESH_LHS[0] // 8, ref.FRESH_LHS[1])),
        ("rhs", ref.FRESH_RHS, (ref.FRESH_RHS[0] // 8, ref.FRESH_RHS[1])),
    )
    assert_body_receives_blocks(
        submission.call("t4", "collective_matmul"),
        "collective_matmul",
        operands,
        "in_specs=(P('x', None), P('x', None))",
    )


@task("t4")
@points(4)
def test_t4_ppermute_not_all_gather(submission):
    """`collective_matmul`'s shard_map body passes rhs blocks with jax.lax.ppermute, not jax.lax.all_gather"""
    assert_shard_map_collectives(
        submission.call("t4", "collective_matmul"),
        "collective_matmul",
        uses=["ppermute"],
        avoids=["all_gather"],
        axis="x",
    )


@task("t4")
@points(3)
def test_t4_one_device_along_the_ring(submission):
    """each ppermute passes the rhs blocks one device along the ring (either way round)"""
    assert_ppermute_ring(submission.call("t4", "collective_matmul"), "collective_matmul", axis="x", axis_size=8)


@task("t4")
@points(3)
def test_t4_rhs_never_whole(submission):
    """no device ever holds rhs whole: not gathered, by all_gather or by stacking the blocks ppermute brings"""
    assert_body_never_holds_whole(submission.call("t4", "collective_matmul"), "collective_matmul", "rhs", ref.FRESH_RHS)


# t5 — is the collective matmul faster here? Times and a verdict, judged by the grader's own measurement


@task("t5")
@points(2)
@hidden
@pytest.mark.parametrize("name, measured", [("t_collective", "collective"), ("t_gathered", "gathered")])
def test_t5_time(submission, per_grading, name, measured):
    """`t_collective` and `t_gathered` each agree with the grader's own warm, blocked measurement of that product"""
    assert_time_consistent(
        submission.name("t5", name), getattr(per_grading(ref.matmul_times), measured), name, accept=NUMBER_TYPES
    )


@task("t5")
@points(4)
@hidden
def test_t5_speedup(submission, per_grading):
    """`speedup` is t_gathered / t_collective, from sound times, and agrees with the grader's measured ratio"""
    claimed = submission.name("t5", "speedup")
    t_gathered, t_collective = submission.name("t5", "t_gathered"), submission.name("t5", "t_collective")
    measured = per_grading(ref.matmul_times)
    assert_speedup_claim(
        claimed,
        t_gathered,
        t_collective,
        measured.ratio.median,
        "speedup",
        a_name="t_gathered",
        b_name="t_collective",
        factor=SPEEDUP_FACTOR,
        measured_a=measured.gathered,
        measured_b=measured.collective,
        accept=NUMBER_TYPES,
    )


@task("t5")
@points(3)
def test_t5_verdict(submission, per_grading):
    """`collective_faster` says whether the collective matmul beat gathering rhs first on this machine, as
    the grader measures it (it is clearly slower here; either answer would pass a measurement that cannot tell)"""
    assert_faster_verdict(
        submission.name("t5", "collective_faster"),
        per_grading(ref.matmul_times).ratio,
        "collective_faster",
        ratio="gathered ÷ collective",
        candidate="the collective matmul",
        accept=("bool", "numpy.bool"),
    )


# t5's method, read from what its timing code did in the grading kernel (the timing record), whatever the
# machine's speed: the products of big_lhs (128×256) and big_rhs (256×64) are 128×64 on the 8 devices.
T5_TIMES = ("t_collective", "t_gathered")
T5_PRODUCT = (128, 64)
T5_CALLS = 200


def _t5_claims(submission) -> dict[str, float]:
    return claimed_times(lambda name: submission.name("t5", name), T5_TIMES, NUMBER_TYPES)


@task("t5")
@points(1)
@hidden
def test_t5_warm(submission):
    """each time was measured after a first call that compiled, outside the clock reads it comes from"""
    assert_warm(submission.timing("t5"), _t5_claims(submission))


@task("t5")
@points(1)
@hidden
def test_t5_blocked(submission):
    """each timed call was waited for before the clock stopped"""
    assert_blocked(submission.timing("t5"), _t5_claims(submission))


@task("t5")
@points(1)
@hidden
def test_t5_on_the_big_operands(submission):
    """the timed calls were on `big_lhs` and `big_rhs`: their results are 128×64"""
    assert_timed_on(
        submission.timing("t5"), _t5_claims(submission), [T5_PRODUCT], "`collective_matmul(big_lhs, big_rhs)`"
    )


@task("t5")
@points(1)
@hidden
def test_t5_at_least_200_calls(submission):
    """each time comes from at least 200 calls"""
    assert_calls(submission.timing("t5"), _t5_claims(submission), T5_CALLS)
