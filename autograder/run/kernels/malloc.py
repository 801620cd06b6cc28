"""The kernel's malloc settings: memory given back while cells run, large blocks kept while time is measured.

Every kernel runs with two malloc arenas and with blocks of 64 KiB and more mapped on their own, so that
memory a cell frees goes back to the system (lab 2's kernel peaks at 530 MB instead of 780 MB and fits
Gradescope's 768 MB container; lab 1's ends at 1,120 MB instead of 1,640 MB).

Those settings make a call's time depend on the heap's history. A large buffer an XLA call allocates is
either a fresh mapping, faulted in page by page on every call, or, where free memory already sits in the
heap (freed small blocks run together, or work done before the settings), a reused block. Lab 3's
``all_gather`` of a 4 MB array, replicated on 8 devices, costs about 15 ms per call the first way and 2 ms
the second: the same program timed 18.1 ms in the student's kernel and 2.11 ms in the grader, whose heap
held free memory, although both ran under these settings.

So time is measured, on both sides, with large blocks kept in the heap once freed, the thresholds glibc's
own grow to (``malloc_for_timing`` in the kernel's housekeeping): once warmed up, a call reuses what the
previous one freed, whatever the heap held before. The kernel switches before the first cell of a task that
times code and back after its last (``malloc_for_memory``, which also gives back what the timed cells
kept); the grader takes the same thresholds before it measures (``under_timing_malloc``). A student timing
in their own Jupyter runs under glibc's defaults, whose thresholds grow to the same values.

A kernel whose ``Limits.saves_memory`` is off takes the timing thresholds from its start and keeps them.
Saving memory costs a student's grade time: the cells of a student's copy of lab 2, whose large buffers are
mapped afresh on every call, ran in 26.0 s instead of 19.6 s (peaks 569 MB and 879 MB). So memory is saved
only where it is short (``saves_memory`` None, the default, is decided by ``memory_decided`` when a run
starts): in a container or a sandbox that leaves a kernel less than ``KEPT_BLOCKS_ROOM`` (Gradescope's
768 MB), or on a machine whose memory, shared by a kernel per core (a batch's default), leaves less. The
course's own notebooks keep large blocks wherever they run (grading/course_runs.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

from autograder.fairness import process_cores
from autograder.kernel import SAVING_MMAP_THRESHOLD, libc_function, malloc_for_timing
from autograder.run.sandbox import GIB, Limits, memory_limit_bytes

ARENAS = 2
KERNEL_MALLOC_ENV = {"MALLOC_ARENA_MAX": str(ARENAS), "MALLOC_MMAP_THRESHOLD_": str(SAVING_MMAP_THRESHOLD)}
_M_ARENA_MAX = -8  # glibc's malloc.h
_GLIBC_ARENAS = 0  # glibc's default: as many arenas as it sees fit for the cores
KEPT_BLOCKS_ROOM = 3 * GIB  # a kernel keeping large blocks: lab 1's ends at 1.6 GB, lab 2's peaks at 0.9 GB
MEMINFO = Path("/proc/meminfo")


def available_bytes(meminfo: Path = MEMINFO) -> int | None:
    """The memory this machine has available now (``MemAvailable``), None where it cannot be read."""
    try:
        lines = meminfo.read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        key, _, value = line.partition(":")
        kib = value.split()[:1]
        if key == "MemAvailable" and kib and kib[0].isdigit():
            return int(kib[0]) * 1024
    return None


def room_per_kernel(limit: int | None, available: int | None, kernels: int) -> int | None:
    """The memory each of ``kernels`` kernels can count on: the container's ``limit`` and what the machine
    has ``available``, the smaller, shared among them; None where neither is known."""
    known = [size for size in (limit, available) if size is not None]
    return min(known) // max(1, kernels) if known else None


def memory_decided(limits: Limits) -> Limits:
    """``limits`` with ``saves_memory`` decided where it is None: saved where a kernel has less room than
    ``KEPT_BLOCKS_ROOM`` — in its sandbox, or on this machine shared by a kernel per core — or where the room
    cannot be told."""
    if limits.saves_memory is not None:
        return limits
    room = room_per_kernel(memory_limit_bytes(), available_bytes(), len(process_cores()))
    sandboxed = limits.sandbox.memory_bytes if limits.sandbox is not None else None
    if sandboxed is not None:
        room = min(room, sandboxed) if room is not None else None
    return replace(limits, saves_memory=room is None or room < KEPT_BLOCKS_ROOM)


@contextlib.contextmanager
def under_timing_malloc() -> Iterator[bool]:
    """This process with the thresholds a kernel times under, and the kernel's number of arenas, meanwhile
    (True), or as it is where they cannot be set (False). Afterwards the thresholds stay (they are those
    glibc's own grow to as a process frees large blocks; the grader's other checks run at full speed under
    them) and the number of arenas is glibc's again."""
    mallopt = libc_function("mallopt")
    if mallopt is None:
        yield False
        return
    taken = malloc_for_timing() and bool(mallopt(_M_ARENA_MAX, ARENAS))
    try:
        yield taken
    finally:
        mallopt(_M_ARENA_MAX, _GLIBC_ARENAS)
