"""A task that times code runs alone on its core: the machine's timed turn (of its process's turn core).

A student's timing cells and the grader's own measurement of that task must see the same machine, which
other submissions' kernels (a batch's workers, two ``autograder grade`` commands) would load differently
for each. While a grading's timed task runs and the grader measures it, the grading holds the timed turn
(``TimedTurn``); every other kernel waits at its next cell (``CellTurn``, the wait not counted in its
timeouts), and so do a kernel's work between cells (``CellTurn.hold_beyond``), other gradings' checks
(grader_turns.py) and a kernel's start (``pass_the_gate``).

Two ``flock``-ed locks under a folder private to the grader's user do it: ``gate`` (the holder keeps it
exclusive, so no new cell starts) and ``cells`` (each running cell holds it shared; the holder waits until
it gets it exclusive, once the cells in flight have ended), each a file per core (core_locks.py). A lock
ends with the process that holds it; every wait is bounded (``MAX_WAIT``), then the run goes on and the log
says so; waits are served in the order they began (turn_line.py).

A turn holds one core, its process's turn core (``turn_core``), and times there: its kernel's processes
for the timed cells (``CellTurn.processes``, ``CellTurn.timing``) and the grader's process while it
measures (``_ProcessHold.timing_here``, ``core_pinning.placement``). Other work takes the cores no turn
holds or waits for (``free_cores``); why, and where it still waits: docs/how-grading-works.md, "One grade".
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import logging
import os
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Generator, Iterator
from pathlib import Path

from autograder.fairness import quiet
from autograder.fairness.core_locks import CoreLock
from autograder.fairness.core_pinning import home_cores, move_processes, placement, turn_core
from autograder.fairness.env_switch import switched_off
from autograder.fairness.turn_line import PASS, TURN, hold_the_turn_as, in_line, waiting_before

DIRECTORY_VARIABLE = "AUTOGRADER_TURNS_DIR"
QUIET_MACHINE_VARIABLE = "AUTOGRADER_TIMED_TURNS"  # "off": no turn is taken (the bench compares without)
MAX_WAIT = 600.0  # seconds a kernel or a timed task waits for a turn at most
POLL = 0.05
LOG_AFTER = 2.0  # a wait longer than this is logged

log = logging.getLogger("autograder.timed_turns")
_held_lock = threading.Lock()  # a turn's joined and closed, read and set together


def turns_directory() -> Path:
    """The machine's turn files: ``$AUTOGRADER_TURNS_DIR``, else a folder private to this user in the
    system's temporary directory; created private, refused if another user owns it."""
    configured = os.environ.get(DIRECTORY_VARIABLE)
    directory = Path(configured) if configured else Path(tempfile.gettempdir()) / f"autograder-turns-{os.getuid()}"
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = os.lstat(directory)
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise PermissionError(f"{directory} is not a folder of this user's: timed turns cannot be kept there")
    return directory


def timed_turns_enabled() -> bool:
    return not switched_off(QUIET_MACHINE_VARIABLE)


def open_lock(name: str, cores: tuple[int, ...] | None = None) -> CoreLock:
    return CoreLock(turns_directory(), name, cores)


def free_cores(cores: tuple[int, ...]) -> tuple[int, ...]:
    """Those of ``cores`` whose gate is open and for which no turn waits in line: where work that is no
    turn may run now without holding a turn up."""
    directory, free = turns_directory(), []
    for core in cores:
        if waiting_before(directory, PASS, (core,)):
            continue
        gate = CoreLock(directory, "gate", (core,))
        try:
            if gate.take(fcntl.LOCK_SH):
                free.append(core)
        finally:
            gate.close()
    return tuple(free)


def cells_on_free_cores(cores: tuple[int, ...]) -> CoreLock | None:
    """The cells' lock held shared on the free ones of ``cores`` (all of them, or a part), if any is free."""
    free = free_cores(cores)
    if not free:
        return None
    cells = open_lock("cells", free)
    if cells.take(fcntl.LOCK_SH):
        return cells
    cells.close()  # a turn took a core meanwhile
    return None


def _until_taken(
    lock: CoreLock, operation: int, deadline: float, give_up: Callable[[], bool] = lambda: False
) -> Generator[None, None, bool | None]:
    """``lock.take(operation)``, yielding each time it has to wait: True once taken, False past ``deadline``,
    None once ``give_up()``. Stepped by ``step_through`` or ``step_through_here``."""
    while not lock.take(operation):
        if give_up():
            return None
        if time.monotonic() >= deadline:
            return False
        yield
    return True


async def step_through(steps: Generator[None, None, bool | None]) -> bool | None:
    """A wait (``in_line``, ``passing``) stepped on the event loop; closed if cancelled, so that it leaves
    the line."""
    try:
        while True:
            try:
                next(steps)
            except StopIteration as passed:
                return passed.value
            await asyncio.sleep(POLL)
    finally:
        steps.close()


def step_through_here(steps: Generator[None, None, bool | None]) -> bool | None:
    """A wait stepped in a thread without an event loop."""
    try:
        while True:
            try:
                next(steps)
            except StopIteration as passed:
                return passed.value
            time.sleep(POLL)
    finally:
        steps.close()


class _ProcessHold:
    """This process's hold on the machine's turn, shared by its gradings: the lock files are taken once and
    released when the last grading of the process that joined lets go. Gradings of one process (threads)
    never wait for one another's turn — one of them may hold the pytest session another needs —, only for
    other processes' (a batch's workers are processes)."""

    def __init__(self) -> None:
        self.state = threading.Lock()
        self.taking = threading.Lock()  # one thread of the process takes the files; the others join after
        self.users = 0
        self.locks: list[CoreLock] = []
        self.cores: tuple[int, ...] | None = None  # the cores its turn holds, while it holds one

    def join(self) -> bool:
        with self.state:
            if self.users:
                self.users += 1
                return True
            return False

    def held(self) -> bool:
        with self.state:
            return self.users > 0

    def taken(self, locks: list[CoreLock], cores: tuple[int, ...] | None = None) -> None:
        """The files taken: the turn is held on ``cores`` (a part of the process's cores, where what times is
        moved: the kernel's timed cells, the grader while it measures, ``timing_here``)."""
        with self.state:
            self.locks, self.users, self.cores = locks, 1, cores

    @contextlib.contextmanager
    def timing_here(self) -> Iterator[None]:
        """The grader's process on the turn's cores while it measures, back home after: between the timed
        cells and its measurement, its checks (and the kernel's untimed cells) run on every core it has."""
        cores = self.cores
        moved = cores is not None and cores != home_cores()
        if moved and not placement.turn(cores):
            log.warning("the grader could not move itself onto its turn core %s: it times beside other work", cores)
        try:
            yield
        finally:
            if moved:
                placement.turn(None)

    def leave(self) -> None:
        with self.state:
            self.users -= 1
            locks = self.locks if self.users == 0 else []
            if self.users == 0:
                self.locks, self.cores = [], None
                placement.turn(None)  # back home, before other work may take the core
        for lock in locks:
            lock.close()  # closing the files drops their locks


process_hold = _ProcessHold()


class TimedTurn:
    """One grading's hold on the machine's timed turn: taken before its first timed cell, released once the
    grader has measured (or when the run ends without a grader to wait for)."""

    def __init__(self, owner: int, name: str = ""):
        self.owner = owner  # the id of the run whose kernel goes on while it holds the turn
        self.name = name  # the submission it times, as those waiting for it read (turn_line.py)
        self._joined = False
        self._closed = False  # released: a later acquire takes nothing (the grader is done with it)
        self.waited = 0.0

    @property
    def held(self) -> bool:
        return self._joined

    async def acquire(self, label: str, movable: Callable[[], bool] | None = None) -> float:
        """Take the turn (once; again is a no-op): seconds waited for it. ``movable``: can the kernel that
        times be moved onto the turn core (None: no kernel times, the grader alone)? If not, the turn holds
        every core of the process."""
        if self._joined or self._closed or not timed_turns_enabled():
            return 0.0
        started = time.monotonic()
        await step_through(self._take(label, started + MAX_WAIT, movable))
        return self._joined_now(started, label)

    def acquire_here(self, label: str, movable: Callable[[], bool] | None = None) -> float:
        """``acquire`` from a thread without an event loop."""
        if self._joined or self._closed or not timed_turns_enabled():
            return 0.0
        started = time.monotonic()
        step_through_here(self._take(label, started + MAX_WAIT, movable))
        return self._joined_now(started, label)

    def _take(
        self, label: str, deadline: float, movable: Callable[[], bool] | None = None
    ) -> Generator[None, None, None]:
        """This process's hold, joined, or its files taken by this thread alone: yields each time it waits."""
        while not process_hold.taking.acquire(blocking=False):
            yield
        try:
            if process_hold.join():
                return
            home = home_cores()
            cores = (turn_core(home),) if movable is None or movable() else home
            if cores != home:
                log.debug("%s: the timed turn holds core %d of %s", label, cores[0], home)
            gate, cells = open_lock("gate", cores), open_lock("cells", cores)
            try:
                got = bool((yield from in_line(gate, fcntl.LOCK_EX, TURN, deadline)))
                if got:  # holding the gate: what those who wait read it is held for
                    hold_the_turn_as(gate, f"{self.name}: {label}" if self.name else label)
                    got = bool((yield from _until_taken(cells, fcntl.LOCK_EX, deadline)))
            except BaseException:  # closed while it waited (the run's deadline): the gate must not stay shut
                gate.close()
                cells.close()
                raise
            process_hold.taken([cells, gate], cores)
            if not got:
                log.warning(
                    "%s: another grading kept this machine's timed turn over %.0f s; timing anyway", label, MAX_WAIT
                )
        finally:
            process_hold.taking.release()

    def _joined_now(self, started: float, label: str) -> float:
        with _held_lock:
            closed = self._closed  # released while it waited: let go at once
            self._joined = not closed
        if closed:
            process_hold.leave()
            return 0.0
        self.waited = time.monotonic() - started
        if self.waited > LOG_AFTER:
            log.info("%s waited %.1f s for other submissions' timed tasks on this machine", label, self.waited)
        return self.waited

    def release(self) -> None:
        """Give the turn back, for good (idempotent, from any thread)."""
        with _held_lock:
            self._closed = True
            joined, self._joined = self._joined, False
        if joined:
            process_hold.leave()


class CellTurn:
    """A kernel's code runs only while no other run holds the timed turn of a core it runs on: shared hold
    around each code execution. A kernel whose ``processes`` are known goes at once onto the cores no turn
    holds, where its process may run on several (moved there, ``moved_to``); else it waits at the gate.
    ``waited`` adds up the seconds spent waiting."""

    def __init__(self, owner: int | None = None):
        self.owner = owner  # the run the kernel serves, once claimed; None for a spare kernel
        self.running = False  # its run holds quiet.student_code_running: a wait gives it up meanwhile
        self.waited = 0.0
        self.processes: Callable[[], list[int]] | None = None  # the kernel's processes, to move between cores
        self.timing = False  # the cell about to run is a timed task's: on its grading's turn core
        self.moved_to: tuple[int, ...] | None = None  # where they were last moved
        self.refused = False  # the system refused to move them
        self._beyond: list[BackgroundHold] = []  # its holds beyond its cells, while held
        self._cells: CoreLock | None = None

    def move(self, cores: tuple[int, ...]) -> bool:
        """The kernel's processes onto ``cores``: False where they are unknown or the system refused (once
        refused, not tried again: its cells wait at the gate)."""
        if cores == self.moved_to:
            return True
        if self.processes is None or self.refused:
            return False
        if not move_processes(self.processes(), cores):
            self.refused = True
            return False
        self.moved_to = cores
        return True

    def movable(self) -> bool:
        """Can the kernel be moved? Tried where it is, so that a refusal shows without moving it."""
        if self.processes is None or self.moved_to is None or self.refused:
            return False
        self.refused = not move_processes(self.processes(), self.moved_to)
        return not self.refused

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
            others = cells_on_free_cores(tuple(core for core in home_cores() if core not in cores))
            if others is not None and self.move(tuple(sorted(cores + others.cores))):
                self._hold(others)
            elif others is not None:
                others.close()
            return self
        home = home_cores()
        if len(home) > 1 and self.processes is not None and not self.refused:
            cells = cells_on_free_cores(home)
            if cells is not None and self.move(cells.cores):
                self._hold(cells)
                return self
            if cells is not None:
                cells.close()
        started = time.monotonic()
        deadline = started + MAX_WAIT
        gate, cells = open_lock("gate"), open_lock("cells")
        try:
            passed = await self._pass(gate, cells, deadline)
        except BaseException:
            cells.close()
            raise
        finally:
            gate.close()
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
        """This process's gradings hold the turn and the kernel serves one of them: its cells are part of
        it. Read again while it waits: the process may take the turn, or the kernel be claimed, meanwhile —
        and waiting on would wait for a grader of this process that may need this very kernel's facts."""
        return self.owner is not None and process_hold.held()

    async def _pass(self, gate: CoreLock, cells: CoreLock, deadline: float) -> bool | None:
        """``passing``; a kernel that has to wait gives up ``student_code_running`` meanwhile."""
        if not waiting_before(gate.directory, PASS, gate.cores) and gate.take(fcntl.LOCK_SH):
            gate.unlock()
            if cells.take(fcntl.LOCK_SH):
                return True
        with quiet.not_running() if self.running else contextlib.nullcontext():
            return await step_through(passing(gate, cells, deadline, self._part_of_the_turn, self.owner is not None))

    def _hold(self, cells: CoreLock) -> None:
        """Hold ``cells`` for the cell; a hold beyond the cells, still held, widens to its cores too (the
        kernel, moved onto them, runs what it holds there)."""
        self._cells = cells
        self._beyond = [hold for hold in self._beyond if hold.held]
        for hold in self._beyond:
            hold.widen(cells.cores)

    async def __aexit__(self, *exc) -> None:
        if self._cells is not None:
            self._cells.close()
            self._cells = None

    def hold_beyond(self) -> BackgroundHold:
        """Taken inside this turn (between enter and exit): a hold of the same kind that outlasts it, for
        what the kernel goes on running between its cells (the lab probe's warm-up, which a cell starts).
        A timed task waits for it as for a cell in flight, until it is released."""
        hold = None
        if self._cells is not None:
            hold = open_lock("cells", self._cells.cores)
            if not hold.take(fcntl.LOCK_SH):  # cannot happen while this turn holds it shared
                hold.close()
                hold = None
        beyond = BackgroundHold(hold)
        if beyond.held:
            self._beyond.append(beyond)
        return beyond


def passing(
    gate: CoreLock, cells: CoreLock, deadline: float, part_of_the_turn: Callable[[], bool], noted: bool = True
) -> Generator[None, None, bool | None]:
    """Through the gate (blocked while a timed task holds it), then a shared hold on the cells' lock: yields
    each time it has to wait (its caller sleeps a ``POLL``, in a thread or on an event loop), and returns
    True once the cells' lock is held, False past the deadline, None once ``part_of_the_turn()``."""
    through = yield from in_line(gate, fcntl.LOCK_SH, PASS, deadline, part_of_the_turn, noted)
    if not through:
        return through
    gate.unlock()
    return (yield from _until_taken(cells, fcntl.LOCK_SH, deadline, part_of_the_turn))


class BackgroundHold:
    """A kernel's work between its cells, held like a running cell (``CellTurn.hold_beyond``); nothing is
    held where the cell itself held nothing (turns off, or its process's own turn)."""

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
        if missing:
            more = open_lock("cells", missing)
            if more.take(fcntl.LOCK_SH):
                self._more.append(more)
            else:
                more.close()

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


_kernels_stay = False  # a kernel of this process could not be moved: kernel starts wait at the gate again


def kernel_not_moved() -> None:
    """A kernel's processes could not be moved: this process's kernel starts wait for the gate from now on."""
    global _kernels_stay
    _kernels_stay = True


async def pass_the_gate(label: str = "a kernel's start", noted: bool = True) -> tuple[int, ...] | None:
    """The cores a kernel's start — its imports and device setup — may load now without loading another
    grading's timed task: those no turn holds, at once where the process may run on several (the kernel is
    moved onto them once launched, ``StartedKernel.start``); else, after waiting while another process
    holds the timed turn of its cores (or waits to take it), None: anywhere its process may run. A spare
    kernel's wait is not its process's grading's (not ``noted``)."""
    if not timed_turns_enabled() or process_hold.held():
        return None
    home = home_cores()
    if len(home) > 1 and not _kernels_stay:
        free = free_cores(home)
        if free:
            return free
    started = time.monotonic()
    gate = open_lock("gate")
    try:
        if await step_through(in_line(gate, fcntl.LOCK_SH, PASS, started + MAX_WAIT, process_hold.held, noted)):
            gate.unlock()
    finally:
        gate.close()
    waited = time.monotonic() - started
    if waited > LOG_AFTER:
        log.info("%s waited %.1f s for another submission's timed task on this machine", label, waited)
    return None
