"""The cores a process runs on, and pinning a whole process to one of them: a batch's workers, and the
grading processes of ``autograder test`` and the test suite, each on a core of their own where there are
enough, so that a timed task holds up only its core (core_locks.py). A kernel of 8 virtual devices uses
about one core (shared/JAX_NOTES.md), so pinning costs a worker little of its own speed.
"""

from __future__ import annotations

import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor

from autograder.fairness.env_switch import switched_off

PIN_VARIABLE = "AUTOGRADER_PIN_WORKERS"  # "off": grading processes share every core (bench/batch_cost.py compares)


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
