"""Timing starts on a quiet machine (autograder/run/machine_quiet.py): a reading of /proc/stat that shows
idle processors lets it start at once, a busy one makes it wait (bounded), an unreadable one waits not."""

from __future__ import annotations

import asyncio
import os
import threading
import time

import pytest

from autograder.run import machine_quiet


class FakeStat:
    """A /proc/stat whose processors are busy (``busy`` of each tick) or idle, its counters advancing."""

    def __init__(self, path):
        self.path, self.busy, self.ticks, self.stop = path, 0.0, 0, threading.Event()
        self.user = self.idle = 0
        self.write()
        threading.Thread(target=self.run, daemon=True).start()

    def write(self):  # whole at once, as the kernel serves the real one
        temporary = self.path.with_suffix(".new")
        temporary.write_text(f"cpu  {self.user} 0 0 {self.idle} 0 0 0 0 0 0\ncpu0 0 0 0 0 0 0 0 0 0 0\n")
        os.replace(temporary, self.path)

    def run(self):
        while not self.stop.is_set():
            busy = int(100 * self.busy)
            self.user, self.idle = self.user + busy, self.idle + 100 - busy
            self.write()
            time.sleep(0.02)


@pytest.fixture
def stat(tmp_path, monkeypatch):
    fake = FakeStat(tmp_path / "stat")
    monkeypatch.setattr(machine_quiet, "PROC_STAT", fake.path)
    monkeypatch.setattr(machine_quiet, "MAX_WAIT", 1.0)
    monkeypatch.setattr(machine_quiet.os, "cpu_count", lambda: 2)
    yield fake
    fake.stop.set()


def test_an_idle_machine_is_quiet_after_one_window(stat):
    assert machine_quiet.WINDOW <= machine_quiet.wait_until_machine_quiet("t4") < 0.6


def test_a_busy_machine_is_waited_for_until_it_is_quiet_or_the_wait_is_over(stat):
    stat.busy = 0.5  # one of the two processors
    assert machine_quiet.wait_until_machine_quiet("t4") >= 1.0  # it stayed busy: timing goes on after MAX_WAIT
    threading.Timer(0.5, lambda: setattr(stat, "busy", 0.0)).start()
    waited = asyncio.run(machine_quiet.until_machine_quiet("t4"))
    assert 0.5 <= waited < 1.0 + 3 * machine_quiet.WINDOW


def test_an_unreadable_proc_stat_waits_not(tmp_path, monkeypatch):
    monkeypatch.setattr(machine_quiet, "PROC_STAT", tmp_path / "missing")
    assert machine_quiet.wait_until_machine_quiet("t4") < 0.1
