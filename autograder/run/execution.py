"""What a run produced: its facts per task, each cell's outcome, how it and each cell ended. Apart from the
executor (execute.py) so that what reads an execution names it without the kernel's machinery."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from autograder.facts import TaskFacts


class RunStatus(StrEnum):
    """How the run of a whole notebook ended; a ``StrEnum`` is its text in JSON, CSV and logs."""

    COMPLETED = "completed"  # every cell ran (some may have raised)
    TIMEOUT = "timeout"
    KERNEL_DIED = "kernel died"
    KERNEL_FAILED_TO_START = "kernel failed to start"


class CellStatus(StrEnum):
    OK = "ok"
    ERROR = "error"
    TIMEOUT = "timeout"


@dataclass(frozen=True)
class CellOutcome:
    label: str
    origin: str
    task: str | None
    status: CellStatus
    error: str | None
    seconds: float
    output_truncated: bool = False
    leftover_processes: int = 0  # processes the cell started that were still running when it ended
    others_share: float | None = None  # of a timed cell: the processors' share others took (others_load.py)


@dataclass(frozen=True)
class Execution:
    status: RunStatus
    reason: str | None
    ended_at: str | None
    facts: dict[str, TaskFacts]
    fact_errors: dict[str, str]
    cells: tuple[CellOutcome, ...]
    seconds: float
    changes: tuple[str, ...] = field(default_factory=tuple)
    output_cut_by_task: str | None = None  # the first task by whose end the kernel had cut the output
    start_failures: tuple[str, ...] = ()  # why each start of a kernel that failed failed (run/kernels/start.py)
    phases: dict[str, float] = field(default_factory=dict)  # seconds per phase of the run (phase_clock.py)

    def task_facts(self, task: str) -> tuple[TaskFacts | None, str | None]:
        return self.facts.get(task), self.fact_errors.get(task)

    def wait_for(self, task: str) -> None:
        """A finished execution has every fact it will have."""

    def grader_busy(self):
        return contextlib.nullcontext()


def timed_cells_share(cells: Sequence[CellOutcome], task: str) -> float | None:
    """Others' share of the processors over ``task``'s timed cells, by how long each ran (None: none read)."""
    timed = [c for c in cells if c.task == task and c.others_share is not None]
    seconds = sum(c.seconds for c in timed)
    if seconds <= 0:
        return None
    return sum((c.others_share or 0.0) * c.seconds for c in timed) / seconds
