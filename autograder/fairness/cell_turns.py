"""A kernel's cells, its work between them (``BackgroundHold``), its start (``pass_the_gate``) and a grader's
checks (``checks_running``, whose compilations load the machine) beside another grading's timed turn: on the
cores no turn holds, or after the gate (timed_turns.py). A check lets go while it waits, so that a turn never
waits on a check that waits on a kernel it holds up. And the grader's own timings wait until no kernel of its
process runs cells (``wait_for_quiet``), whose load they would measure."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import threading
import time
from collections.abc import Callable, Generator, Iterator

from autograder.fairness.core_pinning import CoreLock, home_cores, move_processes, placement
from autograder.fairness.timed_turns import (
    LOG_AFTER,
    MAX_WAIT,
    PASS,
    POLL,
    TimedTurn,
    cells_on_free_cores,
    cells_shared,
    free_cores,
    in_line,
    log,
    open_lock,
    process_hold,
    step_through,
    step_through_here,
    timed_turns_enabled,
    until_taken,
    waiting_before,
)


class CellTurn:
    """Held around each code execution: at once on the free cores where the kernel can be moved, else after the gate."""

    def __init__(self, owner: int | None = None):
        self.owner = owner  # the run the kernel serves, once claimed; None for a spare kernel
        self.running = False  # its run holds student_code_running: a wait gives it up meanwhile
        self.waited = 0.0  # the seconds it spent waiting, added up
        self.processes: Callable[[], list[int]] | None = None  # the kernel's processes, to move between cores
        self.timing = False  # the cell about to run is a timed task's: on its grading's turn core
        self.moved_to: tuple[int, ...] | None = None  # where they were last moved
        self.refused = False  # the system refused to move them
        self._beyond: list[BackgroundHold] = []  # its holds beyond its cells, while held
        self._cells: CoreLock | None = None

    def move(self, cores: tuple[int, ...], again: bool = False) -> bool:
        """The kernel's processes onto ``cores`` (``again`` where they are already): False where unknown or
        refused (once refused, never again)."""
        if cores == self.moved_to and not again:
            return True
        if self.processes is None or self.refused:
            return False
        self.refused = not move_processes(self.processes(), cores)
        if not self.refused:
            self.moved_to = cores
        return not self.refused

    def movable(self) -> bool:
        """Can the kernel be moved? Tried where it is, so that a refusal shows without moving it."""
        return self.moved_to is not None and self.move(self.moved_to, again=True)

    async def __aenter__(self) -> CellTurn:
        self._cells = None
        if not timed_turns_enabled():
            return self
        if self._part_of_the_turn():
            cores = process_hold.cores
            if cores is None or cores == home_cores():
                return self
            if self.timing:
                if not self.move(cores):
                    log.warning(
                        "a kernel of the grading that holds the timed turn could not be moved onto core %s", cores
                    )
                return self
            # an untimed cell of the grading that holds the turn (its capture, its later tasks): nothing
            # times now, so it runs on the turn's cores and on those no other turn holds
            others = cells_on_free_cores(
                tuple(core for core in home_cores() if core not in cores),
                lambda free: self.move(tuple(sorted(cores + free))),
            )
            if others is not None:
                self._hold(others)
            return self
        home = home_cores()
        if len(home) > 1 and self.processes is not None and not self.refused:
            cells = cells_on_free_cores(home, self.move)
            if cells is not None:
                self._hold(cells)
                return self
        started = time.monotonic()
        cells = open_lock("cells")
        try:
            with open_lock("gate") as gate:
                passed = await self._pass(gate, cells, started + MAX_WAIT)
        except BaseException:
            cells.close()
            raise
        waited = time.monotonic() - started
        self.waited += waited
        if waited > LOG_AFTER:
            log.info("a kernel waited %.1f s for another submission's timed task on this machine", waited)
        if passed is True:
            self._hold(cells)
            if self.moved_to is not None:
                self.move(cells.cores)  # back onto every core it holds (staying on a part of them is no harm)
        else:
            cells.close()
            if passed is False:
                log.warning("a kernel waited over %.0f s for the machine's timed turn; running anyway", MAX_WAIT)
        return self

    def _part_of_the_turn(self) -> bool:
        """This process's gradings hold the turn and the kernel serves one of them. Read again while it waits:
        waiting on would wait for a grader of this process that may need this very kernel's facts."""
        return self.owner is not None and process_hold.held()

    async def _pass(self, gate: CoreLock, cells: CoreLock, deadline: float) -> bool | None:
        """``passing``; a kernel that has to wait gives up ``student_code_running`` meanwhile."""
        if not waiting_before(gate.directory, PASS, gate.cores) and gate.take(fcntl.LOCK_SH):
            gate.unlock()
            if cells.take(fcntl.LOCK_SH):
                return True
        with not_running() if self.running else contextlib.nullcontext():
            return await step_through(passing(gate, cells, deadline, self._part_of_the_turn, self.owner is not None))

    def _hold(self, cells: CoreLock) -> None:
        """Hold ``cells`` for the cell; a hold beyond the cells widens to them too (the kernel runs it there)."""
        self._cells = cells
        self._beyond = [hold for hold in self._beyond if hold.held]
        for hold in self._beyond:
            hold.widen(cells.cores)

    async def __aexit__(self, *exc) -> None:
        if self._cells is not None:
            self._cells.close()
            self._cells = None

    def hold_beyond(self) -> BackgroundHold:
        """Taken inside this turn: a hold that outlasts it, for what the kernel runs between cells (a warm-up)."""
        beyond = BackgroundHold(cells_shared(self._cells.cores) if self._cells is not None else None)
        if beyond.held:
            self._beyond.append(beyond)
        return beyond


def passing(
    gate: CoreLock, cells: CoreLock, deadline: float, part_of_the_turn: Callable[[], bool], noted: bool = True
) -> Generator[None, None, bool | None]:
    """Through the gate, then the cells' lock shared, as ``in_line`` waits."""
    through = yield from in_line(gate, fcntl.LOCK_SH, PASS, deadline, part_of_the_turn, noted)
    if not through:
        return through
    gate.unlock()
    return (yield from until_taken(cells, fcntl.LOCK_SH, deadline, part_of_the_turn))


class BackgroundHold:
    """A kernel's work between its cells, held like a running cell (nothing where the cell held nothing)."""

    def __init__(self, cells: CoreLock | None):
        self._cells = cells
        self._more: list[CoreLock] = []  # the cores it widened to

    @property
    def held(self) -> bool:
        return self._cells is not None

    def widen(self, cores: tuple[int, ...]) -> None:
        """Hold ``cores`` too (taken from inside a cell that holds them shared, so it cannot fail to)."""
        if self._cells is None:
            return
        held = set(self._cells.cores).union(*(lock.cores for lock in self._more))
        missing = tuple(core for core in cores if core not in held)
        more = cells_shared(missing) if missing else None
        if more is not None:
            self._more.append(more)

    async def release_when(self, ended: Callable[[], bool], at_most: float) -> None:
        """Keep the hold until ``ended()`` (polled) or ``at_most`` seconds; released also if cancelled."""
        deadline = time.monotonic() + at_most
        try:
            while self._cells is not None and not ended() and time.monotonic() < deadline:
                await asyncio.sleep(POLL)
        finally:
            self.release()

    def release(self) -> None:
        more, self._more = self._more, []
        for lock in more:
            lock.close()
        if self._cells is not None:
            self._cells.close()
            self._cells = None


_kernels_stay = False


def kernel_not_moved() -> None:
    """A kernel's processes could not be moved: this process's kernel starts wait for the gate from now on."""
    global _kernels_stay
    _kernels_stay = True


async def pass_the_gate(noted: bool = True) -> tuple[int, ...] | None:
    """The free cores, where a kernel's start may run now (moved there once launched); else None, after the gate."""
    if not timed_turns_enabled() or process_hold.held():
        return None
    home = home_cores()
    if len(home) > 1 and not _kernels_stay:
        free = free_cores(home)
        if free:
            return free
    started = time.monotonic()
    with open_lock("gate") as gate:
        if await step_through(in_line(gate, fcntl.LOCK_SH, PASS, started + MAX_WAIT, process_hold.held, noted)):
            gate.unlock()
    waited = time.monotonic() - started
    if waited > LOG_AFTER:
        log.info("a kernel's start waited %.1f s for another submission's timed task on this machine", waited)
    return None


_thread = threading.local()  # the run whose grading this thread checks (turn_of_run), its check in flight (hold)


@contextlib.contextmanager
def _on_this_thread(name: str, value: object) -> Iterator[None]:
    previous = getattr(_thread, name, None)
    setattr(_thread, name, value)
    try:
        yield
    finally:
        setattr(_thread, name, previous)


def grading_with(turn_of_run: Callable[[], TimedTurn | None]) -> contextlib.AbstractContextManager[None]:
    """Held by a grader's thread while it checks a run: measurements use the run's turn, looked up late."""
    return _on_this_thread("turn_of_run", turn_of_run)


@contextlib.contextmanager
def measuring():
    """Around the grader's own measurement: the grading's timed turn, else one taken for it alone."""
    with checks_waiting(), contextlib.ExitStack() as alone:  # a check's own hold would keep the turn waiting
        turn_of_run = getattr(_thread, "turn_of_run", None)
        turn = turn_of_run() if turn_of_run is not None else None
        if turn is None or not turn.held:
            turn = TimedTurn(owner=-id(threading.current_thread()))
            alone.callback(turn.release)
            turn.acquire_here("the grader's measurement")
        with process_hold.timing_here():
            yield


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
    with _on_this_thread("hold", hold):
        hold.take()
        try:
            yield
        finally:
            hold.release()


@contextlib.contextmanager
def checks_waiting():
    """Around a wait inside a check: its hold is let go meanwhile and taken again after."""
    hold = getattr(_thread, "hold", None)
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


_changed = threading.Condition()
_running = 0


def _count(change: int) -> None:
    global _running
    with _changed:
        _running += change
        _changed.notify_all()


@contextlib.contextmanager
def _counted(change: int) -> Iterator[None]:
    _count(change)
    try:
        yield
    finally:
        _count(-change)


def student_code_running() -> contextlib.AbstractContextManager[None]:
    """Hold while a student's kernel of this process is running cells."""
    return _counted(1)


def wait_for_quiet(timeout: float | None = None) -> bool:
    """Wait until no student kernel of this process runs cells; False if ``timeout`` passed first."""
    with _changed:
        return _changed.wait_for(lambda: _running == 0, timeout)


def not_running() -> contextlib.AbstractContextManager[None]:
    """Held by a kernel that holds ``student_code_running`` but waits, running nothing."""
    return _counted(-1)
