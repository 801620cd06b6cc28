"""Timing starts on a quiet machine: wait (bounded) until the processors are idle, as ``/proc/stat`` counts
them, since work the timed turn does not stop can put timing off by several times."""

from __future__ import annotations

import asyncio
import logging
import time

from autograder.fairness.core_pinning import process_cores
from autograder.fairness.cpu_quota import container_cpu_quota
from autograder.fairness.others_load import processor_jiffies as _cpu_times

WINDOW = 0.1  # seconds a reading of the machine's load spans
BUSY_CPUS = 0.3  # at most this many processors' worth busy counts as quiet
FIRST_GLANCE = 0.03  # seconds of a first, shorter reading: not one busy tick in it counts as quiet
MAX_WAIT = 5.0  # seconds waited at most for a quiet machine
STILL_BUSY = 30.0  # seconds a machine found busy through a whole wait is taken to stay busy

_busy_until = float("-inf")  # until when (time.monotonic) the waits look for one window only

log = logging.getLogger("autograder.machine_quiet")


def wait_until_machine_quiet(label: str) -> float:
    """Block until a ``WINDOW`` of idle processors (whole under a quota: a new period), at most ``MAX_WAIT``."""
    global _busy_until
    started = time.monotonic()
    most = WINDOW if started < _busy_until else MAX_WAIT
    cores = process_cores()
    before = _cpu_times(cores)
    if before is None:
        return time.monotonic() - started
    rest = WINDOW  # of the window begun at ``before``
    if container_cpu_quota() is None:
        time.sleep(FIRST_GLANCE)
        glance = _cpu_times(cores)
        if glance is not None and glance[0] == before[0]:
            return time.monotonic() - started
        rest = WINDOW - FIRST_GLANCE
    while True:
        time.sleep(rest)
        rest = WINDOW
        after = _cpu_times(cores)
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
