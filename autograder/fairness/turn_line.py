"""Waits for the machine's turns are served in the order they began (``flock`` promises none): a wait that
cannot go at once takes a ticket, a file named by when it began, alive while its taker holds an ``flock`` on
it; a ``turn`` lets every earlier waiter of its cores go first, a ``pass`` every earlier ``turn``."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from collections.abc import Callable, Generator
from pathlib import Path

from autograder.fairness.core_locks import CoreLock

LINE = "line"
TURN, PASS = "turn", "pass"
HOLDER = "holder"  # holder-<core>: the label of the turn's taker on that core


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
