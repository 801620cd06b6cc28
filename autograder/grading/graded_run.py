"""The run as the graders see it: followed live while the kernel runs (the overlap), or whole once it has
ended (where memory is short); both alike, so the pipeline grades either the same way."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager

from autograder.fairness import grading_with
from autograder.run import Execution, Executor, LiveExecution, RunRequest, RunStatus, timing_as_kernel


class RunAlongside:
    """The graders load while the kernel starts, and check each task as soon as its facts are taken."""

    def __init__(self, execute: Executor, request: RunRequest):
        self._saves_memory = request.limits.saves_memory
        self.live = LiveExecution()
        self.facts_source: Execution | LiveExecution | None = self.live
        self._started = time.monotonic()  # the checks follow the run from its start
        self._outcome: Execution | BaseException | None = None
        self._thread = threading.Thread(
            target=self._run, args=(execute, request), name="autograder-kernel", daemon=True
        )
        self._thread.start()

    def _run(self, execute: Executor, request: RunRequest) -> None:
        try:
            self._outcome = execute(request, self.live)
        except BaseException as exc:  # handed to the grader's thread, which raises it
            self._outcome = exc
            self.live.ended(RunStatus.KERNEL_FAILED_TO_START, f"{type(exc).__name__}: {exc}", None)

    @contextlib.contextmanager
    def checks_phase(self) -> Iterator[None]:
        """The grader measures under its run's timed turn, with the malloc its kernel timed with."""
        with grading_with(lambda: self.live.timed_turn), timing_as_kernel(self._saves_memory):
            yield

    def checked(self) -> None:
        """Measured (or failed to): the machine's timed turn is free again."""
        self.live.release_timed_turn()

    def checks_seconds(self) -> float:
        """The checks' seconds, less their waits for facts."""
        return time.monotonic() - self._started - self.live.grader_waited

    def result(self) -> Execution:
        self._thread.join()
        outcome = self._outcome
        if isinstance(outcome, BaseException):
            raise outcome
        assert outcome is not None  # _run sets it before its thread ends
        return outcome


class RunToEnd:
    """Run to its end before any grader loads: the least memory at once."""

    def __init__(self, execute: Executor, request: RunRequest):
        self._saves_memory = request.limits.saves_memory
        self._execution = execute(request, None)
        started = self._execution.status != RunStatus.KERNEL_FAILED_TO_START  # else nothing to check
        self.facts_source: Execution | LiveExecution | None = self._execution if started else None
        self._started = time.monotonic()

    def checks_phase(self) -> AbstractContextManager[None]:
        self._started = time.monotonic()  # the graders have loaded: the checks start now
        return timing_as_kernel(self._saves_memory)

    def checked(self) -> None:
        pass  # the run released its timed turn when it ended

    def checks_seconds(self) -> float:
        return time.monotonic() - self._started

    def result(self) -> Execution:
        return self._execution
