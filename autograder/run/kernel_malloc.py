"""The kernel's malloc settings, and the same settings for the grader's own timing.

Every kernel runs with two malloc arenas and with blocks of 64 KiB and more mapped on their own, so that
memory a cell frees goes back to the system (lab 2's kernel peaks at 530 MB instead of 780 MB and fits
Gradescope's 768 MB container; lab 1's ends at 1,120 MB instead of 1,640 MB). The price is speed: each
large buffer an XLA call allocates is a fresh mapping, faulted in page by page on every call. Lab 3's
``all_gather`` of a 4 MB array, replicated on 8 devices, takes about 15 ms per call under these settings
and 3 ms without them.

A time the student measures in the kernel is judged against the grader's own measurement, so the grader
measures under the same settings (``under_kernel_malloc()``, glibc's ``mallopt``, around its timed calls): the
same program costs the same on both sides. Without it the solution's lab 3 times were 5–8× the grader's,
at the edge of the check's factor of 8. After the measurement the grader goes back to keeping large
blocks in its heap (glibc's own threshold grows to that maximum as a process frees large blocks), so
that its other checks run at full speed.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
from collections.abc import Callable, Iterator

ARENAS = 2
MMAP_THRESHOLD = 64 * 2**10
KERNEL_MALLOC_ENV = {"MALLOC_ARENA_MAX": str(ARENAS), "MALLOC_MMAP_THRESHOLD_": str(MMAP_THRESHOLD)}
_M_MMAP_THRESHOLD, _M_ARENA_MAX = -3, -8  # glibc's malloc.h
_GLIBC_MAX_THRESHOLD = 4 * 2**20 * ctypes.sizeof(ctypes.c_long)  # where glibc's growing threshold stops
_GLIBC_ARENAS = 0  # glibc's default: as many arenas as it sees fit for the cores


@functools.cache
def _mallopt() -> Callable[[int, int], int] | None:
    """glibc's ``mallopt``, or None where the C library has none (the kernel's variables do nothing there)."""
    try:
        mallopt = ctypes.CDLL(ctypes.util.find_library("c") or None).mallopt
    except (OSError, AttributeError):
        return None
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    return mallopt


@contextlib.contextmanager
def under_kernel_malloc() -> Iterator[bool]:
    """This process under the kernel's malloc settings meanwhile (True), or as it is where they cannot be
    set (False); afterwards, large blocks stay in the heap again."""
    mallopt = _mallopt()
    if mallopt is None:
        yield False
        return
    set_ = bool(mallopt(_M_ARENA_MAX, ARENAS)) and bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))
    try:
        yield set_
    finally:
        mallopt(_M_MMAP_THRESHOLD, _GLIBC_MAX_THRESHOLD)
        mallopt(_M_ARENA_MAX, _GLIBC_ARENAS)
