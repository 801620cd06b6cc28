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

A kernel whose ``Limits.saves_memory`` is off (the course's own notebooks: grading/course_runs.py) takes
the timing thresholds from its start and keeps them: it fits no student's container, and the cells of a
lab 2 notebook, whose large buffers would otherwise be mapped afresh on every call, ran in 7.5 s instead
of 13.3 s alone (lab 2's known-grade gradings, two at a time: 136 s instead of 151 s).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from autograder.kernel import SAVING_MMAP_THRESHOLD, libc_function, malloc_for_timing

ARENAS = 2
KERNEL_MALLOC_ENV = {"MALLOC_ARENA_MAX": str(ARENAS), "MALLOC_MMAP_THRESHOLD_": str(SAVING_MMAP_THRESHOLD)}
_M_ARENA_MAX = -8  # glibc's malloc.h
_GLIBC_ARENAS = 0  # glibc's default: as many arenas as it sees fit for the cores


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
