"""Submissions of lab 4 with known grades: correct ones written differently, and wrong ones.

Each case fills some tasks' answer cells (the rest stay blank and score 0) and states the score of
every task. A wrong task loses exactly the points of the checks it gets wrong, and no others.
"""

from autograder.authoring.known_grades import Case, solved

T1_TAIL = "gathered = ring_gather(v)"
# Also correct: the ring turns the other way, in a fori_loop, each step writing the block it received.
T1_BACKWARDS_LOOP = (
    """
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
"""
    + T1_TAIL
)
# Right values, but all_gather does the work the ring was to do.
T1_ALL_GATHER = (
    "ring_gather = jax.jit(jax.shard_map(lambda b: jax.lax.all_gather(b, 'x', tiled=True), mesh=mesh,"
    " in_specs=P('x'), out_specs=P(), check_vma=False))\n" + T1_TAIL
)
T2_SCATTERED = (
    "summed_scattered = jax.jit(jax.shard_map(lambda b: jax.lax.psum_scatter(b[0], 'x', tiled=True),"
    " mesh=mesh, in_specs=P('x', None), out_specs=P('x')))\n"
)
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
T4_LOOP = (
    """
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
"""
    + T4_TAIL
)
# Right product, but rhs is gathered whole on every device.
T4_ALL_GATHER = (
    "collective_matmul = jax.jit(jax.shard_map(lambda a, b: a @ jax.lax.all_gather(b, 'x', tiled=True),"
    " mesh=mesh, in_specs=(P('x', None), P('x', None)), out_specs=P('x', None)))\n" + T4_TAIL
)
# Also correct: the median of timeit's repeats, the verdict from comparing the times.
T5_TIMEIT = """
import statistics
import timeit

def per_call(f):
    jax.block_until_ready(f(big_lhs, big_rhs))
    rounds = timeit.repeat(lambda: jax.block_until_ready(f(big_lhs, big_rhs)), number=40, repeat=5)
    return statistics.median(rounds) / 40

t_collective, t_gathered = per_call(collective_matmul), per_call(gathered_matmul)
speedup = t_gathered / t_collective
collective_faster = t_collective < t_gathered
"""
# Sound times, but the speedup is given in percent.
T5_PERCENT = T5_TIMEIT.replace("speedup = t_gathered / t_collective", "speedup = 100 * t_gathered / t_collective")
# Wrong: gathered_matmul timed on big_rhs and big_lhs swapped, a product the shapes refuse; the
# collective matmul's time stands on its own (made from a mutant that survived when the shapes allowed it).
T5_SWAPPED_ARGUMENTS = """
import time

def seconds_per_call(f, *args, calls=200):
    f(*args).block_until_ready()
    start = time.perf_counter()
    for _ in range(calls):
        f(*args).block_until_ready()
    return (time.perf_counter() - start) / calls

t_collective = seconds_per_call(collective_matmul, big_lhs, big_rhs)
t_gathered = seconds_per_call(gathered_matmul, big_rhs, big_lhs)
speedup = t_gathered / t_collective
collective_faster = bool(speedup > 1)
"""
# t5's method broken one way at a time, each a time its numbers alone do not give away on 8 CPU devices:
# no warm-up (the first of timeit's rounds compiles; the median hides it),
T5_NOT_WARM = T5_TIMEIT.replace("    jax.block_until_ready(f(big_lhs, big_rhs))\n", "")
# the clock stopped before each result was ready (the calls queue up, so the loop takes about as long),
T5_UNBLOCKED = T5_SWAPPED_ARGUMENTS.replace(
    "gathered_matmul, big_rhs, big_lhs", "gathered_matmul, big_lhs, big_rhs"
).replace(
    "    for _ in range(calls):\n        f(*args).block_until_ready()", "    for _ in range(calls):\n        f(*args)"
)
# both timed on half of big_lhs's rows (a product of 64×64, about half the time),
T5_SMALLER_LHS = (
    T5_SWAPPED_ARGUMENTS.replace("gathered_matmul, big_rhs, big_lhs", "gathered_matmul, big_lhs, big_rhs")
    .replace("t_collective =", "top_half = jax.device_put(np.asarray(big_lhs)[:64], big_lhs.sharding)\nt_collective =")
    .replace("big_lhs, big_rhs)", "top_half, big_rhs)")
)
# and 50 calls of each where the text asks for 200.
T5_FEW_CALLS = T5_SWAPPED_ARGUMENTS.replace(
    "gathered_matmul, big_rhs, big_lhs", "gathered_matmul, big_lhs, big_rhs"
).replace("calls=200", "calls=50")
# and one call short of the 200 each time is divided by (the waits count 199; the other loop's do not count).
T5_ONE_CALL_SHORT = T5_SWAPPED_ARGUMENTS.replace(
    "gathered_matmul, big_rhs, big_lhs", "gathered_matmul, big_lhs, big_rhs"
).replace("for _ in range(calls):", "for _ in range(calls - 1):")
T3_SWAPPED = "psum_block_shape, scatter_block_shape = (2,), (16,)"
# Also correct: the shapes read off the results themselves.
T3_READ_OFF = """
psum_block_shape = tuple(summed_everywhere(rows).addressable_shards[0].data.shape)
scatter_block_shape = summed_scattered(rows).addressable_shards[3].data.shape
"""
# Right shape, but a list where the text asks for a tuple (the other name is right).
T3_ONE_LIST = "psum_block_shape = [16]\nscatter_block_shape = (2,)"

# Also correct: the ring turns RING's way in a lax.scan, the blocks put in order by rolling.
T1_SCAN = (
    """
def body(block):
    me = jax.lax.axis_index("x")
    def step(current, _):
        current = jax.lax.ppermute(current, "x", RING)
        return current, current
    _, received = jax.lax.scan(step, block, None, length=7)  # the k-th came from device me - k - 1
    ordered = jnp.concatenate([block[None], received])[::-1]  # from device me - 7 up to me
    return jnp.roll(ordered, me + 1, axis=0).reshape(-1)

ring_gather = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P(), check_vma=False))
"""
    + T1_TAIL
)
# The solution's ring, each part of the text broken alone:
T1_SOLUTION_BODY = """
def ring_body(block):
    me = jax.lax.axis_index("x")
    received, current = [block], block
    for k in range(7):
        current = jax.lax.ppermute(current, "x", PAIRS)
        received.append(current)
    origin = (ORIGIN - jnp.arange(8)) % 8
    return jnp.zeros((8,) + block.shape, block.dtype).at[origin].set(jnp.stack(received)).reshape(-1)
"""
# not jitted
T1_EAGER = (
    T1_SOLUTION_BODY.replace("PAIRS", "RING").replace("ORIGIN", "me")
    + "ring_gather = jax.shard_map(ring_body, mesh=mesh, in_specs=P('x'), out_specs=P(), check_vma=False)\n"
    + T1_TAIL
)
# right values everywhere, but step k sends straight to the device k + 1 along: not a ring
T1_JUMPS = (
    T1_SOLUTION_BODY.replace("PAIRS", "[(i, (i + k + 1) % 8) for i in range(8)]")
    .replace("current = jax.lax.ppermute(current", "current = jax.lax.ppermute(block")
    .replace("ORIGIN", "me")
    + "ring_gather = jax.jit(jax.shard_map(ring_body, mesh=mesh, in_specs=P('x'), out_specs=P(),"
    " check_vma=False))\n" + T1_TAIL
)
# every block placed as device 0 must place them: device 0 (whose copy the array shows) is right, no other;
# so the lab's own `gathered` is wrong on seven devices too
T1_DEVICE_0_ONLY = (
    T1_SOLUTION_BODY.replace("PAIRS", "RING").replace("ORIGIN", "0")
    + "ring_gather = jax.jit(jax.shard_map(ring_body, mesh=mesh, in_specs=P('x'), out_specs=P(),"
    " check_vma=False))\n" + T1_TAIL
)

# not jitted
T2_EAGER = """
summed_everywhere = jax.shard_map(lambda b: jax.lax.psum(b[0], "x"), mesh=mesh, in_specs=P("x", None), out_specs=P())
summed_scattered = jax.shard_map(lambda b: jax.lax.psum_scatter(b[0], "x", tiled=True), mesh=mesh,
                                 in_specs=P("x", None), out_specs=P("x"))
"""
# the sum of the (1, 16) blocks, (1, 16) where the text asks for (16,)
T2_ROW_KEPT = (
    "summed_everywhere = jax.jit(jax.shard_map(lambda b: jax.lax.psum(b, 'x'), mesh=mesh,"
    " in_specs=P('x', None), out_specs=P()))\n" + T2_SCATTERED
)

# Also correct: the ring turned RING's way, each step's lhs columns those of the block that came from me - k.
T4_FORWARD = (
    """
def body(lhs_block, rhs_block):
    me = jax.lax.axis_index("x")
    chunk = rhs_block.shape[0]
    out, current = jnp.zeros((lhs_block.shape[0], rhs_block.shape[1]), lhs_block.dtype), rhs_block
    for k in range(8):
        columns = jax.lax.dynamic_slice_in_dim(lhs_block, ((me - k) % 8) * chunk, chunk, axis=1)
        out = out + columns @ current
        if k < 7:
            current = jax.lax.ppermute(current, "x", RING)
    return out

collective_matmul = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(P("x", None), P("x", None)),
                                          out_specs=P("x", None)))
"""
    + T4_TAIL
)
# Also correct: blocks travel both ways round at once, 4 steps instead of 7.
T4_BOTH_WAYS = (
    """
BACK = [(i, (i - 1) % 8) for i in range(8)]

def body(lhs_block, rhs_block):
    me = jax.lax.axis_index("x")
    chunk = rhs_block.shape[0]
    def columns(device):
        return jax.lax.dynamic_slice_in_dim(lhs_block, (device % 8) * chunk, chunk, axis=1)
    out = columns(me) @ rhs_block
    from_after, from_before = rhs_block, rhs_block
    for k in range(1, 5):
        from_after = jax.lax.ppermute(from_after, "x", BACK)  # now the block of device me + k
        out = out + columns(me + k) @ from_after
        if k < 4:
            from_before = jax.lax.ppermute(from_before, "x", RING)  # now the block of device me - k
            out = out + columns(me - k) @ from_before
    return out

collective_matmul = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(P("x", None), P("x", None)),
                                          out_specs=P("x", None)))
"""
    + T4_TAIL
)
# Also correct: the body closes over an array of its own, which the trace puts before lhs and rhs.
T4_CLOSING_OVER = (
    """
ORDER = (jnp.arange(8)[:, None] + jnp.arange(8)[None, :]) % 8  # ORDER[me, k]: whose rhs block is here at step k

def body(lhs_block, rhs_block):
    me = jax.lax.axis_index("x")
    chunk = rhs_block.shape[0]
    out, current = jnp.zeros((lhs_block.shape[0], rhs_block.shape[1]), lhs_block.dtype), rhs_block
    for k in range(8):
        columns = jax.lax.dynamic_slice_in_dim(lhs_block, ORDER[me, k] * chunk, chunk, axis=1)
        out = out + columns @ current
        if k < 7:
            current = jax.lax.ppermute(current, "x", [(i, (i - 1) % 8) for i in range(8)])
    return out

collective_matmul = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(P("x", None), P("x", None)),
                                          out_specs=P("x", None)))
"""
    + T4_TAIL
)
T4_SOLUTION_BODY = """
def matmul_body(lhs_block, rhs_block):
    me = jax.lax.axis_index("x")
    chunk = rhs_block.shape[0]
    out = jnp.zeros((lhs_block.shape[0], rhs_block.shape[1]), lhs_block.dtype)
    current = rhs_block
    for k in range(8):
        columns = jax.lax.dynamic_slice_in_dim(lhs_block, ((me + k) % 8) * chunk, chunk, axis=1)
        out = out + columns @ current
        if k < 7:
            current = jax.lax.ppermute(CURRENT, "x", PAIRS)
    return out
"""
T4_JITTED = (
    "collective_matmul = jax.jit(jax.shard_map(matmul_body, mesh=mesh, in_specs=(P('x', None), P('x', None)),"
    " out_specs=P('x', None)))\n" + T4_TAIL
)
# not jitted
T4_EAGER = (
    T4_SOLUTION_BODY.replace("CURRENT", "current").replace("PAIRS", "[(i, (i - 1) % 8) for i in range(8)]")
    + "collective_matmul = jax.shard_map(matmul_body, mesh=mesh, in_specs=(P('x', None), P('x', None)),"
    " out_specs=P('x', None))\n" + T4_TAIL
)
# right product, but each step fetches the block of device me + k + 1 straight from it: not one device along
T4_JUMPS = (
    T4_SOLUTION_BODY.replace("CURRENT", "rhs_block").replace("PAIRS", "[(i, (i - k - 1) % 8) for i in range(8)]")
    + T4_JITTED
)
# right product and one-step ppermutes from the device's own block, but rhs is laid out whole on every device first
T4_RESHARDED_WHOLE = (
    """
def matmul_body(lhs_block, rhs_whole):
    me = jax.lax.axis_index("x")
    chunk = rhs_whole.shape[0] // 8
    current = jax.lax.dynamic_slice_in_dim(rhs_whole, me * chunk, chunk, axis=0)
    out = jnp.zeros((lhs_block.shape[0], rhs_whole.shape[1]), lhs_block.dtype)
    for k in range(8):
        columns = jax.lax.dynamic_slice_in_dim(lhs_block, ((me + k) % 8) * chunk, chunk, axis=1)
        out = out + columns @ current
        if k < 7:
            current = jax.lax.ppermute(current, "x", [(i, (i - 1) % 8) for i in range(8)])
    return out


_mapped = jax.shard_map(matmul_body, mesh=mesh, in_specs=(P("x", None), P()), out_specs=P("x", None))
collective_matmul = jax.jit(lambda lhs, rhs: _mapped(lhs, jax.reshard(rhs, NamedSharding(mesh, P()))))
"""
    + T4_TAIL
)
# right product and ppermute steps along the ring, but the blocks are stacked into the whole rhs first
T4_STACKED = (
    """
def matmul_body(lhs_block, rhs_block):
    me = jax.lax.axis_index("x")
    blocks, current = [rhs_block], rhs_block
    for _ in range(7):
        current = jax.lax.ppermute(current, "x", [(i, (i - 1) % 8) for i in range(8)])
        blocks.append(current)  # the block of device me + k
    stacked = jnp.stack(blocks)  # in the order of devices me, me + 1, ...
    whole = jnp.roll(stacked, me, axis=0).reshape(-1, rhs_block.shape[1])
    return lhs_block @ whole
"""
    + T4_JITTED
)

# Each requirement of a task's text broken alone, where no case above does it:
# the ring's values, but an all_gather as well (its result added times 0)
T1_RING_AND_ALL_GATHER = (
    T1_SOLUTION_BODY.replace("PAIRS", "RING").replace("ORIGIN", "me")
    + """
def ring_and_gather(block):
    return ring_body(block) + 0 * jax.lax.all_gather(block, "x", tiled=True)

ring_gather = jax.jit(jax.shard_map(ring_and_gather, mesh=mesh, in_specs=P("x"), out_specs=P(), check_vma=False))
"""
    + T1_TAIL
)
# every device's block put in place and summed with psum: the whole array everywhere, no ppermute
T1_PSUM_OF_PLACED_BLOCKS = (
    """
def placed_sum(block):
    me = jax.lax.axis_index("x")
    placed = jnp.zeros((8,) + block.shape, block.dtype).at[me].set(block).reshape(-1)
    return jax.lax.psum(placed, "x")

ring_gather = jax.jit(jax.shard_map(placed_sum, mesh=mesh, in_specs=P("x"), out_specs=P()))
"""
    + T1_TAIL
)
T2_TAIL = "print(summed_everywhere(rows), summed_scattered(rows))"
T2_EVERYWHERE = (
    "summed_everywhere = jax.jit(jax.shard_map(lambda b: jax.lax.psum(b[0], 'x'), mesh=mesh,"
    " in_specs=P('x', None), out_specs=P()))\n"
)
# XLA adds the rows: no psum in a shard_map body
T2_EVERYWHERE_PLAIN_SUM = "summed_everywhere = jax.jit(lambda r: jnp.sum(r, axis=0))\n" + T2_SCATTERED + T2_TAIL
# the scattered sum a slice of a whole psum
T2_SCATTERED_SLICED_PSUM = T2_EVERYWHERE + T2_PLAIN_SUM_AND_SLICED_PSUM.split("\n", 2)[2] + T2_TAIL
# the whole sum on device 0 (whose copy the array shows), zeros on the other devices
T2_EVERYWHERE_ON_DEVICE_0 = (
    "summed_everywhere = jax.jit(jax.shard_map(\n"
    "    lambda b: jnp.where(jax.lax.axis_index('x') == 0, jax.lax.psum(b[0], 'x'), 0.0),\n"
    "    mesh=mesh, in_specs=P('x', None), out_specs=P(), check_vma=False))\n" + T2_SCATTERED + T2_TAIL
)
# psum_scatter, but out_specs=P(): device 0's slice is all the result shows
T2_SCATTERED_NOT_SPLIT = (
    T2_EVERYWHERE + "summed_scattered = jax.jit(jax.shard_map(lambda b: jax.lax.psum_scatter(b[0], 'x', tiled=True),"
    " mesh=mesh, in_specs=P('x', None), out_specs=P(), check_vma=False))\n" + T2_TAIL
)
# ppermute one device along the ring, but the last step's block never multiplied: 7 steps of 8
T4_ONE_STEP_SHORT = (
    T4_SOLUTION_BODY.replace("CURRENT", "current")
    .replace("PAIRS", "[(i, (i - 1) % 8) for i in range(8)]")
    .replace("for k in range(8)", "for k in range(7)")
    + T4_JITTED
)
# the solution's ring, but an all_gather of the device indices as well (their sum added times 0)
T4_ALSO_ALL_GATHER = (
    T4_SOLUTION_BODY.replace("CURRENT", "current")
    .replace("PAIRS", "[(i, (i - 1) % 8) for i in range(8)]")
    .replace("    return out\n", "    return out + 0 * jnp.sum(jax.lax.all_gather(me, 'x'))\n")
    + T4_JITTED
)
# t_collective the total of the 200 calls, not the time per call
T5_COLLECTIVE_TOTAL = T5_SWAPPED_ARGUMENTS.replace(
    "t_collective = seconds_per_call(collective_matmul, big_lhs, big_rhs)",
    "t_collective = 200 * seconds_per_call(collective_matmul, big_lhs, big_rhs)",
).replace("gathered_matmul, big_rhs, big_lhs", "gathered_matmul, big_lhs, big_rhs")

# Each operand laid out whole on every device before the shard_map, whose in_specs then hand every device all of
# it (P()): the body takes its own block and does the rest right; in_specs=P('x') and its kin are not kept
T1_RECEIVES_WHOLE = (
    T1_SOLUTION_BODY.replace("PAIRS", "RING").replace("ORIGIN", "me")
    + """
def from_whole(whole):
    n = whole.shape[0] // 8
    return ring_body(jax.lax.dynamic_slice_in_dim(whole, jax.lax.axis_index("x") * n, n))

_mapped = jax.shard_map(from_whole, mesh=mesh, in_specs=P(), out_specs=P(), check_vma=False)
ring_gather = jax.jit(lambda v: _mapped(jax.reshard(v, NamedSharding(mesh, P()))))
"""
    + T1_TAIL
)
T2_RECEIVES_WHOLE = (
    """
def my_row(whole):
    return jax.lax.dynamic_index_in_dim(whole, jax.lax.axis_index("x"), 0, keepdims=False)

_everywhere = jax.shard_map(lambda r: jax.lax.psum(my_row(r), "x"), mesh=mesh, in_specs=P(), out_specs=P())
_scattered = jax.shard_map(lambda r: jax.lax.psum_scatter(my_row(r), "x", tiled=True), mesh=mesh, in_specs=P(),
                           out_specs=P("x"))
summed_everywhere = jax.jit(lambda rows: _everywhere(jax.reshard(rows, NamedSharding(mesh, P()))))
summed_scattered = jax.jit(lambda rows: _scattered(jax.reshard(rows, NamedSharding(mesh, P()))))
"""
    + T2_TAIL
)
T4_LHS_RECEIVED_WHOLE = (
    T4_SOLUTION_BODY.replace("CURRENT", "current").replace("PAIRS", "[(i, (i - 1) % 8) for i in range(8)]")
    + """
def from_whole_lhs(lhs_whole, rhs_block):
    rows = lhs_whole.shape[0] // 8
    return matmul_body(jax.lax.dynamic_slice_in_dim(lhs_whole, jax.lax.axis_index("x") * rows, rows), rhs_block)

_mapped = jax.shard_map(from_whole_lhs, mesh=mesh, in_specs=(P(), P("x", None)), out_specs=P("x", None))
collective_matmul = jax.jit(lambda lhs, rhs: _mapped(jax.reshard(lhs, NamedSharding(mesh, P())), rhs))
"""
    + T4_TAIL
)
# the whole sum on every device, but gathered and added up: a shard_map body without psum
T2_EVERYWHERE_GATHERED = (
    "summed_everywhere = jax.jit(jax.shard_map(lambda b: jnp.sum(jax.lax.all_gather(b[0], 'x', to='invarying'),"
    " axis=0), mesh=mesh, in_specs=P('x', None), out_specs=P()))\n" + T2_SCATTERED + T2_TAIL
)
# the solution's ring, but out_specs=P('x'): the 8 gathered copies side by side, an array 8 times too long
T1_OUT_SPECS_SPLIT = (
    T1_SOLUTION_BODY.replace("PAIRS", "RING").replace("ORIGIN", "me")
    + "ring_gather = jax.jit(jax.shard_map(ring_body, mesh=mesh, in_specs=P('x'), out_specs=P('x'), check_vma=False))\n"
    + T1_TAIL
)

CASES = [
    Case(
        "also_correct",
        {
            "t1": T1_BACKWARDS_LOOP,
            "t2": "summed_everywhere = jax.jit(jax.shard_map("
            "lambda b: jax.lax.psum(b, 'x')[0], mesh=mesh, in_specs=P('x', None), out_specs=P()))\n" + T2_SCATTERED,
            "t3": T3_READ_OFF,
            "t4": T4_LOOP,
            "t5": T5_TIMEIT,
        },
        {"t1": 25, "t2": 30, "t3": 10, "t4": 20, "t5": 15},
    ),
    Case(
        "also_correct_other_ways_round",
        {"t1": T1_SCAN, **solved("t2"), "t4": T4_BOTH_WAYS},
        {"t1": 25, "t2": 30, "t4": 20},
    ),
    Case("also_correct_forward", {**solved("t1", "t2"), "t4": T4_FORWARD}, {"t1": 25, "t2": 30, "t4": 20}),
    Case("also_correct_closing_over_an_array", {"t4": T4_CLOSING_OVER}, {"t4": 20}),
    Case(
        "collectives_of_xla_or_the_wrong_kind",
        {"t1": T1_ALL_GATHER, "t2": T2_PLAIN_SUM_AND_SLICED_PSUM, "t3": T3_SWAPPED, "t4": T4_ALL_GATHER},
        {"t1": 16, "t2": 21, "t3": 0, "t4": 10},
        messages={"t1": "found only all_gather", "t2": "found no shard_map", "t4": "found only all_gather"},
    ),
    # Each case below breaks one requirement of each task's text and loses exactly that check's points.
    Case(
        "not_jitted",
        {"t1": T1_EAGER, "t2": T2_EAGER, "t3": T3_ONE_LIST, "t4": T4_EAGER},
        {"t1": 22, "t2": 24, "t3": 5, "t4": 18},
        messages={
            "t1": "expected a jitted function",
            "t2": "expected a jitted function",
            "t3": "a list is not a tuple",
            "t4": "expected a jitted function",
        },
    ),
    Case(
        "not_a_ring",
        {"t1": T1_JUMPS, "t2": T2_ROW_KEPT, "t4": T4_JUMPS},
        {"t1": 21, "t2": 23, "t4": 17},
        messages={
            "t1": "one device along the ring",
            "t2": "expected shape (32,), found shape (1, 32)",
            "t4": "one device along the ring",
        },
    ),
    Case(
        "device_0_right_or_rhs_held_whole",
        {"t1": T1_DEVICE_0_ONLY, **solved("t2"), "t4": T4_STACKED},
        {"t1": 13, "t2": 30, "t4": 17},
        messages={"t1": "holds other values in its block", "t4": "never to hold rhs whole"},
    ),
    Case(
        "rhs_resharded_whole_first",
        {"t4": T4_RESHARDED_WHOLE},
        {"t4": 16},
        messages={"t4": "rhs laid out whole on every device"},
    ),
    Case("first_two_solved", solved("t1", "t2"), {"t1": 25, "t2": 30}),
    Case(
        "speedup_in_percent",
        {**solved("t4"), "t5": T5_PERCENT},
        {"t4": 20, "t5": 11},
        messages={"t5": "the speedup must be computed from your two times"},
    ),
    Case("timed_on_swapped_arguments", {**solved("t4"), "t5": T5_SWAPPED_ARGUMENTS}, {"t4": 20, "t5": 6}),
    Case("t1_ring_and_all_gather", {"t1": T1_RING_AND_ALL_GATHER}, {"t1": 20}, messages={"t1": "all_gather"}),
    Case("t1_psum_of_placed_blocks", {"t1": T1_PSUM_OF_PLACED_BLOCKS}, {"t1": 16}, messages={"t1": "ppermute"}),
    Case("t2_everywhere_plain_sum", {"t2": T2_EVERYWHERE_PLAIN_SUM}, {"t2": 25}, messages={"t2": "psum"}),
    Case("t2_scattered_sliced_psum", {"t2": T2_SCATTERED_SLICED_PSUM}, {"t2": 26}, messages={"t2": "psum"}),
    Case("t2_everywhere_gathered", {"t2": T2_EVERYWHERE_GATHERED}, {"t2": 26}, messages={"t2": "jax.lax.psum"}),
    Case("t2_everywhere_on_device_0", {"t2": T2_EVERYWHERE_ON_DEVICE_0}, {"t2": 23}),
    Case("t2_scattered_not_split", {"t2": T2_SCATTERED_NOT_SPLIT}, {"t2": 23}),
    Case("t4_one_step_short", {"t4": T4_ONE_STEP_SHORT}, {"t4": 13}),
    Case("t4_also_all_gather", {"t4": T4_ALSO_ALL_GATHER}, {"t4": 16}, messages={"t4": "all_gather"}),
    Case(
        "operands_received_whole",
        {"t1": T1_RECEIVES_WHOLE, "t2": T2_RECEIVES_WHOLE, "t4": T4_LHS_RECEIVED_WHOLE},
        {"t1": 24, "t2": 28, "t4": 19},
        messages={"t1": "in_specs", "t2": "in_specs", "t4": "in_specs"},
    ),
    Case("t1_out_specs_split", {"t1": T1_OUT_SPECS_SPLIT}, {"t1": 13}, messages={"t1": "expected shape (64,)"}),
    Case("t5_collective_total", {**solved("t4"), "t5": T5_COLLECTIVE_TOTAL}, {"t4": 20, "t5": 9}),
    Case(  # sound times and verdict; the ratio the other way up (about 4, where the grader measures 0.25)
        "t5_speedup_inverted",
        {
            **solved("t4"),
            "t5": T5_TIMEIT.replace("speedup = t_gathered / t_collective", "speedup = t_collective / t_gathered"),
        },
        {"t4": 20, "t5": 11},
        messages={"t5": "the speedup must be computed from your two times"},
    ),
    Case("t5_not_warm", {**solved("t4"), "t5": T5_NOT_WARM}, {"t4": 20, "t5": 14}, messages={"t5": "first call"}),
    Case("t5_unblocked", {**solved("t4"), "t5": T5_UNBLOCKED}, {"t4": 20, "t5": 14}, messages={"t5": "dispatch"}),
    Case("t5_on_a_smaller_lhs", {**solved("t4"), "t5": T5_SMALLER_LHS}, {"t4": 20, "t5": 14}),
    Case("t5_too_few_calls", {**solved("t4"), "t5": T5_FEW_CALLS}, {"t4": 20, "t5": 14}),
    Case(
        "t5_one_call_short",
        {**solved("t4"), "t5": T5_ONE_CALL_SHORT},
        {"t4": 20, "t5": 14},
        messages={"t5": "199 call(s)"},
    ),
    Case(  # sound times and speedup; the verdict says the collective matmul won where it clearly lost
        "t5_verdict_negated",
        {**solved("t4"), "t5": T5_TIMEIT.replace("t_collective < t_gathered", "t_collective > t_gathered")},
        {"t4": 20, "t5": 12},
        messages={"t5": "clearly slower"},
    ),
]
