"""Lab 2's reference computations, done in the grader's own process (never in the student's kernel)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from autograder.caches import cached_reference, shareable
from autograder.checks import MeasuredRatio, MeshSpec, TimingStats, called_once, measure_interleaved, measured_ratio

MESH_2D = MeshSpec((2, 4), ("x", "y"), "auto")
MESH_1D = MeshSpec((8,), ("x",), "auto")
MESH_1D_EXPLICIT = MeshSpec((8,), ("x",), "explicit")
N_DATA, N_FEATURES, N_OUT = 128, 10, 2
FRESH_N_DATA = 256  # the grader's inputs have another size than the lab's, so functions are traced anew
N_REGRESSION, LAYER_SIZES, EPOCHS, STEP_SIZE = 1024, (1, 1024, 1024, 1), 50, 1e-3


@cached_reference
def array_a() -> np.ndarray:
    return np.arange(64.0, dtype=np.float32).reshape(4, 16)


@shareable
def layer(x, W, b):
    return jax.nn.softmax(jnp.asarray(x) @ jnp.asarray(W) + jnp.asarray(b))


@cached_reference
def layer_data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The lab's x, W, b (key 0), exactly as its locked cell makes them."""
    key = jax.random.key(0)
    key, *keys = jax.random.split(key, 4)
    x = jax.random.normal(keys[0], shape=(N_DATA, N_FEATURES))
    W = jax.random.normal(keys[1], shape=(N_FEATURES, N_OUT))
    b = jax.random.normal(keys[2], shape=(N_OUT,))
    return np.asarray(x), np.asarray(W), np.asarray(b)


@shareable
def _target(x):
    return jnp.sin(6 * x) - 0.5 * x**2


@shareable
@cached_reference
def regression_setup():
    """The lab's regression data and initial parameters (key 0)."""
    global_key = jax.random.key(seed=0)
    _, *keys = jax.random.split(global_key, 3)
    data_keys = jax.random.split(keys[0], 2)
    x = jax.random.uniform(data_keys[0], shape=(N_REGRESSION, 1), minval=0.0, maxval=2.0)
    y = _target(x) + 0.1 * jax.random.normal(data_keys[1], shape=(N_REGRESSION, 1))
    layer_keys = jax.random.split(keys[1], len(LAYER_SIZES) - 1)
    params = []
    for n_in, n_out, k in zip(LAYER_SIZES[:-1], LAYER_SIZES[1:], layer_keys):
        w_key, b_key = jax.random.split(k)
        params.append((0.1 * jax.random.normal(w_key, (n_in, n_out)), 0.1 * jax.random.normal(b_key, (n_out,))))
    return x, y, params


def _loss(params, x, y):
    for w, b in params[:-1]:
        x = jnp.tanh(jnp.dot(x, w) + b)
    final_w, final_b = params[-1]
    return jnp.mean(jnp.square(jnp.dot(x, final_w) + final_b - y))


grad_loss = jax.jit(jax.grad(_loss))


@cached_reference
def trained_params() -> list[np.ndarray]:
    """The parameters after the lab's training on one device, flattened in jax.tree order."""
    x, y, params = jax.device_put(regression_setup())
    for _ in range(EPOCHS):
        grads = grad_loss(params, x, y)
        params = jax.block_until_ready(
            [(W - STEP_SIZE * dW, b - STEP_SIZE * db) for (W, b), (dW, db) in zip(params, grads)]
        )
    return [np.asarray(leaf) for leaf in jax.tree.leaves(params)]


class GradLossTimes(NamedTuple):
    """What the grader measured of grad_loss: seconds per call on one device and sharded (every sample: a
    time is judged within their spread), and single ÷ sharded round by round."""

    single: TimingStats
    sharded: TimingStats
    ratio: MeasuredRatio


@functools.cache
def grad_loss_calls() -> dict[str, Callable[[], object]]:
    """The two calls of grad_loss the grader times for task 8 — on one device, and with the data sharded
    over 8 — with their arrays placed and each called once: set up once per process."""
    x, y, params = jax.device_put(regression_setup(), jax.devices()[0])
    mesh = MESH_1D.build()
    x_sh, y_sh = (jax.device_put(a, NamedSharding(mesh, P("x"))) for a in (x, y))
    params_rep = jax.device_put(params, NamedSharding(mesh, P()))
    return called_once(
        {"single": lambda: grad_loss(params, x, y), "sharded": lambda: grad_loss(params_rep, x_sh, y_sh)}
    )


def grad_loss_times() -> GradLossTimes:
    """The grader's own seconds per call of grad_loss, one device vs data sharded over 8 (warm, blocked),
    and their ratio with its interval, measured now: a grading measures once (``per_grading``). Each
    median is known within ±10 %; `cpu_faster` is judged by the ratio's interval alone."""
    stats = measure_interleaved(grad_loss_calls(), repeats=15, warmup=1, min_repeats=5, verdict=("single", "sharded"))
    return GradLossTimes(stats["single"], stats["sharded"], measured_ratio(stats["single"], stats["sharded"]))


# What `autograder warm` and `autograder batch` store ahead of grading (the grader's timings stay per grade).
CACHED_CALLS = (array_a, layer_data, regression_setup, trained_params)
# What a grading that checks a task sets up ahead, while the kernel starts: the measurement after the
# notebook then only times.
SET_UP_AHEAD = {"t8": (grad_loss_calls,)}
