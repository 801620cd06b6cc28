"""The share of the processors that other work took while the harness timed something: a student's timed
cells (the kernel's processes are the timed ones) or the grader's own measurement (its process).

Why: ``machine_quiet`` waits at most a few seconds for idle processors before either side times. On a
machine shared with other work (another user's job, another batch, a second test session) they may never
be idle, and the two sides then time under different loads: a right time per call read 194–368 ms in a
kernel whose machine was crowded, where the grader, a minute later, measured 43–81 ms. The timing checks
allow for the load each side met (``stretch``), so that each claim is judged under the conditions it was
taken in. The harness reads it from outside the kernel: nothing a notebook does claims a load it did not
meet. Under a CPU quota (a container's), the quota bounds the kernel whatever the host's other tenants do:
nothing is read there (``None``), as nowhere ``/proc/stat`` cannot be read.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import psutil

from autograder.run.core_pinning import process_cores
from autograder.run.cpu_quota import container_cpu_quota
from autograder.run.processor_times import JIFFIES_PER_SECOND, processor_jiffies

MOST_SHARE = 0.9  # a share read above this counts as this: a stretch of 10 at most


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
    """The share (0 to 1) of the processors' time since ``reading`` that went to anything but the timed
    processes; None without a reading, or when the span is too short to have counted a jiffy."""
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
    """How many times longer a timing that wanted every processor took, when others took ``share`` of
    them: 1 / (1 - share), at most 1 / (1 - ``MOST_SHARE``); 1 when nothing was read."""
    if share is None:
        return 1.0
    return 1.0 / (1.0 - min(max(share, 0.0), MOST_SHARE))


def process_cpu_seconds(process: psutil.Process | None, with_descendants: bool) -> float | None:
    """CPU seconds (user and system) that ``process`` has spent, with its reaped children's; with
    ``with_descendants``, those of its living descendants too. None when it is gone."""
    if process is None:
        return None
    try:
        seconds = _cpu_seconds(process)
        descendants = process.children(recursive=True) if with_descendants else []
    except psutil.Error:
        return None
    for descendant in descendants:
        try:
            seconds += _cpu_seconds(descendant)
        except psutil.Error:  # ended since: its time is its parent's children's now, or lost
            continue
    return seconds


def _cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system + times.children_user + times.children_system
