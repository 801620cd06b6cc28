"""Graders of lab 2, "three ways to parallelize": one test per gradable fact, worth its points.

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
    assert_axis_types,
    assert_faster_verdict,
    assert_fully_replicated,
    assert_jitted,
    assert_layout,
    assert_no_collectives,
    assert_spec_equivalent,
    assert_speedup_claim,
    assert_time_consistent,
    assert_tree_allclose,
    assert_tree_layouts,
    assert_type,
    assert_uses,
)
from autograder.labs.lab2_three_ways import reference as ref

task, points, hidden = pytest.mark.task, pytest.mark.points, pytest.mark.hidden
SPECS_T2 = {"A_xN": ("x", None), "A_Ny": (None, "y"), "A_NN": (None, None), "A_Nx": (None, "x")}


# t1 — shard A over the (2, 4) mesh


@task("t1")
@points(3)
def test_t1_values(submission):
    """`A_sharded` holds the values of A"""
    assert_allclose(submission.name("t1", "A_sharded"), ref.array_a(), "A_sharded")


@task("t1")
@points(5)
def test_t1_layout(submission):
    """`A_sharded` is laid out as P('x', 'y') on the (2, 4) mesh"""
    expected = Layout.of_spec(ref.MESH_2D, ("x", "y"), (4, 16))
    assert_layout(submission.name("t1", "A_sharded"), expected, "A_sharded")


# t2 — four partition specs


@task("t2")
@points(2)
@pytest.mark.parametrize("name", list(SPECS_T2))
def test_t2_layouts(submission, name):
    """each of `A_xN`, `A_Ny`, `A_NN`, `A_Nx` holds A, laid out as its spec says"""
    found = submission.name("t2", name)
    assert_allclose(found, ref.array_a(), name)
    assert_layout(found, Layout.of_spec(ref.MESH_2D, SPECS_T2[name], (4, 16)), name)


# t3 — predict the layout of B + C and B.T @ C


@task("t3")
@points(2)
def test_t3_b_layout(submission):
    """`B` is a 4×8 array with rows over `x`, replicated over `y`"""
    assert_layout(submission.name("t3", "B"), Layout.of_spec(ref.MESH_2D, ("x", None), (4, 8)), "B")


@task("t3")
@points(2)
def test_t3_c_layout(submission):
    """`C` is a 4×8 array with columns over `y`, replicated over `x`"""
    assert_layout(submission.name("t3", "C"), Layout.of_spec(ref.MESH_2D, (None, "y"), (4, 8)), "C")


def _student_array(submission, task_id, name):
    fact = submission.name(task_id, name)
    if fact.kind != "array":
        raise CheckFailure(f"`{name}`: expected an array, found {fact.describe()}")
    return fact.values


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


@task("t4")
@points(3)
def test_t4_data_sharded(submission):
    """`x_dp` holds x with its rows split over the 8 devices of a mesh with an Auto axis"""
    x, _, _ = ref.layer_data()
    found = submission.name("t4", "x_dp")
    assert_allclose(found, x, "x_dp")
    assert_layout(found, Layout.of_spec(ref.MESH_1D, ("x",), x.shape), "x_dp")
    assert_axis_types(found, "Auto", "x_dp")


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
@points(3)
def test_t4_output_layout(submission):
    """`out_dp` is laid out like the data: rows over the 8 devices"""
    assert_layout(
        submission.name("t4", "out_dp"), Layout.of_spec(ref.MESH_1D, ("x",), (ref.N_DATA, ref.N_OUT)), "out_dp"
    )


# t5 — explicit sharding


@task("t5")
@points(4)
def test_t5_output_type(submission):
    """`jax.typeof(out_explicit)` is float32[128@x,2]"""
    assert_type(
        submission.name("t5", "out_explicit"),
        (ref.N_DATA, ref.N_OUT),
        "float32",
        ("x", None),
        "out_explicit",
        mesh=ref.MESH_1D_EXPLICIT,
    )


@task("t5")
@points(2)
def test_t5_jitted(submission):
    """`layer_explicit` is a jitted function"""
    assert_jitted(submission.call("t5", "layer_explicit"), "layer_explicit")


@task("t5")
@points(3)
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
@points(3)
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
    n, features, out = ref.FRESH_N_DATA, ref.N_FEATURES, ref.N_OUT
    expected = {
        "x": f"float32[{n}@x,{features}]",
        "W": f"float32[{features},{out}]",
        "b": f"float32[{out}]",
        "the output": f"float32[{n}@x,{out}]",
    }
    printed = call.stdout.replace(" ", "")
    missing = [f"{what} ({text})" for what, text in expected.items() if text not in printed]
    if missing:
        shown = call.stdout.strip()[:300] or "nothing"
        raise CheckFailure(
            f"`layer_explicit` should print jax.typeof of x, W, b and of the output while tracing;"
            f" for the grader's inputs the types of {', '.join(missing)} are missing."
            f" It printed: {shown}"
        )


# t6 — shard_map


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
@points(2)
def test_t6_shard_map(submission):
    """`layer_man` is built with jax.shard_map"""
    assert_uses(submission.call("t6", "layer_man"), "shard_map", "layer_man")


@task("t6")
@points(1)
def test_t6_jitted(submission):
    """`layer_man` is wrapped in jax.jit"""
    assert_jitted(submission.call("t6", "layer_man"), "layer_man")


@task("t6")
@points(4)
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
@points(3)
@hidden
def test_t6_fresh_layout(submission):
    """`layer_man` returns its output with the rows split over the 8 devices of the Auto mesh `mesh_1d`"""
    call = submission.call("t6", "layer_man")
    expected = Layout.of_spec(ref.MESH_1D, ("x",), (ref.FRESH_N_DATA, ref.N_OUT))
    assert_layout(call.output, expected, "layer_man(x, W, b)")
    assert_axis_types(call.output, "Auto", "layer_man(x, W, b)")


@task("t6")
@points(3)
@hidden
def test_t6_no_communication(submission):
    """the compiled `layer_man` contains no collective: data parallelism needs no communication here"""
    call = submission.call("t6", "layer_man")
    assert_no_collectives(call.hlo, "the compiled layer_man", call.hlo_error)


# t7 — data-parallel training


@task("t7")
@points(4)
def test_t7_data_sharded(submission):
    """`x_sh` and `y_sh` hold the training data with rows split over the 8 devices of the Auto mesh"""
    x, y, _ = ref.regression_setup()
    for name, value in (("x_sh", x), ("y_sh", y)):
        found = submission.name("t7", name)
        assert_allclose(found, np.asarray(value), name)
        assert_layout(found, Layout.of_spec(ref.MESH_1D, ("x",), value.shape), name)
        assert_axis_types(found, "Auto", name)


@task("t7")
@points(4)
def test_t7_parameters_replicated(submission):
    """every array of `params_sharded` is replicated on the 8 devices"""
    assert_tree_layouts(
        submission.name("t7", "params_sharded"), lambda shape: Layout.replicated(shape), "params_sharded"
    )


@task("t7")
@points(7)
@hidden
def test_t7_training_result(submission):
    """`params_sharded` equals the grader's training on one device (same math, another layout)"""
    assert_tree_allclose(
        submission.name("t7", "params_sharded"), ref.trained_params(), "params_sharded", rtol=1e-3, atol=1e-4
    )


# t8 — timing


@task("t8")
@points(3)
@hidden
def test_t8_unsharded_time(submission, per_grading):
    """`t_unsharded` agrees with the grader's own warm, blocked measurement"""
    claimed = submission.name("t8", "t_unsharded")
    assert_time_consistent(claimed, per_grading(ref.grad_loss_times).single, "t_unsharded")


@task("t8")
@points(3)
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
