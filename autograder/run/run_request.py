"""What one run is asked to do, as one named object, and the ``Executor`` that runs it; whether the kernel
saves memory is decided here, on the machine that runs it."""

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
    from autograder.run.execution import Execution, LiveExecution

Captures = Mapping[str, TaskCapture] | Callable[[], Mapping[str, TaskCapture]]


@dataclass(frozen=True)
class RunRequest:
    """``captures`` may be a function returning them, called once the kernel is starting; a copy of
    ``submission`` is put in the kernel's working directory."""

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
        return KernelSpec(self.limits, self.lab_probe, self.compiled)


class Executor(Protocol):
    """``execute_plan``, or a batch worker's ``KernelPool.execute``; with ``live``, a grader follows the run."""

    def __call__(self, request: RunRequest, live: LiveExecution | None = None) -> Execution: ...
