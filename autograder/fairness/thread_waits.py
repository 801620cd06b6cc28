"""How long a run's threads ran and how long they waited for a processor, as the scheduler counts it: others'
share of the processors says how crowded the machine was, not whether the kernel was slowed by it."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from pathlib import Path

import psutil

NANOSECONDS = 1e9

ThreadTimes = Mapping[tuple[int, int], tuple[float, float]]  # (pid, tid) -> (seconds ran, seconds waited)


def thread_times(processes: Iterable[psutil.Process]) -> ThreadTimes | None:
    """Every thread of ``processes``: the seconds it ran and waited to run; None where none could be read."""
    times: dict[tuple[int, int], tuple[float, float]] = {}
    for process in processes:
        try:
            tasks = list((Path("/proc") / str(process.pid) / "task").iterdir())
        except OSError:  # ended, or not ours to read
            continue
        for task in tasks:
            try:
                fields = (task / "schedstat").read_text().split()
                times[(process.pid, int(task.name))] = (int(fields[0]) / NANOSECONDS, int(fields[1]) / NANOSECONDS)
            except (OSError, ValueError, IndexError):
                continue
    return times or None


BUSY_PART = 0.25  # a thread that ran at least this part of the busiest one's time carries the work


def waiting_stretch(before: ThreadTimes | None, after: ThreadTimes | None, elapsed: float) -> float | None:
    """How many times longer than alone the work took: the largest of the threads that carried it, as threads at
    a barrier wait for the one held back longest, and one that woke for a moment may have slowed nothing."""
    if before is None or after is None or elapsed <= 0:
        return None
    spans = []
    for thread, (ran_now, waited_now) in after.items():
        ran_then, waited_then = before.get(thread, (0.0, 0.0))
        spans.append((max(0.0, ran_now - ran_then), max(0.0, waited_now - waited_then)))
    busiest = max((ran for ran, _ in spans), default=0.0)
    if busiest <= 0:
        return None
    waited = max(waited for ran, waited in spans if ran >= BUSY_PART * busiest)
    return elapsed / (elapsed - waited) if waited < elapsed else math.inf
