"""Timing starts on a quiet machine (autograder/run/machine_quiet.py): a reading of /proc/stat that shows
idle processors lets it start at once, a busy one makes it wait (bounded), an unreadable one waits not;
the processors read are those the grading may run on."""

from __future__ import annotations

import asyncio
import os
import threading
import time

import pytest

from autograder.run import machine_quiet
from autograder.run.cpu_quota import CpuQuota


class FakeStat:
    """A /proc/stat of two processors, each busy (``busy[core]`` of each tick) or idle, its counters
    advancing."""

    def __init__(self, path):
        self.path, self.busy, self.stop = path, [0.0, 0.0], threading.Event()
        self.user, self.idle = [0, 0], [0, 0]
        self.write()
        threading.Thread(target=self.run, daemon=True).start()

    def write(self):  # whole at once, as the kernel serves the real one
        lines = [f"cpu  {sum(self.user)} 0 0 {sum(self.idle)} 0 0 0 0 0 0"]
        lines += [f"cpu{core} {self.user[core]} 0 0 {self.idle[core]} 0 0 0 0 0 0" for core in (0, 1)]
        temporary = self.path.with_suffix(".new")
        temporary.write_text("\n".join(lines) + "\nintr 0\n")
        os.replace(temporary, self.path)

    def run(self):
        while not self.stop.is_set():
            for core in (0, 1):
                busy = int(100 * self.busy[core])
                self.user[core], self.idle[core] = self.user[core] + busy, self.idle[core] + 100 - busy
            self.write()
            time.sleep(0.02)


@pytest.fixture
def stat(tmp_path, monkeypatch):
    fake = FakeStat(tmp_path / "stat")
    monkeypatch.setattr(machine_quiet, "PROC_STAT", fake.path)
    monkeypatch.setattr(machine_quiet, "MAX_WAIT", 1.0)
    monkeypatch.setattr(machine_quiet, "process_cores", lambda: (0, 1))
    yield fake
    fake.stop.set()


def test_an_idle_machine_is_quiet_after_a_first_glance(stat):
    assert machine_quiet.FIRST_GLANCE <= machine_quiet.wait_until_machine_quiet("t4") < 0.6


def _scripted(monkeypatch, readings: list[tuple[int, int]]) -> list[float]:
    """/proc/stat's (busy, total) ticks read one after another from ``readings``; the sleeps, recorded."""
    sleeps: list[float] = []
    monkeypatch.setattr(machine_quiet, "_cpu_times", lambda cores: readings.pop(0))
    monkeypatch.setattr(machine_quiet.time, "sleep", sleeps.append)
    monkeypatch.setattr(machine_quiet, "process_cores", lambda: (0,))
    monkeypatch.setattr(machine_quiet, "container_cpu_quota", lambda: None)
    return sleeps


def test_one_busy_tick_at_the_first_glance_waits_for_the_whole_window(monkeypatch):
    """Not one busy tick: quiet at once. One: the rest of the window decides (one tick in ten is under
    ``BUSY_CPUS``), and a busy window is followed by another."""
    first, window, rest = (
        machine_quiet.FIRST_GLANCE,
        machine_quiet.WINDOW,
        machine_quiet.WINDOW - machine_quiet.FIRST_GLANCE,
    )
    sleeps = _scripted(monkeypatch, [(50, 100), (50, 103)])
    machine_quiet.wait_until_machine_quiet("t4")
    assert sleeps == [first]
    sleeps = _scripted(monkeypatch, [(50, 100), (51, 103), (51, 110)])
    machine_quiet.wait_until_machine_quiet("t4")
    assert sleeps == [first, rest]
    sleeps = _scripted(monkeypatch, [(50, 100), (53, 103), (60, 110), (61, 120)])
    machine_quiet.wait_until_machine_quiet("t4")
    assert sleeps == [first, rest, window]


def test_a_busy_machine_is_waited_for_until_it_is_quiet_or_the_wait_is_over(stat):
    stat.busy[0] = 1.0  # one of the two processors
    assert machine_quiet.wait_until_machine_quiet("t4") >= 1.0  # it stayed busy: timing goes on after MAX_WAIT
    threading.Timer(0.5, lambda: stat.busy.__setitem__(0, 0.0)).start()
    waited = asyncio.run(machine_quiet.until_machine_quiet("t4"))
    assert 0.5 <= waited < 1.0 + 3 * machine_quiet.WINDOW


def test_an_unreadable_proc_stat_waits_not(tmp_path, monkeypatch):
    monkeypatch.setattr(machine_quiet, "PROC_STAT", tmp_path / "missing")
    assert machine_quiet.wait_until_machine_quiet("t4") < 0.1


def test_a_grading_pinned_to_one_core_waits_for_that_core_alone(stat, monkeypatch):
    """A batch's worker pinned to a core of its own: the other workers' busy cores are not its to wait for."""
    monkeypatch.setattr(machine_quiet, "process_cores", lambda: (1,))
    stat.busy[0] = 1.0
    assert machine_quiet.wait_until_machine_quiet("t4") < 0.6
    stat.busy[1] = 1.0
    assert machine_quiet.wait_until_machine_quiet("t4") >= 1.0


def test_under_a_cpu_quota_the_whole_window_is_waited(monkeypatch):
    """Half a CPU (Gradescope's container): a first glance with not one busy tick does not end the wait;
    the window spans the scheduler's period, so the timing starts on a new period's quota."""
    sleeps = _scripted(monkeypatch, [(50, 100), (50, 110)])
    monkeypatch.setattr(machine_quiet, "container_cpu_quota", lambda: CpuQuota(0.5, 0.1))
    machine_quiet.wait_until_machine_quiet("t4")
    assert sleeps == [machine_quiet.WINDOW]
