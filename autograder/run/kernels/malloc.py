"""The kernel's malloc settings: memory given back while cells run, large blocks kept while time is measured,
on both sides, and whether a kernel saves memory at all. docs/how-grading-works.md has the measurements."""

from __future__ import annotations

import contextlib
import threading
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
    known = [size for size in (limit, available) if size is not None]
    return min(known) // max(1, kernels) if known else None


def memory_decided(limits: Limits) -> Limits:
    """``limits`` with ``saves_memory`` decided: saved where a kernel has less room than ``KEPT_BLOCKS_ROOM``
    (in its sandbox, or on this machine shared by a kernel per core) or where that cannot be told."""
    if limits.saves_memory is not None:
        return limits
    room = room_per_kernel(memory_limit_bytes(), available_bytes(), len(process_cores()))
    if room is not None and limits.sandbox is not None:
        room = min(room, limits.sandbox.memory_bytes)
    return replace(limits, saves_memory=room is None or room < KEPT_BLOCKS_ROOM)


_checked_run = threading.local()  # whether the kernel of the run this thread checks saves memory


@contextlib.contextmanager
def timing_as_kernel(saves_memory: bool | None) -> Iterator[None]:
    """Held by a grader's thread while it checks a run: its measurements keep the blocks that run's kernel
    kept while it timed (bounded where it saves memory; unknown: saved, as the kernel decides)."""
    previous = getattr(_checked_run, "saves_memory", False)
    _checked_run.saves_memory = saves_memory is not False
    try:
        yield
    finally:
        _checked_run.saves_memory = previous


@contextlib.contextmanager
def under_timing_malloc() -> Iterator[bool]:
    """This process times as the kernel it checks did (True; False where that cannot be set). The thresholds
    stay after, the number of arenas is glibc's again."""
    mallopt = libc_function("mallopt")
    if mallopt is None:
        yield False
        return
    bounded = getattr(_checked_run, "saves_memory", False)
    taken = malloc_for_timing(bounded) and bool(mallopt(_M_ARENA_MAX, ARENAS))
    try:
        yield taken
    finally:
        mallopt(_M_ARENA_MAX, _GLIBC_ARENAS)
