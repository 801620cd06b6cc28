"""A task that times code runs alone on its turn core, so that a student's timing cells and the grader's
measurement see the same machine (docs/how-grading-works.md, "One grade"). Per core, the turn holds ``gate``
exclusive (no new cell starts) and waits to take ``cells`` exclusive (each running cell holds it shared).
Waits are served in the order they began (``flock`` promises none): a wait that cannot go at once takes a
``Ticket``, a file named by when it began, alive while its taker holds an ``flock`` on it; a ``turn`` lets every
earlier waiter of its cores go first, a ``pass`` every earlier ``turn``."""

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
from typing import TypeVar

from autograder.fairness.core_pinning import CoreLock, home_cores, placement, switched_off, turn_core

DIRECTORY_VARIABLE = "AUTOGRADER_TURNS_DIR"
QUIET_MACHINE_VARIABLE = "AUTOGRADER_TIMED_TURNS"  # "off": no turn is taken (the bench compares without)
MAX_WAIT = 600.0  # seconds a kernel or a timed task waits for a turn at most
POLL = 0.05
LOG_AFTER = 2.0  # a wait longer than this is logged
LINE = "line"
TURN, PASS = "turn", "pass"
HOLDER = "holder"  # holder-<core>: the label of the turn's taker on that core

T = TypeVar("T")
log = logging.getLogger("autograder.timed_turns")
_held_lock = threading.Lock()  # a turn's joined and closed, read and set together


class WaitedBehind:
    """The seconds this process's grading waited behind other processes' turns, and their labels."""

    def __init__(self) -> None:
        self._labels: set[str] = set()
        self._seconds = 0.0
        self._lock = threading.Lock()

    def reset(self) -> None:
        with self._lock:
            self._labels.clear()
            self._seconds = 0.0

    def add(self, seconds: float, labels: set[str]) -> None:
        with self._lock:
            self._seconds += seconds
            self._labels |= labels

    def record(self) -> dict:
        """``{"seconds": ..., "behind": [...]}`` as a grade's results keep it."""
        with self._lock:
            return {"seconds": round(self._seconds, 3), "behind": sorted(self._labels)}


WAITED_BEHIND = WaitedBehind()


def _alive(path: Path) -> bool:
    """Does a taker still hold the ticket at ``path``? One left by a dead process is removed."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    path.unlink(missing_ok=True)
    return False


def _line(directory: Path) -> Path:
    line = directory / LINE
    line.mkdir(mode=0o700, exist_ok=True)
    return line


def waiting_before(directory: Path, kind: str, cores: tuple[int, ...], before: str | None = None) -> bool:
    """Is a live ticket that a ``kind`` wait on ``cores`` must let go first in line (before ``before``)?"""
    line = _line(directory)
    mine = set(cores)
    for name in sorted(os.listdir(line)):
        if before is not None and name >= before:
            break
        parts = name.split("-", 4)
        if name.startswith(".") or len(parts) != 5 or (kind == PASS and parts[1] != TURN):
            continue
        if mine.isdisjoint(int(core) for core in parts[4].split(".") if core.isdigit()):
            continue
        if _alive(line / name):
            return True
    return False


class Ticket:
    """A wait's place in the line: alive from its creation to ``leave``."""

    def __init__(self, directory: Path, kind: str, cores: tuple[int, ...]):
        line = _line(directory)
        self.directory, self.kind, self.cores = directory, kind, cores
        place = ".".join(map(str, cores))
        # the system's clock first: one order for every process
        self.name = f"{time.monotonic_ns():020d}-{kind}-{os.getpid()}-{threading.get_native_id()}-{place}"
        draft = line / f".{self.name}"
        self.fd = os.open(draft, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        fcntl.flock(self.fd, fcntl.LOCK_EX)  # alive before it is in line under its name
        os.rename(draft, line / self.name)

    def first(self) -> bool:
        """May this wait try now: no one it must let go first is ahead of it?"""
        return not waiting_before(self.directory, self.kind, self.cores, self.name)

    def leave(self) -> None:
        (self.directory / LINE / self.name).unlink(missing_ok=True)
        os.close(self.fd)


def hold_the_turn_as(lock: CoreLock, label: str) -> None:
    """Written by the turn's taker once it holds the gate: what those waiting for it read."""
    for core in lock.cores:
        draft = lock.directory / f".{HOLDER}-{core}-{os.getpid()}"
        draft.write_text(f"{os.getpid()} {label}")
        os.replace(draft, lock.directory / f"{HOLDER}-{core}")


def _holders(lock: CoreLock) -> set[str]:
    """The labels of the turns other processes hold on ``lock``'s cores, as their takers wrote them."""
    found = set()
    for core in lock.cores:
        try:
            pid, _, label = (lock.directory / f"{HOLDER}-{core}").read_text().strip().partition(" ")
        except OSError:
            continue
        if label and pid != str(os.getpid()):
            found.add(label)
    return found


def in_line(
    lock: CoreLock,
    operation: int,
    kind: str,
    deadline: float,
    give_up: Callable[[], bool] = lambda: False,
    noted: bool = True,
) -> Generator[None, None, bool | None]:
    """``lock.take(operation)`` in the order waits began, yielding each time it waits: True once taken, False
    past ``deadline``, None once ``give_up()``; a wait behind others' turns is ``noted`` in ``WAITED_BEHIND``."""
    if not waiting_before(lock.directory, kind, lock.cores) and lock.take(operation):
        return True
    ticket, started, behind = Ticket(lock.directory, kind, lock.cores), time.monotonic(), set()
    try:
        while not (ticket.first() and lock.take(operation)):
            if give_up():
                return None
            if time.monotonic() >= deadline:
                return False
            behind |= _holders(lock)
            yield
        return True
    finally:
        ticket.leave()
        if noted and behind:
            WAITED_BEHIND.add(time.monotonic() - started, behind)


def turns_directory() -> Path:
    """``$AUTOGRADER_TURNS_DIR``, else a private folder in the temporary directory; refused if not the user's."""
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


def cells_shared(cores: tuple[int, ...]) -> CoreLock | None:
    """The cells' lock on ``cores`` held shared, as a running cell holds it; None (closed) where a turn holds one."""
    cells = open_lock("cells", cores)
    if cells.take(fcntl.LOCK_SH):
        return cells
    cells.close()
    return None


def free_cores(cores: tuple[int, ...]) -> tuple[int, ...]:
    """Those of ``cores`` whose gate is open and for which no turn waits in line: work may run there now."""
    directory, free = turns_directory(), []
    for core in cores:
        if waiting_before(directory, PASS, (core,)):
            continue
        with CoreLock(directory, "gate", (core,)) as gate:
            if gate.take(fcntl.LOCK_SH):
                free.append(core)
    return tuple(free)


def cells_on_free_cores(
    cores: tuple[int, ...], onto: Callable[[tuple[int, ...]], bool] = lambda free: True
) -> CoreLock | None:
    """The cells' lock held shared on the free ones of ``cores``, if any and ``onto(free)`` moved what runs there."""
    free = free_cores(cores)
    cells = cells_shared(free) if free else None  # None: a turn took a core meanwhile
    if cells is not None and not onto(free):
        cells.close()  # the move was refused
        return None
    return cells


def until_taken(
    lock: CoreLock, operation: int, deadline: float, give_up: Callable[[], bool] = lambda: False
) -> Generator[None, None, bool | None]:
    """``lock.take(operation)``, yielding each time it has to wait, as ``in_line`` without the line."""
    while not lock.take(operation):
        if give_up():
            return None
        if time.monotonic() >= deadline:
            return False
        yield
    return True


async def step_through(steps: Generator[None, None, T]) -> T:
    """A wait stepped on the event loop; closed if cancelled, so that it leaves the line."""
    with contextlib.closing(steps):
        while True:
            try:
                next(steps)
            except StopIteration as passed:
                return passed.value
            await asyncio.sleep(POLL)


def step_through_here(steps: Generator[None, None, T]) -> T:
    """A wait stepped in a thread without an event loop."""
    with contextlib.closing(steps):
        while True:
            try:
                next(steps)
            except StopIteration as passed:
                return passed.value
            time.sleep(POLL)


class _ProcessHold:
    """This process's hold, shared by its gradings, which never wait for one another's (one may hold pytest's)."""

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
        """The files taken: the turn is held on ``cores``, where what times is moved."""
        with self.state:
            self.locks, self.users, self.cores = locks, 1, cores

    @contextlib.contextmanager
    def timing_here(self) -> Iterator[None]:
        """The grader's process on the turn's cores while it measures, back home after."""
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
            if self.users:
                return
            locks, self.locks, self.cores = self.locks, [], None
            placement.turn(None)  # back home, before other work may take the core
        for lock in locks:
            lock.close()  # closing the files drops their locks


process_hold = _ProcessHold()


class TimedTurn:
    """One grading's hold on the timed turn: from its first timed cell until the grader has measured."""

    def __init__(self, owner: int, name: str = ""):
        self.owner = owner  # the id of the run whose kernel goes on while it holds the turn
        self.name = name  # the submission it times, as those waiting for it read (``_holders``)
        self._joined = False
        self._closed = False  # released: a later acquire takes nothing (the grader is done with it)
        self.waited = 0.0

    @property
    def held(self) -> bool:
        return self._joined

    async def acquire(self, label: str, movable: Callable[[], bool] | None = None) -> float:
        """Take the turn (once): seconds waited; every core of the process where what times is not ``movable``."""
        return await step_through(self._acquiring(label, movable))

    def acquire_here(self, label: str) -> float:
        """``acquire`` from a thread without an event loop, on the turn core."""
        return step_through_here(self._acquiring(label, None))

    def _acquiring(self, label: str, movable: Callable[[], bool] | None) -> Generator[None, None, float]:
        """This process's hold joined, or its files taken by this thread alone: yields each time it waits."""
        if self._joined or self._closed or not timed_turns_enabled():
            return 0.0
        started = time.monotonic()
        while not process_hold.taking.acquire(blocking=False):
            yield
        try:
            if not process_hold.join():
                yield from self._take(label, started + MAX_WAIT, movable)
        finally:
            process_hold.taking.release()
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

    def _take(self, label: str, deadline: float, movable: Callable[[], bool] | None) -> Generator[None, None, None]:
        home = home_cores()
        cores = (turn_core(home),) if movable is None or movable() else home
        if cores != home:
            log.debug("%s: the timed turn holds core %d of %s", label, cores[0], home)
        gate, cells = open_lock("gate", cores), open_lock("cells", cores)
        try:
            got = bool((yield from in_line(gate, fcntl.LOCK_EX, TURN, deadline)))
            if got:  # holding the gate: what those who wait read it is held for
                hold_the_turn_as(gate, f"{self.name}: {label}" if self.name else label)
                got = bool((yield from until_taken(cells, fcntl.LOCK_EX, deadline)))
        except BaseException:  # closed while it waited (the run's deadline): the gate must not stay shut
            gate.close()
            cells.close()
            raise
        process_hold.taken([cells, gate], cores)
        if not got:
            log.warning(
                "%s: another grading kept this machine's timed turn over %.0f s; timing anyway", label, MAX_WAIT
            )

    def release(self) -> None:
        """Give the turn back, for good (idempotent, from any thread)."""
        with _held_lock:
            self._closed = True
            joined, self._joined = self._joined, False
        if joined:
            process_hold.leave()
