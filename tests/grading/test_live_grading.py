"""Grading while the notebook runs: facts taken out of the kernel's reach, checks as each task's facts
arrive, timed cells only while the grader is idle, the grader's own timing only once the kernel is done."""

import asyncio
import os
import subprocess
import sys
import threading
import time

import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from autograder.checks import MeshSpec, measure_interleaved
from autograder.facts.taken_facts import TakenFacts, copy_facts
from autograder.fairness import cell_turns
from autograder.grading.pytest_plugin import run_graders
from autograder.kernel import housekeeping as kernel_housekeeping
from autograder.kernel import recorder
from autograder.lab import load_lab
from autograder.run.execution import CellOutcome, LiveExecution
from autograder.run.kernels.client import TRUNCATION_MARK

LAB2 = "lab2_three_ways"


def _recorder_writes(directory, task, namespace, lab_id=LAB2, seed=7):
    capture = load_lab(lab_id).captures[task]
    recorder.record_task_facts(capture.manifest(str(directory), seed), namespace)


def _a_sharded(spec):
    mesh = MeshSpec((2, 4), ("x", "y")).build()
    return jax_array(np.arange(64.0, dtype=np.float32).reshape(4, 16), NamedSharding(mesh, P(*spec)))


def jax_array(values, sharding):
    import jax

    return jax.device_put(jnp.asarray(values), sharding)


# Taking the facts.


def test_facts_rewritten_in_the_kernels_directory_after_they_were_taken_are_not_read(tmp_path):
    written = tmp_path / "work" / ".facts" / "t1"
    _recorder_writes(written, "t1", {"A_sharded": _a_sharded(("x", "y"))})
    taken = TakenFacts(tmp_path / "taken")
    taken.take("t1", written, "")
    _recorder_writes(written, "t1", {"A_sharded": _a_sharded((None, None))})  # a later cell forges them
    facts = taken.read("t1")
    assert facts.names["A_sharded"].sharding.spec == (("x",), ("y",))


def test_only_regular_files_are_taken(tmp_path):
    source = tmp_path / "facts"
    source.mkdir()
    (source / "facts.json").write_text("{}")
    secret = tmp_path / "secret.txt"
    secret.write_text("solution")
    os.symlink(secret, source / "link.npy")
    os.mkfifo(source / "pipe.npy")  # reading it would block the grader forever
    copy_facts(source, tmp_path / "copy")
    assert sorted(p.name for p in (tmp_path / "copy").iterdir()) == ["facts.json"]


def test_facts_too_large_are_an_error_of_their_task(tmp_path, monkeypatch):
    from autograder.facts import taken_facts

    monkeypatch.setattr(taken_facts, "MAX_FACTS_BYTES", 1000)
    source = tmp_path / "facts"
    source.mkdir()
    (source / "big.npy").write_bytes(b"x" * 5000)
    taken = TakenFacts(tmp_path / "taken")
    taken.take("t1", source, "")
    assert "t1" in taken and taken.read("t1") is None
    assert "could not be taken" in taken.error("t1") and "MiB" in taken.error("t1")


def test_missing_facts_keep_the_recorders_own_error(tmp_path):
    taken = TakenFacts(tmp_path / "taken")
    taken.take("t2", tmp_path / "never-written", " (RuntimeError: boom)")
    assert taken.read("t2") is None
    assert taken.error("t2") == "no facts were written for t2 (RuntimeError: boom)"


def test_the_kernels_truncation_mark_is_the_one_the_harness_looks_for():
    assert TRUNCATION_MARK == kernel_housekeeping.TRUNCATION_MARK


def test_starting_a_grade_imports_no_jax():
    """The kernel starts before the grader loads JAX (or numpy, which only reading facts needs), so that
    the two overlap."""
    code = (
        "import sys, autograder.cli, autograder.grading.pipeline; print('jax' in sys.modules, 'numpy' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"


# Checking while the notebook runs.


def _cell(task, label="cell 3"):
    return CellOutcome(label, "student", task, "ok", None, 0.1)


def test_a_task_is_checked_while_the_notebook_goes_on(tmp_path):
    """The grader checks t1 as soon as its facts are taken, long before the run ends."""
    lab = load_lab(LAB2)
    live, taken, cells = LiveExecution(), TakenFacts(tmp_path / "taken"), []
    live.started(taken, cells)
    results = {}
    grader = threading.Thread(
        target=lambda: results.update(checks=run_graders(lab, live, seed=7, tasks=["t1"]), at=time.monotonic())
    )
    grader.start()
    written = tmp_path / "t1"
    _recorder_writes(written, "t1", {"A_sharded": _a_sharded(("x", "y"))})
    cells.append(_cell("t1"))
    taken.take("t1", written, "")
    live.task_taken()
    grader.join(120)
    ended = time.monotonic()
    live.ended("completed", None, None)  # the run ends only now
    assert not grader.is_alive() and results["at"] <= ended
    assert {c.name for c in results["checks"]} >= {"test_t1_values", "test_t1_layout"}
    assert all(c.passed for c in results["checks"]), results["checks"]


def test_a_task_the_run_never_reached_fails_with_the_runs_reason(tmp_path):
    lab = load_lab(LAB2)
    live = LiveExecution()
    live.started(TakenFacts(tmp_path / "taken"), [])
    threading.Timer(0.3, live.ended, ("kernel died", "the kernel died (it exited or was killed)", "cell 5")).start()
    checks = run_graders(lab, live, seed=7, tasks=["t2"])
    assert checks and not any(c.passed for c in checks)
    assert all("kernel died at cell 5" in c.message for c in checks)


def test_timed_cells_wait_until_the_grader_has_nothing_left_to_check(tmp_path):
    live, taken = LiveExecution(), TakenFacts(tmp_path / "taken")
    live.started(taken, [])
    idle_at = []

    def grader():
        with live.grader_busy():
            time.sleep(0.5)  # checking an earlier task
            idle_at.append(time.monotonic())
            live.wait_for("t8")

    thread = threading.Thread(target=grader, daemon=True)
    thread.start()
    asyncio.run(live.until_grader_idle())
    assert idle_at and time.monotonic() >= idle_at[0]
    live.ended("completed", None, None)
    thread.join(5)
    assert not thread.is_alive()


def test_timed_cells_do_not_wait_for_a_grader_whose_checks_have_not_begun(tmp_path):
    """E.g. held up by another grading's pytest session in the same process: it uses no CPU."""
    live = LiveExecution()
    live.started(TakenFacts(tmp_path / "taken"), [])
    asyncio.run(asyncio.wait_for(live.until_grader_idle(), 5))


def test_timed_cells_do_not_wait_for_a_grader_that_is_done(tmp_path):
    live = LiveExecution()
    live.started(TakenFacts(tmp_path / "taken"), [])
    live.grader_done()
    asyncio.run(asyncio.wait_for(live.until_grader_idle(), 5))


def test_the_graders_own_timing_waits_until_the_kernel_stops_running_cells():
    measured_at = []
    with cell_turns.student_code_running():

        def grader():
            measure_interleaved({"f": lambda: 1}, repeats=1, warmup=0)
            measured_at.append(time.monotonic())

        thread = threading.Thread(target=grader)
        thread.start()
        time.sleep(0.5)
        assert not measured_at  # still waiting
        released = time.monotonic()
    thread.join(10)
    assert measured_at and measured_at[0] >= released


@pytest.mark.parametrize("timeout, expected", [(0.05, False), (None, True)])
def test_waiting_for_quiet_can_give_up(timeout, expected):
    if expected:
        assert cell_turns.wait_for_quiet(timeout) is True
        return
    with cell_turns.student_code_running():
        assert cell_turns.wait_for_quiet(timeout) is False


@pytest.mark.parametrize("lab_id, timed", [("lab1_distributed_arrays", "t8"), ("lab3_fsdp_tp", "t4")])
def test_the_checks_of_a_task_that_times_code_run_last(lab_id, timed, tmp_path):
    """They wait for the notebook's end; the later tasks' checks do not wait behind them."""
    live = LiveExecution()
    live.started(TakenFacts(tmp_path / "taken"), [])
    live.ended("kernel died", "the kernel died", "cell 2")
    order = [c.task for c in run_graders(load_lab(lab_id), live, seed=7)]
    first_timed = order.index(timed)
    assert set(order[first_timed:]) == {timed}
    assert order[:first_timed] == sorted(order[:first_timed], key=lambda t: int(t[1:]))
