"""Timing starts on a quiet machine (autograder/fairness/others_load.py): a reading of /proc/stat that shows
idle processors lets it start at once, a busy one makes it wait (bounded), an unreadable one waits not;
the processors read are those the grading may run on. The processors and the clock are the test's own
(``FakeMachine``), so that no test depends on the real machine's load."""

from __future__ import annotations

import asyncio
import threading
import types

import pytest

from autograder.fairness import others_load
from autograder.fairness.others_load import CpuQuota


class FakeMachine:
    """Two processors on a clock of the test's own, read as /proc/stat would read them: each is busy
    ``busy[core]`` of the time, a change (``at``) taking effect when the clock reaches it. The waits advance
    the clock, so what is measured does not depend on how busy the real machine is."""

    def __init__(self):
        self.now, self.busy, self.changes = 0.0, [0.0, 0.0], []
        self.jiffies = [[0.0, 0.0], [0.0, 0.0]]  # per processor: busy, total (a jiffy is 10 ms)
        self.lock = threading.Lock()

    def at(self, when: float, core: int, busy: float) -> None:
        self.changes.append((when, core, busy))

    def sleep(self, seconds: float) -> None:
        with self.lock:
            end = self.now + seconds
            while self.now < end - 1e-9:
                step = min(0.01, end - self.now)
                for when, core, busy in [c for c in self.changes if c[0] <= self.now]:
                    self.busy[core] = busy
                    self.changes.remove((when, core, busy))
                for core in (0, 1):
                    self.jiffies[core][0] += 100 * step * self.busy[core]
                    self.jiffies[core][1] += 100 * step
                self.now += step

    def monotonic(self) -> float:
        return self.now

    def cpu_times(self, cores: tuple[int, ...]) -> tuple[int, int]:
        with self.lock:
            return (
                int(sum(self.jiffies[core][0] for core in cores) + 1e-6),
                int(sum(self.jiffies[core][1] for core in cores) + 1e-6),
            )


@pytest.fixture
def stat(monkeypatch):
    fake = FakeMachine()
    monkeypatch.setattr(others_load, "time", types.SimpleNamespace(sleep=fake.sleep, monotonic=fake.monotonic))
    monkeypatch.setattr(others_load, "processor_jiffies", fake.cpu_times)
    monkeypatch.setattr(others_load, "MAX_WAIT", 1.0)
    monkeypatch.setattr(others_load, "_busy_until", float("-inf"))
    monkeypatch.setattr(others_load, "process_cores", lambda: (0, 1))
    monkeypatch.setattr(others_load, "container_cpu_quota", lambda: None)
    return fake


def test_an_idle_machine_is_quiet_after_a_first_glance(stat):
    assert others_load.wait_until_machine_quiet("t4") == pytest.approx(others_load.FIRST_GLANCE)


def _scripted(monkeypatch, readings: list[tuple[int, int]]) -> list[float]:
    """/proc/stat's (busy, total) ticks read one after another from ``readings``; the sleeps, recorded."""
    sleeps: list[float] = []
    monkeypatch.setattr(others_load, "_busy_until", float("-inf"))
    monkeypatch.setattr(others_load, "processor_jiffies", lambda cores: readings.pop(0))
    monkeypatch.setattr(others_load, "time", types.SimpleNamespace(sleep=sleeps.append, monotonic=lambda: 0.0))
    monkeypatch.setattr(others_load, "process_cores", lambda: (0,))
    monkeypatch.setattr(others_load, "container_cpu_quota", lambda: None)
    return sleeps


def test_one_busy_tick_at_the_first_glance_waits_for_the_whole_window(monkeypatch):
    """Not one busy tick: quiet at once. One: the rest of the window decides (one tick in ten is under
    ``BUSY_CPUS``), and a busy window is followed by another."""
    first, window, rest = (
        others_load.FIRST_GLANCE,
        others_load.WINDOW,
        others_load.WINDOW - others_load.FIRST_GLANCE,
    )
    sleeps = _scripted(monkeypatch, [(50, 100), (50, 103)])
    others_load.wait_until_machine_quiet("t4")
    assert sleeps == [first]
    sleeps = _scripted(monkeypatch, [(50, 100), (51, 103), (51, 110)])
    others_load.wait_until_machine_quiet("t4")
    assert sleeps == [first, rest]
    sleeps = _scripted(monkeypatch, [(50, 100), (53, 103), (60, 110), (61, 120)])
    others_load.wait_until_machine_quiet("t4")
    assert sleeps == [first, rest, window]


def test_a_busy_machine_is_waited_for_until_it_is_quiet_or_the_wait_is_over(stat, monkeypatch):
    stat.busy[0] = 1.0  # one of the two processors
    waited = others_load.wait_until_machine_quiet("t4")
    assert 1.0 <= waited < 1.0 + others_load.WINDOW + 1e-6  # it stayed busy: timing goes on after MAX_WAIT
    monkeypatch.setattr(others_load, "_busy_until", float("-inf"))  # a machine not yet found busy
    stat.at(stat.now + 0.5, 0, 0.0)
    waited = asyncio.run(others_load.until_machine_quiet("t4"))
    assert 0.5 <= waited <= 0.5 + 2 * others_load.WINDOW + 1e-6


def test_a_machine_busy_through_a_whole_wait_is_looked_at_once_for_a_while(stat):
    """A shared host stays busy: the waits after one that ran out look for one window only, until
    ``STILL_BUSY`` has passed; a machine that became quiet meanwhile is found quiet at the first glance."""
    stat.busy[0] = 1.0
    assert others_load.wait_until_machine_quiet("t4 cell 1") >= 1.0
    for cell in (2, 3):
        waited = others_load.wait_until_machine_quiet(f"t4 cell {cell}")
        assert others_load.WINDOW <= waited < 2 * others_load.WINDOW + 1e-6
    stat.sleep(others_load.STILL_BUSY)
    assert others_load.wait_until_machine_quiet("the grader's measurement") >= 1.0  # a while later: waited again
    stat.busy[0] = 0.0
    stat.sleep(0.2)
    assert others_load.wait_until_machine_quiet("t5") == pytest.approx(others_load.FIRST_GLANCE)


def test_an_unreadable_proc_stat_waits_not(tmp_path, monkeypatch):
    sleeps: list[float] = []
    monkeypatch.setattr(others_load, "PROC_STAT", tmp_path / "missing")
    monkeypatch.setattr(others_load, "time", types.SimpleNamespace(sleep=sleeps.append, monotonic=lambda: 0.0))
    assert others_load.wait_until_machine_quiet("t4") == 0.0 and sleeps == []


def test_a_grading_pinned_to_one_core_waits_for_that_core_alone(stat, monkeypatch):
    """A batch's worker pinned to a core of its own: the other workers' busy cores are not its to wait for."""
    monkeypatch.setattr(others_load, "process_cores", lambda: (1,))
    stat.busy[0] = 1.0
    assert others_load.wait_until_machine_quiet("t4") == pytest.approx(others_load.FIRST_GLANCE)
    stat.busy[1] = 1.0
    assert others_load.wait_until_machine_quiet("t4") >= 1.0


def test_under_a_cpu_quota_the_whole_window_is_waited(monkeypatch):
    """Half a CPU (Gradescope's container): a first glance with not one busy tick does not end the wait;
    the window spans the scheduler's period, so the timing starts on a new period's quota."""
    sleeps = _scripted(monkeypatch, [(50, 100), (50, 110)])
    monkeypatch.setattr(others_load, "container_cpu_quota", lambda: CpuQuota(0.5, 0.1))
    others_load.wait_until_machine_quiet("t4")
    assert sleeps == [others_load.WINDOW]
