"""What one run is asked to do, as one named object: the plan, the facts to take, the limits, the seed,
the lab's probe and the submission copied beside the kernel; its kernel is made for its ``KernelSpec``
(kernels/lifecycle.py). An executor (``execute_plan``, or a batch
worker's kernel pool) is handed a request rather than a row of positional arguments, so a reader can
follow a grade from the command line to its run by names. Both decide, where the limits leave it open,
whether the kernel saves memory (``memory_decided``): on the machine that runs it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from autograder.facts import TaskCapture
from autograder.run.kernels import CompiledPrograms, KernelSpec, memory_decided
from autograder.run.plan import Plan
from autograder.run.sandbox import Limits

if TYPE_CHECKING:
    from autograder.run.execution import Execution
    from autograder.run.live_execution import LiveExecution

Captures = Mapping[str, TaskCapture] | Callable[[], Mapping[str, TaskCapture]]


@dataclass(frozen=True)
class RunRequest:
    """One run: ``plan`` in a fresh kernel within ``limits``, each task's facts taken as ``captures``
    says (or a function returning them, called once the kernel is starting), seeded with ``seed``;
    ``lab_probe`` is the lab's kernel_probe.py, if it has one, and a copy of ``submission`` is put in
    the kernel's working directory; ``compiled`` is the lab's folder of compiled programs
    (compiled_programs.py), read, or filled by a run of the lab's solution."""

    plan: Plan
    captures: Captures
    limits: Limits
    seed: int
    lab_probe: Path | None = None
    submission: Path | None = None
    compiled: CompiledPrograms | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "limits", memory_decided(self.limits))

    @property
    def kernel(self) -> KernelSpec:
        """What the kernel that runs it must be made for."""
        return KernelSpec(self.limits, self.lab_probe, self.compiled)


class Executor(Protocol):
    """What runs a request and hands back its execution: ``execute_plan``, or a batch worker's kernel
    pool (``KernelPool.execute``). With ``live``, a grader in another thread follows the run."""

    def __call__(self, request: RunRequest, live: LiveExecution | None = None) -> Execution: ...
