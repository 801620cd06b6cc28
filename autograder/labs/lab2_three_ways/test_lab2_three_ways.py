"""Graders of lab 2, "three ways to parallelize": one test per gradable fact, worth its points, tasks 1
to 5 here, 6 to 8 in test_lab2_three_ways_t6_t8.py.

Layouts are compared block by block (which device holds which block), never by spelling of the spec;
functions are run by the kernel recorder on inputs the student has never seen, and compared here with the
reference computed in this process.
"""

import numpy as np
import pytest

from autograder.checks import (
    CheckFailure,
    Layout,
    assert_allclose,
    assert_fully_replicated,
    assert_jitted,
    assert_layout,
    assert_on_mesh,
    assert_spec_equivalent,
    assert_type,
    describe_layout,
    render_layout,
)
from autograder.labs.lab2_three_ways import reference as ref

task, points, hidden = pytest.mark.task, pytest.mark.points, pytest.mark.hidden
SPECS_T2 = {"A_xN": ("x", None), "A_Ny": (None, "y"), "A_NN": (None, None), "A_Nx": (None, "x")}


def _array(fact, name):
    """The array fact, or a CheckFailure naming what was found instead."""
    if fact.kind != "array":
        raise CheckFailure(f"`{name}`: expected an array, found {fact.describe()}")
    return fact


def _student_array(submission, task_id, name):
    return _array(submission.name(task_id, name), name).values


def _rows_split_any_order(fact, name, shape) -> Layout:
    """Fail unless the array's rows are split into 8 blocks, one on each of the 8 devices, in any device
    order (a 1-D mesh of the 8 devices in any order); its layout otherwise."""
    fact = _array(fact, name)
    expected = Layout.of_spec(ref.MESH_1D, ("x",), shape)
    found = Layout.of_fact(fact, name)
    if found.shape != tuple(shape):
        assert_layout(fact, expected, name)  # fails, saying the shape
    if set(found.blocks) != set(expected.blocks) or sorted(found.blocks.values()) != sorted(expected.blocks.values()):
        raise CheckFailure(
            f"`{name}`: expected its rows split into 8 blocks of {shape[0] // 8}, one block on each of the 8"
            f" devices (in your mesh's order), found {describe_layout(found)}",
            expected_picture=render_layout(expected),
            found_picture=render_layout(found),
        )
    return found


# t1 — shard A over the (2, 4) mesh


@task("t1")
@points(3)
def test_t1_values(submission):
    """`A_sharded` holds the values of A"""
    assert_allclose(submission.name("t1", "A_sharded"), ref.array_a(), "A_sharded")


@task("t1")
@points(3)
def test_t1_layout(submission):
    """`A_sharded` is laid out as P('x', 'y') on the (2, 4) mesh: each device holds its 2 × 4 block"""
    expected = Layout.of_spec(ref.MESH_2D, ("x", "y"), (4, 16))
    assert_layout(submission.name("t1", "A_sharded"), expected, "A_sharded")


@task("t1")
@points(2)
def test_t1_mesh_axes(submission):
    """`A_sharded` has its rows split over the mesh axis named `x` and its columns over the one named `y`"""
    fact = _array(submission.name("t1", "A_sharded"), "A_sharded")
    sharding = fact.sharding
    if sharding is None or sharding.spec is None or sharding.mesh is None:
        raise CheckFailure(
            "`A_sharded`: expected an array laid out by a NamedSharding whose spec splits its rows over mesh axis"
            f" `x` and its columns over mesh axis `y`, found {fact.describe()} with no mesh and spec"
        )
    entries = tuple(tuple(e) if e else None for e in sharding.spec) + (None,) * (2 - len(sharding.spec))
    if entries[:2] != (("x",), ("y",)):
        words = ["not split" if e is None else f"split over {' and '.join(f'`{a}`' for a in e)}" for e in entries]
        raise CheckFailure(
            "`A_sharded`: expected its rows split over the mesh axis named `x` and its columns over the one named"
            f" `y`, found its rows {words[0]} and its columns {words[1]}, on a mesh whose axes are named"
            f" {tuple(sharding.mesh.axis_names)}"
        )


# t2 — four partition specs

_MESH_2D_WORDS = "`mesh`, the (2, 4) mesh with Auto axes named ('x', 'y') over devices [[0, 1, 2, 3], [4, 5, 6, 7]]"


@task("t2")
@points(2)
def test_t2_values(submission):
    """each of `A_xN`, `A_Ny`, `A_NN`, `A_Nx` holds the values of A"""
    for name in SPECS_T2:
        assert_allclose(submission.name("t2", name), ref.array_a(), name)


@task("t2")
@points(1)
@pytest.mark.parametrize("name", list(SPECS_T2))
def test_t2_layouts(submission, name):
    """each of `A_xN`, `A_Ny`, `A_NN`, `A_Nx` is laid out as its spec says on the (2, 4) mesh"""
    assert_layout(submission.name("t2", name), Layout.of_spec(ref.MESH_2D, SPECS_T2[name], (4, 16)), name)


@task("t2")
@points(2)
def test_t2_same_mesh(submission):
    """each of `A_xN`, `A_Ny`, `A_NN`, `A_Nx` lies on the same `mesh` as t1: (2, 4), Auto axes named ('x', 'y')"""
    for name in SPECS_T2:
        assert_on_mesh(submission.name("t2", name), ref.MESH_2D, name, _MESH_2D_WORDS)


# t3 — predict the layout of B + C and B.T @ C


@task("t3")
@points(2)
def test_t3_b_layout(submission):
    """`B` is a 4×8 array on `mesh` with rows over `x`, replicated over `y`"""
    found = submission.name("t3", "B")
    assert_layout(found, Layout.of_spec(ref.MESH_2D, ("x", None), (4, 8)), "B")
    assert_on_mesh(found, ref.MESH_2D, "B", _MESH_2D_WORDS)


@task("t3")
@points(2)
def test_t3_c_layout(submission):
    """`C` is a 4×8 array on `mesh` with columns over `y`, replicated over `x`"""
    found = submission.name("t3", "C")
    assert_layout(found, Layout.of_spec(ref.MESH_2D, (None, "y"), (4, 8)), "C")
    assert_on_mesh(found, ref.MESH_2D, "C", _MESH_2D_WORDS)


@task("t3")
@points(1)
def test_t3_results(submission):
    """`B_plus_C` and `Bt_C` are B + C and B.T @ C of your B and C"""
    B, C = _student_array(submission, "t3", "B"), _student_array(submission, "t3", "C")
    assert_allclose(submission.name("t3", "B_plus_C"), B + C, "B_plus_C")
    assert_allclose(submission.name("t3", "Bt_C"), B.T @ C, "Bt_C", rtol=1e-4, atol=1e-3)


@task("t3")
@points(1)
def test_t3_result_layouts(submission):
    """`B_plus_C` and `Bt_C` were computed by JAX from the sharded B and C: laid out as P('x', 'y') and P(None, 'y')"""
    for name, spec, shape in (("B_plus_C", ("x", "y"), (4, 8)), ("Bt_C", (None, "y"), (8, 8))):
        assert_layout(submission.name("t3", name), Layout.of_spec(ref.MESH_2D, spec, shape), name)


@task("t3")
@points(3)
def test_t3_predicted_sum(submission):
    """`B_plus_C_spec` predicts the layout of B + C: rows over `x`, columns over `y`"""
    assert_spec_equivalent(submission.name("t3", "B_plus_C_spec"), ("x", "y"), ref.MESH_2D, (4, 8), "B_plus_C_spec")


@task("t3")
@points(3)
def test_t3_predicted_product(submission):
    """`Bt_C_spec` predicts the layout of B.T @ C: columns over `y`, replicated over `x`"""
    assert_spec_equivalent(submission.name("t3", "Bt_C_spec"), (None, "y"), ref.MESH_2D, (8, 8), "Bt_C_spec")


# t4 — the data-parallel layer, automatic parallelization

_MESH_1D_ANY_ORDER = "a 1-D mesh of all 8 devices (in any order) with one Auto axis named 'x'"


@task("t4")
@points(2)
def test_t4_mesh(submission):
    """`x_dp` lies on a 1-D mesh of all 8 devices with a single Auto axis named 'x'"""
    assert_on_mesh(submission.name("t4", "x_dp"), ref.MESH_1D, "x_dp", _MESH_1D_ANY_ORDER, device_order=False)


@task("t4")
@points(2)
def test_t4_data_sharded(submission):
    """`x_dp` holds x with its rows split over the 8 devices of your mesh, 16 rows on each"""
    x, _, _ = ref.layer_data()
    found = submission.name("t4", "x_dp")
    assert_allclose(found, x, "x_dp")
    _rows_split_any_order(found, "x_dp", x.shape)


@task("t4")
@points(3)
def test_t4_parameters_replicated(submission):
    """`W_dp` and `b_dp` hold W and b, replicated on all 8 devices"""
    _, W, b = ref.layer_data()
    for name, value in (("W_dp", W), ("b_dp", b)):
        found = submission.name("t4", name)
        assert_allclose(found, value, name)
        assert_fully_replicated(found, name)


@task("t4")
@points(3)
def test_t4_output_values(submission):
    """`out_dp` is the layer's output"""
    assert_allclose(
        submission.name("t4", "out_dp"), np.asarray(ref.layer(*ref.layer_data())), "out_dp", rtol=1e-5, atol=1e-6
    )


@task("t4")
@points(2)
def test_t4_output_layout(submission):
    """`out_dp` is laid out like your data: rows over the 8 devices, each device the rows it holds of `x_dp`"""
    out = _rows_split_any_order(submission.name("t4", "out_dp"), "out_dp", (ref.N_DATA, ref.N_OUT))
    data = Layout.of_fact(_array(submission.name("t4", "x_dp"), "x_dp"), "x_dp")
    moved = sorted(d for d, block in out.blocks.items() if d not in data.blocks or data.blocks[d][0] != block[0])
    if moved:
        d = moved[0]
        raise CheckFailure(
            f"`out_dp`: expected the sharding of your data, each device holding the rows of the output that it"
            f" holds of `x_dp`, found device {d} holding rows {out.blocks[d][0]} of `out_dp` but rows"
            f" {data.blocks[d][0] if d in data.blocks else 'none'} of `x_dp`",
            expected_picture=render_layout(
                Layout(out.shape, {k: (v[0], (0, ref.N_OUT)) for k, v in data.blocks.items()})
            ),
            found_picture=render_layout(out),
        )


# t5 — explicit sharding


def _printed_types(n):
    """What jax.typeof prints for the grader's x, W, b and the output of n rows, spaces left out."""
    features, out = ref.N_FEATURES, ref.N_OUT
    return {
        "x": f"float32[{n}@x,{features}]",
        "W": f"float32[{features},{out}]",
        "b": f"float32[{out}]",
        "the output": f"float32[{n}@x,{out}]",
    }


@task("t5")
@points(3)
def test_t5_output_type(submission):
    """`jax.typeof(out_explicit)` is float32[128@x,2], on a 1-D Explicit mesh of all 8 devices"""
    found = submission.name("t5", "out_explicit")
    assert_type(found, (ref.N_DATA, ref.N_OUT), "float32", ("x", None), "out_explicit", mesh=ref.MESH_1D_EXPLICIT)
    what = "a 1-D mesh of all 8 devices (in any order) with one Explicit axis named 'x'"
    assert_on_mesh(found, ref.MESH_1D_EXPLICIT, "out_explicit", what, device_order=False)


@task("t5")
@points(1)
def test_t5_output_values(submission):
    """`out_explicit` is the output of the layer on x, W, b"""
    assert_allclose(
        submission.name("t5", "out_explicit"),
        np.asarray(ref.layer(*ref.layer_data())),
        "out_explicit",
        rtol=1e-5,
        atol=1e-6,
    )


@task("t5")
@points(2)
def test_t5_jitted(submission):
    """`layer_explicit` is a jitted function"""
    assert_jitted(submission.call("t5", "layer_explicit"), "layer_explicit")


@task("t5")
@points(2)
@hidden
def test_t5_fresh_values(submission):
    """`layer_explicit` computes the layer on the grader's own inputs"""
    call = submission.call("t5", "layer_explicit")
    assert_allclose(
        call.output,
        np.asarray(ref.layer(*submission.inputs("t5", "layer_explicit"))),
        "layer_explicit(x, W, b)",
        rtol=1e-5,
        atol=1e-6,
    )


@task("t5")
@points(2)
@hidden
def test_t5_fresh_type(submission):
    """on data sharded over `x`, `layer_explicit` returns float32[n@x,2]"""
    call = submission.call("t5", "layer_explicit")
    assert_type(
        call.output,
        (ref.FRESH_N_DATA, ref.N_OUT),
        "float32",
        ("x", None),
        "layer_explicit(x, W, b)",
        mesh=ref.MESH_1D_EXPLICIT,
    )


@task("t5")
@points(2)
@hidden
def test_t5_prints_types(submission):
    """while tracing, `layer_explicit` prints the JAX-level types of x, W, b and of the output, with the sharded axis"""
    call = submission.call("t5", "layer_explicit")
    printed = call.stdout.replace(" ", "")
    missing = [f"{what} ({text})" for what, text in _printed_types(ref.FRESH_N_DATA).items() if text not in printed]
    if missing:
        shown = call.stdout.strip()[:300] or "nothing"
        raise CheckFailure(
            f"`layer_explicit` should print jax.typeof of x, W, b and of the output while tracing;"
            f" for the grader's inputs the types of {', '.join(missing)} are missing."
            f" It printed: {shown}"
        )


@task("t5")
@points(2)
@hidden
def test_t5_prints_only_while_traced(submission):
    """`layer_explicit` prints while it is traced, not on every call: called again on new inputs of the same
    types, it prints no type again"""
    again = submission.call("t5", "layer_explicit_again")
    printed = again.stdout.replace(" ", "")
    repeated = [f"{what} ({text})" for what, text in _printed_types(ref.FRESH_N_DATA).items() if text in printed]
    if repeated:
        raise CheckFailure(
            "`layer_explicit` should print the types while it is traced: jax.jit traces a function once for"
            " each new type of its inputs, so a second call on new values of the same types prints nothing."
            f" Expected nothing from the grader's second call, found the types of {', '.join(repeated)}"
            f" printed again: {again.stdout.strip()[:300]} — a plain Python function prints on every call"
            " (wrap the function itself in jax.jit)"
        )
