"""A grader's checks take part in the timed turn like a kernel's cells (their compilations load the machine);
a check lets go while it waits, so that a turn never waits on a check that waits on a kernel it holds up."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable

from autograder.fairness.cell_turns import BackgroundHold, passing
from autograder.fairness.core_pinning import home_cores, placement
from autograder.fairness.timed_turns import (
    LOG_AFTER,
    MAX_WAIT,
    TimedTurn,
    cells_on_free_cores,
    log,
    open_lock,
    process_hold,
    step_through_here,
    timed_turns_enabled,
)

_grading = threading.local()  # the turn of the grading this thread checks, if any


@contextlib.contextmanager
def grading_with(turn_of_run: Callable[[], TimedTurn | None]):
    """Held by a grader's thread while it checks a run: measurements use the run's turn, looked up late."""
    previous = getattr(_grading, "turn_of_run", None)
    _grading.turn_of_run = turn_of_run
    try:
        yield
    finally:
        _grading.turn_of_run = previous


@contextlib.contextmanager
def measuring(label: str = "the grader's measurement"):
    """Around the grader's own measurement: the grading's timed turn, else one taken for it alone."""
    with checks_waiting(), contextlib.ExitStack() as alone:  # a check's own hold would keep the turn waiting
        turn_of_run = getattr(_grading, "turn_of_run", None)
        turn = turn_of_run() if turn_of_run is not None else None
        if turn is None or not turn.held:
            turn = TimedTurn(owner=-id(threading.current_thread()))
            alone.callback(turn.release)
            turn.acquire_here(label)
        with process_hold.timing_here():
            yield


_checks = threading.local()  # the hold of the check this thread runs, if any


class _ChecksHold(BackgroundHold):
    """A grader's check, held like a running cell; nothing where this process holds the turn."""

    def __init__(self) -> None:
        super().__init__(None)
        self.waits = 0  # nested ``checks_waiting``: the hold is taken again when the outermost ends
        self.placed: tuple[int, ...] | None = None  # the cores the grader's process was moved onto for it

    def take(self) -> None:
        if self._cells is not None or self.waits or not timed_turns_enabled() or process_hold.held():
            return
        home = home_cores()
        if len(home) > 1:
            cells = cells_on_free_cores(home, lambda free: free == home or placement.checks(free))
            if cells is not None:
                self._cells = cells
                self.placed = cells.cores if cells.cores != home else None
                return
        started = time.monotonic()
        cells = open_lock("cells")
        with open_lock("gate") as gate:
            passed = step_through_here(passing(gate, cells, started + MAX_WAIT, process_hold.held))
        if passed:
            self._cells = cells
        else:
            cells.close()
        waited = time.monotonic() - started
        if passed is False:
            log.warning("a grader's check waited over %.0f s for the machine's timed turn; checking anyway", MAX_WAIT)
        elif waited > LOG_AFTER:
            log.info("a grader's check waited %.1f s for another submission's timed task on this machine", waited)

    def release(self) -> None:
        super().release()
        placed, self.placed = self.placed, None
        if placed is not None:
            placement.checks_ended(placed)


@contextlib.contextmanager
def checks_running():
    """Around one of a grader's checks (or its set-up): no other grading's timed task runs beside it."""
    hold = _ChecksHold()
    previous = getattr(_checks, "hold", None)
    _checks.hold = hold
    hold.take()
    try:
        yield
    finally:
        _checks.hold = previous
        hold.release()


@contextlib.contextmanager
def checks_waiting():
    """Around a wait inside a check: its hold is let go meanwhile and taken again after."""
    hold = getattr(_checks, "hold", None)
    if hold is None:
        yield
        return
    hold.release()
    hold.waits += 1
    try:
        yield
    finally:
        hold.waits -= 1
        hold.take()
