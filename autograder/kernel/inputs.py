"""The inputs the grader chooses (a mesh, fresh arrays from a seed), built alike in the kernel and in the
grader's process, so that the student's function and the reference see the very same values."""

import math

import numpy as np

from .originals import _AxisType, _device_put, _make_mesh, _NamedSharding, _PartitionSpec, isinstance, len, list


def make_mesh(spec):
    """A mesh from ``{"shape": [...], "axis_names": [...], "axis_types": "auto" | "explicit"}``."""
    axis_type = _AxisType.Explicit if spec.get("axis_types", "auto") == "explicit" else _AxisType.Auto
    shape = tuple(spec["shape"])
    return _make_mesh(shape, tuple(spec["axis_names"]), axis_types=(axis_type,) * len(shape))


def make_input(spec, seed):
    """The array an input spec describes: fresh values from ``(seed, spec["key"])``, then placed."""
    rng = np.random.default_rng([int(seed), int(spec.get("key", 0))])
    shape = tuple(spec["shape"])
    dist = spec.get("dist", "normal")
    if dist == "uniform":
        values = rng.uniform(spec.get("low", 0.0), spec.get("high", 1.0), size=shape)
    elif dist == "arange":
        values = np.arange(math.prod(shape)).reshape(shape)
    else:
        values = rng.standard_normal(shape) * spec.get("scale", 1.0)
    values = values.astype(spec.get("dtype", "float32"))
    placement = spec.get("sharding")
    if placement is None:
        return values
    spec_entries = [tuple(e) if isinstance(e, list) else e for e in placement["spec"]]
    return _device_put(values, _NamedSharding(make_mesh(placement["mesh"]), _PartitionSpec(*spec_entries)))


def make_argument(spec, seed):
    """A call's argument: an input, or a tuple of arguments (``{"tuple": [...]}``: a model's parameters)."""
    if "tuple" in spec:
        return tuple(make_argument(item, seed) for item in spec["tuple"])
    return make_input(spec, seed)
