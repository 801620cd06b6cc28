"""Graders of lab 1, "distributed arrays and automatic parallelization": one test per gradable fact,
tasks 1 to 5 here, 6 to 9 in test_lab1_distributed_arrays_t6_t9.py.

Layouts are compared block by block (which device holds which block), never by the spelling of a spec.
What a compiled program needs is read from code the grader compiles itself, for the layouts recorded
from the student's arrays; functions are run by the kernel recorder on inputs the student has never seen.
"""

import jax.numpy as jnp
import numpy as np
import pytest

from autograder.checks import (
    CheckFailure,
    Layout,
    assert_allclose,
    assert_collectives,
    assert_jitted,
    assert_layout,
    assert_no_collectives,
    assert_spec_equivalent,
    assert_value_type,
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


def _assert_on_lab_mesh(fact, name):
    """The array lies on the lab's `mesh` itself: its 4×2 grid of devices in the lab's order, axes 'a', 'b',
    Auto (a mesh rebuilt alike is that mesh to JAX; one with other names or another order is not)."""
    found = ref.recorded_mesh(fact, name)
    differences = ref.mesh_differences(found, ref.MESH, device_order=True)
    if differences:
        raise CheckFailure(
            f"`{name}`: expected it on `mesh`, the lab's 4×2 mesh over devices [[0, 1], [2, 3], [4, 5], [6, 7]]"
            f" with Auto axes ('a', 'b'); found it on {ref.describe_mesh(found)}: {'; '.join(differences)}"
        )


# t1 — shard x over the mesh


@task("t1")
@points(3)
def test_t1_values(submission):
    """`y` holds the values of x"""
    assert_allclose(submission.name("t1", "y"), ref.array_x(), "y")


@task("t1")
@points(5)
def test_t1_layout(submission):
    """`y` lies on `mesh`, its rows split over mesh axis 'a' and its columns over 'b'"""
    found = submission.name("t1", "y")
    assert_layout(found, Layout.of_spec(ref.MESH, ("a", "b"), SQUARE), "y")
    _assert_on_lab_mesh(found, "y")


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
    """`y_lhs` holds x on `mesh` with rows over 'a' (replicated over 'b'), `y_rhs` x with columns over 'b' (replicated over 'a')"""  # noqa: E501 -- a check's title is its docstring's first line
    for name, spec in (("y_lhs", ("a", None)), ("y_rhs", (None, "b"))):
        found = submission.name("t3", name)
        assert_allclose(found, ref.array_x(), name)
        assert_layout(found, Layout.of_spec(ref.MESH, spec, SQUARE), name)
        _assert_on_lab_mesh(found, name)


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


def _t4_error(submission) -> tuple[str, str]:
    """`err_msg` as a str, and the first sentence of the error JAX raises for it."""
    fact = submission.name("t4", "err_msg")
    assert_value_type(fact, "str", "err_msg")
    headline = ref.incompatible_devices_errors()[0].split(". ")[0] + "."
    return fact.value, headline


@task("t4")
@points(6)
def test_t4_incompatible_devices(submission):
    """`err_msg` holds the ValueError JAX raises when x committed to device 0 and a copy on device 1 are added"""
    text, headline = _t4_error(submission)
    if headline not in text:
        raise CheckFailure(
            f"`err_msg`: expected the error JAX raises when adding arrays committed to devices 0 and 1, which"
            f" begins {headline!r}; found {text[:300]!r}"
        )
    # Which function and argument names it gives depends on how the two were added (a + b, jnp.add, a
    # jitted function): only what was added, and where it was committed, is the task's.
    shape = f"float32[{ref.N},{ref.N}]"
    expected = [(shape, (0,)), (shape, (1,))]
    found = ref.error_arguments(text)
    if sorted(found) != expected:
        named = ", ".join(f"{s} on device ids {list(ids)}" for s, ids in found) or "no argument"
        raise CheckFailure(
            f"`err_msg`: expected the error to name two arrays {shape} (x and its copy), one on device 0 and"
            f" one on device 1; it names {named} — it names other devices or another array: commit x to"
            " jax.devices()[0] and a copy of x to jax.devices()[1]"
        )


@task("t4")
@points(2)
def test_t4_str_of_the_exception(submission):
    """`err_msg` is str() of the exception: its message alone"""
    text, headline = _t4_error(submission)
    if text.startswith(headline):
        return
    if headline not in text:
        raise CheckFailure(
            f"`err_msg`: expected str() of the ValueError JAX raises for arrays committed to different devices,"
            f" which begins {headline!r}; found {text[:300]!r}"
        )
    if text.startswith("ValueError("):
        hint = "that is repr(e): str(e) is the message alone"
    else:
        hint = "the message has more than str(e) around it (the exception's type name?): bind str(e) alone"
    raise CheckFailure(
        f"`err_msg`: expected str() of the exception, beginning {headline!r}; found {text[:300]!r} — {hint}"
    )


# t5 — with_sharding_constraint


@task("t5")
@points(1)
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
@points(1)
def test_t5_any_input_layout(submission):
    """`f` and `f_replicated` take a 2-D array in any layout on `mesh`, not only the lab's P('a', 'b')"""
    for call_id in ("f", "f_replicated"):
        try:
            output = submission.call("t5", f"{call_id}_other_layout").output
        except CheckFailure as failure:
            raise CheckFailure(
                f"`{call_id}`: expected it to take a 2-D array in any layout on `mesh`; given one with its rows over"
                f" 'b' (P('b', None)), {failure.message}"
            ) from None
        if output.kind != "array" or output.shape != ref.FRESH_SHAPE:
            raise CheckFailure(
                f"`{call_id}(x)` for x of shape {ref.FRESH_SHAPE} with its rows over 'b': expected an array of that"
                f" shape, found {output.describe()}"
            )


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
