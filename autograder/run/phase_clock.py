"""Where a grading's time goes, by phase, so that the cost of grading a class is seen, not guessed; the
grader's own phases in ``GRADER_PHASES``, for a process that grades one submission at a time."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

KERNEL_START = "kernel_start"  # asking for a kernel until it runs the first cell (a kernel started ahead: the wait)
CELLS = "cells"  # the notebook's cells, the student's and the lab's
CAPTURE = "capture"  # taking each task's facts in the kernel
TURN_WAIT = "turn_wait"  # waiting for other gradings' timed tasks and for a quiet machine, both sides
MEASURE = "measure"  # the grader's own timing measurements
CHECKS = "checks"  # the graders (loading them included), less their waits for facts and their measurements
PHASES = (KERNEL_START, CELLS, CAPTURE, TURN_WAIT, MEASURE, CHECKS)


class PhaseClock:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._seconds: dict[str, float] = {}

    def add(self, phase: str, seconds: float) -> None:
        with self._lock:
            self._seconds[phase] = self._seconds.get(phase, 0.0) + max(0.0, seconds)

    @contextlib.contextmanager
    def timed(self, phase: str) -> Iterator[None]:
        started = time.monotonic()
        try:
            yield
        finally:
            self.add(phase, time.monotonic() - started)

    def read(self) -> dict[str, float]:
        with self._lock:
            return dict(self._seconds)

    def reset(self) -> None:
        with self._lock:
            self._seconds.clear()


GRADER_PHASES = PhaseClock()


def rounded_phases(phases: dict[str, float]) -> dict[str, float]:
    return {phase: round(phases[phase], 3) for phase in PHASES if phase in phases}
