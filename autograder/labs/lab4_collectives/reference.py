"""Lab 4, communication inside shard_map: reference computations, run in the grader's process only."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from autograder.caches import cached_reference
from autograder.checks import MeasuredRatio, MeshSpec, TimingStats, called_once, measure_interleaved, measured_ratio

MESH = MeshSpec((8,), ("x",), "explicit")  # the notebook's jax.make_mesh((8,), ("x",))
FRESH_N = 128  # the grader's inputs have other sizes than the lab's arrays
FRESH_ROWS = (8, 32)
# rhs has more entries (64×64) than the whole of lhs (32×64): a body that holds a value as large as rhs gathered
# it (assert_body_never_holds_whole), where one that was handed lhs whole holds only 2048 entries
FRESH_LHS, FRESH_RHS = (32, 64), (64, 64)
# The notebook's big_lhs and big_rhs: sizes where the collective matmul is clearly slower on 8 CPU devices
# (gathered ÷ collective about 0.25 idle, 0.2-0.45 under load or half a CPU), so that the verdict has an
# answer the grading machine measures; at 256×512 @ 512×384 both took the same time within 10 %. rhs has
# fewer columns than lhs has rows: gathered_matmul(big_rhs, big_lhs), a slip, is a product the shapes refuse.
TIMED_LHS, TIMED_RHS = (128, 256), (256, 64)


@cached_reference
def lab_v() -> np.ndarray:
    """The lab's `v`, as its setup cell makes it."""
    return np.arange(64, dtype=np.float32)


def _collective_matmul_body(lhs_block, rhs_block):
    """The collective matmul of the solution: each step multiplies while ppermute passes rhs blocks on."""
    me = jax.lax.axis_index("x")
    chunk = rhs_block.shape[0]
    out = jnp.zeros((lhs_block.shape[0], rhs_block.shape[1]), lhs_block.dtype)
    current = rhs_block
    for k in range(8):
        following = jax.lax.ppermute(current, "x", [(i, (i - 1) % 8) for i in range(8)]) if k < 7 else None
        out = out + jax.lax.dynamic_slice_in_dim(lhs_block, ((me + k) % 8) * chunk, chunk, axis=1) @ current
        current = following
    return out


class MatmulTimes(NamedTuple):
    """What the grader measured of the two matmuls of task 5: seconds per call of the collective one and
    of the one that gathers rhs first (every sample: a time is judged within their spread), and gathered ÷
    collective round by round."""

    collective: TimingStats
    gathered: TimingStats
    ratio: MeasuredRatio


@functools.cache
def matmul_calls() -> dict[str, Callable[[], object]]:
    """The two products the grader times for task 5, on operands of the notebook's sizes split by rows,
    each called once: set up once per process."""
    mesh = MESH.build()
    rows = NamedSharding(mesh, P("x", None))
    lhs = jax.device_put(np.random.default_rng(2).standard_normal(TIMED_LHS, dtype=np.float32), rows)
    rhs = jax.device_put(np.random.default_rng(3).standard_normal(TIMED_RHS, dtype=np.float32), rows)
    specs: dict[str, Any] = {"mesh": mesh, "in_specs": (P("x", None), P("x", None)), "out_specs": P("x", None)}
    collective = jax.jit(jax.shard_map(_collective_matmul_body, **specs))
    gathered = jax.jit(jax.shard_map(lambda a, b: a @ jax.lax.all_gather(b, "x", tiled=True), **specs))
    return called_once({"collective": lambda: collective(lhs, rhs), "gathered": lambda: gathered(lhs, rhs)})


def matmul_times() -> MatmulTimes:
    """The grader's own seconds per call of both products (warm, blocked, interleaved), and their ratio
    with its interval, measured now: a grading measures once (``per_grading``)."""
    stats = measure_interleaved(matmul_calls(), repeats=15, warmup=1, min_repeats=5, verdict=("gathered", "collective"))
    return MatmulTimes(stats["collective"], stats["gathered"], measured_ratio(stats["gathered"], stats["collective"]))


CACHED_CALLS = (lab_v,)
# Set up while the kernel starts, when a grading checks task 5: afterwards the measurement only times.
SET_UP_AHEAD = {"t5": (matmul_calls,)}
