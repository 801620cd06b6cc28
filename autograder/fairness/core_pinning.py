"""The cores a process runs on: a batch's worker pinned to one, or a process that may run on several moved for
a while (its kernel's, ``move_processes``, and the grader's own, ``placement``); a refused move says so. And a
lock on cores (``CoreLock``), so that a timed turn holds up only what shares its cores."""

from __future__ import annotations

import contextlib
import fcntl
import logging
import multiprocessing
import os
import threading
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

PIN_VARIABLE = "AUTOGRADER_PIN_WORKERS"  # "off": grading processes share every core (bench/batch_cost.py compares)

log = logging.getLogger("autograder.core_pinning")


def switched_off(variable: str) -> bool:
    """Whether a rule's ``variable`` says off, for a benchmark's comparison; unset or anything else is on."""
    return os.environ.get(variable, "on").lower() in ("off", "0", "false", "no")


def process_cores() -> tuple[int, ...]:
    """The cores the calling thread may run on (its process's, unless a thread was pinned apart)."""
    try:
        return tuple(sorted(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # no affinity on this system: every core
        return tuple(range(os.cpu_count() or 1))


def pin_process(core: int) -> tuple[int, ...]:
    """Pin every thread of this process to ``core``: the cores the calling thread may run on after."""
    if not move_processes([os.getpid()], (core,)):
        os.sched_setaffinity(0, {core})  # no /proc: the calling thread alone (a refusal raises here)
    return process_cores()


def cores_to_pin(workers: int) -> tuple[int, ...]:
    """A core for each of ``workers`` grading processes, where there are enough and pinning is on; else none."""
    cores = process_cores()
    return cores if workers <= len(cores) and not switched_off(PIN_VARIABLE) else ()


def pinned_process_pool(workers: int) -> ProcessPoolExecutor:
    """``workers`` grading processes, spawned (JAX's threads do not survive a fork), pinned by ``cores_to_pin``."""
    context = multiprocessing.get_context("spawn")
    return ProcessPoolExecutor(
        workers,
        mp_context=context,
        initializer=_pin_to_next_core,
        initargs=(context.Value("i", 0), cores_to_pin(workers)),
    )


def _pin_to_next_core(taken, cores: tuple[int, ...]) -> None:
    if not cores:
        return
    with taken.get_lock():
        index, taken.value = taken.value, taken.value + 1
    pin_process(cores[index % len(cores)])


def move_processes(pids: Iterable[int], cores: tuple[int, ...]) -> bool:
    """Every thread of each process in ``pids`` onto ``cores``: False where refused (one that ended is no refusal)."""
    for pid in pids:
        try:
            threads = [int(tid) for tid in os.listdir(f"/proc/{pid}/task")]
        except FileNotFoundError:
            if not os.path.isdir("/proc/self/task"):
                return False
            continue  # it ended
        except OSError:
            return False
        for thread in threads:
            try:
                os.sched_setaffinity(thread, set(cores))
            except ProcessLookupError:
                pass
            except (OSError, AttributeError) as refused:
                log.info("could not move process %d onto cores %s: %s", pid, cores, refused)
                return False
    return True


class ProcessPlacement:
    """Where this grading process runs: its turn core while it measures, else its checks' cores, else home."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.home: tuple[int, ...] | None = None
        self._turn: tuple[int, ...] | None = None
        self._checks: list[tuple[int, ...]] = []

    def _wanted(self) -> tuple[int, ...] | None:
        if self._turn is not None:
            return self._turn
        if self._checks:
            common = set(self._checks[0]).intersection(*self._checks[1:])
            return tuple(sorted(common)) if common else self._checks[-1]
        return None

    def _apply(self) -> bool:
        wanted = self._wanted()
        if wanted is None:
            if self.home is None:
                return True
            home, self.home = self.home, None
            return move_processes([os.getpid()], home)
        if self.home is None:
            self.home = process_cores()
        return move_processes([os.getpid()], wanted)

    def turn(self, cores: tuple[int, ...] | None) -> bool:
        """Onto ``cores`` while this process holds the turn; None: the turn ended."""
        with self._lock:
            self._turn = cores
            return self._apply()

    def checks(self, cores: tuple[int, ...]) -> bool:
        with self._lock:
            self._checks.append(cores)
            if self._apply():
                return True
            self._checks.remove(cores)
            self._apply()
            return False

    def checks_ended(self, cores: tuple[int, ...]) -> None:
        with self._lock:
            if cores in self._checks:
                self._checks.remove(cores)
            self._apply()


placement = ProcessPlacement()


def home_cores() -> tuple[int, ...]:
    """The cores the calling thread may run on when this process is not moved: those its locks are of."""
    home = placement.home
    return home if home is not None else process_cores()


def turn_core(cores: tuple[int, ...] | None = None) -> int:
    """The lowest core: every unpinned process's turn competes for the same core, and the others stay free."""
    return min(home_cores() if cores is None else cores)


class CoreLock(contextlib.AbstractContextManager["CoreLock"]):
    """The ``flock``-ed files ``<name>-<core>`` under ``directory`` for each of ``cores`` (by default ``home_cores``);
    one that cannot take them all lets go of those it took, so two takers never hold one another up."""

    def __init__(self, directory: Path, name: str, cores: tuple[int, ...] | None = None):
        self.fds: list[int] = []
        self.directory, self.cores = directory, home_cores() if cores is None else cores
        try:
            for core in self.cores:
                path = directory / f"{name}-{core}"
                self.fds.append(os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600))
        except BaseException:
            self.close()
            raise

    def take(self, operation: int) -> bool:
        """Lock every file with ``operation`` without waiting: True if all were taken, else False, holding none."""
        taken: list[int] = []
        for fd in self.fds:
            try:
                fcntl.flock(fd, operation | fcntl.LOCK_NB)
            except BlockingIOError:
                for held in taken:
                    fcntl.flock(held, fcntl.LOCK_UN)
                return False
            taken.append(fd)
        return True

    def unlock(self) -> None:
        for fd in self.fds:
            fcntl.flock(fd, fcntl.LOCK_UN)

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the files (idempotent): closing a descriptor drops its lock."""
        fds, self.fds = self.fds, []
        for fd in fds:
            os.close(fd)
