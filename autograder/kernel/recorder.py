"""The kernel recorder: a task's facts as plain data (values as ``.npy`` without pickles, layouts, types,
compiled HLO). It runs in the untrusted kernel, so it holds no answers and no checks."""

import contextlib
import io
import json
import os
import shutil
import sys
import traceback

import jax
import numpy as np

from . import housekeeping, timing_record
from .housekeeping import LAB_PROBE_MODULE
from .inputs import make_argument, make_mesh
from .layouts import abstract_record, sharding_record, spec_entries, type_name
from .originals import (
    _Array,
    _device_get,
    _dict_get,
    _jit,
    _json_dumps,
    _keystr,
    _NamedSharding,
    _np_array_equal,
    _np_asarray,
    _np_save,
    _PartitionSpec,
    _set_mesh,
    _ShapedArray,
    _tree_flatten_with_path,
    _typeof,
    callable,
    dict,
    float,
    getattr,
    isinstance,
    len,
    list,
    open,
    repr,
    str,
    type,
)
from .program import program_facts, short_error

MAX_ARRAY_BYTES = 256 * 1024 * 1024
MAX_TEXT = 1024 * 1024
MAX_TREE_LEAVES = 256


def record_task_facts(manifest_json, namespace):
    """Record the facts a task's manifest asks for into ``<out>/facts.json``."""
    manifest = json.loads(manifest_json)
    timing = timing_record.take()  # before the recorder calls anything
    out = manifest["out"]
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    recorder = _Recorder(out)
    facts = {"task": manifest["task"], "names": {}, "calls": {}, "probes": {}, "error": None}
    try:
        for name in manifest.get("names", []):
            facts["names"][name] = recorder.named(name, namespace)
        for call in manifest.get("calls", []):
            facts["calls"][call["id"]] = recorder.call(call, namespace, manifest["seed"])
        for probe in manifest.get("probes", []):
            facts["probes"][probe["id"]] = recorder.probe(probe, namespace, manifest["seed"])
    except Exception:
        facts["error"] = traceback.format_exc(limit=5)[-MAX_TEXT:]
    facts["output_cut"] = housekeeping.output_cut()
    if timing is not None:
        facts["timing"] = timing
    with open(os.path.join(out, "facts.json"), "w", encoding="utf-8") as handle:
        handle.write(_json_dumps(facts))


def _bound_function(namespace, spec):
    """What ``spec`` names: a bound name, or ``name['key']``, an entry of a dict the task binds (its
    functions by name). Only a plain dict is looked into: no code of the student's runs to find it."""
    name, bracket, rest = spec.partition("[")
    found = namespace.get(name)
    if not bracket:
        return found
    key = rest[1:-2] if len(rest) >= 3 and rest[0] in "'\"" and rest[-2:] == rest[0] + "]" else None
    return _dict_get(found, key) if type(found) is dict and key is not None else None


class _Recorder:
    """Turns kernel objects into JSON-ready facts, writing each distinct array value of a task once as ``.npy``."""

    def __init__(self, out):
        self.out = out
        self.count = 0
        self.written = {}  # (dtype, shape, first bytes) -> [(values, filename)] of the files written

    def named(self, name, namespace):
        if name not in namespace:
            return {"kind": "missing", "error": f"NameError: name '{name}' is not defined"}
        try:
            return self.fact(namespace[name])
        except Exception as exc:
            return {"kind": "other", "type": type(namespace[name]).__name__, "repr": short_error(exc)}

    def fact(self, obj, depth=0):
        if isinstance(obj, np.generic) and obj.ndim == 0 and obj.dtype.kind in "biuf":
            return {**self.fact(obj.item(), depth), "type": type_name(obj)}
        if obj is None or isinstance(obj, (bool, int, float, str)):
            value = str(obj)[:MAX_TEXT] if isinstance(obj, str) else obj
            if type(obj) not in (bool, int, float, str, type(None)):  # a subclass (numpy.float64): its plain value
                value = (bool if isinstance(obj, bool) else int if isinstance(obj, int) else float)(obj)
            return {"kind": "value", "type": type_name(obj), "value": value}
        if isinstance(obj, _PartitionSpec):
            return {"kind": "spec", "type": "PartitionSpec", "spec": spec_entries(obj)}
        if isinstance(obj, _NamedSharding):
            return {"kind": "spec", "type": "NamedSharding", "spec": spec_entries(obj.spec)}
        if isinstance(obj, (_Array, np.ndarray)):
            return self.array(obj)
        if isinstance(obj, _ShapedArray):  # a name bound to jax.typeof(x): a type, asked about as one
            return {"kind": "type", "type": type(obj).__name__, "typeof": abstract_record(obj)}
        if isinstance(obj, (list, tuple, dict)) and depth == 0:
            return self.tree(obj)
        if callable(obj):
            return {"kind": "function", "type": type(obj).__name__, "repr": repr(obj)[:200]}
        return {"kind": "other", "type": type(obj).__name__, "repr": repr(obj)[:200]}

    def tree(self, obj):
        leaves, treedef = _tree_flatten_with_path(obj)
        if len(leaves) > MAX_TREE_LEAVES:
            return {"kind": "other", "type": type(obj).__name__, "repr": f"a tree of {len(leaves)} leaves"}
        return {
            "kind": "tree",
            "type": type(obj).__name__,
            "treedef": str(treedef)[:2000],
            "paths": [_keystr(path) for path, _ in leaves],
            "leaves": [self.fact(leaf, depth=1) for _, leaf in leaves],
        }

    def array(self, arr):
        if arr.dtype.kind not in "biufcV" or arr.nbytes > MAX_ARRAY_BYTES:
            return {"kind": "other", "type": type(arr).__name__, "repr": f"{arr.dtype}{list(arr.shape)} array"}
        values = _np_asarray(_device_get(arr))
        if values.dtype.kind not in "biufc":  # bfloat16 and friends: stored as float32, dtype kept below
            values = values.astype(np.float32)
        filename = self.values_file(values)
        is_jax = isinstance(arr, _Array)
        try:
            typeof = abstract_record(_typeof(arr))
        except Exception:
            typeof = None
        record = {
            "kind": "array",
            "type": "jax.Array" if is_jax else "numpy.ndarray",
            "shape": list(arr.shape),
            "dtype": str(arr.dtype),
            "values": filename,
            "sharding": sharding_record(arr.sharding, arr.shape) if is_jax else None,
            "typeof": typeof,
        }
        if is_jax:
            record["blocks"] = self.other_blocks(arr, values)
            committed = getattr(arr, "committed", None)  # put on its devices on purpose, or where JAX put it
            record["committed"] = committed if isinstance(committed, bool) else None
        return record

    def other_blocks(self, arr, values):
        """Device id -> the ``.npy`` of its block, where it differs from the array's value there: a result a
        ``shard_map`` with ``check_vma=False`` declares replicated shows only device 0's block as its value."""
        differing = {}
        try:
            shards = arr.addressable_shards
        except Exception:
            return differing
        if len(shards) < 2:
            return differing
        for shard in shards:
            block = _np_asarray(shard.data)
            if block.dtype.kind not in "biufc":
                block = block.astype(np.float32)
            expected = values[shard.index]
            equal_nan = block.dtype.kind in "fc"
            if block.shape != expected.shape or not _np_array_equal(block, expected, equal_nan=equal_nan):
                differing[str(shard.device.id)] = self.values_file(block)
        return differing

    def values_file(self, values):
        """The ``.npy`` file of ``values``, written once per task; only arrays with the same first bytes compared."""
        key = (values.dtype.str, values.shape, values.flat[:16].tobytes())
        for earlier, filename in self.written.get(key, ()):
            if _np_array_equal(earlier, values):
                return filename
        self.count += 1
        filename = f"array{self.count}.npy"
        _np_save(os.path.join(self.out, filename), values, allow_pickle=False)
        self.written.setdefault(key, []).append((values, filename))
        return filename

    def call(self, call, namespace, seed):
        function = _bound_function(namespace, call["function"])
        name, bracket, _ = call["function"].partition("[")
        if function is None and bracket:
            error = f"KeyError: {call['function']} is not bound: no dict `{name}` with that key"
        elif function is None:
            error = f"NameError: name '{call['function']}' is not defined"
        elif not callable(function):
            error = f"TypeError: {call['function']} is a {type(function).__name__}, not a function"
        if not callable(function):  # None too
            return {"output": {"kind": "missing", "error": error}, "stdout": "", "error": error}
        args = [make_argument(spec, seed) for spec in call["args"]]
        context = _set_mesh(make_mesh(call["mesh"])) if call.get("mesh") else contextlib.nullcontext()
        stdout = io.StringIO()
        record = {
            "output": {"kind": "missing", "error": "the call raised"},
            "error": None,
            "hlo": None,
            "hlo_error": None,
            "program": None,
        }
        with context, contextlib.redirect_stdout(stdout):
            try:
                result = jax.block_until_ready(function(*args))
                record["output"] = self.fact(result)
            except Exception as exc:
                record["error"] = short_error(exc)
            else:
                record["program"] = program_facts(function, args)
            if call.get("hlo") and record["error"] is None:
                try:
                    jitted = function if hasattr(function, "lower") else _jit(function)
                    record["hlo"] = jitted.lower(*args).compile().as_text()[: 16 * MAX_TEXT]
                except Exception as exc:
                    record["hlo_error"] = short_error(exc)
        record["stdout"] = stdout.getvalue()[-MAX_TEXT:]
        return record

    def probe(self, probe, namespace, seed):
        """Run a lab's own probe function (from its kernel_probe.py): it returns named objects to record."""
        stdout = io.StringIO()
        record = {"values": {}, "stdout": "", "error": None}
        housekeeping.wait_for_warm_up()
        try:
            function = getattr(sys.modules.get(LAB_PROBE_MODULE), probe["function"])
            with contextlib.redirect_stdout(stdout):
                found = function(namespace, seed, probe.get("params", {}))
            record["values"] = {str(k): self.fact(v) for k, v in found.items()}
        except Exception as exc:
            record["error"] = short_error(exc)
        record["stdout"] = stdout.getvalue()[-MAX_TEXT:]
        return record
