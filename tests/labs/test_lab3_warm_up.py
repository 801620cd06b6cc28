"""Lab 3's kernel warm-up: it compiles the very draws the grader's own TPLayer will ask for."""

import logging

import jax
from flax import nnx
from jax.sharding import PartitionSpec as P

from autograder.labs.lab3_fsdp_tp import kernel_probe
from autograder.labs.lab3_fsdp_tp import reference as ref


def test_the_warm_up_shapes_are_those_of_the_graders_own_layer():
    expected = {ref.kernel_shape(name, ref.FRESH_LAYER["hidden_dim"]) for name in ref.KERNEL_NAMES}
    assert set(kernel_probe.FRESH_KERNEL_SHAPES) == expected


def _compiled(caplog, shapes_and_specs) -> list[str]:
    """Build the seed's linear layers (kaiming_normal under with_partitioning, under jax.set_mesh) and
    return what JAX compiled for them."""
    caplog.clear()
    with caplog.at_level(logging.WARNING), jax.log_compiles(), jax.set_mesh(kernel_probe._mesh()):
        rngs = nnx.Rngs(123)
        for (n_in, n_out), spec in shapes_and_specs:
            init = nnx.with_partitioning(nnx.initializers.kaiming_normal(), spec)
            nnx.Linear(n_in, n_out, use_bias=False, kernel_init=init, rngs=rngs)
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("Compiling")]


def test_after_the_warm_up_the_seeds_layers_compile_nothing(caplog):
    unwarmed = _compiled(caplog, [((24, 40), P(None, "model"))])
    assert any("truncated_normal" in message for message in unwarmed)  # an unseen shape compiles its draw
    kernel_probe.warm_up()
    specs = (P(None, "model"), P(None, "model"), P("model", None))
    assert _compiled(caplog, zip(kernel_probe.FRESH_KERNEL_SHAPES, specs)) == []
    # the attention's square kernels are cut both ways: Wq by columns, Wo by rows
    assert _compiled(caplog, [(kernel_probe.FRESH_KERNEL_SHAPES[0], P("model", None))]) == []
