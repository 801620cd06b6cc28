"""The load other work puts on a timing (autograder/fairness/others_load.py): the share of the processors' time
that went to anything but the timed processes, read from /proc/stat readings of the test's own
(``readings``), so that no test depends on the real machine's load; and the CPU seconds of a real process
tree, which no load changes."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
import types

import psutil
import pytest

from autograder.facts.capture import TaskCapture
from autograder.fairness import others_load
from autograder.fairness.others_load import CpuQuota, container_cpu_quota
from autograder.run import execute
from autograder.run.execute import RunRequest
from autograder.run.plan import CaptureTask, Plan, RunCell
from autograder.run.sandbox.bubblewrap import sandbox_problem
from autograder.run.sandbox.limits import Limits


@pytest.fixture
def readings(monkeypatch):
    """Two processors; each reading of /proc/stat pops the next (busy, total) jiffies from the list."""
    queue: list[tuple[int, int] | None] = []
    monkeypatch.setattr(others_load, "process_cores", lambda: (0, 1))
    monkeypatch.setattr(others_load, "container_cpu_quota", lambda: None)
    monkeypatch.setattr(others_load, "processor_jiffies", lambda cores: queue.pop(0))
    return queue


def seconds(value: float) -> int:
    return round(value * others_load.JIFFIES_PER_SECOND)


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


def test_a_process_s_cpu_seconds_count_the_members_given_once():
    """A child that burns 0.3 s of CPU (however long that takes on this machine), then waits."""
    burn = (
        "import time\nend = time.process_time() + 0.3\nwhile time.process_time() < end: pass\n"
        "print('burnt', flush=True)\ntime.sleep(60)"
    )
    me = psutil.Process()
    before_tree = others_load.process_cpu_seconds(me, me.children(recursive=True))
    before_alone = others_load.process_cpu_seconds(me)
    child = subprocess.Popen([sys.executable, "-c", burn], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "burnt"
        tree = others_load.process_cpu_seconds(me, me.children(recursive=True))
        alone = others_load.process_cpu_seconds(me)
    finally:
        child.kill()
        child.wait()
    assert tree is not None and before_tree is not None and alone is not None and before_alone is not None
    assert tree - before_tree >= 0.25
    assert alone - before_alone < 0.25  # the child is not this process's own, nor reaped yet
    once, again = others_load.process_cpu_seconds(me), others_load.process_cpu_seconds(me, [me])
    assert once is not None and again is not None and once > 0.2 and again - once < 0.1  # the root counted once


def test_a_gone_process_has_no_cpu_seconds():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    process = psutil.Process(child.pid)
    child.wait()
    time.sleep(0.05)
    assert others_load.process_cpu_seconds(process, [psutil.Process()]) is None
    assert others_load.process_cpu_seconds(None) is None


@pytest.mark.skipif(sandbox_problem() is not None, reason=f"no sandbox here: {sandbox_problem()}")
def test_a_timed_cell_reads_the_load_with_the_sandboxed_kernel_s_own_work_as_its_own(monkeypatch):
    """In the real sandboxed kernel: a timed cell whose process, set loose (forked twice, its parent gone),
    burns 0.3 s of CPU is read with that time as the kernel's own (so never as others'), whichever level
    the sandbox has; an untimed cell is not read at all."""
    own_spent = []
    read = others_load.LoadClock.others_share

    def spied(clock):  # what a cell's clock read as the kernel's own since the cell started
        if clock._reading is not None:
            own_spent.append(clock._own_seconds() - clock._reading.own_seconds)
        return read(clock)

    monkeypatch.setattr(others_load.LoadClock, "others_share", spied)
    burn = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    if os.fork() == 0:\n"
        "        end = time.process_time() + 0.3\n"
        "        while time.process_time() < end: pass\n"
        "        open('burnt', 'w').close()\n"
        "        time.sleep(60)\n"
        "    os._exit(0)\n"
        "os.wait()\n"
        "while not os.path.exists('burnt'): time.sleep(0.01)"
    )
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


# The time a timeout gives back (LoadClock)


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _threads(ran: float, waited: float) -> dict:
    return {(1, 1): (ran, waited)}


@pytest.mark.parametrize(
    ("ran", "waited", "limit"),
    [
        (1.0, 1.0, 20.0),  # others took half and the kernel's thread waited half the time: twice
        (2.0, 0.0, 10.0),  # others took half, but a processor was free for it: nothing back
        (0.2, 1.8, 20.0),  # it waited 9 tenths of the time, but others took only half: twice
    ],
)
def test_a_limit_gives_back_the_time_others_took_from_the_kernel_s_threads(readings, ran, waited, limit):
    clock, threads = Clock(), [_threads(0.0, 0.0)]
    readings += [(0, 0), (seconds(2.0 + ran), seconds(4.0))]  # others: 2 of 4 processor-seconds
    load = others_load.LoadClock(lambda: threads[0][(1, 1)][0], clock, lambda: threads[0])
    clock.now, threads[0] = 2.0, _threads(ran, waited)
    assert load.limit_now(10.0) == pytest.approx(limit)


def test_threads_that_waited_for_each_other_on_an_idle_machine_get_nothing_back(readings):
    clock, threads = Clock(), [_threads(0.0, 0.0)]
    readings += [(0, 0), (seconds(2.0), seconds(2.0))]  # the kernel's own work filled both processors
    load = others_load.LoadClock(lambda: 2.0 * clock.now, clock, lambda: threads[0])
    clock.now, threads[0] = 1.0, _threads(0.25, 0.75)
    assert load.limit_now(10.0) == 10.0


def test_without_the_threads_count_a_limit_is_the_wall_clock(readings):
    clock = Clock()
    readings += [(0, 0), (seconds(1.5), seconds(2.0))]
    load = others_load.LoadClock(lambda: 0.5 * clock.now, clock, lambda: None)
    clock.now = 1.0
    assert load.limit_now(10.0) == 10.0


def test_without_a_reading_a_limit_is_the_wall_clock(readings):
    clock = Clock()
    readings += [None]
    load = others_load.LoadClock(lambda: 0.0, clock)
    clock.now = 4.0
    assert load.limit_now(10.0) == 10.0 and load.remaining(10.0) == 6.0


@pytest.mark.skipif(sandbox_problem() is not None, reason=f"no sandbox here: {sandbox_problem()}")
@pytest.mark.skipif(container_cpu_quota() is not None, reason="under a quota nothing is given back")
@pytest.mark.parametrize("share", [0.9, 0.0])
def test_a_cell_past_its_timeout_gets_back_the_time_others_took_if_its_threads_waited(monkeypatch, share):
    """In the real sandboxed kernel, with a one-second cell timeout, others' share read as ``share`` and the
    threads that ran read as having waited nine times as long: a cell that burns 1.5 s of CPU (it cannot
    end within 1 s) ends when others took 90 % (ten times the time), and is interrupted when they took
    nothing; a cell that sleeps (its threads neither run nor wait) is interrupted either way."""
    monkeypatch.setattr(others_load, "others_share", lambda reading, own_seconds: share)
    real = others_load.waiting_stretch

    def crowded(before, after, elapsed):  # threads that ran half a second or more are read as 10 times slowed
        ran = sum(max(0.0, now[0] - (before or {}).get(thread, (0.0, 0.0))[0]) for thread, now in (after or {}).items())
        return 10.0 if ran >= 0.5 else real(before, after, elapsed)

    monkeypatch.setattr(others_load, "waiting_stretch", crowded)
    burn = "import time\nend = time.process_time() + 1.5\nwhile time.process_time() < end: pass\nburnt = True"
    plan = Plan(
        (
            RunCell(burn, "student", "t1", 1, "cell 1"),
            CaptureTask("t1"),
            RunCell("import time\ntime.sleep(3)", "student", "t2", 2, "cell 2"),
            CaptureTask("t2"),
        ),
        (),
    )
    captures = {"t1": TaskCapture("t1", names=("burnt",)), "t2": TaskCapture("t2")}
    run = execute.execute_plan(RunRequest(plan, captures, Limits(cell_timeout=1, total_timeout=120), seed=1))
    burnt, slept = run.cells
    if share:
        assert burnt.status == "ok" and run.facts["t1"].get("burnt").value is True, burnt.error
    else:
        assert (
            burnt.status == "timeout"
            and burnt.error == "CellTimeoutError: the cell ran longer than 1 s and was interrupted"
        )
    assert slept.status == "timeout", slept


class _HungryRun:
    """A run whose execution takes 1 s, its kernel busy on both processors all the while, its busiest
    thread waiting to run 9 tenths of the time."""

    def __init__(self):
        started = time.monotonic()
        self.waited = 0.0
        busy = lambda: 2 * (time.monotonic() - started)  # noqa: E731
        threads = lambda: {(1, 1): (busy() / 20, 0.9 * busy() / 2)}  # noqa: E731
        self.km = types.SimpleNamespace(cpu_seconds=busy, thread_times=threads)

    async def run_steps(self):
        await asyncio.sleep(1.0)


@pytest.mark.skipif(container_cpu_quota() is not None, reason="under a quota nothing is given back")
@pytest.mark.parametrize("share", [0.9, 0.0])
def test_the_notebook_deadline_gives_back_the_time_others_took(monkeypatch, share):
    monkeypatch.setattr(others_load, "others_share", lambda reading, own_seconds: share)
    monkeypatch.setattr(others_load, "process_cores", lambda: (0, 1))
    monkeypatch.setattr(others_load, "processor_jiffies", lambda cores: (0, 0))
    if share:
        assert asyncio.run(execute._within_deadline(_HungryRun(), 0.2)) is None
    else:
        with pytest.raises(asyncio.TimeoutError):
            asyncio.run(execute._within_deadline(_HungryRun(), 0.2))
