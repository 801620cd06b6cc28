"""What the harness reads from the kernel after each task (a lab's ``TaskCapture`` per task, its ``manifest``
the JSON the kernel recorder receives): names, and calls on inputs the grader rebuilds from the same seed."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Protocol


class MeshShape(Protocol):
    """What a capture reads of a mesh (``autograder.checks.MeshSpec``); naming the protocol, not the class,
    keeps this module free of JAX: a grade starts its kernel before JAX loads."""

    @property
    def shape(self) -> tuple[int, ...]: ...

    @property
    def axis_names(self) -> tuple[str, ...]: ...

    @property
    def axis_types(self) -> str: ...


def mesh_json(mesh: MeshShape) -> dict[str, Any]:
    return {"shape": list(mesh.shape), "axis_names": list(mesh.axis_names), "axis_types": mesh.axis_types}


@dataclass(frozen=True)
class Input:
    """A fresh input array: random values from the grading seed, optionally placed on a mesh."""

    shape: tuple[int, ...]
    key: int = 0
    dtype: str = "float32"
    dist: str = "normal"
    low: float = 0.0
    high: float = 1.0
    scale: float = 1.0
    mesh: MeshShape | None = None
    spec: tuple[Any, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        sharding = None
        if self.mesh is not None:
            spec = [list(e) if isinstance(e, tuple) else e for e in (self.spec or ())]
            sharding = {"mesh": mesh_json(self.mesh), "spec": spec}
        plain = {name: getattr(self, name) for name in ("key", "dtype", "dist", "low", "high", "scale")}
        return {"shape": list(self.shape), **plain, "sharding": sharding}

    def build(self, seed: int):
        """The input as the kernel built it: a numpy array, or a jax.Array when placed on a mesh."""
        from autograder.kernel import make_input

        return make_input(self.to_json(), seed)


Argument = Input | tuple["Argument", ...]  # a tuple of inputs is one argument: a model's ``params``


def argument_json(argument: Argument) -> dict[str, Any]:
    if isinstance(argument, tuple):
        return {"tuple": [argument_json(item) for item in argument]}
    return argument.to_json()


def build_argument(argument: Argument, seed: int):
    """The argument as the kernel built it: an input, or a tuple of them, in the same structure."""
    if isinstance(argument, tuple):
        return tuple(build_argument(item, seed) for item in argument)
    return argument.build(seed)


@dataclass(frozen=True)
class Call:
    """Call the student's ``function`` on fresh inputs, right after the task's own cells; keep its output,
    stdout and compiled HLO."""

    id: str
    function: str
    args: tuple[Argument, ...]
    mesh: MeshShape | None = None
    hlo: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "function": self.function,
            "args": [argument_json(a) for a in self.args],
            "mesh": None if self.mesh is None else mesh_json(self.mesh),
            "hlo": self.hlo,
        }


@dataclass(frozen=True)
class Probe:
    """Run ``function`` of the lab's ``kernel_probe.py`` in the kernel, for what a plain call can't do."""

    id: str
    function: str
    params: tuple[tuple[str, Any], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "function": self.function, "params": dict(self.params)}


@dataclass(frozen=True)
class TaskCapture:
    task: str
    names: tuple[str, ...] = ()
    calls: tuple[Call, ...] = field(default_factory=tuple)
    probes: tuple[Probe, ...] = field(default_factory=tuple)
    times_code: bool = False  # its cells measure time: they run only while the grader is idle

    def manifest(self, out_dir: str, seed: int) -> str:
        return json.dumps(
            {
                "task": self.task,
                "out": out_dir,
                "seed": seed,
                "names": list(self.names),
                "calls": [c.to_json() for c in self.calls],
                "probes": [p.to_json() for p in self.probes],
            }
        )


def task_seed(grading_seed: int, task: str) -> int:
    """A per-task seed, so inputs seen by one task's calls say nothing about the next task's."""
    digest = hashlib.sha256(f"{grading_seed}:{task}".encode()).digest()
    return int.from_bytes(digest[:4], "little")
