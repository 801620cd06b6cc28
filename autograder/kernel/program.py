"""What the program of a student's function holds, from its trace: its primitives, the collectives its
``shard_map`` bodies call, the blocks those bodies see, and the layouts a top-level ``jit`` was given."""

import math
import os

import jax
import numpy as np

from .layouts import given_sharding
from .originals import _make_jaxpr, callable, enumerate, getattr, isinstance, len, list, sorted, str, type, zip


def short_error(exc):
    """An exception as one short line of text, for a fact."""
    return f"{type(exc).__name__}: {exc}"[:2000]


def program_facts(function, args):
    """How the student's function is built, from its object and its trace (``jax.make_jaxpr``)."""
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
        record["error"] = short_error(exc)
        return record
    eqns = closed.jaxpr.eqns
    record["top"] = [eqn.primitive.name for eqn in eqns]
    record["top_jit_library"] = len(eqns) == 1 and _is_library_jit(eqns[0])
    record["primitives"] = sorted({eqn.primitive.name for eqn, _, _ in _all_eqns(closed.jaxpr)})
    record["collectives"] = _collectives(closed.jaxpr)
    record["bodies"] = _bodies(closed.jaxpr, [])
    if len(eqns) == 1 and "in_shardings" in eqns[0].params:
        eqn = eqns[0]
        for key, variables in (("in_shardings", eqn.invars), ("out_shardings", eqn.outvars)):
            record[key] = [given_sharding(s, v.aval.shape) for s, v in zip(eqn.params[key], variables)]
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
    info = getattr(_params_jaxpr(eqn), "debug_info", None)
    source = getattr(info, "func_src_info", None)
    if not isinstance(source, str) or " at " not in source:
        return False
    return _defined_in_library(source.rsplit(" at ", 1)[1].rsplit(":", 1)[0])


def _written_as(eqn):
    """The ``jax.lax`` function written for a collective traced as another (``pmean`` as ``psum``), from its frames."""
    try:
        frames = eqn.source_info.traceback.frames
    except Exception:
        return None
    names = [frame.function_name for frame in frames if _defined_in_library(frame.file_name)]
    return "pmean" if "pmean" in names else None


def _all_eqns(jaxpr, depth=0, inside=False, repeats=1):
    """Every equation of ``jaxpr`` and of the programs nested in its equations, in trace order, with whether it is
    inside a ``shard_map`` body and how many times it runs (None inside a ``while``, whose count is not traced)."""
    if depth > 50:
        return
    for eqn in jaxpr.eqns:
        yield eqn, inside, repeats
        inner_repeats = _inner_repeats(eqn, repeats)
        for inner in _inner_jaxprs(eqn):
            yield from _all_eqns(inner, depth + 1, inside or eqn.primitive.name == "shard_map", inner_repeats)


# The primitives by which a shard_map body talks to other devices (names vary across JAX versions; the
# grader maps them to what the student writes): reductions, and those that move blocks.
_REDUCTIONS = frozenset({"psum", "psum2", "psum_invariant", "pmax", "pmin"})
COLLECTIVE_PRIMITIVES = _REDUCTIONS | {"all_gather", "all_gather_invariant", "reduce_scatter", "ppermute", "all_to_all"}
MAX_COLLECTIVES = 200
MAX_PERM_PAIRS = 4096
MAX_BODIES = 20
MAX_BODY_VALUES = 20


def _collectives(jaxpr):
    """The collectives written inside ``shard_map`` bodies of ``jaxpr``, in trace order (facts/schema.py)."""
    found = []
    for eqn, inside, repeats in _all_eqns(jaxpr):
        name = eqn.primitive.name
        if inside and name in COLLECTIVE_PRIMITIVES and len(found) < MAX_COLLECTIVES:
            use = {"primitive": name, "axes": _axis_names(eqn.params), "repeats": repeats}
            if "perm" in eqn.params:
                use["perm"] = [[int(a), int(b)] for a, b in eqn.params["perm"]][:MAX_PERM_PAIRS]
            written = _written_as(eqn)
            if written:
                use["written"] = written
            found.append(use)
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
    """Per ``shard_map`` in ``jaxpr``: its operands, its body's blocks and largest values, and which operands were
    laid out whole right before it, so a check can tell a body held one whole, whichever primitive gathered it."""
    if depth > 50:
        return found
    whole = set() if whole is None else whole  # ids of the variables laid out whole on several devices
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        if name == "shard_map" and len(found) < MAX_BODIES:
            body = _params_jaxpr(eqn)
            shapes = {}  # every (shape, dtype) of a value the body makes
            for inner_eqn, _, _ in _all_eqns(body) if hasattr(body, "eqns") else ():
                for var in inner_eqn.outvars:
                    aval = getattr(var, "aval", None)
                    if hasattr(aval, "shape") and hasattr(aval, "dtype"):
                        shapes[(tuple(int(d) for d in aval.shape), str(aval.dtype))] = True
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
            if name in ("jit", "pjit") and inner is _params_jaxpr(eqn):
                given = eqn.params.get("in_shardings") or ()
                for index, (outer, var) in enumerate(zip(eqn.invars, inner.invars)):
                    sharding = given[index] if index < len(given) else None
                    if id(outer) in whole or _replicated_everywhere(sharding):
                        inner_whole.add(id(var))
            _bodies(inner, found, depth + 1, inner_whole)
    return found


def _params_jaxpr(eqn):
    """The program an equation's ``jaxpr`` parameter holds (a ``jit``'s, a ``shard_map``'s body)."""
    inner = eqn.params.get("jaxpr")
    return getattr(inner, "jaxpr", inner)


def _replicated_everywhere(sharding):
    """Whether ``sharding`` puts a whole copy of its value on each of several devices."""
    try:
        return bool(getattr(sharding, "is_fully_replicated", False)) and len(sharding.device_set) > 1
    except Exception:
        try:  # a sharding on an abstract mesh (under jax.set_mesh): a spec naming no axis, a mesh of several
            return all(entry is None for entry in sharding.spec) and math.prod(sharding.mesh.axis_sizes) > 1
        except Exception:
            return False


def _mark_whole(eqn, whole):
    """Add to ``whole`` the outputs of ``eqn`` laid out whole on several devices, or keeping a whole input's shape."""
    params, name = eqn.params, eqn.primitive.name
    placed = [params.get(key) for key in ("sharding", "dst_sharding") if key in params]
    if placed and name != "device_put":
        if any(_replicated_everywhere(s) for s in placed):
            whole.update(id(var) for var in eqn.outvars)
        return
    if name in ("device_put", "jit", "pjit"):
        per_output = params.get("devices" if name == "device_put" else "out_shardings") or ()  # a layout each
        for var, sharding in zip(eqn.outvars, per_output):
            if _replicated_everywhere(sharding):
                whole.add(id(var))
        if name == "device_put":
            return
    shapes = {tuple(v.aval.shape) for v in eqn.invars if id(v) in whole and hasattr(v.aval, "shape")}
    for var in eqn.outvars:
        if tuple(getattr(var.aval, "shape", ())) in shapes and shapes:
            whole.add(id(var))


def _axis_names(params):
    """The mesh axes a collective's equation names (``axes`` or ``axis_name``), as strings."""
    axes = params.get("axes", params.get("axis_name", ()))
    axes = axes if isinstance(axes, (tuple, list)) else (axes,)
    return [str(axis) for axis in axes]
