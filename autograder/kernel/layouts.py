"""Layouts and types as plain data: a sharding's blocks per device and its mesh, a ``PartitionSpec``'s
entries, and a ``jax.typeof`` result's shape, dtype and sharded axes."""

import numpy as np

from .originals import _NamedSharding, getattr, isinstance, list, repr, str, type, zip


def given_sharding(sharding, shape):
    """A sharding given to ``jax.jit`` for a value of ``shape``, as blocks per device; None if not given."""
    if not hasattr(sharding, "devices_indices_map"):
        return None
    shape = tuple(shape)
    return {**sharding_record(sharding, shape), "shape": list(shape)}


def spec_entries(spec):
    entries = []
    for entry in spec:
        if entry is None:
            entries.append(None)
        elif isinstance(entry, str):
            entries.append([entry])
        elif isinstance(entry, (tuple, list)) and all(isinstance(a, str) for a in entry):
            entries.append(list(entry))
        else:
            raise TypeError(f"unsupported PartitionSpec entry {entry!r}")
    return entries


def _block(index, shape):
    return [list(s.indices(size)[:2]) for s, size in zip(index, shape)]


def sharding_record(sharding, shape):
    record = {
        "kind": type(sharding).__name__,
        "repr": repr(sharding)[:2000],
        "device_indices": {
            str(device.id): _block(index, shape) for device, index in sharding.devices_indices_map(shape).items()
        },
    }
    if isinstance(sharding, _NamedSharding):
        mesh = sharding.mesh
        record["mesh"] = {
            "axis_names": list(mesh.axis_names),
            "shape": list(mesh.devices.shape),
            "axis_types": [t.name for t in mesh.axis_types],
            "device_ids": np.vectorize(lambda d: d.id, otypes=[int])(mesh.devices).tolist(),
        }
        record["spec"] = spec_entries(sharding.spec)
    return record


def abstract_record(abstract):
    """A ``jax.typeof`` result as shape, dtype and the mesh axes that shard each dimension."""
    sharding = getattr(abstract, "sharding", None)
    spec = getattr(sharding, "spec", None)
    record = {
        "str": str(abstract)[:1000],
        "shape": list(abstract.shape),
        "dtype": str(abstract.dtype),
        "sharded_axes": None if spec is None else spec_entries(spec),
    }
    mesh = getattr(sharding, "mesh", None)
    try:
        record["mesh"] = {
            "axis_names": [str(name) for name in mesh.axis_names],
            "axis_types": [str(getattr(t, "name", t)) for t in mesh.axis_types],
        }
    except Exception:  # no mesh (a type seen without one)
        pass
    return record


def type_name(obj):
    """The exact type of a recorded value (``float``, ``numpy.float64``), so a check can tell a subclass apart."""
    kind = type(obj)
    module = getattr(kind, "__module__", "")
    if module == "builtins":
        return kind.__name__
    return f"{module.split('.')[0]}.{kind.__name__}"
