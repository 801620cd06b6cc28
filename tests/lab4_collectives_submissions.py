"""Submissions of lab 4 with known grades: correct ones written differently, and wrong ones.

Each case fills some tasks' answer cells (the rest stay blank and score 0) and states the score of
every task. A wrong task loses exactly the points of the checks it gets wrong, and no others.
"""

from cases import Case, solved

# Whether the collective matmul beat gathering first is judged against the grader's own timing of this
# grading on this machine: no case below states its outcome (tests/lab_submissions.py).
MEASURED_VERDICTS = {"test_t5_verdict"}

T1_TAIL = "gathered = ring_gather(v)"
# Also correct: the ring turns the other way, in a fori_loop, each step writing the block it received.
T1_BACKWARDS_LOOP = """
BACK = [(i, (i - 1) % 8) for i in range(8)]

def body(block):
    me = jax.lax.axis_index("x")
    n = block.shape[0]
    def step(k, carry):
        out, current = carry
        current = jax.lax.ppermute(current, "x", BACK)
        return jax.lax.dynamic_update_slice(out, current, (((me + k) % 8) * n,)), current
    out = jax.lax.dynamic_update_slice(jnp.zeros(8 * n, block.dtype), block, (me * n,))
    return jax.lax.fori_loop(1, 8, step, (out, block))[0]

ring_gather = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P(), check_vma=False))
""" + T1_TAIL
# Right values, but all_gather does the work the ring was to do.
T1_ALL_GATHER = ("ring_gather = jax.jit(jax.shard_map(lambda b: jax.lax.all_gather(b, 'x', tiled=True), mesh=mesh,"
                 " in_specs=P('x'), out_specs=P(), check_vma=False))\n" + T1_TAIL)
T2_SCATTERED = ("summed_scattered = jax.jit(jax.shard_map(lambda b: jax.lax.psum_scatter(b[0], 'x', tiled=True),"
                " mesh=mesh, in_specs=P('x', None), out_specs=P('x')))\n")
# Right values everywhere, but XLA adds the rows (no shard_map), and the scattered sum is a whole psum sliced.
T2_PLAIN_SUM_AND_SLICED_PSUM = """
summed_everywhere = jax.jit(lambda r: jnp.sum(r, axis=0))

def slice_of_sum(b):
    whole = jax.lax.psum(b[0], "x")
    part = whole.shape[0] // 8
    return jax.lax.dynamic_slice(whole, (jax.lax.axis_index("x") * part,), (part,))

summed_scattered = jax.jit(jax.shard_map(slice_of_sum, mesh=mesh, in_specs=P("x", None), out_specs=P("x")))
"""
T4_TAIL = "product = collective_matmul(lhs, rhs)"
# Also correct: a fori_loop that permutes before each later step, the lhs columns picked by reshaping.
T4_LOOP = """
def body(lhs_block, rhs_block):
    me = jax.lax.axis_index("x")
    rows, chunk = lhs_block.shape[0], rhs_block.shape[0]
    by_chunk = lhs_block.reshape(rows, 8, chunk)
    def step(k, carry):
        out, current = carry
        current = jax.lax.ppermute(current, "x", [(i, (i - 1) % 8) for i in range(8)])
        return out + by_chunk[:, (me + k) % 8, :] @ current, current
    return jax.lax.fori_loop(1, 8, step, (by_chunk[:, me, :] @ rhs_block, rhs_block))[0]

collective_matmul = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(P("x", None), P("x", None)),
                                          out_specs=P("x", None)))
""" + T4_TAIL
# Right product, but rhs is gathered whole on every device.
T4_ALL_GATHER = ("collective_matmul = jax.jit(jax.shard_map(lambda a, b: a @ jax.lax.all_gather(b, 'x', tiled=True),"
                 " mesh=mesh, in_specs=(P('x', None), P('x', None)), out_specs=P('x', None)))\n" + T4_TAIL)
# Also correct: the median of timeit's repeats, the verdict from comparing the times.
T5_TIMEIT = """
import statistics
import timeit

def per_call(f):
    jax.block_until_ready(f(big_lhs, big_rhs))
    rounds = timeit.repeat(lambda: jax.block_until_ready(f(big_lhs, big_rhs)), number=4, repeat=5)
    return statistics.median(rounds) / 4

t_collective, t_gathered = per_call(collective_matmul), per_call(gathered_matmul)
speedup = t_gathered / t_collective
collective_faster = t_collective < t_gathered
"""
# Sound times, but the speedup is given in percent.
T5_PERCENT = T5_TIMEIT.replace("speedup = t_gathered / t_collective", "speedup = 100 * t_gathered / t_collective")
T3_LISTS = "psum_block_shape = [16]\nscatter_block_shape = [2]"
T3_SWAPPED = "psum_block_shape, scatter_block_shape = (2,), (16,)"

CASES = [
    Case("also_correct", {"t1": T1_BACKWARDS_LOOP, "t2": "summed_everywhere = jax.jit(jax.shard_map("
                          "lambda b: jax.lax.psum(b, 'x')[0], mesh=mesh, in_specs=P('x', None), out_specs=P()))\n"
                          + T2_SCATTERED, "t3": T3_LISTS, "t4": T4_LOOP, "t5": T5_TIMEIT},
         {"t1": 25, "t2": 30, "t3": 10, "t4": 20, "t5": 11}),
    Case("collectives_of_xla_or_the_wrong_kind", {"t1": T1_ALL_GATHER, "t2": T2_PLAIN_SUM_AND_SLICED_PSUM,
                                                   "t3": T3_SWAPPED, "t4": T4_ALL_GATHER},
         {"t1": 15, "t2": 20, "t3": 0, "t4": 10},
         messages={"t1": "found only all_gather", "t2": "found no shard_map", "t4": "found only all_gather"}),
    Case("first_two_solved", solved("t1", "t2"), {"t1": 25, "t2": 30}),
    Case("speedup_in_percent", {**solved("t4"), "t5": T5_PERCENT}, {"t4": 20, "t5": 6},
         messages={"t5": "the speedup must be computed from your two times"}),
]
