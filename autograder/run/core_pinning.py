"""The cores a process runs on, and pinning a whole process to one of them.

A batch's local workers are pinned to cores of their own where the machine has a core for each
(course/dask_cluster.py): a worker's kernels and its grader then run on its core alone, and a timed task
holds up only what shares that core (core_locks.py), not the whole machine. A kernel of 8 virtual devices
uses about one core (shared/JAX_NOTES.md), so pinning costs a worker little of its own speed.
"""

from __future__ import annotations

import os


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
