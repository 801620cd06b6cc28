"""The share of the processors other work took while the harness timed something, read from outside the kernel
so that a notebook cannot claim a load it did not meet. Under a CPU quota nothing is read."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import psutil

from autograder.fairness.core_pinning import process_cores
from autograder.fairness.cpu_quota import container_cpu_quota
from autograder.fairness.thread_waits import ThreadTimes, waiting_stretch

MOST_SHARE = 0.9  # a share read above this counts as this: a stretch of 10 at most
PROC_STAT = Path("/proc/stat")
JIFFIES_PER_SECOND = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def processor_jiffies(cores: tuple[int, ...]) -> tuple[int, int] | None:
    """(busy, total) jiffies of the processors ``cores`` so far; None where ``/proc/stat`` lacks one."""
    wanted = {f"cpu{core}" for core in cores}
    busy = total = 0
    try:
        for fields in (line.split() for line in PROC_STAT.read_text().splitlines()):
            if not fields or fields[0] not in wanted:
                continue
            wanted.discard(fields[0])
            values = [int(v) for v in fields[1:]]
            if len(values) < 4:
                return None
            cpu_total = sum(values[:8])  # guest time is counted in user time already
            busy += cpu_total - values[3] - (values[4] if len(values) > 4 else 0)  # idle and iowait
            total += cpu_total
    except (OSError, IndexError, ValueError):
        return None
    return None if wanted else (busy, total)


@dataclass(frozen=True)
class LoadReading:
    """Where a timing began: the processors' jiffies and the timed processes' CPU seconds."""

    cores: tuple[int, ...]
    jiffies: tuple[int, int]
    own_seconds: float


def start_reading(own_seconds: Callable[[], float | None]) -> LoadReading | None:
    """A reading to compare with at the timing's end; None where the load cannot be read (or a quota rules)."""
    if container_cpu_quota() is not None:
        return None
    cores = process_cores()
    jiffies, own = processor_jiffies(cores), own_seconds()
    if jiffies is None or own is None:
        return None
    return LoadReading(cores, jiffies, own)


def others_share(reading: LoadReading | None, own_seconds: Callable[[], float | None]) -> float | None:
    """The share (0 to 1) of the processors' time since ``reading`` that went to anything but the timed processes."""
    if reading is None:
        return None
    jiffies, own = processor_jiffies(reading.cores), own_seconds()
    if jiffies is None or own is None:
        return None
    total = (jiffies[1] - reading.jiffies[1]) / JIFFIES_PER_SECOND
    if total <= 0:
        return None
    busy = (jiffies[0] - reading.jiffies[0]) / JIFFIES_PER_SECOND
    return min(1.0, max(0.0, (busy - (own - reading.own_seconds)) / total))


def stretch(share: float | None) -> float:
    """How many times longer a timing took when others took ``share``: at most 1 / (1 - ``MOST_SHARE``)."""
    if share is None:
        return 1.0
    return 1.0 / (1.0 - min(max(share, 0.0), MOST_SHARE))


def process_cpu_seconds(root: psutil.Process | None, members: Iterable[psutil.Process] = ()) -> float | None:
    """CPU seconds (with reaped children's) of ``root`` and the ``members`` still running; None once it is gone."""
    if root is None:
        return None
    try:
        seconds = _cpu_seconds(root)
    except psutil.Error:
        return None
    for member in members:
        if member.pid != root.pid:
            with contextlib.suppress(psutil.Error):  # ended since: its time is its parent's children's now, or lost
                seconds += _cpu_seconds(member)
    return seconds


def _cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system + times.children_user + times.children_system


class LoadClock:
    """A timeout's clock that gives back what other work took from a kernel: crowding cuts no right answer."""

    def __init__(
        self,
        own_seconds: Callable[[], float | None],
        clock: Callable[[], float],
        own_threads: Callable[[], ThreadTimes | None] = lambda: None,
    ):
        self._own_seconds, self._clock, self._own_threads = own_seconds, clock, own_threads
        self._started = clock()
        self._reading = start_reading(own_seconds)
        self._threads = own_threads() if self._reading is not None else None

    def elapsed(self) -> float:
        return self._clock() - self._started

    def others_share(self) -> float | None:
        return others_share(self._reading, self._own_seconds)

    def limit_now(self, limit: float) -> float:
        """What ``limit`` seconds last, as of now, with the time others took given back."""
        share = others_share(self._reading, self._own_seconds)
        waited = waiting_stretch(self._threads, self._own_threads(), self.elapsed())
        if share is None or waited is None:
            return limit
        return limit * min(stretch(share), waited)

    def remaining(self, limit: float) -> float:
        return self.limit_now(limit) - self.elapsed()
