"""The kernel recorder: imported into the student's kernel before any student cell, it records facts as
plain data.

This file runs in the untrusted kernel, so it holds no answers and no checks: it only describes what
it finds (values as ``.npy`` without pickles, layouts, types, compiled HLO) and calls student functions
on inputs whose seed the grader chooses at grading time. It imports nothing from ``autograder``: the
harness copies it into the kernel as a standalone module, after the kernel's housekeeping
(run/kernel_housekeeping.py: the output cap, the lab probe's warm-up, reaping children), which it finds
there by its module name. The grader imports ``make_input`` from here to rebuild the very same inputs in
its own process, and the student's self-check (``ag.check``) records with ``capture``.

References to the library functions it uses are taken at import, before student code runs, so a
notebook that later patches ``jax.typeof`` or ``numpy.save`` does not change what is recorded.
"""

import builtins
import contextlib
import io
import json
import math
import os
import shutil
import sys
import traceback

import jax
import numpy as np

# Builtins bound as this module's globals: a notebook that patches ``builtins`` does not reach them.
isinstance, callable, getattr, len, repr, str, type, float, list, dict = (  # noqa: A001
    builtins.isinstance,
    builtins.callable,
    builtins.getattr,
    builtins.len,
    builtins.repr,
    builtins.str,
    builtins.type,
    builtins.float,
    builtins.list,
    builtins.dict,
)
open, sorted, zip, enumerate, range = builtins.open, builtins.sorted, builtins.zip, builtins.enumerate, builtins.range

_typeof = jax.typeof
_device_get = jax.device_get
_tree_flatten_with_path = jax.tree_util.tree_flatten_with_path
_keystr = jax.tree_util.keystr
_jit = jax.jit
_make_jaxpr = jax.make_jaxpr
_device_put = jax.device_put
_set_mesh = jax.set_mesh
_make_mesh = jax.make_mesh
_np_save = np.save
_np_asarray = np.asarray
_np_array_equal = np.array_equal
_json_dumps = json.dumps
_dict_get = dict.get
_Array = jax.Array
_PartitionSpec = jax.sharding.PartitionSpec
_NamedSharding = jax.sharding.NamedSharding
_AxisType = jax.sharding.AxisType
_ShapedArray = jax.core.ShapedArray  # what jax.typeof returns

LAB_PROBE_MODULE = "_autograder_lab_probe"  # the lab probe's name in the kernel (as kernel_housekeeping's)
MAX_ARRAY_BYTES = 256 * 1024 * 1024
MAX_TEXT = 1024 * 1024
MAX_TREE_LEAVES = 256

# The timing record (facts/timing_record.py), which the harness loads into the kernel before this module,
# under this name: what a timed task's cells did, taken with the task's facts. Absent elsewhere.
TIMING_MODULE = "_autograder_timing"
_timing = sys.modules.get(TIMING_MODULE)

# The kernel's housekeeping (run/kernel_housekeeping.py), which the harness loads into the kernel before
# this module, under this name: whether it had cut the output, and the lab probe's warm-up to wait for.
# Imported from the package (the grader's process, the student's self-check), this module finds none: no
# output was cut and no warm-up runs there.
HOUSEKEEPING_MODULE = "_autograder_housekeeping"
_housekeeping = sys.modules.get(HOUSEKEEPING_MODULE)
if _housekeeping is not None:
    _output_cut, _wait_for_warm_up = _housekeeping.output_cut, _housekeeping.wait_for_warm_up
else:

    def _output_cut():
        return False

    def _wait_for_warm_up():
        return None


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
    mesh = make_mesh(placement["mesh"])
    spec_entries = [tuple(e) if isinstance(e, list) else e for e in placement["spec"]]
    return _device_put(values, _NamedSharding(mesh, _PartitionSpec(*spec_entries)))


def make_argument(spec, seed):
    """A call's argument: an input, or a tuple of arguments (``{"tuple": [...]}``: a model's parameters)."""
    if "tuple" in spec:
        return tuple(make_argument(item, seed) for item in spec["tuple"])
    return make_input(spec, seed)


def capture(manifest_json, namespace):
    """Record the facts a task's manifest asks for into ``<out>/facts.json``."""
    manifest = json.loads(manifest_json)
    timing = _timing.take() if _timing is not None else None  # before the recorder calls anything
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
    facts["output_cut"] = _output_cut()
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


def _short_error(exc):
    return f"{type(exc).__name__}: {exc}"[:2000]


class _Recorder:
    """Turns kernel objects into JSON-ready facts, writing array values as ``.npy`` files: once per
    distinct values within a task (a task that lays one array out four ways writes it once)."""

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
            return {"kind": "other", "type": type(namespace[name]).__name__, "repr": _short_error(exc)}

    def fact(self, obj, depth=0):
        if isinstance(obj, np.generic) and obj.ndim == 0 and obj.dtype.kind in "biuf":
            return {**self.fact(obj.item(), depth), "type": _type_name(obj)}
        if obj is None or isinstance(obj, (bool, int, float, str)):
            value = str(obj)[:MAX_TEXT] if isinstance(obj, str) else obj
            if type(obj) not in (bool, int, float, str, type(None)):  # a subclass (numpy.float64): its plain value
                value = (bool if isinstance(obj, bool) else int if isinstance(obj, int) else float)(obj)
            return {"kind": "value", "type": _type_name(obj), "value": value}
        if isinstance(obj, _PartitionSpec):
            return {"kind": "spec", "type": "PartitionSpec", "spec": _spec_entries(obj)}
        if isinstance(obj, _NamedSharding):
            return {"kind": "spec", "type": "NamedSharding", "spec": _spec_entries(obj.spec)}
        if isinstance(obj, (_Array, np.ndarray)):
            return self.array(obj)
        if isinstance(obj, _ShapedArray):  # a name bound to jax.typeof(x): a type, asked about as one
            return {"kind": "type", "type": type(obj).__name__, "typeof": _abstract_record(obj)}
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
        record = {
            "kind": "array",
            "type": "jax.Array" if is_jax else "numpy.ndarray",
            "shape": list(arr.shape),
            "dtype": str(arr.dtype),
            "values": filename,
            "sharding": _sharding(arr) if is_jax else None,
            "typeof": _type(arr),
        }
        if is_jax:
            record["blocks"] = self.other_blocks(arr, values)
            record["committed"] = _committed(arr)
        return record

    def other_blocks(self, arr, values):
        """Device id -> the ``.npy`` of the block that device holds, for the devices whose block differs
        from the array's value at the block's index. The value is read from one copy of each block, so a
        result a ``shard_map`` with ``check_vma=False`` declares replicated (``out_specs=P()``) shows device
        0's block as the whole array: this is what every other device really holds."""
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
        """The ``.npy`` file holding ``values``: one written earlier in this task with equal values (same
        dtype and shape), else a new one. Only arrays that also begin with the same bytes are compared
        whole, so many arrays of one shape do not cost a comparison of every pair."""
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
        if function is None:
            name, bracket, _ = call["function"].partition("[")
            error = (
                f"KeyError: {call['function']} is not bound: no dict `{name}` with that key"
                if bracket
                else f"NameError: name '{call['function']}' is not defined"
            )
            return {"output": {"kind": "missing", "error": error}, "stdout": "", "error": error}
        if not callable(function):
            error = f"TypeError: {call['function']} is a {type(function).__name__}, not a function"
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
                record["error"] = _short_error(exc)
            if record["error"] is None:
                record["program"] = _program(function, args)
            if call.get("hlo") and record["error"] is None:
                try:
                    jitted = function if hasattr(function, "lower") else _jit(function)
                    record["hlo"] = jitted.lower(*args).compile().as_text()[: 16 * MAX_TEXT]
                except Exception as exc:
                    record["hlo_error"] = _short_error(exc)
        record["stdout"] = stdout.getvalue()[-MAX_TEXT:]
        return record

    def probe(self, probe, namespace, seed):
        """Run a lab's own probe function (from its kernel_probe.py): it returns named objects to record."""
        stdout = io.StringIO()
        record = {"values": {}, "stdout": "", "error": None}
        module = sys.modules.get(LAB_PROBE_MODULE)
        _wait_for_warm_up()
        try:
            function = getattr(module, probe["function"])
            with contextlib.redirect_stdout(stdout):
                found = function(namespace, seed, probe.get("params", {}))
            record["values"] = {str(k): self.fact(v) for k, v in found.items()}
        except Exception as exc:
            record["error"] = _short_error(exc)
        record["stdout"] = stdout.getvalue()[-MAX_TEXT:]
        return record


def _program(function, args):
    """How the student's function is built, from its object and its trace (``jax.make_jaxpr``): whether
    it is a jitted function, the primitives of its top level and of its whole program, and the layouts a
    top-level ``jit`` was given (``in_shardings`` / ``out_shardings``, None where not given)."""
    record = {
        "jit_object": callable(getattr(function, "lower", None)),
        "top": [],
        "top_jit_library": False,
        "primitives": [],
        "collectives": [],
        "bodies": [],
        "in_shardings": None,
        "out_shardings": None,
        "error": None,
    }
    try:
        closed = _make_jaxpr(function)(*args)
    except Exception as exc:
        record["error"] = _short_error(exc)
        return record
    eqns = closed.jaxpr.eqns
    record["top"] = [eqn.primitive.name for eqn in eqns]
    record["top_jit_library"] = len(eqns) == 1 and _is_library_jit(eqns[0])
    record["primitives"] = sorted(_primitives(closed.jaxpr, set()))
    record["collectives"] = _collectives(closed.jaxpr, [], inside=False)
    record["bodies"] = _bodies(closed.jaxpr, [])
    if len(eqns) == 1 and "in_shardings" in eqns[0].params:
        eqn = eqns[0]
        record["in_shardings"] = [
            _given_sharding(s, v.aval.shape) for s, v in zip(eqn.params["in_shardings"], eqn.invars)
        ]
        record["out_shardings"] = [
            _given_sharding(s, v.aval.shape) for s, v in zip(eqn.params["out_shardings"], eqn.outvars)
        ]
    return record


# Where installed libraries live: a ``jit`` whose function is defined there (``jax.nn.log_softmax``,
# ``jnp.linalg.norm``) is the library's, not the student's.
_LIBRARY_DIRS = tuple(
    os.path.dirname(os.path.dirname(str(module.__file__))) + os.sep
    for module in (jax, np)
    if getattr(module, "__file__", None)
)


def _defined_in_library(path):
    return path.startswith(_LIBRARY_DIRS) or f"{os.sep}site-packages{os.sep}" in path or "dist-packages" in path


def _is_library_jit(eqn):
    """Whether ``eqn`` is a ``jit`` of a function an installed library defines (read from its debug info)."""
    if eqn.primitive.name not in ("jit", "pjit"):
        return False
    inner = eqn.params.get("jaxpr")
    info = getattr(getattr(inner, "jaxpr", inner), "debug_info", None)
    source = getattr(info, "func_src_info", None)
    if not isinstance(source, str) or " at " not in source:
        return False
    return _defined_in_library(source.rsplit(" at ", 1)[1].rsplit(":", 1)[0])


def _written_as(eqn):
    """The ``jax.lax`` function the student called for a collective equation when it is not the primitive's
    own (``pmean`` traces as ``psum`` then a division): the first library frame below the student's call."""
    try:
        frames = eqn.source_info.traceback.frames
    except Exception:
        return None
    names = [frame.function_name for frame in frames if _defined_in_library(frame.file_name)]
    return "pmean" if "pmean" in names else None


def _primitives(jaxpr, found, depth=0):
    """The names of every primitive in ``jaxpr`` and in the programs nested in its equations."""
    if depth > 50:
        return found
    for eqn in jaxpr.eqns:
        found.add(eqn.primitive.name)
        for value in eqn.params.values():
            for inner in value if isinstance(value, (tuple, list)) else (value,):
                inner = getattr(inner, "jaxpr", inner)  # a ClosedJaxpr holds its Jaxpr
                if hasattr(inner, "eqns"):
                    _primitives(inner, found, depth + 1)
    return found


# The primitives by which a shard_map body talks to other devices (names vary across JAX versions; the
# grader maps them to what the student writes).
COLLECTIVE_PRIMITIVES = frozenset(
    {
        "psum",
        "psum2",
        "psum_invariant",
        "pmax",
        "pmin",
        "all_gather",
        "all_gather_invariant",
        "reduce_scatter",
        "ppermute",
        "all_to_all",
    }
)
MAX_COLLECTIVES = 200
MAX_PERM_PAIRS = 4096
MAX_BODIES = 20
MAX_BODY_VALUES = 20


def _collectives(jaxpr, found, inside, depth=0, repeats=1):
    """The collectives written inside ``shard_map`` bodies of ``jaxpr``, in trace order (nested programs,
    such as a ``fori_loop``'s or a ``jit``'s, included): ``{"primitive": name, "axes": [axis, ...],
    "repeats": n | None, "perm": [[source, target], ...]}`` — ``repeats``: how many times the program runs
    it (the lengths of the ``scan`` loops around it multiplied; None inside a ``while`` loop, whose count
    the trace does not fix), ``perm`` for a ``ppermute`` only."""
    if depth > 50:
        return found
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        if inside and name in COLLECTIVE_PRIMITIVES and len(found) < MAX_COLLECTIVES:
            use = {"primitive": name, "axes": _axis_names(eqn.params), "repeats": repeats}
            if "perm" in eqn.params:
                use["perm"] = [[int(a), int(b)] for a, b in eqn.params["perm"]][:MAX_PERM_PAIRS]
            written = _written_as(eqn)
            if written:
                use["written"] = written
            found.append(use)
        inner_repeats = _inner_repeats(eqn, repeats)
        for inner in _inner_jaxprs(eqn):
            _collectives(inner, found, inside or name == "shard_map", depth + 1, inner_repeats)
    return found


def _inner_repeats(eqn, repeats):
    """How many times the programs nested in ``eqn`` run, given that ``eqn`` runs ``repeats`` times."""
    name = eqn.primitive.name
    if repeats is None or name == "while":
        return None
    if name == "scan":
        length = eqn.params.get("length")
        return repeats * int(length) if isinstance(length, int) else None
    return repeats


def _inner_jaxprs(eqn):
    """The programs nested in an equation's parameters (a ``jit``'s, a loop's body, a ``cond``'s branches)."""
    for value in eqn.params.values():
        for inner in value if isinstance(value, (tuple, list)) else (value,):
            inner = getattr(inner, "jaxpr", inner)  # a ClosedJaxpr holds its Jaxpr
            if hasattr(inner, "eqns"):
                yield inner


def _bodies(jaxpr, found, depth=0, whole=None):
    """Per ``shard_map`` in ``jaxpr``: the global shapes of its operands, the block shapes its body
    receives, the largest values its body makes (shape and dtype, by size, at most MAX_BODY_VALUES), and
    which operands were laid out whole on every device right before it (``whole_before``: by
    ``with_sharding_constraint``, ``device_put`` or a ``jit``'s ``in_shardings`` to a replicated layout), so
    a check can tell that a body held an operand whole, whichever primitive gathered it."""
    if depth > 50:
        return found
    whole = set() if whole is None else whole  # ids of the variables laid out whole on several devices
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        if name == "shard_map" and len(found) < MAX_BODIES:
            body = eqn.params.get("jaxpr")
            body = getattr(body, "jaxpr", body)
            shapes = {}
            if body is not None and hasattr(body, "eqns"):
                _body_values(body, shapes)
            largest = sorted(shapes.items(), key=lambda item: (-math.prod(item[0][0]), item[0]))[:MAX_BODY_VALUES]
            operands = [v for v in eqn.invars if hasattr(v.aval, "shape")]
            found.append(
                {
                    "operands": [list(v.aval.shape) for v in operands],
                    "blocks": [list(v.aval.shape) for v in getattr(body, "invars", ()) if hasattr(v.aval, "shape")],
                    "values": [{"shape": list(shape), "dtype": dtype} for (shape, dtype), _ in largest],
                    "whole_before": [id(v) in whole for v in operands],
                }
            )
        _mark_whole(eqn, whole)
        for inner in _inner_jaxprs(eqn):
            inner_whole = set()
            if name in ("jit", "pjit") and inner is _inner_jaxpr_of_jit(eqn):
                given = eqn.params.get("in_shardings") or ()
                for index, (outer, var) in enumerate(zip(eqn.invars, inner.invars)):
                    sharding = given[index] if index < len(given) else None
                    if id(outer) in whole or _replicated_everywhere(sharding):
                        inner_whole.add(id(var))
            _bodies(inner, found, depth + 1, inner_whole)
    return found


def _inner_jaxpr_of_jit(eqn):
    inner = eqn.params.get("jaxpr")
    return getattr(inner, "jaxpr", inner)


def _replicated_everywhere(sharding):
    """Whether ``sharding`` puts a whole copy of its value on each of several devices."""
    try:
        if not getattr(sharding, "is_fully_replicated", False):
            return False
        return len(sharding.device_set) > 1
    except Exception:
        try:  # a sharding on an abstract mesh (under jax.set_mesh): a spec naming no axis, a mesh of several
            return all(entry is None for entry in sharding.spec) and math.prod(sharding.mesh.axis_sizes) > 1
        except Exception:
            return False


def _mark_whole(eqn, whole):
    """Add to ``whole`` the outputs of ``eqn`` laid out whole on several devices: what a constraint, a
    ``device_put`` or a reshard to a replicated layout makes, and what keeps a whole input's shape."""
    params = eqn.params
    placed = [params.get(key) for key in ("sharding", "dst_sharding") if key in params]
    if eqn.primitive.name == "device_put":
        placed = list(params.get("devices") or ())
        for var, sharding in zip(eqn.outvars, placed):
            if _replicated_everywhere(sharding):
                whole.add(id(var))
        return
    if placed:
        if any(_replicated_everywhere(s) for s in placed):
            whole.update(id(var) for var in eqn.outvars)
        return
    if eqn.primitive.name in ("jit", "pjit"):
        for var, sharding in zip(eqn.outvars, params.get("out_shardings") or ()):
            if _replicated_everywhere(sharding):
                whole.add(id(var))
    shapes = {tuple(v.aval.shape) for v in eqn.invars if id(v) in whole and hasattr(v.aval, "shape")}
    for var in eqn.outvars:
        if tuple(getattr(var.aval, "shape", ())) in shapes and shapes:
            whole.add(id(var))


def _body_values(jaxpr, shapes, depth=0):
    """Every (shape, dtype) of a value an equation of ``jaxpr`` (or a program nested in it) makes."""
    if depth > 50:
        return
    for eqn in jaxpr.eqns:
        for var in eqn.outvars:
            aval = getattr(var, "aval", None)
            if hasattr(aval, "shape") and hasattr(aval, "dtype"):
                shapes[(tuple(int(d) for d in aval.shape), str(aval.dtype))] = True
        for inner in _inner_jaxprs(eqn):
            _body_values(inner, shapes, depth + 1)


def _axis_names(params):
    """The mesh axes a collective's equation names (``axes`` or ``axis_name``), as strings."""
    axes = params.get("axes", params.get("axis_name", ()))
    axes = axes if isinstance(axes, (tuple, list)) else (axes,)
    return [str(axis) for axis in axes]


def _given_sharding(sharding, shape):
    """A sharding given to ``jax.jit`` for a value of ``shape``, as blocks per device; None if not given."""
    if not hasattr(sharding, "devices_indices_map"):
        return None
    shape = tuple(shape)
    return {**_sharding_record(sharding, shape), "shape": list(shape)}


def _spec_entries(spec):
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


def _committed(arr):
    """Was the array put on its devices on purpose (``jax.device_put``, a computation on committed inputs),
    or left where JAX put it by default (``jnp.asarray`` of host data)? None where JAX does not say."""
    committed = getattr(arr, "committed", None)
    return committed if isinstance(committed, bool) else None


def _sharding(arr):
    return _sharding_record(arr.sharding, arr.shape)


def _sharding_record(sharding, shape):
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
        record["spec"] = _spec_entries(sharding.spec)
    return record


def _type(arr):
    try:
        return _abstract_record(_typeof(arr))
    except Exception:
        return None


def _abstract_record(abstract):
    """A ``jax.typeof`` result as shape, dtype and the mesh axes that shard each dimension."""
    sharding = getattr(abstract, "sharding", None)
    spec = getattr(sharding, "spec", None)
    record = {
        "str": str(abstract)[:1000],
        "shape": list(abstract.shape),
        "dtype": str(abstract.dtype),
        "sharded_axes": None if spec is None else _spec_entries(spec),
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


def _type_name(obj):
    """The exact type of a recorded value: ``float``, ``bool``, ``numpy.float32``, ``numpy.bool``; a
    subclass of a builtin (``numpy.float64`` is a float) keeps its own name, so a check can tell them apart."""
    kind = type(obj)
    module = getattr(kind, "__module__", "")
    if module == "builtins":
        return kind.__name__
    return f"{module.split('.')[0]}.{kind.__name__}"
