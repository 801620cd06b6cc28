"""Graders of lab 3, task 6: a tensor-parallel transformer layer with flax.nnx (test_lab3_fsdp_tp.py
holds tasks 1 to 3).

The lab's probe builds the student's TPLayer, with the notebook's sizes and with the grader's own, and
reads its kernels, its output and its compiled code.
"""

import pytest

from autograder.checks import (
    CheckFailure,
    Layout,
    assert_allclose,
    assert_layout,
    assert_on_mesh,
    collectives_in,
    describe_collectives,
    is_allclose,
)
from autograder.facts import Input
from autograder.labs.lab3_fsdp_tp import reference as ref

task, points, hidden = pytest.mark.task, pytest.mark.points, pytest.mark.hidden
LAYER_TOLERANCE = {"rtol": 1e-4, "atol": 1e-4}


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
