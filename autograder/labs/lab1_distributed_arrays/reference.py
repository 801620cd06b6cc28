"""Lab 1's reference computations, done in the grader's own process (never in the student's kernel).

Besides the lab's own mathematics (``x @ x``, the MLP trained 10 steps, timings, the RNG's compiled
code), the grader compiles reference functions for the layouts a student's arrays were recorded with:
what the compiled program needs is then read from code the grader compiled itself.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Sequence

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import AxisType, Mesh, NamedSharding, SingleDeviceSharding
from jax.sharding import PartitionSpec as P

from autograder.caches import cached_reference, shareable
from autograder.checks import (
    CheckFailure,
    Layout,
    MeshSpec,
    TimingStats,
    called_once,
    collectives_in,
    is_same_layout,
    measure_interleaved,
)
from autograder.facts import Fact, MeshFact

MESH = MeshSpec((4, 2), ("a", "b"), "auto")
MESH_DP = MeshSpec((8,), ("batch",), "auto")
MESH_TP = MeshSpec((4, 2), ("batch", "model"), "auto")
N = 1024
FRESH_SHAPE = (256, 512)  # the grader's input of task 5: another size than the lab's, so f is traced anew
LAYER_SIZES, BATCH_SIZE, NUM_STEPS, STEP_SIZE = (784, 512, 512, 512, 10), 1024, 10, 1e-3
PARAM_SHAPES = tuple(
    shape for n_in, n_out in zip(LAYER_SIZES[:-1], LAYER_SIZES[1:]) for shape in ((n_in, n_out), (n_out,))
)
BATCH_SHAPES = ((BATCH_SIZE, LAYER_SIZES[0]), (BATCH_SIZE, LAYER_SIZES[-1]))


@shareable
@cached_reference
def array_x() -> np.ndarray:
    """The lab's x (key 0), drawn as its locked cell draws it."""
    return np.asarray(jax.random.normal(jax.random.key(0), (N, N)))


@shareable
@cached_reference
def x_squared() -> np.ndarray:
    """x @ x in float64: the float32 products of the lab differ from it by about 2e-4 at most."""
    x = array_x().astype(np.float64)
    return x @ x


@cached_reference
def incompatible_devices_errors() -> tuple[str, str]:
    """str() of the error JAX raises here when x on device 0 and x on device 1 are added, in either order:
    the text names the devices and the shape, so another device or another array gives another text."""
    messages = []
    for devices in ((0, 1), (1, 0)):
        first, second = (jax.device_put(np.zeros((N, N), np.float32), jax.devices()[i]) for i in devices)
        try:
            first + second
        except ValueError as exc:
            messages.append(str(exc))
        else:
            raise RuntimeError(f"adding arrays committed to devices {devices} no longer raises a ValueError")
    return messages[0], messages[1]


# The lab's MLP, as its locked cells define it.


@shareable
def predict(params, inputs):
    for W, b in params:
        outputs = jnp.dot(inputs, W) + b
        inputs = jnp.maximum(outputs, 0)
    return outputs


@shareable
def loss(params, batch):
    inputs, targets = batch
    predictions = predict(params, inputs)
    return jnp.mean(jnp.sum((predictions - targets) ** 2, axis=-1))


loss_jit = jax.jit(loss)
gradfun = jax.jit(jax.grad(loss))


@shareable
def _init_layer(key, n_in, n_out):
    k1, k2 = jax.random.split(key)
    return jax.random.normal(k1, (n_in, n_out)) / jnp.sqrt(n_in), jax.random.normal(k2, (n_out,))


@shareable
@cached_reference
def model_setup():
    """The lab's initial parameters and batch (key 0), drawn eagerly as its locked cell does: a jitted
    draw differs in the last bits."""
    key, *keys = jax.random.split(jax.random.key(0), len(LAYER_SIZES))
    params = list(map(_init_layer, keys, LAYER_SIZES[:-1], LAYER_SIZES[1:]))
    key, *keys = jax.random.split(key, 3)
    inputs = jax.random.normal(keys[0], (BATCH_SIZE, LAYER_SIZES[0]))
    targets = jax.random.normal(keys[1], (BATCH_SIZE, LAYER_SIZES[-1]))
    return params, (inputs, targets)


@shareable
def batch_values() -> list[np.ndarray]:
    _, batch = model_setup()
    return [np.asarray(a) for a in batch]


@cached_reference
def trained() -> tuple[tuple[np.ndarray, ...], float]:
    """The parameters after the lab's 10 steps on one device (flattened in jax.tree order) and their loss."""
    params, batch = jax.device_put(model_setup())
    for _ in range(NUM_STEPS):
        grads = gradfun(params, batch)
        params = jax.block_until_ready(
            [(W - STEP_SIZE * dW, b - STEP_SIZE * db) for (W, b), (dW, db) in zip(params, grads)]
        )
    return tuple(np.asarray(leaf) for leaf in jax.tree.leaves(params)), float(loss_jit(params, batch))


@functools.cache
def gradient_calls() -> dict[str, Callable[[], object]]:
    """The two calls of gradfun the grader times for task 8 — on one device, and in the data-parallel
    layout of task 6 — with their arrays placed and each called once: set up once per process."""
    params, batch = model_setup()
    device = jax.devices()[0]
    params_single, batch_single = jax.device_put((params, batch), device)
    mesh = MESH_DP.build()
    params_dp = jax.device_put(params, NamedSharding(mesh, P()))
    batch_dp = jax.device_put(batch, NamedSharding(mesh, P("batch")))
    return called_once(
        {"single": lambda: gradfun(params_single, batch_single), "sharded": lambda: gradfun(params_dp, batch_dp)}
    )


def gradient_times() -> tuple[TimingStats, TimingStats]:
    """The grader's own seconds per call of gradfun, one device vs data-parallel, measured now (a grading
    measures once: the graders' ``per_grading`` fixture): every sample, so that the checks' band runs from
    its fastest calls to its slowest, with the load the measurement met. The checks allow 4× on a time
    and 2.5× on the ratio, so a median known within ±25 % is plenty: a quiet machine settles it in 5
    rounds, where ±10 % often took all 9 (the data-parallel call scatters by ±15 %)."""
    stats = measure_interleaved(gradient_calls(), repeats=9, warmup=1, min_repeats=5, precision=0.25)
    return stats["single"], stats["sharded"]


@cached_reference
def rng_communicates(partitionable: bool) -> bool:
    """Whether the lab's f_rng, compiled here for its (key, x_rng), contains a collective-permute."""

    @jax.jit
    def f_rng(key, x):
        return x + jax.random.uniform(key, x.shape)

    mesh = Mesh(jax.devices(), "x", axis_types=(AxisType.Auto,))
    x_rng = jax.device_put(jnp.arange(24), NamedSharding(mesh, P("x")))
    with jax.threefry_partitionable(partitionable):
        compiled = f_rng.lower(jax.random.key(42), x_rng).compile().as_text()
    assert compiled is not None  # the CPU backend always gives its compiled text
    return collectives_in(compiled)["collective-permute"] > 0


# What `autograder warm` and `autograder batch` store ahead of grading (the grader's timings stay per grade).
CACHED_CALLS = (
    array_x,
    x_squared,
    incompatible_devices_errors,
    model_setup,
    trained,
    functools.partial(rng_communicates, False),
    functools.partial(rng_communicates, True),
)
# What a grading that checks a task sets up ahead, while the kernel starts: the measurement after the
# notebook then only times.
SET_UP_AHEAD = {"t8": (gradient_calls,)}


# Compiling reference code for the layouts of a student's arrays.


@shareable
def sharding_of(fact: Fact, name: str) -> jax.sharding.Sharding:
    """The sharding the kernel recorder recorded for an array, rebuilt here; it must lay out the blocks it recorded."""
    layout = Layout.of_fact(fact, name)
    recorded = fact.sharding
    assert recorded is not None  # Layout.of_fact refuses an array without one
    devices = {device.id: device for device in jax.devices()}
    if not set(layout.blocks) <= set(devices):
        raise CheckFailure(f"`{name}` is on devices {sorted(layout.blocks)}, not all of which exist")
    sharding: jax.sharding.Sharding
    if recorded.mesh is not None and recorded.spec is not None:
        try:
            grid = np.vectorize(devices.__getitem__, otypes=[object])(recorded.mesh.device_ids)
            axis_types = tuple(getattr(AxisType, t, AxisType.Auto) for t in recorded.mesh.axis_types)
            mesh = Mesh(grid, recorded.mesh.axis_names, axis_types=axis_types)
            sharding = NamedSharding(mesh, P(*recorded.spec))
            rebuilt = Layout.of_spec(mesh, recorded.spec, layout.shape)
        except (KeyError, TypeError, ValueError) as exc:
            raise CheckFailure(f"`{name}`: the grader cannot rebuild its recorded sharding ({exc})") from None
    elif len(layout.blocks) == 1:
        (device_id,) = layout.blocks
        sharding, rebuilt = SingleDeviceSharding(devices[device_id]), Layout.single_device(device_id, layout.shape)
    else:
        raise CheckFailure(f"`{name}` is laid out by a {recorded.kind}; place it with a NamedSharding")
    if not is_same_layout(rebuilt, layout):
        raise CheckFailure(f"`{name}`: its recorded sharding does not lay out the blocks recorded for it")
    return sharding


@shareable
def leaves_of(fact: Fact, name: str, shapes: Sequence[tuple[int, ...]]) -> tuple[Fact, ...]:
    """The arrays of a list/tuple fact, in jax.tree order, with the expected shapes."""
    if fact.kind != "tree" or len(fact.leaves) != len(shapes):
        raise CheckFailure(f"`{name}`: expected a list or tuple of {len(shapes)} arrays, found {fact.describe()}")
    for index, (leaf, shape) in enumerate(zip(fact.leaves, shapes)):
        if leaf.kind != "array" or leaf.shape != tuple(shape):
            raise CheckFailure(f"`{name}` leaf {index}: expected an array of shape {shape}, found {leaf.describe()}")
    return fact.leaves


# The meshes a student's arrays lie on.


@shareable
def recorded_mesh(fact: Fact, name: str) -> MeshFact:
    """The mesh an array was recorded on; a CheckFailure for anything else."""
    sharding = fact.sharding if fact.kind == "array" else None
    if sharding is None or sharding.mesh is None:
        laid_out = f", laid out by a {sharding.kind}" if sharding is not None else ""
        raise CheckFailure(
            f"`{name}`: expected an array placed on a mesh (with a NamedSharding), found {fact.describe()}{laid_out}"
        )
    return sharding.mesh


@shareable
def describe_mesh(mesh: MeshFact) -> str:
    """ "a 4×2 mesh with axes ('a', 'b') of types (Auto, Auto) over devices [[0, 1], ...]"."""
    return (
        f"a {'×'.join(str(n) for n in mesh.shape)} mesh with axes {tuple(mesh.axis_names)} of types"
        f" ({', '.join(mesh.axis_types)}) over devices {np.asarray(mesh.device_ids).tolist()}"
    )


@shareable
def mesh_differences(found: MeshFact, expected: MeshSpec, device_order: bool) -> list[str]:
    """How the recorded mesh differs from ``expected`` (Auto axes): its shape, axis names, axis types, and
    its devices — in the same order when ``device_order``, else only the same set, for a text that fixes
    no order."""
    differences = []
    if tuple(found.shape) != expected.shape:
        differences.append(f"its shape is {tuple(found.shape)}, not {expected.shape}")
    if tuple(found.axis_names) != expected.axis_names:
        differences.append(f"its axes are named {tuple(found.axis_names)}, not {expected.axis_names}")
    explicit = [f"{name!r} is {kind}" for name, kind in zip(found.axis_names, found.axis_types) if kind != "Auto"]
    if explicit:
        differences.append(
            f"{', '.join(explicit)}, not Auto (jax.make_mesh makes Explicit axes unless given"
            " axis_types=(AxisType.Auto, ...))"
        )
    ids = np.asarray(found.device_ids)
    wanted = np.asarray(expected.build().device_ids)
    if device_order and ids.tolist() != wanted.tolist():
        differences.append(f"its devices are {ids.tolist()}, not {wanted.tolist()}")
    if not device_order and sorted(ids.ravel().tolist()) != sorted(wanted.ravel().tolist()):
        differences.append(f"it holds devices {sorted(ids.ravel().tolist())}, not the {wanted.size} devices")
    return differences


@shareable
def same_mesh(a: MeshFact, b: MeshFact) -> bool:
    """The same mesh: shape, axis names, axis types and devices in the same places."""
    return (
        tuple(a.shape) == tuple(b.shape)
        and tuple(a.axis_names) == tuple(b.axis_names)
        and tuple(a.axis_types) == tuple(b.axis_types)
        and np.asarray(a.device_ids).tolist() == np.asarray(b.device_ids).tolist()
    )


@shareable
def in_device_order_of(fact: Fact | None, mesh: MeshSpec) -> Mesh:
    """``mesh``'s shape and axis names over the devices of the mesh ``fact`` lies on, in that mesh's order
    (the lab's order when it lies on no mesh of those devices): where the text fixes no device order, the
    expected layout is the spec's layout on the student's own device order."""
    recorded = fact.sharding.mesh if fact is not None and fact.kind == "array" and fact.sharding is not None else None
    if recorded is not None:
        ids = [int(i) for i in np.asarray(recorded.device_ids).ravel()]
        devices = {device.id: device for device in jax.devices()}
        if sorted(ids) == list(range(math.prod(mesh.shape))) and set(ids) <= set(devices):
            grid = np.array([devices[i] for i in ids], dtype=object).reshape(mesh.shape)
            return Mesh(grid, mesh.axis_names, axis_types=(AxisType.Auto,) * len(mesh.shape))
    return mesh.build()


# The error of task 4: "... Got argument x of add with shape float32[1024,1024] and with device ids [0] on
# platform CPU and argument y of add ...": the function and argument names depend on how the two were added
# (jnp.add, a + b, a jitted lambda), the shapes and devices on what was added where.
_ARGUMENT = re.compile(r"with shape (\S+) and with device ids \[([0-9, ]*)\]")


@shareable
def error_arguments(message: str) -> list[tuple[str, tuple[int, ...]]]:
    """The (shape, device ids) of each argument an incompatible-devices error names, in its order."""
    return [(shape, tuple(int(i) for i in ids.replace(",", " ").split())) for shape, ids in _ARGUMENT.findall(message)]


@shareable
def abstract(fact: Fact, name: str) -> jax.ShapeDtypeStruct:
    """A student's array as the compiler sees it: shape, dtype and its recorded layout."""
    sharding = sharding_of(fact, name)  # a CheckFailure for anything but an array on devices
    assert fact.shape is not None and fact.dtype is not None  # the facts' reader sets both for an array
    return jax.ShapeDtypeStruct(fact.shape, np.dtype(fact.dtype), sharding=sharding)


@shareable
def compiled_text(fn: Callable, args: tuple, description: str) -> str:
    """The compiled HLO text of ``jax.jit(fn)`` for ``args`` (a tuple of pytrees of ``abstract`` arrays)."""
    try:
        text = jax.jit(fn).lower(*args).compile().as_text()
    except Exception as exc:  # the layouts cannot go together (e.g. two different sets of devices)
        raise CheckFailure(
            f"the grader could not compile {description} for your layouts: {type(exc).__name__}: {str(exc)[:500]}"
        ) from None
    assert text is not None  # the CPU backend always gives its compiled text
    return text
