"""The facts' schema: the JSON the kernel recorder (``autograder/kernel/recorder.py``, in the untrusted kernel)
writes after each task, ``facts.json`` plus ``.npy`` files (never pickles), and the frozen records below,
into which ``fact_reader`` validates it; each record's fields say what the JSON's of the same names mean.

JSON shape of one captured object (a "fact"):

- ``{"kind": "missing", "error": "NameError: name 'y' is not defined"}``
- ``{"kind": "value", "type": "float", "value": 0.5}`` — None, bool, int, float, str
- ``{"kind": "spec", "type": "PartitionSpec", "spec": [["a"], null]}`` — a PartitionSpec
  (``NamedSharding`` objects are recorded as their spec with ``"type": "NamedSharding"``)
- ``{"kind": "array", "type": "jax.Array", "shape": [...], "dtype": "float32", "values": "t1/y.npy",
  "sharding": {...} | null, "typeof": {...} | null, "blocks": {"3": "t1/array2.npy", ...}, "committed": bool |
  null}`` — ``values`` reads one copy of each block (a ``shard_map`` with ``check_vma=False`` can leave
  replicas that differ: ``blocks``)
- ``{"kind": "type", "type": "ShapedArray", "typeof": {...}}`` — a name bound to ``jax.typeof(x)``
- ``{"kind": "tree", "type": "list", "treedef": "...", "paths": ["[0][1]", ...], "leaves": [fact, ...]}``
  — a list/tuple/dict, flattened in ``jax.tree`` order, each leaf with its key path
- ``{"kind": "function", "type": "..."}`` — a callable (its behaviour is captured by calls)
- ``{"kind": "other", "type": "...", "repr": "..."}`` — anything else

A sharding: ``{"kind": "NamedSharding", "repr": str, "mesh": {"axis_names": [...], "shape": [...],
"axis_types": [...], "device_ids": nested list}, "spec": [...] , "device_indices": {"0":
[[start, stop], ...], ...}}``. A type: ``{"str": "float32[4@x,16@y]", "shape": [...], "dtype":
"float32", "sharded_axes": [[...] | null, ...], "mesh": {"axis_names": [...], "axis_types": ["Explicit", ...]}}``.
A value's ``type`` is its exact type: ``float``, ``numpy.float32`` (a numpy scalar is recorded with its
plain value).

The facts file of a task: ``{"task": "t1", "names": {name: fact}, "calls": {id: call}, "probes": {id:
probe}, "error": str | null, "output_cut": bool, "timing": record}`` (``output_cut``: the kernel's own output
cap, set by its housekeeping, had cut the notebook's output by then).

A timing record: ``{"events": [event, ...], "spans": [[read, read], ...], "dropped": int}``, the events in
the order they happened: ``["clock", read, clock name, seconds]``, ``["compile", "trace" | "lower" |
"compile", function name]``, ``["wait", "block_until_ready" | "device_get" | "to_host", [[shape, dtype,
device count], ...]]``; a span is two reads the code subtracted, the earlier first.

A lab probe: ``{"values": {name: fact}, "stdout": str, "error": str | null}``.

A call: ``{"output": fact, "stdout": str, "error": str | null, "hlo": str | null, "hlo_error": str | null,
"program": program | null}``, where a program (the function's object and its ``jax.make_jaxpr`` trace) is
``{"jit_object": bool, "top": [primitive, ...], "top_jit_library": bool, "primitives": [primitive, ...],
"collectives": [{"primitive": name, "axes": [axis, ...], "repeats": int | null, "perm": [[source, target], ...],
"written": "pmean" | absent}, ...], "bodies": [{"operands": [shape, ...], "blocks": [shape, ...],
"values": [{"shape": shape, "dtype": str}, ...], "whole_before": [bool, ...]}, ...], "in_shardings":
[sharding | null, ...] | null, "out_shardings": [...] | null, "error": str | null}``; a sharding given to
``jit`` also holds the ``"shape"`` of its value.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

Block = tuple[tuple[int, int], ...]


class FactsError(ValueError):
    """The kernel's facts file is missing, malformed or inconsistent."""


@dataclass(frozen=True)
class MeshFact:
    axis_names: tuple[str, ...]
    shape: tuple[int, ...]
    axis_types: tuple[str, ...]
    device_ids: np.ndarray = field(compare=False)

    @property
    def sizes(self) -> dict[str, int]:
        return dict(zip(self.axis_names, self.shape))


@dataclass(frozen=True)
class ShardingFact:
    """Where each block of an array lives: device id -> ((start, stop) per dimension)."""

    kind: str
    repr: str
    device_indices: dict[int, Block]
    mesh: MeshFact | None = None
    spec: tuple[tuple[str, ...] | None, ...] | None = None


@dataclass(frozen=True)
class TypeFact:
    """The JAX-level type, ``jax.typeof``: shape, dtype and which mesh axes shard each dimension."""

    text: str
    shape: tuple[int, ...]
    dtype: str
    sharded_axes: tuple[tuple[str, ...] | None, ...] | None
    mesh_axis_names: tuple[str, ...] | None = None  # the mesh of the type's sharding, when it has one
    axis_types: tuple[str, ...] | None = None  # its AxisType names: "Explicit", "Auto", "Manual"


@dataclass(frozen=True)
class Fact:
    """One object read from the kernel. ``kind`` says which of the optional fields are set."""

    kind: str
    type: str = ""
    value: Any = None
    error: str | None = None
    spec: tuple[tuple[str, ...] | None, ...] | None = None
    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    values: np.ndarray | None = field(default=None, compare=False, repr=False)
    sharding: ShardingFact | None = None
    typeof: TypeFact | None = None
    leaves: tuple[Fact, ...] = ()
    paths: tuple[str, ...] = ()
    treedef: str = ""
    repr: str = ""
    # device id -> the block that device holds, for the devices whose block differs from ``values`` at its index
    blocks: dict[int, np.ndarray] = field(default_factory=dict, compare=False, repr=False)
    committed: bool | None = None  # a jax.Array put on its devices on purpose (None: not a jax.Array, or unknown)

    @property
    def is_missing(self) -> bool:
        return self.kind == "missing"

    def describe(self) -> str:
        """A short description for messages: 'a float32[4,16] array', 'a float', 'undefined'."""
        if self.kind == "missing":
            return "undefined"
        if self.kind == "array":
            dims = ",".join(str(d) for d in self.shape or ())
            return f"a {self.type} {self.dtype}[{dims}]"
        if self.kind == "value":
            return f"{self.type} {self.value!r}"
        if self.kind == "tree":
            return f"a {self.type} of {len(self.leaves)} arrays"
        if self.kind == "type" and self.typeof is not None:
            return f"the type {self.typeof.text}"
        return f"a {self.type}"


@dataclass(frozen=True)
class CollectiveUse:
    """A collective written inside a ``shard_map`` body: its primitive's name in the trace and its mesh axes."""

    primitive: str
    axes: tuple[str, ...]
    repeats: int | None = 1  # times the program runs it (scan lengths multiplied); None inside a while loop
    perm: tuple[tuple[int, int], ...] | None = None  # a ppermute's (source, target) pairs
    written: str | None = None  # the jax.lax function called, where the primitive does not say (pmean)


@dataclass(frozen=True)
class ShardMapBody:
    """One ``shard_map`` of a program: its operands' global shapes, the blocks its body receives, the
    largest values (shape, dtype) its body makes, by size, and which operands were laid out whole on every
    device right before it."""

    operands: tuple[tuple[int, ...], ...]
    blocks: tuple[tuple[int, ...], ...]
    values: tuple[tuple[tuple[int, ...], str], ...]
    whole_before: tuple[bool, ...] = ()


@dataclass(frozen=True)
class ProgramFact:
    """How a student function is built: a jitted function object or not, and what its trace holds.

    ``top`` are the primitives of the trace's top level (a jitted function is one ``jit``), ``primitives``
    those of the whole program; ``collectives`` those written inside ``shard_map`` bodies, in trace order;
    ``in_shardings`` / ``out_shardings`` are the layouts given to a top-level
    ``jax.jit`` (None for a value without one, and None altogether when the top level is not one ``jit``).
    """

    jit_object: bool
    top: tuple[str, ...]
    primitives: frozenset[str]
    in_shardings: tuple[ShardingFact | None, ...] | None = None
    out_shardings: tuple[ShardingFact | None, ...] | None = None
    error: str | None = None
    collectives: tuple[CollectiveUse, ...] = ()
    bodies: tuple[ShardMapBody, ...] = ()
    top_jit_library: bool = False  # the one jit at the top is a library function's (jax.nn.log_softmax)

    @property
    def is_jitted(self) -> bool:
        """A jitted function object, or a function whose whole work is one call of a jitted function of
        its own: a library function that is jitted itself does not make its caller jitted."""
        return self.jit_object or (self.top in (("jit",), ("pjit",)) and not self.top_jit_library)


@dataclass(frozen=True)
class CallFact:
    """A student function called by the kernel recorder on the grader's inputs."""

    output: Fact
    stdout: str
    error: str | None
    hlo: str | None
    hlo_error: str | None
    program: ProgramFact | None = None


@dataclass(frozen=True)
class ProbeFact:
    """What a lab's own probe function recorded (e.g. a layer it built from the student's class)."""

    values: dict[str, Fact]
    stdout: str
    error: str | None


@dataclass(frozen=True)
class ClockRead:
    """A clock read of the student's code in a timed task: its number among the task's reads, and its value."""

    read: int
    clock: str
    seconds: float


@dataclass(frozen=True)
class Compilation:
    """A step of compiling that JAX announced: tracing, lowering or compiling ``function``."""

    stage: str
    function: str


@dataclass(frozen=True)
class Wait:
    """A wait of the student's code for results: each array's shape, dtype and device count."""

    how: str
    arrays: tuple[tuple[tuple[int, ...], str, int], ...]


@dataclass(frozen=True)
class TimingRecord:
    """What a timed task's cells did, in order (kernel/timing_record.py), and the pairs of clock reads the
    code subtracted from each other."""

    events: tuple[ClockRead | Compilation | Wait, ...]
    spans: tuple[tuple[int, int], ...]
    dropped: int = 0


@dataclass(frozen=True)
class TaskFacts:
    """Everything read right after one task's cells."""

    task: str
    names: dict[str, Fact]
    calls: dict[str, CallFact]
    error: str | None = None
    probes: dict[str, ProbeFact] = field(default_factory=dict)
    output_cut: bool = False  # the kernel had cut the notebook's output by the time of this capture
    timing: TimingRecord | None = None  # what a timed task's cells did, in the grading kernel

    def get(self, name: str) -> Fact:
        return self.names.get(name, Fact(kind="missing", error=f"{name} was not captured"))
