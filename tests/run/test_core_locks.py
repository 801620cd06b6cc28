"""A timed turn locks the cores its grading may run on: a batch's worker pinned to a core of its own holds
up only what runs on that core, while a grading that may run anywhere holds up, and waits for, all."""

import asyncio
import fcntl
import multiprocessing
import os
import subprocess
import sys
import threading
import time

import pytest

from autograder.fairness import cell_turns, timed_turns
from autograder.fairness.cell_turns import CellTurn
from autograder.fairness.core_pinning import CoreLock, pin_process, process_cores
from autograder.fairness.timed_turns import TimedTurn

two_cores = pytest.mark.skipif(len(process_cores()) < 2, reason="needs a process that may run on two cores")


@pytest.fixture(autouse=True)
def own_turns(monkeypatch, tmp_path):
    monkeypatch.setenv(timed_turns.DIRECTORY_VARIABLE, str(tmp_path / "turns"))
    monkeypatch.setattr(timed_turns, "MAX_WAIT", 30.0)
    monkeypatch.setattr(cell_turns, "MAX_WAIT", 30.0)


def test_a_lock_takes_every_core_s_file_or_none(tmp_path):
    holder = CoreLock(tmp_path, "gate", cores=(0, 1))
    assert holder.take(fcntl.LOCK_EX)
    other_core, shared_core = CoreLock(tmp_path, "gate", cores=(2,)), CoreLock(tmp_path, "gate", cores=(2, 1))
    assert other_core.take(fcntl.LOCK_SH)
    assert not shared_core.take(fcntl.LOCK_SH)
    assert CoreLock(tmp_path, "gate", cores=(2,)).take(fcntl.LOCK_SH)  # core 2's file was let go again
    holder.close()
    assert shared_core.take(fcntl.LOCK_SH)
    for lock in (other_core, shared_core):
        lock.close()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["gate-0", "gate-1", "gate-2"]


def _hold_the_turn_on(core, directory, ready):
    os.environ[timed_turns.DIRECTORY_VARIABLE] = directory
    pin_process(core)
    asyncio.run(TimedTurn(owner=9).acquire("t5"))
    ready.set()
    time.sleep(600)


def _cell_on(cores, events, name) -> threading.Thread:
    """A kernel's cell in a thread of its own, pinned to ``cores`` (a thread's affinity is its own)."""

    async def cell():
        async with CellTurn(owner=1):
            events.append(name)

    def run():
        os.sched_setaffinity(0, cores)
        asyncio.run(cell())

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@two_cores
def test_a_turn_held_on_one_core_holds_up_that_core_and_every_unpinned_grading_but_not_another_core(tmp_path):
    first, second = process_cores()[:2]
    context = multiprocessing.get_context("spawn")
    ready = context.Event()
    holder = context.Process(target=_hold_the_turn_on, args=(first, str(tmp_path / "turns"), ready), daemon=True)
    holder.start()
    try:
        assert ready.wait(60)
        events: list[str] = []
        other_core = _cell_on({second}, events, "the other core's cell")
        other_core.join(10)
        assert events == ["the other core's cell"]
        same_core, anywhere = _cell_on({first}, events, "same core"), _cell_on(set(process_cores()), events, "any")
        time.sleep(0.5)
        assert events == ["the other core's cell"] and same_core.is_alive() and anywhere.is_alive()
    finally:
        holder.kill()
        holder.join(10)
    same_core.join(10)
    anywhere.join(10)
    assert sorted(events[1:]) == ["any", "same core"]


def _pinned_thread_and_child(core, out):
    threading.Thread(target=lambda: None).start()  # a thread started before the pinning is pinned too
    started = threading.Event()
    seen = {}

    def thread():
        started.wait(10)
        seen["thread"] = sorted(os.sched_getaffinity(0))

    later = threading.Thread(target=thread)
    later.start()
    pin_process(core)
    started.set()
    later.join(10)
    child = subprocess.run(
        [sys.executable, "-c", "import os; print(sorted(os.sched_getaffinity(0)))"], capture_output=True, text=True
    )
    out.put((seen["thread"], child.stdout.strip(), sorted(os.sched_getaffinity(0))))


@two_cores
def test_pinning_a_process_pins_its_running_threads_and_what_it_starts_later():
    core = process_cores()[1]
    context = multiprocessing.get_context("spawn")
    out = context.Queue()
    process = context.Process(target=_pinned_thread_and_child, args=(core, out))
    process.start()
    thread, child, main = out.get(timeout=60)
    process.join(10)
    assert thread == [core] and child == f"[{core}]" and main == [core]
