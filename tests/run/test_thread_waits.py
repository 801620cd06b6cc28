"""How long a run's threads waited to run (autograder/fairness/others_load.py): the scheduler's count of real
processes made to share one processor, and the stretch of two readings."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from autograder.fairness.others_load import thread_times, waiting_stretch

COUNTED = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/schedstat").exists()


@pytest.mark.skipif(not COUNTED, reason="this kernel keeps no scheduler count per thread")
def test_two_busy_processes_on_one_processor_each_wait_about_as_long_as_they_run():
    core = min(os.sched_getaffinity(0))
    busy = f"import os\nos.sched_setaffinity(0, {{{core}}})\nprint('pinned', flush=True)\nwhile True: pass"
    children = [subprocess.Popen([sys.executable, "-c", busy], stdout=subprocess.PIPE, text=True) for _ in range(2)]
    try:
        for child in children:
            assert child.stdout is not None and child.stdout.readline().strip() == "pinned"
        processes = [psutil.Process(child.pid) for child in children]
        before, started = thread_times(processes), time.monotonic()
        time.sleep(1.0)
        after, elapsed = thread_times(processes), time.monotonic() - started
    finally:
        for child in children:
            child.kill()
            child.wait()
    stretch = waiting_stretch(before, after, elapsed)
    assert stretch is not None and stretch >= 1.6, stretch  # 2 alone on that processor; more with others


def test_the_stretch_counts_new_threads_from_zero_and_loses_gone_ones():
    before = {(1, 1): (1.0, 0.0), (1, 2): (5.0, 5.0)}  # thread 2 ends before the second reading
    after = {(1, 1): (2.0, 1.0), (1, 3): (1.0, 1.0)}  # thread 3 started since
    assert waiting_stretch(before, after, 2.0) == pytest.approx(2.0)  # threads 1 and 3 each waited half the time


def test_the_stretch_is_the_most_held_back_of_the_threads_that_carried_the_work():
    straggler = {(1, 1): (1.0, 1.0), (1, 2): (1.0, 0.0)}  # the other slept at each barrier, waiting for it
    assert waiting_stretch({}, straggler, 2.0) == pytest.approx(2.0)
    woke_once = {(1, 1): (1.0, 0.1), (1, 2): (0.01, 1.0)}  # a thread that barely ran slowed nothing
    assert waiting_stretch({}, woke_once, 1.1) == pytest.approx(1.1)


def test_a_thread_that_slept_is_stretched_by_what_it_waited_not_by_its_sleep():
    slept = {(1, 1): (0.01, 0.02)}  # 3 s of a cell that sleeps: it ran and waited a moment
    assert waiting_stretch({}, slept, 3.0) == pytest.approx(3.0 / 2.98)


def test_no_stretch_without_a_reading_or_a_thread_that_ran():
    assert waiting_stretch(None, {(1, 1): (1.0, 1.0)}, 2.0) is None
    assert waiting_stretch({(1, 1): (1.0, 1.0)}, None, 2.0) is None
    assert waiting_stretch({(1, 1): (1.0, 1.0)}, {(1, 1): (1.0, 3.0)}, 2.0) is None
    assert waiting_stretch({}, {(1, 1): (1.0, 1.0)}, 0.0) is None


def test_a_gone_process_has_no_threads_to_read():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    process = psutil.Process(child.pid)
    child.wait()
    assert thread_times([process]) is None
