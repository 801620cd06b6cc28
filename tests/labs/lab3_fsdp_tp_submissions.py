"""Submissions of lab 3 with known grades: correct ones written differently, and wrong ones.

Each case fills some tasks' answer cells (the rest stay blank and score 0) and states the score of
every task. A wrong task loses exactly the points of the checks it gets wrong, and no others.
"""

from autograder.authoring.known_grades import Case, solved

T2_SPECS = 'in_specs=(P(None, "model"), P(None, "model"), P("model", None))'

T3_JIT_VARIANT = """
from functools import partial

SPECS = (P("data", "model"), P("data", "model"), P("model", "data"))


@jax.jit
@partial(jax.shard_map, mesh=mesh, in_specs=SPECS, out_specs=P("data", "model"))
def fsdp_tp_mlp(x_block, W1_block, W2_block):
    W1_full = jax.lax.all_gather(W1_block, "data", axis=0, tiled=True)
    W2_full = jax.lax.all_gather(W2_block, "data", axis=1, tiled=True)
    x_full = jax.lax.all_gather(x_block, "model", axis=1, tiled=True)
    partial_sum = jnp.einsum("bh,hm,mo->bo", x_full, W1_full, W2_full)
    return jax.lax.psum_scatter(partial_sum, "model", scatter_dimension=1, tiled=True)


fsdp_tp_jit = jax.jit(fsdp_tp_mlp, in_shardings=tuple(NamedSharding(mesh, s) for s in SPECS),
                      out_shardings=NamedSharding(mesh, P("data", "model")))
"""

T4_FNS = """
def make(body, out_specs, jit=True):
    f = jax.shard_map(body, mesh=mesh1d, in_specs=P("data", None), out_specs=out_specs)
    return jax.jit(f) if jit else f


BODIES = {
    "all_gather": (lambda b: jax.lax.all_gather(b, "data", axis=0, tiled=True, to="invarying"), P()),
    "psum": (lambda b: jax.lax.psum(b, "data"), P()),
    "psum_scatter": (lambda b: jax.lax.psum_scatter(b, "data", scatter_dimension=1, tiled=True), P(None, "data")),
    "all_to_all": (lambda b: jax.lax.all_to_all(b, "data", split_axis=1, concat_axis=0, tiled=True),
                   P(None, "data")),
}
"""

T4_MEDIAN_OF_BLOCKED_LOOPS = (
    T4_FNS
    + """
import statistics

collective_fns = {name: make(body, out_specs) for name, (body, out_specs) in BODIES.items()}
collective_times = {}
for name, f in collective_fns.items():
    f(X).block_until_ready()
    f(X).block_until_ready()
    rounds = []
    for _ in range(5):
        start = time.time()
        for _ in range(6):
            f(X).block_until_ready()
        rounds.append((time.time() - start) / 6)
    collective_times[name] = statistics.median(rounds)
"""
)

T4_MILLISECONDS = (
    T4_FNS
    + """
def per_call_ms(f, x, n=10):
    jax.block_until_ready(f(x))
    times = []
    for _ in range(n):
        start = time.perf_counter()
        jax.block_until_ready(f(x))
        times.append((time.perf_counter() - start) * 1e3)
    return float(np.median(times))


collective_fns = {name: make(body, out_specs) for name, (body, out_specs) in BODIES.items()}
collective_times = {name: per_call_ms(f, X) for name, f in collective_fns.items()}
"""
)

TP_LAYER_SOLUTION_LINEAR = """
COLUMNS, ROWS = (None, "model"), ("model", None)


def sharded_linear(n_in, n_out, spec, rngs):
    return nnx.Linear(n_in, n_out, use_bias=False, rngs=rngs,
                      kernel_init=nnx.with_partitioning(nnx.initializers.kaiming_normal(), spec))
"""


def tp_layer_source(scale="jnp.sqrt(d)", linear="sharded_linear(n_in, n_out, spec, rngs)"):
    """A TPLayer cell like the solution's, with the attention's scale or the Linear layers changed."""
    return (
        TP_LAYER_SOLUTION_LINEAR
        + f"""

def make_linear(n_in, n_out, spec, rngs):
    return {linear}


class Attention(nnx.Module):
    def __init__(self, hidden_dim, num_heads, *, rngs):
        self.num_heads = num_heads
        self.Wq = make_linear(hidden_dim, hidden_dim, COLUMNS, rngs)
        self.Wk = make_linear(hidden_dim, hidden_dim, COLUMNS, rngs)
        self.Wv = make_linear(hidden_dim, hidden_dim, COLUMNS, rngs)
        self.Wo = make_linear(hidden_dim, hidden_dim, ROWS, rngs)

    def __call__(self, x):
        B, S, D = x.shape
        H = self.num_heads
        d = D // H
        heads = lambda t: t.reshape(B, S, H, d).transpose(0, 2, 1, 3)
        q, k, v = heads(self.Wq(x)), heads(self.Wk(x)), heads(self.Wv(x))
        weights = jax.nn.softmax(jnp.einsum("bhqd,bhkd->bhqk", q, k) / {scale}, axis=-1)
        out = jnp.einsum("bhqk,bhkd->bhqd", weights, v)
        return self.Wo(out.transpose(0, 2, 1, 3).reshape(B, S, D))


class MLP(nnx.Module):
    def __init__(self, hidden_dim, *, rngs):
        self.W1 = make_linear(hidden_dim, 4 * hidden_dim, COLUMNS, rngs)
        self.W2 = make_linear(4 * hidden_dim, hidden_dim, ROWS, rngs)

    def __call__(self, x):
        return self.W2(jax.nn.relu(self.W1(x)))


class TPLayer(nnx.Module):
    def __init__(self, hidden_dim, num_heads, *, rngs):
        self.attention = Attention(hidden_dim, num_heads, rngs=rngs)
        self.mlp = MLP(hidden_dim, rngs=rngs)

    def __call__(self, x):
        y = x + self.attention(x)
        return y + self.mlp(y)
"""
    )


# Other internals, the same math: jax.nn.dot_product_attention (which scales by 1/sqrt(head_dim)),
# one helper module class for the four projections, and the residuals written inline.
TP_LAYER_VARIANT = """
def linear(n_in, n_out, spec, rngs):
    init = nnx.with_partitioning(nnx.initializers.kaiming_normal(), spec)
    return nnx.Linear(n_in, n_out, use_bias=False, kernel_init=init, rngs=rngs)


class Attention(nnx.Module):
    def __init__(self, hidden_dim, num_heads, *, rngs):
        self.num_heads = num_heads
        for name in ("Wq", "Wk", "Wv"):
            setattr(self, name, linear(hidden_dim, hidden_dim, (None, "model"), rngs))
        self.Wo = linear(hidden_dim, hidden_dim, ("model", None), rngs)

    def __call__(self, x):
        B, S, D = x.shape
        split = lambda t: t.reshape(B, S, self.num_heads, D // self.num_heads)
        out = jax.nn.dot_product_attention(split(self.Wq(x)), split(self.Wk(x)), split(self.Wv(x)))
        return self.Wo(out.reshape(B, S, D))


class MLP(nnx.Module):
    def __init__(self, hidden_dim, *, rngs):
        self.W1 = linear(hidden_dim, 4 * hidden_dim, (None, "model"), rngs)
        self.W2 = linear(4 * hidden_dim, hidden_dim, ("model", None), rngs)

    def __call__(self, x):
        return jnp.maximum(x @ self.W1.kernel[...], 0) @ self.W2.kernel[...]


class TPLayer(nnx.Module):
    def __init__(self, hidden_dim, num_heads, *, rngs):
        self.attention = Attention(hidden_dim, num_heads, rngs=rngs)
        self.mlp = MLP(hidden_dim, rngs=rngs)

    def __call__(self, x):
        x = x + self.attention(x)
        return x + self.mlp(x)
"""

T6_APPLY_SOLUTION = """
@nnx.jit
def apply_layer(layer, inputs):
    return layer(inputs)


with jax.set_mesh(mesh):
    tp_layer = TPLayer(256, 8, rngs=nnx.Rngs(0))
    layer_out = apply_layer(tp_layer, X_layer)
"""

# built under a mesh made anew, equal to mesh (the same devices, axes and axis types): JAX's same mesh
T6_APPLY_VARIANT = """
with jax.set_mesh(jax.make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))):
    tp_layer = TPLayer(256, 8, rngs=nnx.Rngs(0))
    layer_out = nnx.jit(lambda layer, inputs: layer(inputs))(tp_layer, X_layer)
"""

ALT_T3 = """
from functools import partial

S = lambda *spec: NamedSharding(mesh, P(*spec))


def block(x_b, W1_b, W2_b):
    x_full = jax.lax.all_gather(x_b, "model", axis=1, tiled=True)
    W1_full = jax.lax.all_gather(W1_b, "data", axis=0, tiled=True)
    W2_full = jax.lax.all_gather(W2_b, "data", axis=1, tiled=True)
    return jax.lax.psum_scatter(x_full @ W1_full @ W2_full, "model", scatter_dimension=1, tiled=True)


program = jax.shard_map(block, mesh=mesh, in_specs=(P("data", "model"),) * 2 + (P("model", "data"),),
                        out_specs=P("data", "model"))
fsdp_tp_mlp = jax.jit(program)
fsdp_tp_jit = partial(jax.jit, in_shardings=(S("data", "model"), S(("data",), "model"), S("model", "data")),
                      out_shardings=S("data", ("model",)))(program)
"""

# t4's method broken one way at a time, as the text's own words name it; each time stays within the
# grader's margin on 8 CPU devices, so only the timing record tells them apart:
T4_SECONDS_PER_CALL = """
def per_call(f, x, warm_up=3, repeats=30):
    for _ in range(warm_up):
        jax.block_until_ready(f(x))
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(f(x))
        times.append(time.perf_counter() - start)
    return float(np.median(times))


collective_fns = {name: make(body, out_specs) for name, (body, out_specs) in BODIES.items()}
collective_times = {name: per_call(f, X) for name, f in collective_fns.items()}
"""
# no warm-up: the first of the 30 timed calls compiles (the median hides it),
T4_NOT_WARM = T4_FNS + T4_SECONDS_PER_CALL.replace("warm_up=3", "warm_up=0")
# the clock stopped before the result was ready (the wait comes after it),
T4_UNBLOCKED = T4_FNS + T4_SECONDS_PER_CALL.replace(
    """        jax.block_until_ready(f(x))
        times.append(time.perf_counter() - start)""",
    """        result = f(x)
        times.append(time.perf_counter() - start)
        jax.block_until_ready(result)""",
)
# the functions timed on the first 200 rows of X, not on X,
T4_ON_A_SMALLER_X = T4_FNS + T4_SECONDS_PER_CALL.replace(
    "per_call(f, X)", "per_call(f, jax.device_put(np.asarray(X)[:200], X.sharding))"
)
# and the mean of the timed calls taken, not their median.
T4_MEAN = T4_FNS + T4_SECONDS_PER_CALL.replace("float(np.median(times))", "float(np.mean(times))")

ALT_T4 = """
bodies = (
    ("all_gather", lambda b: jax.lax.all_gather(b, "data", axis=0, tiled=True, to="invarying"), P()),
    ("psum", lambda b: jax.lax.psum(b, "data"), P()),
    ("psum_scatter", lambda b: jax.lax.psum_scatter(b, "data", scatter_dimension=1, tiled=True), P(None, "data")),
    ("all_to_all", lambda b: jax.lax.all_to_all(b, "data", 1, 0, tiled=True), P(None, "data")),
)
fns = {name: jax.jit(jax.shard_map(body, mesh=mesh1d, in_specs=P("data"), out_specs=out)) for name, body, out in bodies}
for f in fns.values():
    for _ in range(2):
        jax.block_until_ready(f(X))
samples = {name: [] for name in fns}
for _ in range(20):  # interleaved: a busy moment hits every op alike
    for name, f in fns.items():
        t0 = time.perf_counter()
        f(X).block_until_ready()
        samples[name].append(time.perf_counter() - t0)
collective_times = {name: float(np.median(s)) for name, s in samples.items()}
collective_fns = fns
"""

ALT_T5 = """
from functools import partial


@jax.jit
@partial(jax.shard_map, mesh=mesh1d, in_specs=P("data"), out_specs=P(None, "data"))
def all_to_all(block):
    return jax.lax.all_to_all(block, axis_name="data", split_axis=1, concat_axis=0, tiled=True)


X_t = all_to_all(X)
same_mesh = jax.sharding.Mesh(np.array(jax.devices()), ("data",))  # equal to mesh1d: its devices, Auto axes
back = jax.jit(jax.shard_map(partial(jax.lax.all_to_all, axis_name="data", split_axis=0, concat_axis=1, tiled=True),
                             mesh=same_mesh, in_specs=P(None, "data"), out_specs=P("data")))
X_roundtrip = back(X_t)
"""

# Another initializer, heads without transposes, the scale as a power, and the layer called without jit.
ALT_T6_LAYER = """
def partitioned(spec):
    return nnx.with_partitioning(nnx.initializers.lecun_normal(), spec)


class Attention(nnx.Module):
    def __init__(self, hidden_dim, num_heads, *, rngs):
        D = hidden_dim
        self.num_heads = num_heads
        self.Wq, self.Wk, self.Wv = (nnx.Linear(D, D, use_bias=False, kernel_init=partitioned((None, "model")), rngs=rngs)
                                     for _ in range(3))
        self.Wo = nnx.Linear(D, D, use_bias=False, kernel_init=partitioned(("model", None)), rngs=rngs)

    def __call__(self, x):
        B, S, D = x.shape
        H = self.num_heads
        d = D // H
        q, k, v = (w(x).reshape(B, S, H, d) for w in (self.Wq, self.Wk, self.Wv))
        scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) * d ** -0.5
        o = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(scores, axis=-1), v)
        return self.Wo(o.reshape(B, S, D))


class MLP(nnx.Module):
    def __init__(self, hidden_dim, *, rngs):
        self.W1 = nnx.Linear(hidden_dim, 4 * hidden_dim, use_bias=False, kernel_init=partitioned((None, "model")),
                             rngs=rngs)
        self.W2 = nnx.Linear(4 * hidden_dim, hidden_dim, use_bias=False, kernel_init=partitioned(("model", None)),
                             rngs=rngs)

    def __call__(self, x):
        return self.W2(nnx.relu(self.W1(x)))


class TPLayer(nnx.Module):
    def __init__(self, hidden_dim, num_heads, *, rngs):
        self.attention = Attention(hidden_dim, num_heads, rngs=rngs)
        self.mlp = MLP(hidden_dim, rngs=rngs)

    def __call__(self, x):
        h = self.attention(x) + x
        return self.mlp(h) + h
"""

ALT_T6_APPLY = """
with jax.set_mesh(mesh):
    tp_layer = TPLayer(256, 8, rngs=nnx.Rngs(0))
    layer_out = tp_layer(X_layer)
"""

# The solution's answers, each requirement of a task's text broken alone where no case above does it.
T1_SOLUTION = """
def _fsdp_matmul_block(x_block, A_block):
    A_full = jax.lax.all_gather(A_block, "data", axis=0, tiled=True)
    return x_block @ A_full


fsdp_matmul = jax.jit(jax.shard_map(
    _fsdp_matmul_block, mesh=mesh,
    in_specs=(P("data", None), P("data", None)),
    out_specs=P("data", None)))
"""
# not x @ A: one added to it
T1_PLUS_ONE = T1_SOLUTION.replace("return x_block @ A_full", "return x_block @ A_full + 1")
# A's blocks put in place and summed with psum: the whole of A, but no all-gather
T1_WEIGHT_BY_PSUM = T1_SOLUTION.replace(
    '    A_full = jax.lax.all_gather(A_block, "data", axis=0, tiled=True)\n',
    "    n = A_block.shape[0]\n"
    "    placed = jnp.zeros((mesh.shape['data'] * n, A_block.shape[1]), A_block.dtype)\n"
    "    A_full = jax.lax.psum(jax.lax.dynamic_update_slice_in_dim(placed, A_block, jax.lax.axis_index('data') * n, 0),\n"
    "                          'data')\n",
)
T2_SOLUTION = """
def _tp_mlp_block(x_block, W1_block, W2_block):
    x_full = jax.lax.all_gather(x_block, "model", axis=1, tiled=True)
    h = x_full @ W1_block
    y_partial = h @ W2_block
    return jax.lax.psum_scatter(y_partial, "model", scatter_dimension=1, tiled=True)


tp_mlp = jax.jit(jax.shard_map(
    _tp_mlp_block, mesh=mesh,
    in_specs=(P(None, "model"), P(None, "model"), P("model", None)),
    out_specs=P(None, "model")))
"""
# not jitted
T2_EAGER = T2_SOLUTION.replace("tp_mlp = jax.jit(jax.shard_map(", "tp_mlp = (jax.shard_map(")
# not x @ W1 @ W2: a relu between the products
T2_RELU = T2_SOLUTION.replace("y_partial = h @ W2_block", "y_partial = jax.nn.relu(h) @ W2_block")
# the same values, scattered by rows: laid out P('model', None)
T2_ROWS_OVER_MODEL = T2_SOLUTION.replace("scatter_dimension=1", "scatter_dimension=0").replace(
    'out_specs=P(None, "model")', 'out_specs=P("model", None)'
)
# x's blocks put in place and summed with psum: the whole of x, but no all-gather
T2_X_BY_PSUM = T2_SOLUTION.replace(
    '    x_full = jax.lax.all_gather(x_block, "model", axis=1, tiled=True)\n',
    "    n = x_block.shape[1]\n"
    "    placed = jnp.zeros((x_block.shape[0], mesh.shape['model'] * n), x_block.dtype)\n"
    "    x_full = jax.lax.psum(jax.lax.dynamic_update_slice_in_dim(placed, x_block, jax.lax.axis_index('model') * n, 1),\n"
    "                          'model')\n",
)
T3_SOLUTION = """
def _fsdp_tp_block(x_block, W1_block, W2_block):
    x_full = jax.lax.all_gather(x_block, "model", axis=1, tiled=True)
    W1_full = jax.lax.all_gather(W1_block, "data", axis=0, tiled=True)
    W2_full = jax.lax.all_gather(W2_block, "data", axis=1, tiled=True)
    y_partial = (x_full @ W1_full) @ W2_full
    return jax.lax.psum_scatter(y_partial, "model", scatter_dimension=1, tiled=True)


FSDP_TP_SPECS = (P("data", "model"), P("data", "model"), P("model", "data"))
fsdp_tp_program = jax.shard_map(
    _fsdp_tp_block, mesh=mesh, in_specs=FSDP_TP_SPECS, out_specs=P("data", "model"))

fsdp_tp_mlp = jax.jit(fsdp_tp_program)
fsdp_tp_jit = jax.jit(
    fsdp_tp_program,
    in_shardings=tuple(NamedSharding(mesh, spec) for spec in FSDP_TP_SPECS),
    out_shardings=NamedSharding(mesh, P("data", "model")))
"""
# not x @ W1 @ W2: a relu between the products
T3_RELU = T3_SOLUTION.replace(
    "y_partial = (x_full @ W1_full) @ W2_full", "y_partial = jax.nn.relu(x_full @ W1_full) @ W2_full"
)
# fsdp_tp_mlp not jitted
T3_MLP_EAGER = T3_SOLUTION.replace("fsdp_tp_mlp = jax.jit(fsdp_tp_program)", "fsdp_tp_mlp = fsdp_tp_program")
# a whole psum, then each device's slice: no reduce-scatter
T3_PSUM_THEN_SLICE = T3_SOLUTION.replace(
    '    return jax.lax.psum_scatter(y_partial, "model", scatter_dimension=1, tiled=True)\n',
    "    y = jax.lax.psum(y_partial, 'model')\n"
    "    width = y.shape[1] // mesh.shape['model']\n"
    "    return jax.lax.dynamic_slice_in_dim(y, jax.lax.axis_index('model') * width, width, axis=1)\n",
)
# fsdp_tp_mlp's result scattered by rows, over both axes; fsdp_tp_jit's out_shardings lay it out right
T3_MLP_ROWS = T3_SOLUTION.replace("scatter_dimension=1", "scatter_dimension=0").replace(
    'out_specs=P("data", "model"))', 'out_specs=P(("data", "model"), None))'
)
# the times are the right functions', but each key of collective_fns holds the next op's function
T4_FUNCTIONS_ROTATED = (
    ALT_T4 + "names = list(fns)\ncollective_fns = {name: fns[names[(i + 1) % 4]] for i, name in enumerate(names)}\n"
)
# the times of the jitted functions, measured as alt_style_b does, but collective_fns binds them without jax.jit
T4_FUNCTIONS_NOT_JITTED = (
    ALT_T4
    + "collective_fns = {name: jax.shard_map(body, mesh=mesh1d, in_specs=P('data'), out_specs=out)"
    + " for name, body, out in bodies}\n"
)
# an entry besides the four ops
T4_EXTRA_KEY = ALT_T4 + "collective_times['total'] = sum(collective_times.values())\n"
T5_SOLUTION = """
all_to_all = jax.jit(jax.shard_map(
    lambda b: jax.lax.all_to_all(b, "data", split_axis=1, concat_axis=0, tiled=True),
    mesh=mesh1d, in_specs=P("data", None), out_specs=P(None, "data")))
all_to_all_back = jax.jit(jax.shard_map(
    lambda b: jax.lax.all_to_all(b, "data", split_axis=0, concat_axis=1, tiled=True),
    mesh=mesh1d, in_specs=P(None, "data"), out_specs=P("data", None)))

X_t = all_to_all(X)
X_roundtrip = all_to_all_back(X_t)
"""
# all_to_all not jitted
T5_EAGER = T5_SOLUTION.replace("all_to_all = jax.jit(jax.shard_map(", "all_to_all = (jax.shard_map(", 1)
# the columns taken from a gathered X: the same values and layout, but no all-to-all
T5_GATHER_THEN_SLICE = T5_SOLUTION.replace(
    'lambda b: jax.lax.all_to_all(b, "data", split_axis=1, concat_axis=0, tiled=True),\n    mesh=mesh1d, in_specs=P("data", None)',
    "lambda b: jax.lax.dynamic_slice_in_dim(jax.lax.all_gather(b, 'data', axis=0, tiled=True),\n"
    "                                       jax.lax.axis_index('data') * b.shape[1] // 8, b.shape[1] // 8, axis=1),\n"
    '    mesh=mesh1d, in_specs=P("data", None)',
)
# X_t replicated on every device
T5_X_T_REPLICATED = T5_SOLUTION.replace(
    "X_t = all_to_all(X)\nX_roundtrip = all_to_all_back(X_t)",
    "X_roundtrip = all_to_all_back(all_to_all(X))\nX_t = jax.device_put(all_to_all(X), NamedSharding(mesh1d, P()))",
)
# X_roundtrip left by columns
T5_NOT_BACK = T5_SOLUTION.replace("X_roundtrip = all_to_all_back(X_t)", "X_roundtrip = X_t")
# a function of the notebook's X, whatever it is given
T5_OF_THE_GLOBAL_X = T5_SOLUTION.replace(
    "all_to_all = jax.jit(jax.shard_map(", "_relayout = jax.jit(jax.shard_map("
).replace("X_t = all_to_all(X)", "all_to_all = jax.jit(lambda given: _relayout(X))\nX_t = all_to_all(X)")
# layout_out the output for another input
T6_APPLY_OTHER_INPUT = T6_APPLY_SOLUTION.replace("apply_layer(tp_layer, X_layer)", "apply_layer(tp_layer, 2 * X_layer)")
# Each name, layout and type the texts state, broken alone (one answer per task; the cases below gather them).
# fsdp_matmul, tp_mlp, fsdp_tp_mlp given in_shardings: they refuse inputs committed to another layout on mesh,
# which the texts say they accept
T1_IN_SHARDINGS = T1_SOLUTION.replace(
    'out_specs=P("data", None)))',
    'out_specs=P("data", None)),\n    in_shardings=(NamedSharding(mesh, P("data", None)),) * 2)',
)
T2_IN_SHARDINGS = T2_SOLUTION.replace(
    'out_specs=P(None, "model")))',
    'out_specs=P(None, "model")),\n    in_shardings=tuple(NamedSharding(mesh, s) for s in (P(None, "model"), P(None, "model"),'
    ' P("model", None))))',
)
T3_MLP_IN_SHARDINGS = T3_SOLUTION + "fsdp_tp_mlp = fsdp_tp_jit\n"
# a mesh of the same devices whose axes are named otherwise than mesh's 'data' and 'model' (mesh1d's 'data')
T1_MESH_RENAMED = (
    "mesh_dt = jax.make_mesh((2, 4), ('data', 'tensor'), axis_types=(AxisType.Auto,) * 2)\n"
    + T1_SOLUTION.replace("mesh=mesh", "mesh=mesh_dt")
)
T2_MESH_RENAMED = (
    "mesh_rm = jax.make_mesh((2, 4), ('rows', 'model'), axis_types=(AxisType.Auto,) * 2)\n"
    + T2_SOLUTION.replace("mesh=mesh", "mesh=mesh_rm")
)
T3_MESH_RENAMED = "mesh_bt = jax.make_mesh((2, 4), ('batch', 'tensor'), axis_types=(AxisType.Auto,) * 2)\n" + (
    T3_SOLUTION.replace('"data"', '"batch"')
    .replace('"model"', '"tensor"')
    .replace("mesh=mesh", "mesh=mesh_bt")
    .replace("NamedSharding(mesh,", "NamedSharding(mesh_bt,")
)
T5_MESH_RENAMED = "mesh_rows = jax.make_mesh((8,), ('rows',), axis_types=(AxisType.Auto,))\n" + T5_SOLUTION.replace(
    '"data"', '"rows"'
).replace("mesh=mesh1d", "mesh=mesh_rows")
T6_APPLY_MESH_RENAMED = (
    "mesh_bm = jax.make_mesh((2, 4), ('batch', 'model'), axis_types=(AxisType.Auto,) * 2)\n"
    + T6_APPLY_SOLUTION.replace("jax.set_mesh(mesh)", "jax.set_mesh(mesh_bm)")
)
# one operand laid out whole on every device by in_specs P(), the body taking its own block of it: the values,
# the output layout and (but in t2) the gathers are right; the in_specs are not the text's
T1_X_WHOLE = T1_SOLUTION.replace(
    "    return x_block @ A_full\n",
    "    rows = x_block.shape[0] // mesh.shape['data']\n"
    "    return jax.lax.dynamic_slice_in_dim(x_block, jax.lax.axis_index('data') * rows, rows, 0) @ A_full\n",
).replace('in_specs=(P("data", None), P("data", None))', 'in_specs=(P(), P("data", None))')
T2_W2_WHOLE = T2_SOLUTION.replace(
    "    y_partial = h @ W2_block\n",
    "    rows = W2_block.shape[0] // mesh.shape['model']\n"
    "    y_partial = h @ jax.lax.dynamic_slice_in_dim(W2_block, jax.lax.axis_index('model') * rows, rows, 0)\n",
).replace('P("model", None)),\n    out_specs', "P()),\n    out_specs")
T3_X_WHOLE = T3_SOLUTION.replace(
    '    x_full = jax.lax.all_gather(x_block, "model", axis=1, tiled=True)\n',
    "    rows = x_block.shape[0] // mesh.shape['data']\n"
    "    x_full = jax.lax.dynamic_slice_in_dim(x_block, jax.lax.axis_index('data') * rows, rows, 0)\n",
).replace("in_specs=FSDP_TP_SPECS", "in_specs=(P(),) + FSDP_TP_SPECS[1:]")
# functions of the notebook's x, A, W1, W2, whatever arrays they are given
T1_OF_THE_LAB_ARRAYS = (
    T1_SOLUTION.replace("fsdp_matmul = jax.jit(jax.shard_map(", "_program = jax.jit(jax.shard_map(")
    + "fsdp_matmul = jax.jit(lambda x_given, A_given: _program(x, A))\n"
)
T2_OF_THE_LAB_ARRAYS = (
    T2_SOLUTION.replace("tp_mlp = jax.jit(jax.shard_map(", "_program = jax.jit(jax.shard_map(")
    + "tp_mlp = jax.jit(lambda x_given, W1_given, W2_given: _program(x, W1, W2))\n"
)
T3_OF_THE_LAB_ARRAYS = T3_SOLUTION.replace(
    "fsdp_tp_mlp = jax.jit(fsdp_tp_program)",
    "fsdp_tp_mlp = jax.jit(lambda x_given, W1_given, W2_given: fsdp_tp_program(x, W1, W2))",
).replace(
    "fsdp_tp_jit = jax.jit(\n    fsdp_tp_program,",
    "fsdp_tp_jit = jax.jit(\n    lambda x_given, W1_given, W2_given: fsdp_tp_program(x, W1, W2),",
)
# the MLP of the layer 2D wide, not 4D
T6_MLP_TWICE_AS_WIDE = tp_layer_source().replace("4 * hidden_dim", "2 * hidden_dim")
# linear layers of a module of one's own, not nnx.Linear
T6_OWN_LINEAR = """
class Dense(nnx.Module):
    def __init__(self, n_in, n_out, spec, rngs):
        init = nnx.with_partitioning(nnx.initializers.kaiming_normal(), spec)
        self.kernel = nnx.Param(init(rngs.params(), (n_in, n_out)))

    def __call__(self, x):
        return x @ self.kernel[...]
""" + tp_layer_source(linear="Dense(n_in, n_out, spec, rngs)")
# TPLayer a plain Python class (its parts nnx.Modules): nnx.split cannot take it apart, nnx.jit cannot compile it
T6_NOT_A_MODULE = tp_layer_source().replace("class TPLayer(nnx.Module):", "class TPLayer:")
# every linear layer drawn from nnx.Rngs(0), not from the rngs the layer is given
T6_RNGS_IGNORED = tp_layer_source(linear="sharded_linear(n_in, n_out, spec, nnx.Rngs(0))")
# TPLayer of the lab's sizes whatever it is given
T6_SIZES_HARD_CODED = tp_layer_source().replace(
    "self.attention = Attention(hidden_dim, num_heads, rngs=rngs)\n        self.mlp = MLP(hidden_dim, rngs=rngs)",
    "self.attention = Attention(256, 8, rngs=rngs)\n        self.mlp = MLP(256, rngs=rngs)",
)
CASES = [
    # Also correct, in styles the solution does not use; each notebook stops after its last answered task.
    Case(
        "alt_style_a",
        {
            "t1": (
                "from functools import partial\n"
                "@jax.jit\n"
                "@partial(jax.shard_map, mesh=mesh, in_specs=(P('data'), P('data', None)), out_specs=P('data'))\n"
                "def fsdp_matmul(x_block, A_block):\n"
                "    A_full = jax.lax.all_gather(A_block, axis_name='data', axis=0, tiled=True)\n"
                "    return jnp.einsum('bh,ho->bo', x_block, A_full)"
            ),
            "t2": (
                "mesh_tp = jax.sharding.Mesh(np.array(jax.devices()).reshape(2, 4), ('data', 'model'))\n"
                "def tp_block(x_b, W1_b, W2_b):\n"
                "    h = jax.lax.all_gather(x_b, 'model', axis=1, tiled=True) @ W1_b\n"
                "    return jax.lax.psum_scatter(jnp.dot(h, W2_b), 'model', scatter_dimension=1, tiled=True)\n"
                "tp_mlp = jax.jit(jax.shard_map(tp_block, mesh=mesh_tp,\n"
                "                               in_specs=(P(None, 'model'), P(None, 'model'), P('model')),\n"
                "                               out_specs=P(None, 'model')))"
            ),
            "t3": ALT_T3,
        },
        {"t1": 14, "t2": 16, "t3": 16},
    ),
    Case("alt_style_b", {"t4": ALT_T4, "t5": ALT_T5}, {"t4": 18, "t5": 10}),
    Case("alt_style_c", {"t6": [ALT_T6_LAYER, ALT_T6_APPLY]}, {"t6": 26}),
    # Wrong in one detail each.
    Case(
        "fsdp_matmul_not_jitted",
        {
            "t1": (
                "def fsdp_block(x_b, A_b):\n"
                "    return x_b @ jax.lax.all_gather(A_b, 'data', axis=0, tiled=True)\n"
                "fsdp_matmul = jax.shard_map(fsdp_block, mesh=mesh, in_specs=(P('data', None), P('data', None)),\n"
                "                            out_specs=P('data', None))"
            )
        },
        {"t1": 12},
        messages={"t1": "expected a jitted function"},
    ),
    Case(
        "fsdp_tp_jit_without_in_shardings",
        {
            "t3": ALT_T3.replace(
                'in_shardings=(S("data", "model"), S(("data",), "model"), S("model", "data")),\n                      ',
                "",
            )
        },
        {"t3": 14},
        messages={"t3": "in_shardings"},
    ),
    Case(
        "fsdp_tp_mlp_with_jit_instead_of_shard_map",
        {
            "t3": ALT_T3
            + (
                "fsdp_tp_mlp = jax.jit(lambda x, W1, W2: x @ W1 @ W2,\n"
                "                      in_shardings=(S('data', 'model'), S('data', 'model'), S('model', 'data')),\n"
                "                      out_shardings=S('data', 'model'))\n"
            )
        },
        {"t3": 11},
        messages={"t3": "jax.shard_map"},
    ),
    Case(
        "layer_with_biases",
        {"t6": [ALT_T6_LAYER.replace("use_bias=False", "use_bias=True"), ALT_T6_APPLY]},
        {"t6": 25},
        messages={"t6": "bias"},
    ),
    Case(
        "correct_fsdp_tp_written_differently",
        {
            "t1": (
                "def block(x_block, A_block):\n"
                "    A_full = jax.lax.all_gather(A_block, 'data')  # (2, 8, 16), not tiled\n"
                "    return jnp.dot(x_block, A_full.reshape(-1, A_full.shape[-1]))\n"
                "fsdp_matmul = jax.jit(jax.shard_map(block, mesh=mesh, in_specs=(P('data'), P('data')),\n"
                "                                    out_specs=P('data')))"
            ),
            "t2": (
                "def block(x_block, W1_block, W2_block):\n"
                "    x_full = jax.lax.all_gather(x_block, 'model', axis=1, tiled=True)\n"
                "    y = x_full @ (W1_block @ W2_block)\n"
                "    return jax.lax.psum_scatter(y, 'model', scatter_dimension=1, tiled=True)\n"
                f"tp_mlp = jax.jit(jax.shard_map(block, mesh=mesh, {T2_SPECS}, out_specs=P(None, 'model')))"
            ),
            "t3": T3_JIT_VARIANT,
        },
        {"t1": 14, "t2": 16, "t3": 16},
    ),
    Case(
        "correct_benchmark_relayout_layer_written_differently",
        {
            "t4": T4_MEDIAN_OF_BLOCKED_LOOPS,
            "t5": (
                "all_to_all = jax.jit(jax.shard_map(\n"
                "    lambda b: jax.lax.all_to_all(b, 'data', 1, 0, tiled=True),\n"
                "    mesh=mesh1d, in_specs=P('data'), out_specs=P(None, 'data')))\n"
                "X_t = all_to_all(X)\n"
                "X_roundtrip = jax.device_put(X_t, NamedSharding(mesh1d, P('data')))"
            ),
            "t6": [TP_LAYER_VARIANT, T6_APPLY_VARIANT],
        },
        {"t4": 18, "t5": 10, "t6": 26},
    ),
    Case(
        "tp_psum_then_slice",
        {
            "t2": (
                "def block(x_block, W1_block, W2_block):\n"
                "    x_full = jax.lax.all_gather(x_block, 'model', axis=1, tiled=True)\n"
                "    y = jax.lax.psum(x_full @ W1_block @ W2_block, 'model')  # every device gets all of y\n"
                "    width = y.shape[1] // 4\n"
                "    return jax.lax.dynamic_slice_in_dim(y, jax.lax.axis_index('model') * width, width, axis=1)\n"
                f"tp_mlp = jax.jit(jax.shard_map(block, mesh=mesh, {T2_SPECS}, out_specs=P(None, 'model')))"
            )
        },
        {"t2": 12},
        messages={"t2": "psum_scatter"},
    ),
    Case(
        "tp_forgets_the_reduction",
        {
            "t2": (
                "def block(x_block, W1_block, W2_block):\n"
                "    x_full = jax.lax.all_gather(x_block, 'model', axis=1, tiled=True)\n"
                "    y = x_full @ W1_block @ W2_block  # one term of the sum: the reduction over 'model' is missing\n"
                "    width = y.shape[1] // 4\n"
                "    return jax.lax.dynamic_slice_in_dim(y, jax.lax.axis_index('model') * width, width, axis=1)\n"
                f"tp_mlp = jax.jit(jax.shard_map(block, mesh=mesh, {T2_SPECS}, out_specs=P(None, 'model')))"
            )
        },
        {"t2": 6},
        messages={"t2": "values differ"},
    ),
    Case(
        "tp_psum_replicated_result",
        {
            "t2": (
                "def block(x_block, W1_block, W2_block):\n"
                "    x_full = jax.lax.all_gather(x_block, 'model', axis=1, tiled=True)\n"
                "    return jax.lax.psum(x_full @ W1_block @ W2_block, 'model')\n"
                f"tp_mlp = jax.jit(jax.shard_map(block, mesh=mesh, {T2_SPECS}, out_specs=P()))"
            )
        },
        {"t2": 7},
        messages={"t2": "replicated"},
    ),
    Case(
        "wrong_output_layouts",
        {
            "t1": (
                "def block(x_block, A_block):\n"
                "    A_full = jax.lax.all_gather(A_block, 'data', axis=0, tiled=True)\n"
                "    return jax.lax.all_gather(x_block @ A_full, 'data', axis=0, tiled=True, to='invarying')\n"
                "fsdp_matmul = jax.jit(jax.shard_map(block, mesh=mesh, in_specs=(P('data', None), P('data', None)),\n"
                "                                    out_specs=P()))"
            ),
            "t3": T3_JIT_VARIANT.replace(
                'out_shardings=NamedSharding(mesh, P("data", "model"))', 'out_shardings=NamedSharding(mesh, P("data"))'
            ),
        },
        {"t1": 9, "t3": 12},
        messages={"t1": "replicated", "t3": "D_jit"},
    ),
    Case("t4_functions_not_jitted", {"t4": T4_FUNCTIONS_NOT_JITTED}, {"t4": 14}, messages={"t4": "jitted"}),
    Case(
        "times_in_milliseconds",
        {"t4": T4_MILLISECONDS},
        {"t4": 10},
        messages={"t4": "milliseconds where seconds were asked"},
    ),
    Case(
        "x_t_claimed_transpose",
        {
            "t5": (
                "all_to_all = jax.jit(jax.shard_map(\n"
                "    lambda b: jax.lax.all_to_all(b, 'data', split_axis=1, concat_axis=0, tiled=True),\n"
                "    mesh=mesh1d, in_specs=P('data', None), out_specs=P(None, 'data')))\n"
                "X_t = X.T  # 'all_to_all transposes'\n"
                "X_roundtrip = X_t.T"
            )
        },
        {"t5": 8},
        messages={"t5": "transpose"},
    ),
    Case(
        "attention_scaled_by_hidden",
        {"t6": [tp_layer_source(scale="jnp.sqrt(D)"), T6_APPLY_SOLUTION]},
        {"t6": 16},
        messages={"t6": "1/sqrt(hidden_dim)"},
    ),
    Case(
        "replicated_weights",
        {"t6": [tp_layer_source(linear="nnx.Linear(n_in, n_out, use_bias=False, rngs=rngs)"), T6_APPLY_SOLUTION]},
        {"t6": 13},
        messages={"t6": "all-reduce"},
    ),
    Case(
        "crashing_cell",
        {
            "t1": (
                "fsdp_matmul = jax.jit(jax.shard_map(fsdp_block, mesh=mesh,\n"
                "    in_specs=(P('data', None), P('data', None)), out_specs=P('data', None)))"
            ),
            **solved("t2"),
        },
        {"t2": 16},
        messages={"t1": "`B` is not defined"},
    ),
    Case("t1_plus_one", {"t1": T1_PLUS_ONE}, {"t1": 8}, messages={"t1": "values differ"}),
    Case("t1_weight_by_psum", {"t1": T1_WEIGHT_BY_PSUM}, {"t1": 12}, messages={"t1": "all_gather"}),
    Case("t2_not_jitted", {"t2": T2_EAGER}, {"t2": 14}, messages={"t2": "expected a jitted function"}),
    Case("t2_relu_between", {"t2": T2_RELU}, {"t2": 10}, messages={"t2": "values differ"}),
    Case("t2_rows_over_model", {"t2": T2_ROWS_OVER_MODEL}, {"t2": 11}),
    Case("t2_x_by_psum", {"t2": T2_X_BY_PSUM}, {"t2": 12}, messages={"t2": "all_gather"}),
    Case("t3_relu_between", {"t3": T3_RELU}, {"t3": 9}, messages={"t3": "values differ"}),
    Case("t3_mlp_not_jitted", {"t3": T3_MLP_EAGER}, {"t3": 15}, messages={"t3": "expected a jitted function"}),
    Case("t3_psum_then_slice", {"t3": T3_PSUM_THEN_SLICE}, {"t3": 14}, messages={"t3": "psum_scatter"}),
    Case("t3_mlp_rows", {"t3": T3_MLP_ROWS}, {"t3": 13}),
    Case("t4_not_warm", {"t4": T4_NOT_WARM}, {"t4": 17}, messages={"t4": "the first call was timed"}),
    Case("t4_unblocked", {"t4": T4_UNBLOCKED}, {"t4": 17}, messages={"t4": "the clock timed the dispatch"}),
    Case("t4_on_a_smaller_X", {"t4": T4_ON_A_SMALLER_X}, {"t4": 17}, messages={"t4": "(200, 1000)"}),
    Case("t4_mean_not_median", {"t4": T4_MEAN}, {"t4": 17}, messages={"t4": "found the mean of"}),
    Case("t4_extra_key", {"t4": T4_EXTRA_KEY}, {"t4": 16}, messages={"t4": "unexpected 'total'"}),
    Case("t4_functions_rotated", {"t4": T4_FUNCTIONS_ROTATED}, {"t4": 14}, messages={"t4": "collective_fns['psum']"}),
    Case("t5_not_jitted", {"t5": T5_EAGER}, {"t5": 9}, messages={"t5": "expected a jitted function"}),
    Case("t5_gather_then_slice", {"t5": T5_GATHER_THEN_SLICE}, {"t5": 9}, messages={"t5": "all-to-all"}),
    Case("t5_x_t_replicated", {"t5": T5_X_T_REPLICATED}, {"t5": 8}),
    Case("t5_roundtrip_not_back", {"t5": T5_NOT_BACK}, {"t5": 8}),
    Case("t5_of_the_global_x", {"t5": T5_OF_THE_GLOBAL_X}, {"t5": 9}),
    Case("t6_layer_out_of_another_input", {"t6": [tp_layer_source(), T6_APPLY_OTHER_INPUT]}, {"t6": 21}),
    Case(
        "refuses_inputs_in_other_layouts",
        {"t1": T1_IN_SHARDINGS, "t2": T2_IN_SHARDINGS, "t3": T3_MLP_IN_SHARDINGS},
        {"t1": 13, "t2": 15, "t3": 15},
        messages={"t1": "accept inputs in any layout", "t2": "accept inputs in any layout", "t3": "refusing"},
    ),
    Case(
        "mesh_named_otherwise",
        {
            "t1": T1_MESH_RENAMED,
            "t2": T2_MESH_RENAMED,
            "t3": T3_MESH_RENAMED,
            "t5": T5_MESH_RENAMED,
            "t6": [tp_layer_source(), T6_APPLY_MESH_RENAMED],
        },
        {"t1": 13, "t2": 15, "t3": 15, "t5": 9, "t6": 21},
        messages={"t1": "'tensor'", "t2": "'rows'", "t3": "'batch'", "t5": "`mesh1d`", "t6": "'batch'"},
    ),
    Case(
        "an_operand_whole_in_specs",
        {"t1": T1_X_WHOLE, "t2": T2_W2_WHOLE, "t3": T3_X_WHOLE},
        {"t1": 13, "t2": 15, "t3": 15},
        messages={"t1": "in_specs", "t2": "in_specs", "t3": "in_specs"},
    ),
    Case(
        "of_the_lab_arrays",
        {"t1": T1_OF_THE_LAB_ARRAYS, "t2": T2_OF_THE_LAB_ARRAYS, "t3": T3_OF_THE_LAB_ARRAYS},
        {"t1": 10, "t2": 12, "t3": 11},
        messages={"t1": "values differ", "t2": "values differ", "t3": "values differ"},
    ),
    Case("t6_mlp_twice_as_wide", {"t6": [T6_MLP_TWICE_AS_WIDE, T6_APPLY_SOLUTION]}, {"t6": 16}),
    Case("t6_own_linear", {"t6": [T6_OWN_LINEAR, T6_APPLY_SOLUTION]}, {"t6": 25}, messages={"t6": "nnx.Linear"}),
    Case("t6_not_a_module", {"t6": [T6_NOT_A_MODULE, ALT_T6_APPLY]}, {"t6": 10}, messages={"t6": "not an nnx.Module"}),
    Case("t6_rngs_ignored", {"t6": [T6_RNGS_IGNORED, T6_APPLY_SOLUTION]}, {"t6": 25}, messages={"t6": "`rngs`"}),
    Case("t6_sizes_hard_coded", {"t6": [T6_SIZES_HARD_CODED, T6_APPLY_SOLUTION]}, {"t6": 10}),
]
