"""The share of the processors that other work took while the harness timed something: a student's timed
cells (the kernel's processes are the timed ones) or the grader's own measurement (its process).

Why: ``machine_quiet`` waits at most a few seconds for idle processors before either side times. On a
machine shared with other work (another user's job, another batch, a second test session) they may never
be idle, and the two sides then time under different loads: a right time per call read 194–368 ms in a
kernel whose machine was crowded, where the grader, a minute later, measured 43–81 ms. The timing checks
allow for the load each side met (``stretch``), so that each claim is judged under the conditions it was
taken in. The harness reads it from outside the kernel: nothing a notebook does claims a load it did not
meet. Under a CPU quota (a container's) nothing is read (``None``), as where ``/proc/stat`` cannot be: the
quota is what the container was given, and its outer timeout (Gradescope's) counts wall time, which a
deadline stretched for the host's load could pass, losing every point.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import psutil

from autograder.fairness.core_pinning import process_cores
from autograder.fairness.cpu_quota import container_cpu_quota
from autograder.fairness.processor_times import JIFFIES_PER_SECOND, processor_jiffies
from autograder.fairness.thread_waits import ThreadTimes, waiting_stretch

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


def process_cpu_seconds(root: psutil.Process | None, members: Iterable[psutil.Process] = ()) -> float | None:
    """CPU seconds (user and system, with its reaped children's) that ``root`` has spent, and ``members``
    (those still running; ``root`` counted once). None when ``root`` is gone."""
    if root is None:
        return None
    try:
        seconds = _cpu_seconds(root)
    except psutil.Error:
        return None
    for member in members:
        if member.pid == root.pid:
            continue
        try:
            seconds += _cpu_seconds(member)
        except psutil.Error:  # ended since: its time is its parent's children's now, or lost
            continue
    return seconds


def _cpu_seconds(process: psutil.Process) -> float:
    times = process.cpu_times()
    return times.user + times.system + times.children_user + times.children_system


class LoadClock:
    """A timeout's clock that gives back the time other work took from a kernel: a limit of ``limit``
    seconds lasts ``limit`` × how much longer the kernel's threads took than alone, as far as others' share
    of the processors (``stretch``) accounts for it. The threads' own count says how long they waited to
    run (thread_waits.py): a kernel that sleeps, or runs on a processor others left free, waited for none
    and gets nothing back, however busy the machine; threads that wait for each other on an idle machine
    get nothing back either, as others took no share. Why: a cell timeout, or a notebook's, on a crowded
    machine would otherwise cut a right answer that an idle one runs in time — the machine's fault, not the
    student's — while a loop that never ends should cost a busy machine no more than its own time. Under a
    quota, or where either count cannot be read, the clock is the wall clock."""

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
        """The share of the processors others took since the clock started (``others_share``)."""
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
