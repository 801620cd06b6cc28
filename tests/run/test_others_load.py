"""The load other work puts on a timing (autograder/run/others_load.py): the share of the processors' time
that went to anything but the timed processes, read from /proc/stat readings of the test's own
(``readings``), so that no test depends on the real machine's load; and the CPU seconds of a real process
tree, which no load changes."""

from __future__ import annotations

import subprocess
import sys
import time

import psutil
import pytest

from autograder.facts.capture import TaskCapture
from autograder.run import execute, others_load
from autograder.run.cpu_quota import CpuQuota, container_cpu_quota
from autograder.run.limits import Limits
from autograder.run.plan import CaptureTask, Plan, RunCell
from autograder.run.processor_times import JIFFIES_PER_SECOND
from autograder.run.run_request import RunRequest
from autograder.run.sandbox import sandbox_problem


@pytest.fixture
def readings(monkeypatch):
    """Two processors; each reading of /proc/stat pops the next (busy, total) jiffies from the list."""
    queue: list[tuple[int, int] | None] = []
    monkeypatch.setattr(others_load, "process_cores", lambda: (0, 1))
    monkeypatch.setattr(others_load, "container_cpu_quota", lambda: None)
    monkeypatch.setattr(others_load, "processor_jiffies", lambda cores: queue.pop(0))
    return queue


def seconds(value: float) -> int:
    return round(value * JIFFIES_PER_SECOND)


def test_the_timed_processes_own_work_is_not_others(readings):
    """One second on two processors: 1.5 s busy, 0.5 s of it the timed processes': others took a half."""
    readings += [(0, 0), (seconds(1.5), seconds(2.0))]
    own = iter([10.0, 10.5])
    reading = others_load.start_reading(lambda: next(own))
    assert others_load.others_share(reading, lambda: next(own)) == pytest.approx(0.5)


def test_a_timing_alone_on_the_machine_reads_no_others(readings):
    readings += [(0, 0), (seconds(1.8), seconds(2.0))]
    own = iter([3.0, 4.8])
    reading = others_load.start_reading(lambda: next(own))
    assert others_load.others_share(reading, lambda: next(own)) == pytest.approx(0.0)


def test_a_share_stays_between_none_and_all(readings):
    """Jiffies and a process's CPU seconds are counted apart: a reading may overshoot either way."""
    readings += [(0, 0), (seconds(0.5), seconds(2.0)), (0, 0), (seconds(2.0), seconds(2.0))]
    own = iter([0.0, 0.9, 0.0, -1.0])
    assert others_load.others_share(others_load.start_reading(lambda: next(own)), lambda: next(own)) == 0.0
    assert others_load.others_share(others_load.start_reading(lambda: next(own)), lambda: next(own)) == 1.0


def test_nothing_is_read_without_proc_stat_a_process_or_a_jiffy(readings):
    readings += [None]
    assert others_load.start_reading(lambda: 1.0) is None
    readings += [(0, 0)]
    assert others_load.start_reading(lambda: None) is None  # the timed process is gone
    readings += [(5, 10), (5, 10)]
    reading = others_load.start_reading(lambda: 1.0)
    assert others_load.others_share(reading, lambda: 1.0) is None  # no time passed on the processors' count
    assert others_load.others_share(None, lambda: 1.0) is None


def test_under_a_cpu_quota_nothing_is_read(readings, monkeypatch):
    """The quota bounds the kernel, whatever the host's other tenants do: the host's load says nothing."""
    monkeypatch.setattr(others_load, "container_cpu_quota", lambda: CpuQuota(0.5, 0.1))
    readings += [(0, 0)]
    assert others_load.start_reading(lambda: 1.0) is None


@pytest.mark.parametrize(
    ("share", "expected"), [(None, 1.0), (0.0, 1.0), (0.5, 2.0), (0.75, 4.0), (0.95, 10.0), (1.0, 10.0)]
)
def test_the_stretch_of_a_share_is_bounded(share, expected):
    assert others_load.stretch(share) == pytest.approx(expected)


def test_a_process_tree_s_cpu_seconds_count_its_living_descendants():
    """A child that burns 0.3 s of CPU (however long that takes on this machine), then waits."""
    burn = (
        "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\n"
        "print('burnt', flush=True)\ntime.sleep(60)"
    )
    me = psutil.Process()
    before_tree = others_load.process_cpu_seconds(me, with_descendants=True)
    before_alone = others_load.process_cpu_seconds(me, with_descendants=False)
    child = subprocess.Popen([sys.executable, "-c", burn], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "burnt"
        tree = others_load.process_cpu_seconds(me, with_descendants=True)
        alone = others_load.process_cpu_seconds(me, with_descendants=False)
    finally:
        child.kill()
        child.wait()
    assert tree is not None and before_tree is not None and alone is not None and before_alone is not None
    assert tree - before_tree >= 0.25
    assert alone - before_alone < 0.25  # the child is not this process's own, nor reaped yet


def test_a_gone_process_has_no_cpu_seconds():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    process = psutil.Process(child.pid)
    child.wait()
    time.sleep(0.05)
    assert others_load.process_cpu_seconds(process, with_descendants=True) is None
    assert others_load.process_cpu_seconds(process, with_descendants=False) is None
    assert others_load.process_cpu_seconds(None, with_descendants=False) is None


@pytest.mark.skipif(sandbox_problem() is not None, reason=f"no sandbox here: {sandbox_problem()}")
def test_a_timed_cell_reads_the_load_with_the_sandboxed_kernel_s_own_work_as_its_own(monkeypatch):
    """In the real sandboxed kernel: a timed cell that burns 0.3 s of CPU is read with that time as the
    kernel's own (so never as others'); an untimed cell is not read at all."""
    own_spent = []

    def spied(reading, own_seconds):
        if reading is not None:
            own_spent.append(own_seconds() - reading.own_seconds)
        return others_load.others_share(reading, own_seconds)

    monkeypatch.setattr(execute, "others_share", spied)
    burn = "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass"
    plan = Plan(
        (
            RunCell("x = 1", "student", "t1", 1, "cell 1"),
            CaptureTask("t1"),
            RunCell(burn, "student", "t2", 2, "cell 2"),
            CaptureTask("t2"),
        ),
        (),
    )
    captures = {"t1": TaskCapture("t1"), "t2": TaskCapture("t2", times_code=True)}
    run = execute.execute_plan(RunRequest(plan, captures, Limits(cell_timeout=60, total_timeout=300), seed=1))
    assert run.status == "completed", run.reason
    untimed, timed = run.cells
    assert untimed.others_share is None
    if container_cpu_quota() is None:  # under a quota nothing is read
        assert timed.others_share is not None and 0.0 <= timed.others_share <= 1.0
        assert len(own_spent) == 1 and own_spent[0] >= 0.25, own_spent
