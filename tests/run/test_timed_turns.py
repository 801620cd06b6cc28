"""A task that times code runs alone on its machine: while one grading holds the timed turn, other
gradings' kernels wait at their next cell, in this process or another; a dead holder frees it; waits are
not counted by any timeout; the grader's samples span several scheduler periods under a CPU quota."""

import asyncio
import multiprocessing
import threading
import time
import types

import pytest

from autograder.fairness import cell_turns, others_load, timed_turns
from autograder.fairness.cell_turns import CellTurn, grading_with, measuring
from autograder.fairness.timed_turns import TimedTurn
from autograder.run.execute import _within_deadline


@pytest.fixture(autouse=True)
def own_turns(monkeypatch, tmp_path):
    monkeypatch.setenv(timed_turns.DIRECTORY_VARIABLE, str(tmp_path / "turns"))
    monkeypatch.setattr(timed_turns, "MAX_WAIT", 30.0)
    monkeypatch.setattr(cell_turns, "MAX_WAIT", 30.0)


def cell_of(owner, events, name):
    """A kernel's code: waits for its turn, notes when it ran."""

    async def run():
        async with CellTurn(owner):
            events.append(name)

    return run


def in_thread(coroutine_function) -> threading.Thread:
    thread = threading.Thread(target=lambda: asyncio.run(coroutine_function()), daemon=True)
    thread.start()
    return thread


def test_while_a_timed_task_holds_the_turn_a_spare_kernel_waits_and_the_gradings_of_its_process_go_on():
    """Gradings of one process share its turn (one may hold the pytest session another waits for); other
    processes' kernels wait (test_a_grader_that_dies_holding_the_turn_frees_it), and so does a spare kernel."""
    turn, events = TimedTurn(owner=1), []
    asyncio.run(turn.acquire("t8"))
    asyncio.run(cell_of(1, events, "own cell")())
    asyncio.run(cell_of(2, events, "same process's other grading")())
    spare = in_thread(cell_of(None, events, "spare kernel's start-up"))
    spare.join(0.5)
    assert events == ["own cell", "same process's other grading"] and spare.is_alive()
    second = TimedTurn(owner=2)
    asyncio.run(second.acquire("t5"))  # joins this process's turn at once
    assert second.held
    turn.release()
    spare.join(0.5)
    assert spare.is_alive()  # held until the process's last grading lets go
    second.release()
    spare.join(10)
    assert events[-1] == "spare kernel's start-up" and not turn.held and not second.held


def test_a_kernel_waiting_at_the_gate_goes_on_once_its_process_takes_the_turn_or_a_grading_claims_it():
    """The deadlock the suite's threaded gradings met: a kernel of this process started waiting before its
    run claimed it, or before this process's turn was complete, and kept waiting for a turn that its own
    process's graders hold (one of them waiting in turn for this kernel's facts). Waiting, it reads again."""
    events = []
    other = TimedTurn(owner=1)
    asyncio.run(other.acquire("t5"))
    claimed = CellTurn(None)  # a kernel started before the run that claims it set its owner

    async def start_up():
        async with claimed:
            events.append("claimed kernel's cell")

    waiting = in_thread(start_up)
    waiting.join(0.5)
    assert waiting.is_alive() and not events  # a spare kernel of nobody's waits
    claimed.owner = 2
    waiting.join(5)
    assert events == ["claimed kernel's cell"] and not waiting.is_alive()
    other.release()

    # the gate already taken by this process, the turn not yet complete when the kernel arrived
    gate = timed_turns.open_lock("gate")
    import fcntl

    assert gate.take(fcntl.LOCK_EX)
    arrived = in_thread(cell_of(3, events, "kernel that arrived during the taking"))
    arrived.join(0.5)
    assert arrived.is_alive()
    timed_turns.process_hold.taken([gate])  # the taking completes: this process holds the turn
    arrived.join(5)
    assert events[-1] == "kernel that arrived during the taking" and not arrived.is_alive()
    timed_turns.process_hold.leave()


def test_a_timed_task_waits_for_the_cells_in_flight():
    in_flight, holds = threading.Event(), []

    async def long_cell():
        async with CellTurn(2):
            in_flight.set()
            await asyncio.sleep(0.5)
            holds.append("cell ended")

    cell = in_thread(long_cell)
    in_flight.wait(10)
    first = TimedTurn(owner=1)
    asyncio.run(first.acquire("t8"))
    holds.append("turn")
    assert holds == ["cell ended", "turn"] and first.held
    first.release()
    cell.join(10)


def test_a_timed_task_cancelled_while_it_waits_for_the_cells_in_flight_leaves_the_gate_open():
    """A run cut by its deadline while its timed task waited for another grading's cell: the gate it had
    shut is open again, so that grading's next cells and checks go on (before, it stayed shut until the
    process ended, and every check of every grading on the machine waited its whole MAX_WAIT)."""
    in_flight, cell_may_end = threading.Event(), threading.Event()

    async def long_cell():
        async with CellTurn(2):
            in_flight.set()
            while not cell_may_end.is_set():
                await asyncio.sleep(0.01)

    cell = in_thread(long_cell)
    in_flight.wait(10)

    async def cut_while_waiting():
        task = asyncio.ensure_future(TimedTurn(owner=1).acquire("t8"))
        await asyncio.sleep(0.3)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(cut_while_waiting())
    cell_may_end.set()
    cell.join(10)
    events: list[str] = []
    next_cell = in_thread(cell_of(3, events, "next cell"))
    next_cell.join(5)
    assert events == ["next cell"]


def test_a_timed_task_waits_for_what_a_kernel_runs_between_its_cells_until_it_ends():
    """A lab probe's warm-up, started by a kernel's start-up cell, compiles on after the cell: held from
    inside the cell, it keeps a timed task waiting until it ends, as a cell in flight would."""
    ended, holds = threading.Event(), []

    async def start_up():
        async with CellTurn(None) as cell:
            hold = cell.hold_beyond()
        assert hold.held
        await hold.release_when(ended.is_set, 30)
        holds.append("warm-up ended")

    warm_up = in_thread(start_up)
    time.sleep(0.3)
    turn = TimedTurn(owner=1)
    taking = in_thread(lambda: turn.acquire("t4"))
    taking.join(0.5)
    assert taking.is_alive() and not turn.held  # the start-up cell is over, its warm-up is not
    ended.set()
    taking.join(10)
    holds.append("turn")
    assert holds == ["warm-up ended", "turn"] and turn.held
    turn.release()
    warm_up.join(10)

    second = TimedTurn(owner=2)
    asyncio.run(second.acquire("t8"))

    async def own_process_start_up():
        async with CellTurn(2) as cell:  # a kernel of the grading that holds the turn: part of it
            return cell.hold_beyond()

    assert not asyncio.run(own_process_start_up()).held
    second.release()


def _hold_and_wait(directory, ready, every_core=False):
    """Another grading holding the turn: of its turn core, or of every core (its kernel could not be moved)."""
    import os

    os.environ[timed_turns.DIRECTORY_VARIABLE] = directory
    asyncio.run(TimedTurn(owner=9).acquire("t8", (lambda: False) if every_core else None))
    ready.set()
    time.sleep(600)


def test_a_grader_that_dies_holding_the_turn_frees_it(tmp_path):
    holder = _another_grading_holding_the_turn(tmp_path)
    events = []
    waiting = in_thread(cell_of(1, events, "cell"))
    waiting.join(0.5)
    assert waiting.is_alive() and events == []  # another process's turn holds this one
    holder.kill()
    holder.join(10)
    waiting.join(10)
    assert events == ["cell"]


def _another_grading_holding_the_turn(tmp_path, every_core=False):
    context = multiprocessing.get_context("spawn")
    ready = context.Event()
    holder = context.Process(target=_hold_and_wait, args=(str(tmp_path / "turns"), ready, every_core), daemon=True)
    holder.start()
    assert ready.wait(60)
    return holder


def test_another_grading_s_checks_and_kernel_starts_wait_for_a_timed_task_and_go_on_once_it_ends(tmp_path):
    """A check's references and compilations, or a kernel's imports, would load the machine against the
    student's timing cells and the grader's measurement: in another process, none starts on the turn's cores
    during the turn — here every core, as a turn whose kernel could not be moved holds (on a machine of
    several cores, a turn of one core lets them run on the others: test_core_locks.py)."""
    holder = _another_grading_holding_the_turn(tmp_path, every_core=True)
    events = []

    def check():
        with cell_turns.checks_running():
            events.append("check")

    async def kernel_start():
        await cell_turns.pass_the_gate()
        events.append("kernel start")

    waiting = [threading.Thread(target=check, daemon=True), in_thread(kernel_start)]
    waiting[0].start()
    time.sleep(0.5)
    assert events == [] and all(thread.is_alive() for thread in waiting)
    holder.kill()
    holder.join(10)
    for thread in waiting:
        thread.join(10)
    assert sorted(events) == ["check", "kernel start"]


def test_a_timed_task_waits_for_another_grading_s_check_in_flight_but_not_for_one_waiting_for_facts():
    """A check holds the machine like a running cell; waiting for its kernel (``checks_waiting``) it lets go,
    or a turn could wait on a check that waits on a kernel the turn holds up."""
    context = multiprocessing.get_context("spawn")
    taken = context.Event()
    with cell_turns.checks_running():
        taker = context.Process(target=_take_the_turn, args=(str(timed_turns.turns_directory()), taken), daemon=True)
        taker.start()
        assert not taken.wait(2.0)  # the check in flight holds it up
        with cell_turns.checks_waiting():
            with cell_turns.checks_waiting():  # nested waits let go once, and take it again once
                assert taken.wait(60)
    taker.join(10)
    assert taker.exitcode == 0


def test_the_checks_of_the_grading_that_holds_the_turn_are_part_of_it():
    own = TimedTurn(owner=1)
    asyncio.run(own.acquire("t4"))
    finished = []

    def check():
        with cell_turns.checks_running():
            finished.append(1)

    check = threading.Thread(target=check, daemon=True)
    check.start()
    check.join(5)
    assert finished == [1]
    own.release()


def _take_the_turn(directory, taken):
    import os

    os.environ[timed_turns.DIRECTORY_VARIABLE] = directory
    turn = TimedTurn(owner=7)
    asyncio.run(turn.acquire("t4"))
    taken.set()
    turn.release()


def test_a_released_turn_is_not_taken_again_and_a_measurement_takes_one_of_its_own():
    run_turn, events = TimedTurn(owner=1), []
    run_turn.release()
    assert asyncio.run(run_turn.acquire("t8")) == 0.0 and not run_turn.held  # the grader was done with it
    with grading_with(lambda: None):
        with measuring():
            other = in_thread(cell_of(None, events, "cell"))
            other.join(0.5)
            assert other.is_alive()  # the grader's own measurement holds the machine too
    other.join(10)
    assert events == ["cell"]
    held = TimedTurn(owner=5)
    asyncio.run(held.acquire("t8"))
    with grading_with(lambda: held):
        with measuring():  # the run's own turn serves: nothing more to take (no wait for itself)
            assert held.held
    held.release()


def test_the_turns_can_be_turned_off_for_a_comparison(monkeypatch):
    monkeypatch.setenv(timed_turns.QUIET_MACHINE_VARIABLE, "off")
    turn, events = TimedTurn(owner=1), []
    asyncio.run(turn.acquire("t8"))
    assert not turn.held
    asyncio.run(cell_of(2, events, "cell")())
    assert events == ["cell"]


class _Waiting:
    """A run whose execution takes 1 s, of which ``waited`` were spent waiting for another's turn (its
    kernel's CPU time unread: the deadline runs on the wall clock)."""

    def __init__(self, waited):
        self.waited = waited
        self.km = types.SimpleNamespace(cpu_seconds=lambda: None, thread_times=lambda: None)

    async def run_steps(self):
        await asyncio.sleep(1.0)


def test_the_notebook_deadline_does_not_count_the_wait_for_another_grading_s_turn():
    assert asyncio.run(_within_deadline(_Waiting(waited=30.0), 0.2)) is None
    with pytest.raises(asyncio.TimeoutError):
        asyncio.run(_within_deadline(_Waiting(waited=0.0), 0.2))


def test_a_cpu_quota_is_read_from_the_cgroup_and_makes_samples_span_several_periods(monkeypatch, tmp_path):
    v1 = tmp_path / "v1"
    (v1 / "cpu" / "box").mkdir(parents=True)
    (v1 / "cpu" / "box" / "cpu.cfs_quota_us").write_text("50000\n")
    (v1 / "cpu" / "box" / "cpu.cfs_period_us").write_text("100000\n")
    (v1 / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")
    (v1 / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    monkeypatch.setattr(others_load, "CGROUP_ROOT", v1)
    monkeypatch.setattr(others_load, "_read_proc_cgroup", lambda: ["4:memory:/box", "1:cpu:/box", "0::/"])
    assert others_load.container_cpu_quota() == others_load.CpuQuota(0.5, 0.1)
    assert others_load.min_sample_seconds() == pytest.approx(0.3)
    v2 = tmp_path / "v2"
    (v2 / "box").mkdir(parents=True)
    (v2 / "box" / "cpu.max").write_text("25000 100000\n")
    (v2 / "cpu.max").write_text("max 100000\n")
    monkeypatch.setattr(others_load, "CGROUP_ROOT", v2)
    monkeypatch.setattr(others_load, "_read_proc_cgroup", lambda: ["0::/box"])
    assert others_load.container_cpu_quota() == others_load.CpuQuota(0.25, 0.1)
    monkeypatch.setattr(others_load, "_read_proc_cgroup", lambda: ["0::/"])
    assert others_load.container_cpu_quota() is None and others_load.min_sample_seconds() == 0.0


def test_a_sample_under_a_quota_is_the_mean_of_as_many_calls_as_fill_it(monkeypatch):
    from autograder.checks import measurement

    calls = []
    clock = iter(range(1000))
    monkeypatch.setattr(measurement.time, "perf_counter", lambda: next(clock) * 0.01)  # each call: 10 ms
    monkeypatch.setattr(measurement.jax, "block_until_ready", lambda value: value)
    assert measurement._seconds_per_call(lambda: calls.append(1), 0.05) == pytest.approx(0.01)
    assert len(calls) == 5
    calls.clear()
    assert measurement._seconds_per_call(lambda: calls.append(1), 0.0) == pytest.approx(0.01) and len(calls) == 1
