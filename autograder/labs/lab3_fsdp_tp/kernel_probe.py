"""Lab 3's own probe functions. This file runs INSIDE the student's kernel, as a standalone module.

It holds no answers and no checks: it builds the student's ``TPLayer`` the way the grader asks and
records what it finds (the six kernels with their layouts, the output, the compiled HLO). The grader
recomputes the layer from these weights in its own process. It imports only jax, flax and numpy;
references to what it uses are taken at import, before any student cell runs.
"""

import jax
import numpy as np
from flax import nnx
from jax.sharding import AxisType, NamedSharding, PartitionSpec

_make_mesh = jax.make_mesh
_set_mesh = jax.set_mesh
_device_put = jax.device_put
_jit = jax.jit
_block_until_ready = jax.block_until_ready
_Rngs = nnx.Rngs
_split = nnx.split
_merge = nnx.merge
_default_rng = np.random.default_rng
_lecun_normal = nnx.initializers.lecun_normal
_Linear = nnx.Linear
_with_partitioning = nnx.with_partitioning

KERNELS = (
    ("attention", "Wq"),
    ("attention", "Wk"),
    ("attention", "Wv"),
    ("attention", "Wo"),
    ("mlp", "W1"),
    ("mlp", "W2"),
)


def _mesh():
    return _make_mesh((2, 4), ("data", "model"), axis_types=(AxisType.Auto, AxisType.Auto))


def _kernels(layer, label):
    """Each kernel as an array, keyed by its name (Wq … W2), and under "biases" the names of the
    linear layers that have a bias, comma-separated."""
    found, biases = {}, []
    for block, name in KERNELS:
        try:
            linear = getattr(getattr(layer, block), name)
            found[name] = linear.kernel[...]
        except AttributeError as exc:
            raise AttributeError(f"{label}.{block}.{name}.kernel: {exc}") from None
        if getattr(linear, "bias", None) is not None:
            biases.append(f"{block}.{name}")
    found["biases"] = ", ".join(biases)
    return found


# The kernel shapes of the grader's own TPLayer (reference.FRESH_LAYER, hidden_dim 64); a test keeps
# them equal. Were they to differ, the warm-up would only compile in vain.
FRESH_KERNEL_SHAPES = ((64, 64), (64, 256), (256, 64))


def warm_up():
    """Compile ahead, on the warm-up thread while the first cells run, what the grader's own TPLayer
    (``fresh_layer``, at t6) compiles to initialise its kernels, when they are built as in the seed.

    A sharded ``nnx.Linear`` draws its kernel (a truncated normal, scaled: ``kaiming_normal`` and the
    default ``lecun_normal`` alike) and lays it out over the mesh; JAX compiles both for each shape and
    layout, which took most of the time ``fresh_layer`` spent. Every shape is built both ways, by columns
    and by rows, so nothing here says which kernel takes which. A layer initialised otherwise compiles
    its own programs, as before."""
    with _set_mesh(_mesh()):
        rngs = _Rngs(0)
        for n_in, n_out in FRESH_KERNEL_SHAPES:
            for spec in ((None, "model"), ("model", None)):
                _Linear(n_in, n_out, use_bias=False, rngs=rngs, kernel_init=_with_partitioning(_lecun_normal(), spec))


def lab_layer(namespace, seed, params):
    """The kernels of the notebook's own ``tp_layer``."""
    if "tp_layer" not in namespace:
        raise NameError("name 'tp_layer' is not defined")
    return _kernels(namespace["tp_layer"], "tp_layer")


def fresh_layer(namespace, seed, params):
    """A ``TPLayer`` of the grader's sizes built under ``jax.set_mesh`` of the (2, 4) mesh, applied
    (jitted) to a fresh input with the batch over ``data``: its kernels, output and compiled HLO.

    The input is ``make_input``'s normal draw from ``(seed, params["key"])``, so the grader rebuilds it."""
    if "TPLayer" not in namespace:
        raise NameError("name 'TPLayer' is not defined")
    shape = tuple(params["shape"])
    x = _default_rng([int(seed), int(params["key"])]).standard_normal(shape).astype("float32")
    mesh = _mesh()
    with _set_mesh(mesh):
        layer = namespace["TPLayer"](params["hidden_dim"], params["num_heads"], rngs=_Rngs(int(seed) % 2**31))
        graphdef, state = _split(layer)
        apply = _jit(lambda state, inputs: _merge(graphdef, state)(inputs))
        inputs = _device_put(x, NamedSharding(mesh, PartitionSpec("data", None, None)))
        out = _block_until_ready(apply(state, inputs))
        hlo = apply.lower(state, inputs).compile().as_text()
    return {**_kernels(layer, "TPLayer(...)"), "out": out, "hlo": hlo}
