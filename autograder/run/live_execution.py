"""An execution in progress, seen from the grader: each task's facts as soon as they are taken, so that
grading overlaps the run; and the waits that keep either side's timing off the other's work
(docs/how-grading-works.md, "Three rules keep timing checks honest")."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from autograder.facts import TakenFacts
from autograder.run.execution import RunStatus

if TYPE_CHECKING:
    from autograder.fairness import TimedTurn

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
        self._wait(lambda: self.status is not None or (self.taken is not None and task in self.taken))

    def _wait(self, ready: Callable[[], bool]) -> None:
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
