"""The facts' schema: the JSON the kernel recorder (``autograder/kernel/recorder.py``, in the untrusted kernel)
writes after each task, ``facts.json`` plus ``.npy`` files (never pickles), and the frozen records below, into
which ``fact_reader`` validates it. The JSON's keys are the records' field names (docs/writing-a-lab.md says
what each holds); beyond them:

- a task: ``{"task", "names": {name: fact}, "calls": {id: call}, "probes": {id: probe}, "error", "output_cut",
  "timing"}`` (``output_cut``: the kernel's own output cap had cut the notebook's output by then);
- a fact: ``{"kind": "missing" | "value" | "spec" | "array" | "type" | "tree" | "function" | "other", "type":
  its exact type, ...}``: a value is None, bool, int, float or str (a numpy scalar is recorded as its plain
  value), a ``NamedSharding`` as its spec (``"type": "NamedSharding"``), a name bound to ``jax.typeof(x)`` as
  a type; an array's ``values`` and ``blocks`` (device id -> its block, where a ``shard_map`` with
  ``check_vma=False`` left replicas that differ) name ``.npy`` files; a tree (list, tuple, dict) holds its
  ``leaves`` in ``jax.tree`` order, each with its key path in ``paths``;
- a sharding: ``{"kind", "repr", "mesh": {"axis_names", "shape", "axis_types", "device_ids"}, "spec",
  "device_indices": {"0": [[start, stop], ...], ...}}``; a type: ``{"str": "float32[4@x,16@y]", "shape",
  "dtype", "sharded_axes", "mesh": {"axis_names", "axis_types"}}``;
- a call: ``{"output": fact, "stdout", "error", "hlo", "hlo_error", "program"}``, its program (the function's
  object and its ``jax.make_jaxpr`` trace) ``{"jit_object", "top", "top_jit_library", "primitives",
  "collectives", "bodies", "in_shardings", "out_shardings", "error"}``; a sharding given to ``jit`` also holds
  the ``"shape"`` of its value;
- a timing record: ``{"events", "spans": [[read, read], ...], "dropped"}``, its events in the order they
  happened: ``["clock", read, clock name, seconds]``, ``["compile", "trace" | "lower" | "compile", function
  name]``, ``["wait", "block_until_ready" | "device_get" | "to_host", [[shape, dtype, device count], ...]]``.
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
    """One ``shard_map`` of a program: its operands, its body's blocks and largest values (docs/writing-a-lab.md)."""

    operands: tuple[tuple[int, ...], ...]
    blocks: tuple[tuple[int, ...], ...]
    values: tuple[tuple[tuple[int, ...], str], ...]
    whole_before: tuple[bool, ...] = ()


@dataclass(frozen=True)
class ProgramFact:
    """How a student function is built: a jitted function object or not, and what its trace holds
    (``in_shardings`` / ``out_shardings``: None altogether when the top level is not one ``jit``)."""

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
    """What a timed task's cells did, in order, and the pairs of clock reads the code subtracted."""

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
