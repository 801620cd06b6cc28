"""A timed turn holds one core, its process's turn core, and times there: its kernel and its grader are
moved onto it while it holds the turn and back after. The other work of a process that may run on several
cores (a kernel's cells, its start, a grader's checks) goes at once onto the cores no turn holds, moved
there; it waits only where its kernel cannot be moved, or where no core is free."""

import asyncio
import fcntl
import multiprocessing
import os
import subprocess
import sys
import time

import pytest

from autograder.fairness import cell_turns, timed_turns
from autograder.fairness.cell_turns import CellTurn
from autograder.fairness.core_pinning import CoreLock, home_cores, placement, process_cores, turn_core
from autograder.fairness.timed_turns import TURN, Ticket, TimedTurn, free_cores

pytestmark = pytest.mark.skipif(len(process_cores()) < 2, reason="needs a process that may run on two cores")


@pytest.fixture(autouse=True)
def own_turns(monkeypatch, tmp_path):
    monkeypatch.setenv(timed_turns.DIRECTORY_VARIABLE, str(tmp_path / "turns"))
    monkeypatch.setattr(timed_turns, "MAX_WAIT", 30.0)
    monkeypatch.setattr(cell_turns, "MAX_WAIT", 30.0)
    home = os.sched_getaffinity(0)
    yield
    os.sched_setaffinity(0, home)


@pytest.fixture
def kernel():
    """A plain child process standing for a kernel."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield child
    child.kill()
    child.wait(10)


def _hold_the_turn(directory, ready):
    os.environ[timed_turns.DIRECTORY_VARIABLE] = directory
    asyncio.run(TimedTurn(owner=9).acquire("t5"))
    ready.set()
    time.sleep(600)


@pytest.fixture
def another_grading_s_turn(tmp_path):
    """Another unpinned grading process holding its timed turn."""
    context = multiprocessing.get_context("spawn")
    ready = context.Event()
    holder = context.Process(target=_hold_the_turn, args=(str(tmp_path / "turns"), ready), daemon=True)
    holder.start()
    assert ready.wait(60)
    yield holder
    holder.kill()
    holder.join(10)


def _taken_elsewhere(name: str, core: int) -> bool:
    lock = CoreLock(timed_turns.turns_directory(), name, (core,))
    try:
        return not lock.take(fcntl.LOCK_SH)
    finally:
        lock.close()


def test_an_unpinned_grading_s_turn_holds_only_its_turn_core(another_grading_s_turn):
    first = turn_core()
    others = [core for core in process_cores() if core != first]
    assert first == min(process_cores())
    assert _taken_elsewhere("gate", first) and _taken_elsewhere("cells", first)
    assert not any(_taken_elsewhere("gate", core) or _taken_elsewhere("cells", core) for core in others)
    assert free_cores(process_cores()) == tuple(others)


def test_a_cell_passes_at_once_on_the_free_cores_with_its_kernel_moved_there_and_back_after(
    another_grading_s_turn, kernel
):
    cell, seen = CellTurn(owner=1), {}
    cell.processes = lambda: [kernel.pid]
    others = tuple(core for core in process_cores() if core != turn_core())

    async def run():
        started = time.monotonic()
        async with cell:
            seen["waited"] = time.monotonic() - started
            seen["cores"] = os.sched_getaffinity(kernel.pid)

    asyncio.run(run())
    assert seen["waited"] < 2.0 and cell.waited < 2.0
    assert seen["cores"] == set(others) and cell.moved_to == others
    another_grading_s_turn.kill()
    another_grading_s_turn.join(10)
    asyncio.run(run())  # the turn over: back on every core
    assert seen["cores"] == set(process_cores())


def test_a_kernel_that_cannot_be_moved_waits_for_the_turn_as_before(another_grading_s_turn, kernel, monkeypatch):
    monkeypatch.setattr(cell_turns, "move_processes", lambda pids, cores: False)
    cell, events = CellTurn(owner=1), []
    cell.processes = lambda: [kernel.pid]

    async def run():
        async with cell:
            events.append("cell")

    import threading

    waiting = threading.Thread(target=lambda: asyncio.run(run()), daemon=True)
    waiting.start()
    waiting.join(0.7)
    assert waiting.is_alive() and events == []
    another_grading_s_turn.kill()
    another_grading_s_turn.join(10)
    waiting.join(10)
    assert events == ["cell"] and os.sched_getaffinity(kernel.pid) == set(process_cores())
    assert cell.refused and not cell.movable()  # tried once, and a turn of it would hold every core


def test_a_pass_skips_a_core_a_turn_waits_for_in_line(kernel):
    first = turn_core()
    ticket = Ticket(timed_turns.turns_directory(), TURN, (first,))
    try:
        assert first not in free_cores(process_cores())
    finally:
        ticket.leave()
    assert free_cores(process_cores()) == process_cores()


def test_a_turn_moves_its_timed_cells_and_its_grader_s_measurement_onto_its_turn_core(kernel):
    """Only what times runs on the turn core: the kernel's timed cells, the grader while it measures. Its
    untimed cells (its capture, its later tasks) and its checks run on every core while it holds the turn."""
    home = process_cores()
    cell = CellTurn(owner=1)
    cell.processes = lambda: [kernel.pid]
    assert cell.move(home)
    turn, seen = TimedTurn(owner=1), {}
    asyncio.run(turn.acquire("t5", cell.movable))

    async def a_cell(timing):
        cell.timing = timing
        async with cell:
            seen["kernel"] = os.sched_getaffinity(kernel.pid)
            seen["grader"] = os.sched_getaffinity(0)

    asyncio.run(a_cell(True))
    assert seen == {"kernel": {home[0]}, "grader": set(home)}
    asyncio.run(a_cell(False))
    assert seen == {"kernel": set(home), "grader": set(home)}
    with cell_turns.grading_with(lambda: turn), cell_turns.measuring():
        measured_on = os.sched_getaffinity(0)
        assert home_cores() == home  # its locks and its next turn are still of every core it came with
    assert measured_on == {home[0]} and os.sched_getaffinity(0) == set(home)
    assert not _taken_elsewhere("gate", home[1])
    turn.release()
    assert os.sched_getaffinity(0) == set(home) and placement.home is None
    cell.owner = 2
    asyncio.run(a_cell(True))  # no longer part of a turn: on every core no turn holds
    assert seen == {"kernel": set(home), "grader": set(home)}


def test_a_turn_whose_kernel_cannot_be_moved_holds_every_core(kernel):
    turn = TimedTurn(owner=1)
    asyncio.run(turn.acquire("t5", lambda: False))
    try:
        assert all(_taken_elsewhere("gate", core) for core in process_cores())
        assert os.sched_getaffinity(0) == set(process_cores())  # nothing was moved
    finally:
        turn.release()


def test_another_grading_s_check_and_kernel_start_go_at_once_on_the_free_cores(another_grading_s_turn):
    home = process_cores()
    others = tuple(core for core in home if core != turn_core())
    started = time.monotonic()
    with cell_turns.checks_running():
        inside = os.sched_getaffinity(0)
        assert home_cores() == home  # its locks are still of every core it came with
    assert time.monotonic() - started < 2.0 and inside == set(others)
    assert os.sched_getaffinity(0) == set(home)  # the grader's process moved back
    assert asyncio.run(cell_turns.pass_the_gate()) == others


def test_a_hold_beyond_a_cell_on_the_free_core_widens_with_the_kernel_s_next_cell(another_grading_s_turn, kernel):
    """A lab probe's warm-up, started by a cell on the free core, goes on after it: once a later cell moves
    the kernel onto every core, the warm-up runs there too, and a turn on the turn core waits for it."""
    cell = CellTurn(owner=1)
    cell.processes = lambda: [kernel.pid]

    async def start_up():
        async with cell:
            return cell.hold_beyond()

    async def next_cell():
        async with cell:
            pass

    hold = asyncio.run(start_up())
    assert hold.held
    another_grading_s_turn.kill()
    another_grading_s_turn.join(10)
    turn_core_cells = CoreLock(timed_turns.turns_directory(), "cells", (turn_core(),))
    assert turn_core_cells.take(fcntl.LOCK_EX)  # it held the free core only
    turn_core_cells.unlock()
    asyncio.run(next_cell())
    assert cell.moved_to == process_cores()
    assert not turn_core_cells.take(fcntl.LOCK_EX)  # the warm-up holds the turn core now too
    hold.release()
    assert turn_core_cells.take(fcntl.LOCK_EX)
    turn_core_cells.close()
