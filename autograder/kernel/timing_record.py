"""What a timed task's cells did (clock reads, compilations, waits for a result), so that a timing method is
judged by what the code did (docs/writing-a-lab.md, "The timing record"). A clock read returns a number that
notes which two reads are subtracted: the spans the code measured."""

import builtins
import os
import sys
import threading
import time
import timeit

import jax
import numpy as np

isinstance, len, getattr, setattr = builtins.isinstance, builtins.len, builtins.getattr, builtins.setattr  # noqa: A001
str, tuple, _to_float = builtins.str, builtins.tuple, builtins.float  # noqa: A001

MAX_EVENTS = 20000  # beyond this, events are counted, not kept
MAX_LEAVES = 8  # the arrays of one wait that are described
COMPILE_STAGES = {
    "/jax/core/compile/jaxpr_trace_duration": "trace",
    "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower",
    "/jax/core/compile/backend_compile_duration": "compile",
}
CLOCKS = ("perf_counter", "time", "monotonic")

_get_ident = threading.get_ident
_getframe = sys._getframe
_ArrayImpl = None  # JAX's array class, found at ``install`` (making an array starts JAX's backend)
_tree_leaves = jax.tree_util.tree_leaves
_perf_counter = time.perf_counter

# Where library code lives: the standard library, site-packages, this package's folder with the lab probe.
_LIBRARY = (
    os.path.dirname(os.__file__),
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
    *(os.path.dirname(os.path.dirname(os.path.abspath(str(module.__file__)))) for module in (jax, np)),
)

_state: dict = {"task": None, "thread": None, "events": [], "spans": [], "dropped": 0, "next_read": 0, "depth": 0}


def _recording():
    return _state["task"] is not None and _get_ident() == _state["thread"]


def _from_student(depth):
    """Is the code ``depth`` frames up the student's (not a library's, not this module's)?"""
    try:
        filename = _getframe(depth + 1).f_code.co_filename
    except ValueError:
        return False
    return not filename.startswith(_LIBRARY)


def _add(event):
    if len(_state["events"]) < MAX_EVENTS:
        _state["events"].append(event)
    else:
        _state["dropped"] += 1


class _Noted:
    """A clock read's value: subtracting an earlier read from it notes the span."""

    read = -1

    def __sub__(self, other):
        if isinstance(other, _Noted) and _state["task"] is not None:
            _state["spans"].append([other.read, self.read])
        return super().__sub__(other)


class _Reading(_Noted, float):
    """A read of a clock in seconds."""


class _ReadingNs(_Noted, int):
    """A read of a clock in nanoseconds (``perf_counter_ns``...)."""


def _clock(name, original, reading_type):
    def read():
        value = original()
        if not _recording() or not _from_student(1):
            return value
        index = _state["next_read"]
        _state["next_read"] += 1
        result = reading_type(value)
        result.read = index
        _add(["clock", index, name, _to_float(value) / (1e9 if reading_type is _ReadingNs else 1.0)])
        return result

    read.__name__ = read.__qualname__ = name
    read.__doc__ = original.__doc__
    return read


def _described(leaves):
    found = []
    for leaf in leaves[:MAX_LEAVES]:
        if isinstance(leaf, _ArrayImpl):
            try:
                devices = len(leaf.sharding.device_set)
            except Exception:
                devices = 0
            found.append([list(leaf.shape), str(leaf.dtype), devices])
    return found


def _wait(how, original, tree=True):
    """``original``, recording the arrays waited for: the leaves of its first argument (``tree``), or that
    argument where it is one array (numpy's functions, which are handed anything)."""

    def wait(*args, **kwargs):
        if not _recording() or _state["depth"] or not _from_student(1):
            return original(*args, **kwargs)
        _state["depth"] += 1
        try:
            result = original(*args, **kwargs)
        finally:
            _state["depth"] -= 1
        if not args:
            return result
        arrays = _described(_tree_leaves(args[0]) if tree else [args[0]])
        if arrays:
            _add(["wait", how, arrays])
        return result

    wait.__name__ = wait.__qualname__ = getattr(original, "__name__", how)
    wait.__doc__ = getattr(original, "__doc__", None)
    return wait


def _on_event(event, seconds, **kwargs):
    stage = COMPILE_STAGES.get(event)
    if stage is not None and _recording():
        _add(["compile", stage, str(kwargs.get("fun_name", ""))[:200]])


def install():
    """Wrap the clocks and the waits, and listen to JAX's compilation events: before any student cell."""
    global _ArrayImpl
    _ArrayImpl = type(jax.numpy.zeros(()))
    for name in CLOCKS:
        setattr(time, name, _clock(name, getattr(time, name), _Reading))
        setattr(time, name + "_ns", _clock(name + "_ns", getattr(time, name + "_ns"), _ReadingNs))
    timeit.default_timer = time.perf_counter
    # timeit's functions and Timer took the timer as a default argument when timeit was imported.
    for function in (timeit.Timer.__init__, timeit.timeit, timeit.repeat):
        defaults = function.__defaults__ or ()
        function.__defaults__ = tuple(time.perf_counter if d is _perf_counter else d for d in defaults)
    jax.block_until_ready = _wait("block_until_ready", jax.block_until_ready)
    jax.device_get = _wait("device_get", jax.device_get)
    np.asarray = _wait("to_host", np.asarray, tree=False)  # an array's own __array__ is not what numpy calls
    np.array = _wait("to_host", np.array, tree=False)
    for method, how in (("block_until_ready", "block_until_ready"), ("item", "to_host"), ("__float__", "to_host")):
        setattr(_ArrayImpl, method, _wait(how, getattr(_ArrayImpl, method)))
    jax.monitoring.register_event_duration_secs_listener(_on_event)


def start(task):
    """Record from now on for ``task`` (a later cell of the same task goes on with its record)."""
    if _state["task"] != task:
        _state.update(task=task, events=[], spans=[], dropped=0, next_read=0, depth=0)
    _state["thread"] = _get_ident()


def take():
    """The record of the task under way, as plain data, and stop recording; None when none was started."""
    if _state["task"] is None:
        return None
    record = {"events": _state["events"], "spans": _state["spans"][:MAX_EVENTS], "dropped": _state["dropped"]}
    _state.update(task=None, events=[], spans=[], dropped=0)
    return record
