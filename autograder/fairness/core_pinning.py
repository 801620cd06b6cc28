"""The cores a process runs on, and pinning a whole process to one of them: a batch's workers, and the
grading processes of ``autograder test`` and the test suite, each on a core of their own where there are
enough, so that a timed task holds up only its core (core_locks.py). A kernel of 8 virtual devices uses
about one core (shared/JAX_NOTES.md), so pinning costs a worker little of its own speed.

A process that may run on several cores is moved for a while instead (timed_turns.py): its kernel's
processes (``move_processes``) and the grader's own process (``placement``) onto its turn core while they
time, or onto the cores no timed turn holds while another grading's turn holds the rest; ``home_cores``
stay the cores it came with. A move the system refuses (another user's process without the privilege, a
process gone, no ``/proc``) says so, and the caller waits as a pinned process does.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor

from autograder.fairness.env_switch import switched_off

PIN_VARIABLE = "AUTOGRADER_PIN_WORKERS"  # "off": grading processes share every core (bench/batch_cost.py compares)

log = logging.getLogger("autograder.core_pinning")


def process_cores() -> tuple[int, ...]:
    """The cores the calling thread may run on (its process's, unless a thread was pinned apart)."""
    try:
        return tuple(sorted(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # no affinity on this system: every core
        return tuple(range(os.cpu_count() or 1))


def pin_process(core: int) -> tuple[int, ...]:
    """Pin every thread of this process to ``core`` (the threads and processes they start later inherit
    it); returns the cores the calling thread may run on after."""
    try:
        threads = [int(tid) for tid in os.listdir("/proc/self/task")]
    except OSError:  # no /proc: the calling thread alone
        threads = [0]
    for thread in threads:
        try:
            os.sched_setaffinity(thread, {core})
        except ProcessLookupError:  # the thread ended meanwhile
            pass
    return process_cores()


def cores_to_pin(workers: int) -> tuple[int, ...]:
    """The cores for ``workers`` grading processes, one each, where there is one for each and pinning is
    not switched off; else none (they share every core)."""
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


def _threads_of(pid: int) -> list[int]:
    """The thread ids of process ``pid`` (raises ``FileNotFoundError`` once it has ended)."""
    return [int(tid) for tid in os.listdir(f"/proc/{pid}/task")]


def move_processes(pids: Iterable[int], cores: tuple[int, ...]) -> bool:
    """Every thread of each process in ``pids`` onto ``cores`` (threads and processes they start later
    inherit it): False where the system refused a move (no privilege over another user's process, cores
    outside its cpuset, no ``/proc``); a process or thread that ended meanwhile is no refusal."""
    for pid in pids:
        try:
            threads = _threads_of(pid)
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
    """Where this grading process runs while it is moved: onto its turn core while it measures in its timed
    turn (``turn``), else onto the cores its checks hold while another process's turn holds the others (``checks``,
    one entry per check in flight: the cores all of them hold), else home — the cores it had before the
    first move, which ``home_cores`` goes on reporting meanwhile."""

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
    """The cores the calling thread may run on when this process is not moved (``placement``): those its
    timed turn and its locks are of."""
    home = placement.home
    return home if home is not None else process_cores()


def turn_core(cores: tuple[int, ...] | None = None) -> int:
    """The core a turn of this process holds: its only core when pinned, else the lowest it may run on, so
    that every unpinned process's turn competes for the same core and the others stay free of turns."""
    return min(home_cores() if cores is None else cores)
