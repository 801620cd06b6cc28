"""What a run produced, and (``LiveExecution``) a run in progress seen from the grader, each task's facts as
soon as they are taken; apart from the executor, so that a reader names it without the kernel's machinery."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING

from autograder.facts import TakenFacts

if TYPE_CHECKING:
    from autograder.facts import TaskFacts
    from autograder.fairness import TimedTurn


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
    start_failures: tuple[str, ...] = ()  # why each start of a kernel that failed failed (run/kernels/lifecycle.py)
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


GRADER_IDLE_TIMEOUT = 120.0  # a timed cell never waits longer than this for the grader to be idle


class LiveExecution:
    def __init__(self) -> None:
        self._changed = threading.Condition()
        self.taken: TakenFacts | None = None
        self.cells: list = []  # the CellOutcomes so far, in order
        self.status: RunStatus | None = None  # set when the run has ended, with reason and ended_at
        self.reason: str | None = None
        self.ended_at: str | None = None
        self._grader_waits_for: Callable[[], bool] | None = None
        self._grader_checking = False  # in its pytest session (which another grade's may hold up)
        self._grader_done = False
        self.timed_turn: TimedTurn | None = None  # the run's TimedTurn: the grader releases it once it has measured
        self.grader_waited = 0.0  # seconds the grader waited for facts (phase_clock.py: not its checks' time)

    # The kernel's side.

    def started(self, taken: TakenFacts, cells: list) -> None:
        with self._changed:
            self.taken, self.cells = taken, cells

    def task_taken(self) -> None:
        with self._changed:
            self._changed.notify_all()

    def ended(self, status: RunStatus, reason: str | None, ended_at: str | None) -> None:
        with self._changed:
            self.status, self.reason, self.ended_at = status, reason, ended_at
            self._changed.notify_all()

    async def until_grader_idle(self) -> None:
        deadline = time.monotonic() + GRADER_IDLE_TIMEOUT
        while not self._grader_idle() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)

    def _grader_idle(self) -> bool:
        with self._changed:
            if self._grader_done or not self._grader_checking:
                return True
            waiting = self._grader_waits_for
            return waiting is not None and not waiting()

    # The grader's side.

    def wait_for(self, task: str) -> None:
        def ready() -> bool:
            return self.status is not None or (self.taken is not None and task in self.taken)

        started = time.monotonic()
        with self._changed:
            self._grader_waits_for = ready
            try:
                self._changed.wait_for(ready)
            finally:
                self._grader_waits_for = None
                self.grader_waited += time.monotonic() - started

    @contextlib.contextmanager
    def grader_busy(self):
        """Held while the grader's checks run: it is idle only when it waits for facts."""
        with self._changed:
            self._grader_checking = True
        try:
            yield
        finally:
            self.grader_done()

    def grader_done(self) -> None:
        with self._changed:
            self._grader_done = True

    def release_timed_turn(self) -> None:
        """The grader has measured: other gradings' kernels may go on."""
        if self.timed_turn is not None:
            self.timed_turn.release()

    def task_facts(self, task: str):
        if self.taken is None or task not in self.taken:
            return None, None
        return self.taken.read(task), self.taken.error(task)
