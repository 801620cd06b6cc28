"""The load other work puts on a timing, read from outside the kernel so that a notebook cannot claim a load it
did not meet: timing starts on a quiet machine (``wait_until_machine_quiet``), and what others took of the
processors (``others_share``) and how long a run's threads waited for one (``waiting_stretch``) is given back.
Under the container's CPU quota, read from its cgroup, no share is read, and the kernel runs in bursts of the
scheduler's period, so the grader's samples span several periods (``min_sample_seconds``)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import psutil

from autograder.fairness.core_pinning import process_cores

CGROUP_ROOT = Path("/sys/fs/cgroup")
PERIODS_PER_SAMPLE = 3  # a sample spans at least this many scheduler periods under a quota
MOST_SHARE = 0.9  # a share read above this counts as this: a stretch of 10 at most
PROC_STAT = Path("/proc/stat")
JIFFIES_PER_SECOND = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
WINDOW = 0.1  # seconds a reading of the machine's load spans
BUSY_CPUS = 0.3  # at most this many processors' worth busy counts as quiet
FIRST_GLANCE = 0.03  # seconds of a first, shorter reading: not one busy tick in it counts as quiet
MAX_WAIT = 5.0  # seconds waited at most for a quiet machine
STILL_BUSY = 30.0  # seconds a machine found busy through a whole wait is taken to stay busy
NANOSECONDS = 1e9
BUSY_PART = 0.25  # a thread that ran at least this part of the busiest one's time carries the work

_busy_until = float("-inf")  # until when (time.monotonic) the waits look for one window only
log = logging.getLogger("autograder.machine_quiet")


class CpuQuota(NamedTuple):
    """``cpus`` CPUs' worth of time in each scheduler period of ``period`` seconds."""

    cpus: float
    period: float


def _cgroup_folders(controller: str) -> tuple[list[Path], str]:
    """This process's cgroup folder for ``controller`` and those above it (none if not found), and its version."""
    lines = _read_proc_cgroup()
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            top = CGROUP_ROOT / ",".join(sorted(controllers.split(",")))
            top = top if top.is_dir() else CGROUP_ROOT / controller
            return _up_to(top / path.lstrip("/"), top), "v1"
    for line in lines:
        if line.startswith("0::"):
            return _up_to(CGROUP_ROOT / line[3:].lstrip("/"), CGROUP_ROOT), "v2"
    return [], ""


def _read_proc_cgroup() -> list[str]:
    return (_read(Path("/proc/self/cgroup")) or "").splitlines()  # none where it cannot be read


def _up_to(folder: Path, top: Path) -> list[Path]:
    above = [parent for parent in folder.parents if parent == top or top in parent.parents]
    return [folder, *above] if folder.is_dir() else above


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def container_cpu_quota() -> CpuQuota | None:
    """The smallest CPU quota of this process's cgroup and those above it; None where none can be read."""
    folders, version = _cgroup_folders("cpu")
    quotas = []
    for folder in folders:
        if version == "v2":
            parts = (_read(folder / "cpu.max") or "").split()
        else:
            parts = [_read(folder / "cpu.cfs_quota_us") or "", _read(folder / "cpu.cfs_period_us") or ""]
        if len(parts) == 2 and parts[0].isdigit() and parts[1].isdigit() and int(parts[1]) > 0:  # max, -1: none
            quotas.append(CpuQuota(int(parts[0]) / int(parts[1]), int(parts[1]) / 1e6))
    return min(quotas, key=lambda q: q.cpus) if quotas else None


def min_sample_seconds() -> float:
    """How long one timed sample must last: several scheduler periods under a CPU quota, else 0."""
    quota = container_cpu_quota()
    return 0.0 if quota is None else PERIODS_PER_SAMPLE * quota.period


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


def wait_until_machine_quiet(label: str) -> float:
    """Block until a ``WINDOW`` of idle processors (whole under a quota: a new period), at most ``MAX_WAIT``."""
    global _busy_until
    started = time.monotonic()
    most = WINDOW if started < _busy_until else MAX_WAIT
    cores = process_cores()
    before = processor_jiffies(cores)
    if before is None:
        return time.monotonic() - started
    rest = WINDOW  # of the window begun at ``before``
    if container_cpu_quota() is None:
        time.sleep(FIRST_GLANCE)
        glance = processor_jiffies(cores)
        if glance is not None and glance[0] == before[0]:
            return time.monotonic() - started
        rest = WINDOW - FIRST_GLANCE
    while True:
        time.sleep(rest)
        rest = WINDOW
        after = processor_jiffies(cores)
        if after is None:
            break
        total = after[1] - before[1]
        busy = (after[0] - before[0]) / total * len(cores) if total > 0 else 0.0  # processors' worth
        if busy <= BUSY_CPUS:
            break
        if time.monotonic() - started >= most:
            _busy_until = time.monotonic() + STILL_BUSY
            log.info("%s: the machine stayed busy for %.1f s (%.1f processors); timing anyway", label, most, busy)
            break
        before = after
    return time.monotonic() - started


async def until_machine_quiet(label: str) -> float:
    """``wait_until_machine_quiet`` without blocking the event loop."""
    return await asyncio.to_thread(wait_until_machine_quiet, label)


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
