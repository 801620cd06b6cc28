"""Graders of lab 3, tasks 4 and 5: the cost of the collectives (the functions of the table, their times
and how they were measured) and all_to_all's re-layout (test_lab3_fsdp_tp.py holds tasks 1 to 3).

Times are judged against the grader's own measurement of the same jitted ops, and the method from what
the timing code did in the grading kernel.
"""

import re

import pytest

from autograder.checks import (
    CheckFailure,
    Layout,
    assert_allclose,
    assert_blocked,
    assert_collectives,
    assert_jitted_shard_map,
    assert_layout,
    assert_median,
    assert_on_mesh,
    assert_time_consistent,
    assert_timed_on,
    assert_warm,
    found_number,
)
from autograder.labs.lab3_fsdp_tp import reference as ref

task, points, hidden = pytest.mark.task, pytest.mark.points, pytest.mark.hidden
# t4's text asks for "the median time in seconds", naming no type: a numpy or 0-d JAX median is one too.
NUMBER_TYPES = ("float", "int", "numpy.float32", "numpy.float16", "jax.Array", "numpy.ndarray")
OPS = ("all_gather", "psum", "psum_scatter", "all_to_all")


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
