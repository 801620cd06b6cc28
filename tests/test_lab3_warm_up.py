"""Lab 3's kernel warm-up: it compiles the very draws the grader's own TPLayer will ask for."""

import logging

import jax
from flax import nnx
from jax.sharding import PartitionSpec as P

from autograder.labs.lab3_fsdp_tp import kernel_probe, reference as ref


def test_the_warm_up_shapes_are_those_of_the_graders_own_layer():
    expected = {ref.kernel_shape(name, ref.FRESH_LAYER["hidden_dim"]) for name in ref.KERNEL_NAMES}
    assert set(kernel_probe.FRESH_KERNEL_SHAPES) == expected


def _draws_compiled(caplog, shapes_and_specs) -> list[str]:
    """Build the seed's linear layers (kaiming_normal under with_partitioning, under jax.set_mesh) and
    return the truncated-normal programs JAX compiled for them."""
    caplog.clear()
    with caplog.at_level(logging.WARNING), jax.log_compiles(), jax.set_mesh(kernel_probe._mesh()):
        rngs = nnx.Rngs(123)
        for (n_in, n_out), spec in shapes_and_specs:
            init = nnx.with_partitioning(nnx.initializers.kaiming_normal(), spec)
            nnx.Linear(n_in, n_out, use_bias=False, kernel_init=init, rngs=rngs)
    return [r.getMessage() for r in caplog.records
            if r.getMessage().startswith("Compiling") and "truncated_normal" in r.getMessage()]


def test_after_the_warm_up_the_seeds_initialiser_compiles_no_draw(caplog):
    unwarmed = _draws_compiled(caplog, [((24, 40), P(None, "model"))])
    assert len(unwarmed) == 1  # a shape the warm-up did not see compiles its draw
    kernel_probe.warm_up()
    specs = (P(None, "model"), P(None, "model"), P("model", None))
    assert _draws_compiled(caplog, zip(kernel_probe.FRESH_KERNEL_SHAPES, specs)) == []
