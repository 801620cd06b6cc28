"""Test helpers for the checks: real objects recorded as the probe's JSON and read back through facts/fact_reader.py."""

import json
import math
import tempfile
from pathlib import Path

import jax
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from autograder.facts.fact_reader import load_task_facts
from autograder.facts.schema import Fact, TypeFact


def fact_of(obj) -> Fact:
    """``obj`` (array, number, PartitionSpec, list/dict of arrays) as a grader receives it."""
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        raw = _raw(obj, directory, counter=[0])
        payload = {"task": "t0", "names": {"v": raw}, "calls": {}, "error": None}
        (directory / "facts.json").write_text(json.dumps(payload), encoding="utf-8")
        return load_task_facts(directory, "t0").get("v")


def missing_fact(name: str) -> Fact:
    return Fact(kind="missing", error=f"NameError: name '{name}' is not defined")


def type_fact_of(abstract) -> TypeFact:
    """A ``jax.typeof`` result (taken inside or outside jit) as the probe records it."""
    spec = getattr(getattr(abstract, "sharding", None), "spec", None)
    return TypeFact(text=str(abstract), shape=tuple(abstract.shape), dtype=str(abstract.dtype),
                    sharded_axes=None if spec is None else tuple(_entries(spec)))


def _raw(obj, directory: Path, counter: list) -> dict:
    if obj is None or isinstance(obj, (bool, int, float, str)):
        if isinstance(obj, float) and not math.isfinite(obj):
            return {"kind": "value", "type": "float", "value": str(obj)}
        return {"kind": "value", "type": type(obj).__name__, "value": obj}
    if isinstance(obj, (P, NamedSharding)):
        spec = obj.spec if isinstance(obj, NamedSharding) else obj
        return {"kind": "spec", "type": type(obj).__name__, "spec": _entries(spec)}
    if isinstance(obj, (jax.Array, np.ndarray)):
        counter[0] += 1
        filename = f"array{counter[0]}.npy"
        np.save(directory / filename, np.asarray(obj), allow_pickle=False)
        is_jax = isinstance(obj, jax.Array)
        return {"kind": "array", "type": "jax.Array" if is_jax else "numpy.ndarray", "shape": list(obj.shape),
                "dtype": str(obj.dtype), "values": filename, "sharding": _sharding(obj) if is_jax else None,
                "typeof": _typeof(obj)}
    if isinstance(obj, (list, tuple, dict)):
        leaves, treedef = jax.tree_util.tree_flatten_with_path(obj)
        return {"kind": "tree", "type": type(obj).__name__, "treedef": str(treedef),
                "paths": [jax.tree_util.keystr(path) for path, _ in leaves],
                "leaves": [_raw(leaf, directory, counter) for _, leaf in leaves]}
    return {"kind": "other", "type": type(obj).__name__, "repr": repr(obj)}


def _entries(spec):
    return [None if e is None else [e] if isinstance(e, str) else list(e) for e in spec]


def _sharding(arr) -> dict:
    sharding = arr.sharding
    record = {"kind": type(sharding).__name__, "repr": repr(sharding), "device_indices": {
        str(device.id): [list(s.indices(n)[:2]) for s, n in zip(index, arr.shape)]
        for device, index in sharding.devices_indices_map(arr.shape).items()}}
    if isinstance(sharding, NamedSharding):
        mesh = sharding.mesh
        record["mesh"] = {"axis_names": list(mesh.axis_names), "shape": list(mesh.devices.shape),
                          "axis_types": [t.name for t in mesh.axis_types],
                          "device_ids": np.vectorize(lambda d: d.id)(mesh.devices).tolist()}
        record["spec"] = _entries(sharding.spec)
    return record


def _typeof(arr) -> dict:
    abstract = jax.typeof(arr)
    spec = getattr(getattr(abstract, "sharding", None), "spec", None)
    return {"str": str(abstract), "shape": list(abstract.shape), "dtype": str(abstract.dtype),
            "sharded_axes": None if spec is None else _entries(spec)}
