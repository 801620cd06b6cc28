"""Waits at the machine's gate are served in the order they began (fairness/timed_turns.py): a timed turn
lets every earlier waiter go first, a pass (a cell, a check, a kernel's start) every earlier turn, and passes
go together; a dead process's ticket holds no one up; a waiter notes whose turn it waited behind."""

import fcntl
import multiprocessing
import threading
import time

import pytest

from autograder.fairness import timed_turns
from autograder.fairness.core_pinning import CoreLock
from autograder.fairness.timed_turns import (
    PASS,
    TURN,
    WAITED_BEHIND,
    Ticket,
    hold_the_turn_as,
    in_line,
    step_through_here,
    waiting_before,
)

CORES = (0, 1)
POLL = 0.01


@pytest.fixture
def turns(tmp_path):
    return tmp_path


def gate(directory) -> CoreLock:
    return CoreLock(directory, "gate", CORES)


def waiter(directory, kind, order, name, hold=0.2, poll=POLL):
    """A thread that waits in line for the gate (exclusive for a turn, shared for a pass), notes when it got
    through, holds it ``hold`` seconds, and lets go; it returns once the thread is in line. A later waiter
    polls faster: without the line, it would get through first."""
    line = directory / timed_turns.LINE
    in_line_before = len(list(line.glob("0*"))) if line.exists() else 0
    lock = gate(directory)
    operation = fcntl.LOCK_EX if kind == TURN else fcntl.LOCK_SH

    def run():
        steps = in_line(lock, operation, kind, time.monotonic() + 20)
        while True:
            try:
                next(steps)
            except StopIteration as through:
                assert through.value is True
                break
            time.sleep(poll)
        order.append(name)
        time.sleep(hold)
        lock.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while len(list((directory / timed_turns.LINE).glob("0*"))) <= in_line_before and time.monotonic() < deadline:
        time.sleep(0.005)
    return thread


def held_gate(directory) -> CoreLock:
    holder = gate(directory)
    assert holder.take(fcntl.LOCK_EX)
    return holder


def test_turns_are_taken_in_the_order_their_waits_began(turns):
    holder, order = held_gate(turns), []
    first = waiter(turns, TURN, order, "first", poll=0.05)
    second = waiter(turns, TURN, order, "second", poll=0.001)
    holder.close()
    first.join(10)
    second.join(10)
    assert order == ["first", "second"]


def test_a_pass_that_began_first_goes_before_a_turn_and_one_that_began_after_waits_for_it(turns):
    holder, order = held_gate(turns), []
    early = waiter(turns, PASS, order, "early pass", hold=0.0, poll=0.05)
    turn = waiter(turns, TURN, order, "turn", hold=0.5, poll=0.02)
    late = waiter(turns, PASS, order, "late pass", hold=0.0, poll=0.001)
    holder.close()
    for thread in (early, turn, late):
        thread.join(10)
    assert order == ["early pass", "turn", "late pass"]


def test_passes_do_not_wait_for_one_another_nor_for_cores_they_do_not_share(turns):
    waiting = Ticket(turns, PASS, CORES)
    other_cores = Ticket(turns, TURN, (5,))
    try:
        assert not waiting_before(turns, PASS, CORES)
        assert waiting_before(turns, TURN, CORES)  # a turn lets the earlier pass go first
        assert not waiting_before(turns, TURN, (3,))
        assert waiting_before(turns, PASS, (5,))
    finally:
        waiting.leave()
        other_cores.leave()
    assert not waiting_before(turns, TURN, CORES)


def _take_a_ticket_and_die(directory):
    Ticket(directory, TURN, CORES)
    import os

    os._exit(0)  # without leaving the line


def test_a_dead_process_s_ticket_holds_no_one_up_and_is_removed(turns):
    child = multiprocessing.get_context("spawn").Process(target=_take_a_ticket_and_die, args=(turns,))
    child.start()
    child.join(60)
    assert child.exitcode == 0
    assert len(list((turns / timed_turns.LINE).iterdir())) == 1
    assert not waiting_before(turns, PASS, CORES)
    assert list((turns / timed_turns.LINE).iterdir()) == []


def test_a_waiter_notes_how_long_it_waited_behind_another_process_s_turn_and_whose(turns):
    WAITED_BEHIND.reset()
    holder, order = held_gate(turns), []
    hold_the_turn_as(holder, "own grading: t8")  # this process's own turn: not a wait behind another
    own = waiter(turns, PASS, order, "behind its own", hold=0.0)
    time.sleep(0.1)
    holder.close()
    own.join(10)
    assert WAITED_BEHIND.record() == {"seconds": 0.0, "behind": []}
    holder = held_gate(turns)
    for core in CORES:  # as another process's taker writes it: its pid, then its label
        (turns / f"{timed_turns.HOLDER}-{core}").write_text("1 bob.ipynb: t8")
    other = waiter(turns, PASS, order, "behind bob", hold=0.0)
    time.sleep(0.3)
    holder.close()
    other.join(10)
    record = WAITED_BEHIND.record()
    assert order == ["behind its own", "behind bob"] and record["behind"] == ["bob.ipynb: t8"]
    assert 0.2 <= record["seconds"] < 10
    WAITED_BEHIND.reset()
    assert WAITED_BEHIND.record() == {"seconds": 0.0, "behind": []}


def test_a_wait_past_its_deadline_or_given_up_leaves_the_line(turns):
    holder = held_gate(turns)
    for deadline, give_up, expected in ((time.monotonic() + 0.2, lambda: False, False), (1e12, lambda: True, None)):
        assert step_through_here(in_line(gate(turns), fcntl.LOCK_EX, TURN, deadline, give_up)) is expected
        assert list((turns / timed_turns.LINE).iterdir()) == []
    holder.close()


def test_a_batch_names_its_longest_wait_and_the_turns_it_waited_behind():
    from autograder.course.batch import BatchTiming
    from autograder.grading import GradeResult, GradeStatus

    def graded(notebook, waited, behind):
        waits = {"seconds": waited, "behind": list(behind)}
        return GradeResult("lab", notebook, GradeStatus.GRADED, None, 10.0, phases={"cells": 3.0}, turn_waits=waits)

    timing = BatchTiming(workers=2)
    timing.add(graded("a.ipynb", 0.5, ("c.ipynb: t8",)), 0.0)
    timing.add(graded("b.ipynb", 4.0, ("a.ipynb: t8", "c.ipynb: t8")), 0.0)
    timing.add(graded("c.ipynb", 1.0, ()), 0.0)
    longest = timing.to_dict()["longest_wait"]
    assert longest == {"seconds": 4.0, "notebook": "b.ipynb", "behind": ["a.ipynb: t8", "c.ipynb: t8"]}
    again = GradeResult.from_dict(graded("b.ipynb", 4.0, ("a.ipynb: t8",)).to_dict())
    assert again.turn_waits == {"seconds": 4.0, "behind": ["a.ipynb: t8"]}
