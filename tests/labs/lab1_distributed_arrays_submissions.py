"""Submissions of lab 1 with known grades: correct ones written differently, and wrong ones.

Each case fills some tasks' answer cells (the rest stay blank and score 0) and states the score of
every task. A wrong task loses exactly the points of the checks it gets wrong, and no others.
"""

from autograder.authoring.known_grades import Case, solved

T3_OPERANDS = (
    "y_lhs = jax.device_put(x, mesh_sharding(P('a', None)))\ny_rhs = jax.device_put(x, mesh_sharding(P(None, 'b')))"
)
T3_PRODUCT = "w = jnp.dot(y_lhs, y_rhs)"
SOLVED_T4 = """devices = jax.devices()
on_device_0 = jax.device_put(x, devices[0])
on_device_1 = jax.device_put(x, devices[1])
try:
    on_device_0 + on_device_1
except ValueError as e:
    err_msg = str(e)
"""
T5_F_REPLICATED = """
@jax.jit
def f_replicated(x):
    return jax.lax.with_sharding_constraint(x + 1, NamedSharding(mesh, P()))
"""
T6_REPLICATED_PARAMS = """
mesh_dp = jax.make_mesh((8,), ('batch',), axis_types=(AxisType.Auto,))
batch_dp = jax.device_put(batch, NamedSharding(mesh_dp, P('batch')))
params_dp = train(jax.device_put(params, NamedSharding(mesh_dp, P())), batch_dp)
loss_dp = float(loss_jit(params_dp, batch_dp))
"""
T7_LAYOUTS = """
mesh_tp = jax.make_mesh((4, 2), ('batch', 'model'), axis_types=(AxisType.Auto,) * 2)
batch_tp = jax.device_put(batch, NamedSharding(mesh_tp, P('batch', None)))
specs = [(P(), P()), ({w2}, P('model')), (P('model', None), P()), (P(), P())]
params_placed = [tuple(jax.device_put(a, NamedSharding(mesh_tp, s)) for a, s in zip(layer, spec))
                 for layer, spec in zip({initial}, specs)]
params_tp = train(params_placed, batch_tp)
loss_tp = float(loss_jit(params_tp, batch_tp))
"""

# Also correct, in styles the solution does not use; each notebook stops after its last answered task.
ALT_STYLE_A = {
    "t1": (
        "import jax.sharding as shd\n"
        "grid = shd.Mesh(np.array(jax.devices()).reshape(4, 2), ('a', 'b'))\n"
        "y = jnp.asarray(x, device=shd.NamedSharding(grid, shd.PartitionSpec('a', 'b')))"
    ),
    "t2": (
        "specs = {'y_ba': P('b', 'a'), 'y_a_rep': P('a'), 'y_cols_b': P(None, 'b', ), 'y_rows_ab': P(('a', 'b'))}\n"
        "placed = {name: jax.device_put(x, NamedSharding(mesh, spec)) for name, spec in specs.items()}\n"
        "y_ba, y_a_rep, y_cols_b, y_rows_ab = (placed[name] for name in specs)"
    ),
    "t3": [
        "y_lhs, y_rhs = (jax.device_put(x, mesh_sharding(s)) for s in (P('a', None), P(None, 'b')))",
        "w_layout_guess = jax.sharding.PartitionSpec(('a',), ('b',))",
        "w = jax.jit(jnp.matmul)(y_lhs, y_rhs)",
    ],
}
ALT_STYLE_B = {
    "t4": (
        "first, second = [jax.device_put(x, device) for device in jax.devices()[:2]]\n"
        "try:\n"
        "    total = first + second\n"
        "except Exception as error:\n"
        "    err_msg = error.args[0]"
    ),
    "t5": (
        "import functools\n"
        "\n"
        "@functools.partial(jax.jit, static_argnums=())\n"
        "def f(x):\n"
        "    return jax.lax.with_sharding_constraint(jnp.add(x, 1), jax.sharding.NamedSharding(mesh, P('b', 'a')))\n"
        "\n"
        "jax.set_mesh(mesh)  # a default mesh: the constraint below names only a PartitionSpec\n"
        "_replicated = jax.jit(lambda v: jax.lax.with_sharding_constraint(v + 1.0, P(None, None)))\n"
        "f_replicated = lambda x: _replicated(x)"
    ),
}
ALT_STYLE_C = {
    "t6": (
        "mesh_dp = jax.sharding.Mesh(np.array(jax.devices()), axis_names=('batch',))\n"
        "rows = jax.sharding.NamedSharding(mesh_dp, P('batch'))\n"
        "everywhere = jax.sharding.NamedSharding(mesh_dp, P())\n"
        "batch_dp = tuple(jax.device_put(part, rows) for part in batch)\n"
        "params_dp = train([(jax.device_put(W, everywhere), jax.device_put(b, everywhere)) for W, b in params],\n"
        "                  batch_dp)\n"
        "loss_dp = float(loss(params_dp, batch_dp))"
    ),
    "t7": (
        "mesh_tp = Mesh(np.array(jax.devices()).reshape(4, 2), ('batch', 'model'), axis_types=(AxisType.Auto,) * 2)\n"
        "def put(a, *spec):\n"
        "    return jax.device_put(a, NamedSharding(mesh_tp, P(*spec)))\n"
        "batch_tp = (put(batch[0], 'batch', None), put(batch[1], 'batch'))\n"
        "(W1, b1), (W2, b2), (W3, b3), (W4, b4) = params\n"
        "params_placed = [(put(W1), put(b1)), (put(W2, None, 'model'), put(b2, 'model')),\n"
        "                 (put(W3, 'model'), put(b3)), (put(W4, None, None), put(b4, None))]\n"
        "params_tp = params_placed\n"
        "for _ in range(num_steps):  # train's steps, written out\n"
        "    grads = gradfun(params_tp, batch_tp)\n"
        "    params_tp = jax.block_until_ready(jax.tree.map(lambda p, g: p - step_size * g, params_tp, grads))\n"
        "loss_tp = loss_jit(params_tp, batch_tp).item()"
    ),
    "t8": (
        "import statistics, timeit\n"
        "params_single, batch_single = jax.device_put((params_dp, batch_dp), jax.devices()[0])\n"
        "run_single = lambda: jax.block_until_ready(gradfun(params_single, batch_single))\n"
        "run_sharded = lambda: jax.block_until_ready(gradfun(params_dp, batch_dp))\n"
        "run_single(), run_sharded()\n"
        "t_single = statistics.median(timeit.repeat(run_single, number=1, repeat=7))\n"
        "t_sharded = statistics.median(timeit.repeat(run_sharded, number=1, repeat=7))\n"
        "speedup = t_single / t_sharded"
    ),
    "t9": (
        "found = {}\n"
        "for flag in (False, True):\n"
        "    jax.config.update('jax_threefry_partitionable', flag)\n"
        "    found[flag] = 'collective-permute(' in jax.jit(f_rng).lower(key, x_rng).compile().as_text()\n"
        "jax.config.update('jax_threefry_partitionable', True)\n"
        "communicating_stable, communicating_partitionable = found[False], found[True]"
    ),
}

# The solution's answers, each requirement of a task's text broken alone where no case above does it.
T2_SOLUTION = (
    "y_ba = jax.device_put(x, mesh_sharding(P('b', 'a')))\n"
    "y_a_rep = jax.device_put(x, mesh_sharding(P('a', None)))\n"
    "y_cols_b = jax.device_put(x, mesh_sharding(P(None, 'b')))\n"
    "y_rows_ab = jax.device_put(x, mesh_sharding(P(('a', 'b'), None)))"
)
T3_LHS_RHS = (
    "y_lhs = jax.device_put(x, mesh_sharding(P('a', None)))\ny_rhs = jax.device_put(x, mesh_sharding(P(None, 'b')))"
)
T5_SOLUTION = """
@jax.jit
def f(x):
    x = x + 1
    return jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P('b', 'a')))
@jax.jit
def f_replicated(x):
    x = x + 1
    return jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P()))
"""
T6_SOLUTION = """
mesh_dp = jax.make_mesh((8,), ('batch',), axis_types=(AxisType.Auto,))
batch_dp = jax.device_put(batch, NamedSharding(mesh_dp, P('batch')))
params_dp = jax.device_put(params, NamedSharding(mesh_dp, P()))
params_dp = train(params_dp, batch_dp)
loss_dp = float(loss_jit(params_dp, batch_dp))
"""
T7_SOLUTION = """
mesh_tp = jax.make_mesh((4, 2), ('batch', 'model'), axis_types=(AxisType.Auto,) * 2)
batch_tp = jax.device_put(batch, NamedSharding(mesh_tp, P('batch', None)))
replicated = NamedSharding(mesh_tp, P())
(W1, b1), (W2, b2), (W3, b3), (W4, b4) = params
params_placed = [
    (jax.device_put(W1, replicated), jax.device_put(b1, replicated)),
    (jax.device_put(W2, NamedSharding(mesh_tp, P(None, 'model'))),
     jax.device_put(b2, NamedSharding(mesh_tp, P('model')))),
    (jax.device_put(W3, NamedSharding(mesh_tp, P('model', None))), jax.device_put(b3, replicated)),
    (jax.device_put(W4, replicated), jax.device_put(b4, replicated)),
]
params_tp = train(params_placed, batch_tp)
loss_tp = float(loss_jit(params_tp, batch_tp))
"""
T8_SOLUTION = """
params_single = jax.device_put(params_dp, jax.devices()[0])
batch_single = jax.device_put(batch_dp, jax.devices()[0])
def seconds_per_call(params, batch):
    start = time.perf_counter()
    jax.block_until_ready(gradfun(params, batch))
    return time.perf_counter() - start
seconds_per_call(params_single, batch_single)
seconds_per_call(params_dp, batch_dp)
single_times, sharded_times = [], []
for _ in range(7):
    single_times.append(seconds_per_call(params_single, batch_single))
    sharded_times.append(seconds_per_call(params_dp, batch_dp))
t_single = float(np.median(single_times))
t_sharded = float(np.median(sharded_times))
speedup = t_single / t_sharded
"""
T9_SOLUTION = """
jax.config.update('jax_threefry_partitionable', False)
try:
    communicating_stable = 'collective-permute' in f_rng.lower(key, x_rng).compile().as_text()
finally:
    jax.config.update('jax_threefry_partitionable', True)
communicating_partitionable = 'collective-permute' in f_rng.lower(key, x_rng).compile().as_text()
"""

CASES = [
    Case("alt_style_a", ALT_STYLE_A, {"t1": 8, "t2": 16, "t3": 10}),
    # Its jax.set_mesh stays for the rest of the notebook (t8 then fails): graded alone.
    Case("alt_style_b", ALT_STYLE_B, {"t4": 8, "t5": 10}, alone=True),
    Case("alt_style_c", ALT_STYLE_C, {"t6": 16, "t7": 16, "t8": 8, "t9": 8}),
    # Wrong in one detail each.
    Case(
        "f_not_jitted",
        {
            "t5": (
                "def f(x):\n"
                "    return jax.lax.with_sharding_constraint(x + 1, NamedSharding(mesh, P('b', 'a')))\n"
                "def f_replicated(x):\n"
                "    return jax.lax.with_sharding_constraint(x + 1, NamedSharding(mesh, P()))"
            )
        },
        {"t5": 8},
        messages={"t5": "expected a jitted function"},
    ),
    Case(
        "f_without_constraint",
        {"t5": "f = jax.jit(lambda x: x + 1)\n" + T5_F_REPLICATED},
        {"t5": 7},
        messages={"t5": "f(x)"},
    ),
    Case(
        "w_from_unsharded_operands",
        {"t3": [T3_OPERANDS, "w_layout_guess = P('a', 'b')", "w = jnp.dot(x, x)"]},
        {"t3": 9},
        messages={"t3": "`w`"},
    ),
    Case(
        "rows_over_b_then_a",
        {
            "t2": (
                "y_ba = jax.device_put(x, mesh_sharding(P('b', 'a')))\n"
                "y_a_rep = jax.device_put(x, mesh_sharding(P('a', None)))\n"
                "y_cols_b = jax.device_put(x, mesh_sharding(P(None, 'b')))\n"
                "y_rows_ab = jax.device_put(x, mesh_sharding(P(('b', 'a'), None)))"
            )
        },
        {"t2": 12},
        messages={"t2": "picture D"},
    ),
    Case(
        "correct_written_differently",
        {
            "t1": "y = jax.device_put(np.asarray(x), NamedSharding(mesh, P(('a',), ('b',))))",
            "t2": (
                "grid = mesh.devices.T  # picture A: the device grid read down its columns\n"
                "y_ba = jax.device_put(x, NamedSharding(Mesh(grid, ('r', 'c')), P('r', 'c')))\n"
                "y_a_rep = jax.device_put(x, mesh_sharding(P('a')))\n"
                "y_cols_b = jax.device_put(x, NamedSharding(mesh, P(None, ('b',))))\n"
                "y_rows_ab = jax.device_put(x, NamedSharding(Mesh(jax.devices(), ('all',)), P('all')))"
            ),
            "t3": [
                "y_lhs = jax.device_put(x, mesh_sharding(P('a')))\n"
                "y_rhs = jax.device_put(x, NamedSharding(mesh, P(None, 'b')))",
                "w_layout_guess = P(('a',), 'b')",
                "w = y_lhs @ y_rhs",
            ],
            "t4": (
                "a, b = jax.device_put(x, jax.devices()[0]), jax.device_put(x, jax.devices()[1])\n"
                "try:\n"
                "    jnp.add(a, b)\n"
                "except Exception as exc:\n"
                "    err_msg = f'{exc}'"
            ),
            "t5": (
                "f = jax.jit(lambda x: x + 1, out_shardings=NamedSharding(mesh, P('b', 'a')))\n"
                "f_replicated = jax.jit(lambda x: jnp.add(x, 1.0), out_shardings=NamedSharding(mesh, P(None, None)))"
            ),
        },
        {"t1": 8, "t2": 16, "t3": 10, "t4": 8, "t5": 10},
    ),
    Case(
        "training_written_differently",
        {
            "t6": (
                "mesh_dp = Mesh(np.array(jax.devices()), ('batch',), axis_types=(AxisType.Auto,))\n"
                "inputs, targets = batch\n"
                "batch_dp = (jax.device_put(inputs, NamedSharding(mesh_dp, P('batch', None))),\n"
                "            jax.device_put(targets, NamedSharding(mesh_dp, P('batch', None))))\n"
                "replicated = jax.tree.map(lambda a: jax.device_put(a, NamedSharding(mesh_dp, P(None))), params)\n"
                "params_dp = train(replicated, batch_dp)\n"
                "loss_dp = loss_jit(params_dp, batch_dp).item()"
            ),
            "t7": (
                "mesh_tp = jax.make_mesh((4, 2), ('batch', 'model'), axis_types=(AxisType.Auto,) * 2)\n"
                "batch_tp = jax.device_put(batch, NamedSharding(mesh_tp, P('batch')))\n"
                "specs = [(P(), P(None)), (P(None, ('model',)), P('model')), (P('model'), P()), (P(None, None), P())]\n"
                "params_placed = jax.tree.map(lambda a, s: jax.device_put(a, NamedSharding(mesh_tp, s)), params, specs)\n"
                "params_tp = train(params_placed, batch_tp)\n"
                "loss_tp = loss_jit(params_tp, batch_tp).item()"
            ),
            **solved("t8"),
            "t9": (
                "def communicates(partitionable):\n"
                "    jax.config.update('jax_threefry_partitionable', partitionable)\n"
                "    try:\n"
                "        text = jax.jit(f_rng).lower(key, x_rng).compile().as_text()\n"
                "    finally:\n"
                "        jax.config.update('jax_threefry_partitionable', True)\n"
                "    return 'collective-permute' in collectives(text)\n"
                "communicating_stable = communicates(False)\n"
                "communicating_partitionable = communicates(True)"
            ),
        },
        {"t6": 16, "t7": 16, "t8": 8, "t9": 8},
    ),
    Case(
        "wrong_axis_order",
        {"t1": "y = jax.device_put(x, mesh_sharding(P('b', 'a')))"},
        {"t1": 3},
        messages={"t1": "swapped"},
    ),
    Case(
        "replicated_instead_of_sharded",
        {
            "t2": (
                "y_ba = jax.device_put(x, mesh_sharding(P('b', 'a')))\n"
                "y_a_rep = jax.device_put(x, mesh_sharding(P('a', None)))\n"
                "y_cols_b = jax.device_put(x, mesh_sharding(P()))\n"
                "y_rows_ab = jax.device_put(x, mesh_sharding(P(('a', 'b'), None)))"
            )
        },
        {"t2": 12},
        messages={"t2": "replicated, not sharded"},
    ),
    Case(
        "guess_wrong",
        {"t3": [T3_OPERANDS, "w_layout_guess = P('a', None)", T3_PRODUCT]},
        {"t3": 7},
        messages={"t3": "w_layout_guess"},
    ),
    Case(  # y_lhs split over 'b' too: each device lacks half of its rows' columns, gathered for the product
        "t3_lhs_not_replicated_over_b",
        {"t3": [T3_OPERANDS.replace("P('a', None)", "P('a', 'b')"), "w_layout_guess = P('a', 'b')", T3_PRODUCT]},
        {"t3": 5},
        messages={"t3": "expected no collectives"},
    ),
    Case(
        "t3_rhs_not_replicated_over_a",
        {"t3": [T3_OPERANDS.replace("P(None, 'b')", "P('a', 'b')"), "w_layout_guess = P('a', 'b')", T3_PRODUCT]},
        {"t3": 5},
        messages={"t3": "y_rhs"},
    ),
    Case(
        "error_from_another_cause",
        {
            "t4": (
                "try:\n"
                "    jax.device_put(x, jax.devices()[0]) + jax.device_put(x[:512], jax.devices()[0])\n"
                "except (ValueError, TypeError) as e:\n"
                "    err_msg = str(e)"
            )
        },
        {"t4": 0},
        messages={"t4": "incompatible devices"},
    ),
    Case(
        "f_constrained_to_input_layout",
        {
            "t5": (
                "@jax.jit\n"
                "def f(x):\n"
                "    return jax.lax.with_sharding_constraint(x + 1, NamedSharding(mesh, P('a', 'b')))\n"
                + T5_F_REPLICATED
            )
        },
        {"t5": 7},
        messages={"t5": "all-to-all"},
    ),
    Case(
        "data_parallel_sharded_params",
        {
            "t6": T6_REPLICATED_PARAMS.replace(
                "train(jax.device_put(params, NamedSharding(mesh_dp, P())), batch_dp)",
                "train([(jax.device_put(W, NamedSharding(mesh_dp, P('batch', None))),\n"
                "                   jax.device_put(b, NamedSharding(mesh_dp, P()))) for W, b in params], batch_dp)",
            )
        },
        {"t6": 14},
        messages={"t6": "every device should hold the whole array"},
    ),
    Case(
        "data_parallel_batch_replicated",
        {"t6": T6_REPLICATED_PARAMS.replace("NamedSharding(mesh_dp, P('batch'))", "NamedSharding(mesh_dp, P())")},
        {"t6": 12},
        messages={"t6": "all-reduce"},
    ),
    Case(
        "model_parallel_w2_rows",
        {"t7": T7_LAYOUTS.format(w2="P('model', None)", initial="params")},
        {"t7": 11},
        messages={"t7": "params_tp"},
    ),
    Case(
        "model_parallel_other_initial_params",
        {
            "t7": (
                "other_params, _ = init_model(jax.random.key(1), layer_sizes, batch_size)\n"
                + T7_LAYOUTS.format(w2="P(None, 'model')", initial="other_params")
            )
        },
        {"t7": 10},
        messages={"t7": "loss_tp"},
    ),
    # The one-device call is timed without waiting for its result: its dispatch alone reads about 600×
    # below its compute time. (The data-parallel call's dispatch waits on its 8 devices: unblocked, it
    # reads only about 10× low, too near the 4× tolerance for its grade to be known on a loaded machine.)
    # Each time is the median of three loops of 5 calls, as the text asks.
    Case(
        "dispatch_only_timing",
        {
            **solved("t6"),
            "t8": (
                "params_single = jax.device_put(params_dp, jax.devices()[0])\n"
                "batch_single = jax.device_put(batch_dp, jax.devices()[0])\n"
                "def per_call(params, batch, wait):\n"
                "    jax.block_until_ready(gradfun(params, batch))\n"
                "    rounds = []\n"
                "    for _ in range(3):\n"
                "        start = time.perf_counter()\n"
                "        for _ in range(5):\n"
                "            out = gradfun(params, batch)\n"
                "            if wait:\n"
                "                jax.block_until_ready(out)\n"
                "        rounds.append((time.perf_counter() - start) / 5)\n"
                "        jax.block_until_ready(out)\n"
                "    return float(np.median(rounds))\n"
                "t_single = per_call(params_single, batch_single, wait=False)\n"
                "jax.block_until_ready(gradfun(params_single, batch_single))\n"
                "t_sharded = per_call(params_dp, batch_dp, wait=True)\n"
                "speedup = t_single / t_sharded"
            ),
        },
        {"t6": 16, "t8": 5},
        messages={"t8": "dispatch"},
    ),
    Case(
        "rng_answers_swapped",
        {
            "t9": (
                "jax.config.update('jax_threefry_partitionable', True)\n"
                "communicating_stable = 'collective-permute' in f_rng.lower(key, x_rng).compile().as_text()\n"
                "jax.config.update('jax_threefry_partitionable', False)\n"
                "communicating_partitionable = 'collective-permute' in f_rng.lower(key, x_rng).compile().as_text()\n"
                "jax.config.update('jax_threefry_partitionable', True)"
            )
        },
        {"t9": 2},
        messages={"t9": "collective-permute"},
    ),
    # Wrong only in the type, text or state a task's text names.
    Case(
        "guess_as_named_sharding",
        {"t3": [T3_OPERANDS, "w_layout_guess = NamedSharding(mesh, P('a', 'b'))", T3_PRODUCT]},
        {"t3": 7},
        messages={"t3": "a NamedSharding pairs a mesh with a spec"},
    ),
    Case(
        "err_msg_repr",
        {"t4": SOLVED_T4.replace("err_msg = str(e)", "err_msg = repr(e)")},
        {"t4": 6},
        messages={"t4": "that is repr(e)"},
    ),
    Case(
        "err_msg_with_type_name",
        {"t4": SOLVED_T4.replace("err_msg = str(e)", "err_msg = f'{type(e).__name__}: {e}'")},
        {"t4": 6},
        messages={"t4": "the exception's type name"},
    ),
    Case(
        "copy_on_device_2",
        {"t4": SOLVED_T4.replace("devices[1]", "devices[2]")},
        {"t4": 2},
        messages={"t4": "it names other devices"},
    ),
    Case(
        "losses_as_arrays_batch_as_list",
        {
            "t6": T6_REPLICATED_PARAMS.replace("float(loss_jit(params_dp, batch_dp))", "loss_jit(params_dp, batch_dp)"),
            "t7": T7_LAYOUTS.format(w2="P(None, 'model')", initial="params").replace(
                "float(loss_jit(params_tp, batch_tp))", "loss_jit(params_tp, batch_tp)"
            ),
        },
        {"t6": 13, "t7": 13},
        messages={"t6": "expected a Python float, found a jax.Array", "t7": "expected a Python float"},
    ),
    Case(
        "batch_dp_a_list",
        {"t6": T6_REPLICATED_PARAMS.replace("jax.device_put(batch,", "jax.device_put(list(batch),")},
        {"t6": 14},
        messages={"t6": "expected a tuple, found a list"},
    ),
    Case(
        "flag_left_off",
        {
            "t9": (
                "communicating_partitionable = 'collective-permute' in f_rng.lower(key, x_rng).compile().as_text()\n"
                "jax.config.update('jax_threefry_partitionable', False)\n"
                "communicating_stable = 'collective-permute' in f_rng.lower(key, x_rng).compile().as_text()"
            )
        },
        {"t9": 6},
        messages={"t9": "expected True after this task"},
    ),
    Case(
        "readings_as_numpy_bools",
        {
            "t9": (
                "jax.config.update('jax_threefry_partitionable', False)\n"
                "try:\n"
                "    communicating_stable = np.bool_('collective-permute' in f_rng.lower(key, x_rng).compile().as_text())\n"
                "finally:\n"
                "    jax.config.update('jax_threefry_partitionable', True)\n"
                "communicating_partitionable = np.bool_('collective-permute' in f_rng.lower(key, x_rng).compile().as_text())"
            )
        },
        {"t9": 2},
        messages={"t9": "found a numpy.bool"},
    ),
    Case("t1_other_values", {"t1": "y = jax.device_put(x + 1, mesh_sharding(P('a', 'b')))"}, {"t1": 5}),
    Case(
        "t2_y_ba_other_layout",
        {"t2": T2_SOLUTION.replace("P('b', 'a')", "P('a', 'b')")},
        {"t2": 12},
        messages={"t2": "picture A"},
    ),
    Case(
        "t2_y_a_rep_other_layout",
        {"t2": T2_SOLUTION.replace("P('a', None)", "P('b', None)")},
        {"t2": 12},
        messages={"t2": "picture B"},
    ),
    Case(
        "t3_w_plus_one",
        {"t3": [T3_LHS_RHS, "w_layout_guess = P('a', 'b')", "w = jnp.dot(y_lhs, y_rhs) + 1"]},
        {"t3": 9},
    ),
    Case("t5_f_adds_two", {"t5": T5_SOLUTION.replace("x = x + 1", "x = x + 2", 1)}, {"t5": 9}),
    Case("t5_f_replicated_adds_two", {"t5": "x = x + 2".join(T5_SOLUTION.rsplit("x = x + 1", 1))}, {"t5": 9}),
    Case(
        "t5_f_replicated_unconstrained",
        {
            "t5": T5_SOLUTION.replace(
                "    return jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P()))", "    return x"
            )
        },
        {"t5": 7},
    ),
    Case(  # right in itself, but task 7 would start from the trained parameters: graded alone, since it
        "t6_params_rebound",  # changes what a t7 answer graded in the same notebook starts from
        {"t6": T6_SOLUTION + "params = params_dp\n"},
        {"t6": 15},
        messages={"t6": "params"},
        alone=True,
    ),
    Case(
        "t6_explicit_mesh",
        {"t6": T6_SOLUTION.replace(", axis_types=(AxisType.Auto,)", "")},
        {"t6": 14},
        messages={"t6": "jax.make_mesh makes Explicit axes"},
    ),
    Case(
        "t6_params_dp_untrained",
        {
            "t6": T6_SOLUTION.replace(
                "params_dp = train(params_dp, batch_dp)\nloss_dp = float(loss_jit(params_dp, batch_dp))",
                "trained = train(params_dp, batch_dp)\nloss_dp = float(loss_jit(trained, batch_dp))",
            )
        },
        {"t6": 13},
    ),
    Case(
        "t6_loss_of_initial_params",
        {
            "t6": T6_SOLUTION.replace(
                "loss_jit(params_dp, batch_dp)",
                "loss_jit(jax.device_put(params, NamedSharding(mesh_dp, P())), batch_dp)",
            )
        },
        {"t6": 13},
    ),
    Case("t7_batch_replicated", {"t7": T7_SOLUTION.replace("P('batch', None)", "P()")}, {"t7": 14}),
    Case(  # W3 placed whole on every device: training lays it out by rows over 'model' all the same
        "t7_w3_placed_replicated",
        {
            "t7": T7_SOLUTION.replace(
                "jax.device_put(W3, NamedSharding(mesh_tp, P('model', None)))", "jax.device_put(W3, replicated)"
            )
        },
        {"t7": 13},
        messages={"t7": "params_placed"},
    ),
    Case(
        "t7_params_tp_untrained",
        {
            "t7": T7_SOLUTION.replace(
                "params_tp = train(params_placed, batch_tp)\nloss_tp = float(loss_jit(params_tp, batch_tp))",
                "params_tp = params_placed\nloss_tp = float(loss_jit(train(params_placed, batch_tp), batch_tp))",
            )
        },
        {"t7": 13},
    ),
    Case(
        "t7_loss_of_initial_params",
        {
            "t7": T7_SOLUTION.replace(
                "params_tp = train(params_placed, batch_tp)\nloss_tp = float(loss_jit(params_tp, batch_tp))",
                "loss_tp = float(loss_jit(params_placed, batch_tp))\nparams_tp = train(params_placed, batch_tp)",
            )
        },
        {"t7": 13},
    ),
    Case(
        "t8_single_in_milliseconds",
        {
            **solved("t6"),
            "t8": T8_SOLUTION.replace(
                "t_single = float(np.median(single_times))", "t_single = 1e3 * float(np.median(single_times))"
            ),
        },
        {"t6": 16, "t8": 6},
    ),
    Case(
        "t8_sharded_in_milliseconds",
        {
            **solved("t6"),
            "t8": T8_SOLUTION.replace(
                "t_sharded = float(np.median(sharded_times))", "t_sharded = 1e3 * float(np.median(sharded_times))"
            ),
        },
        {"t6": 16, "t8": 6},
    ),
    Case(
        "t8_speedup_in_percent",
        {
            **solved("t6"),
            "t8": T8_SOLUTION.replace("speedup = t_single / t_sharded", "speedup = 100 * t_single / t_sharded"),
        },
        {"t6": 16, "t8": 7},
    ),
    Case(  # the warm-up calls left out: the one-device gradient's first timed call compiles (the median hides it)
        "t8_not_warm",
        {
            **solved("t6"),
            "t8": T8_SOLUTION.replace(
                "seconds_per_call(params_single, batch_single)\nseconds_per_call(params_dp, batch_dp)\n", ""
            ),
        },
        {"t6": 16, "t8": 7},
        messages={"t8": "the first call was timed"},
    ),
    Case(  # the mean of the timed calls where the median was asked: within the time checks' margins
        "t8_mean_not_median",
        {**solved("t6"), "t8": T8_SOLUTION.replace("np.median", "np.mean")},
        {"t6": 16, "t8": 6},
        messages={"t8": "found the mean of"},
    ),
    Case(  # the batch brought to the host and back: on device 0, but uncommitted
        "t8_batch_left_uncommitted",
        {
            **solved("t6"),
            "t8": T8_SOLUTION.replace(
                "batch_single = jax.device_put(batch_dp, jax.devices()[0])",
                "batch_single = jax.tree.map(jnp.asarray, jax.device_get(batch_dp))",
            ),
        },
        {"t6": 16, "t8": 7},
        messages={"t8": "uncommitted"},
    ),
    Case(  # timed alike, but not on the device the text names
        "t8_copies_on_another_device",
        {**solved("t6"), "t8": T8_SOLUTION.replace("jax.devices()[0]", "jax.devices()[1]")},
        {"t6": 16, "t8": 7},
        messages={"t8": "params_single"},
    ),
    Case(
        "t9_stable_with_flag_on",
        {
            "t9": T9_SOLUTION.replace(
                "jax.config.update('jax_threefry_partitionable', False)",
                "jax.config.update('jax_threefry_partitionable', True)",
            )
        },
        {"t9": 5},
        messages={"t9": "communicating_stable"},
    ),
    Case(
        "t9_partitionable_with_flag_off",
        {
            "t9": T9_SOLUTION.replace(
                "communicating_partitionable = 'collective-permute' in f_rng.lower(key, x_rng).compile().as_text()",
                "jax.config.update('jax_threefry_partitionable', False)\n"
                "communicating_partitionable = 'collective-permute' in f_rng.lower(key, x_rng).compile().as_text()\n"
                "jax.config.update('jax_threefry_partitionable', True)",
            )
        },
        {"t9": 5},
        messages={"t9": "communicating_partitionable"},
    ),
    # A name, number or object the text states, changed alone; and right answers the text allows.
    Case(  # the same blocks, on a mesh of the same devices whose axes are not the text's 'a' and 'b'
        "t1_on_renamed_mesh",
        {
            "t1": "grid = Mesh(mesh.devices, ('rows', 'cols'))\ny = jax.device_put(x, NamedSharding(grid, P('rows', 'cols')))"
        },
        {"t1": 3},
        messages={"t1": "expected it on `mesh`"},
    ),
    Case("t2_other_values", {"t2": T2_SOLUTION.replace("(x, ", "(x + 1, ")}, {"t2": 0}),
    Case(
        "t3_operands_on_renamed_mesh",
        {
            "t3": [
                "grid = Mesh(mesh.devices, ('rows', 'cols'))\n"
                "y_lhs = jax.device_put(x, NamedSharding(grid, P('rows', None)))\n"
                "y_rhs = jax.device_put(x, NamedSharding(grid, P(None, 'cols')))",
                "w_layout_guess = P('a', 'b')",
                T3_PRODUCT,
            ]
        },
        {"t3": 8},
        messages={"t3": "expected it on `mesh`"},
    ),
    Case(  # the two added inside a jitted function: the error names its arguments, not those of add
        "t4_added_inside_jit",
        {"t4": SOLVED_T4.replace("on_device_0 + on_device_1", "jax.jit(lambda a, b: a + b)(on_device_0, on_device_1)")},
        {"t4": 8},
    ),
    Case(  # refuses any input laid out otherwise than the lab's own P('a', 'b')
        "t5_in_shardings_fixed",
        {
            "t5": "import functools\n"
            + T5_SOLUTION.replace(
                "@jax.jit\ndef f(x):",
                "@functools.partial(jax.jit, in_shardings=NamedSharding(mesh, P('a', 'b')))\ndef f(x):",
            )
        },
        {"t5": 9},
        messages={"t5": "any layout"},
    ),
    Case(
        "t6_mesh_not_1d",
        {
            "t6": T6_SOLUTION.replace(
                "jax.make_mesh((8,), ('batch',), axis_types=(AxisType.Auto,))",
                "jax.make_mesh((8, 1), ('batch', 'rest'), axis_types=(AxisType.Auto,) * 2)",
            )
        },
        {"t6": 14},
        messages={"t6": "its shape is (8, 1), not (8,)"},
    ),
    Case(
        "t6_mesh_axis_renamed",
        {"t6": T6_SOLUTION.replace("('batch',)", "('data',)").replace("P('batch')", "P('data')")},
        {"t6": 14},
        messages={"t6": "its axes are named ('data',), not ('batch',)"},
    ),
    Case(  # replicated on the lab's 4×2 mesh (mesh_sharding's default), not on the mesh the batch lies on
        "t6_params_on_lab_mesh",
        {
            "t6": T6_SOLUTION.replace(
                "jax.device_put(params, NamedSharding(mesh_dp, P()))", "jax.device_put(params, mesh_sharding(P()))"
            )
        },
        {"t6": 14},
        messages={"t6": "the mesh `batch_dp` lies on"},
    ),
    Case(
        "t6_params_dp_flat",
        {
            "t6": T6_SOLUTION.replace(
                "params_dp = train(params_dp, batch_dp)\nloss_dp = float(loss_jit(params_dp, batch_dp))",
                "trained = train(params_dp, batch_dp)\nloss_dp = float(loss_jit(trained, batch_dp))\n"
                "params_dp = jax.tree.leaves(trained)",
            )
        },
        {"t6": 15},
        messages={"t6": "a list of 4 (W, b) pairs"},
    ),
    Case(  # each mesh over the devices in another order than jax.make_mesh's: the text fixes none
        "meshes_in_other_device_orders",
        {
            "t6": T6_SOLUTION.replace(
                "jax.make_mesh((8,), ('batch',), axis_types=(AxisType.Auto,))",
                "Mesh(np.array(jax.devices()[::-1]), ('batch',), axis_types=(AxisType.Auto,))",
            ),
            "t7": T7_SOLUTION.replace(
                "jax.make_mesh((4, 2), ('batch', 'model'), axis_types=(AxisType.Auto,) * 2)",
                "Mesh(np.array(jax.devices())[[3, 6, 0, 5, 7, 1, 2, 4]].reshape(4, 2), ('batch', 'model'),\n"
                "               axis_types=(AxisType.Auto,) * 2)",
            ),
        },
        {"t6": 16, "t7": 16},
    ),
    Case(
        "t7_mesh_axes_renamed",
        {
            "t7": T7_SOLUTION.replace("('batch', 'model')", "('data', 'model')").replace(
                "P('batch', None)", "P('data', None)"
            )
        },
        {"t7": 14},
        messages={"t7": "its axes are named ('data', 'model'), not ('batch', 'model')"},
    ),
    Case(  # the right arrays in their layouts, but as one flat list rather than (W, b) pairs
        "t7_params_placed_flat",
        {
            "t7": T7_SOLUTION.replace(
                "params_tp = train(params_placed, batch_tp)",
                "params_tp = train(params_placed, batch_tp)\nparams_placed = [a for pair in params_placed for a in pair]",
            )
        },
        {"t7": 15},
        messages={"t7": "a list of 4 (W, b) pairs"},
    ),
    Case(  # W1 split over 'model' like W2, where the text keeps it replicated
        "t7_w1_split_over_model",
        {
            "t7": T7_SOLUTION.replace(
                "(jax.device_put(W1, replicated),", "(jax.device_put(W1, NamedSharding(mesh_tp, P(None, 'model'))),"
            )
        },
        {"t7": 11},
        messages={"t7": "params_placed"},
    ),
]
