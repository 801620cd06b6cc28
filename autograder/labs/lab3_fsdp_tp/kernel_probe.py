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
_Module = nnx.Module
_with_partitioning = nnx.with_partitioning
_array_equal = np.array_equal
_asarray = np.asarray

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


def _types(layer):
    """What in the layer is not of the types the text names: the layer and its two sub-modules nnx.Modules,
    the six linear layers nnx.Linears ("" when all are)."""
    wrong = []
    for path, obj, kind in (("TPLayer(...)", layer, _Module),) + tuple(
        (f"TPLayer(...).{block}", getattr(layer, block, None), _Module) for block in ("attention", "mlp")
    ):
        if not isinstance(obj, kind):
            wrong.append(f"{path} is a {type(obj).__name__}, not an nnx.Module")
    for block, name in KERNELS:
        linear = getattr(getattr(layer, block, None), name, None)
        if not isinstance(linear, _Linear):
            wrong.append(f"{block}.{name} is a {type(linear).__name__}, not an nnx.Linear")
    return "; ".join(wrong)


def _same_kernels(one, other):
    """The names of the kernels that hold the same values in both dicts of kernels."""
    return ", ".join(name for _, name in KERNELS if _array_equal(_asarray(one[name]), _asarray(other[name])))


def _rebuilt(namespace, kernels, params):
    """Whether ``tp_layer`` is ``TPLayer(hidden_dim, num_heads, rngs=nnx.Rngs(0))``: the class built again
    so under the (2, 4) mesh holds the same kernels ("" when it does, else what differs)."""
    if "TPLayer" not in namespace:
        return "TPLayer is not defined"
    try:
        with _set_mesh(_mesh()):
            again = _kernels(namespace["TPLayer"](params["hidden_dim"], params["num_heads"], rngs=_Rngs(0)), "TPLayer")
    except Exception as exc:  # the check says what failed; the kernels read above still count
        return f"building it again failed: {type(exc).__name__}: {exc}"[:500]
    same = _same_kernels(kernels, again).split(", ")
    differ = [name for _, name in KERNELS if name not in same]
    return f"the kernels of {', '.join(differ)} differ" if differ else ""


def lab_layer(namespace, seed, params):
    """The kernels of the notebook's own ``tp_layer``, and whether it is the layer the text asks for."""
    if "tp_layer" not in namespace:
        raise NameError("name 'tp_layer' is not defined")
    found = _kernels(namespace["tp_layer"], "tp_layer")
    if params:
        found["rebuilt"] = _rebuilt(namespace, found, params)
    return found


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
        if not isinstance(layer, _Module):
            raise TypeError(
                f"TPLayer(...) is a {type(layer).__name__}, not an nnx.Module: nnx.split cannot take it apart"
                " to compile it"
            )
        kernels = _kernels(layer, "TPLayer(...)")
        other = namespace["TPLayer"](params["hidden_dim"], params["num_heads"], rngs=_Rngs((int(seed) + 1) % 2**31))
        same = _same_kernels(kernels, _kernels(other, "TPLayer(...)"))
        graphdef, state = _split(layer)
        apply = _jit(lambda state, inputs: _merge(graphdef, state)(inputs))
        inputs = _device_put(x, NamedSharding(mesh, PartitionSpec("data", None, None)))
        out = _block_until_ready(apply(state, inputs))
        hlo = apply.lower(state, inputs).compile().as_text()
    return {**kernels, "out": out, "hlo": hlo, "types": _types(layer), "same_for_other_rngs": same}
