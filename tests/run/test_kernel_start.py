"""A kernel that fails to start is the harness's fault: it is started again, and the run goes on as if
nothing happened, saying so; one that never starts ends the run as ``kernel failed to start`` (a harness
error, not a score). A kernel that dies once cells ran is not started again: that is the run's outcome.

The failures are real ones (tests/support/failing_kernel_launch.py): the kernel's launch exits before
the kernel runs, on the first launch only or on every one."""

import asyncio
import logging

import pytest
from failing_kernel_launch import DIED_AT_START, fail_kernel_launches

import autograder.run.kernels.lifecycle as kernel_start
from autograder.facts.capture import TaskCapture
from autograder.grading.pipeline import execution_notes
from autograder.grading.results import GradeStatus
from autograder.run.execute import RunRequest, execute_plan
from autograder.run.execution import RunStatus
from autograder.run.kernels import KernelSpec
from autograder.run.kernels.lifecycle import START_ATTEMPTS
from autograder.run.plan import CaptureTask, Plan, RunCell
from autograder.run.sandbox.bubblewrap import sandbox_problem
from autograder.run.sandbox.limits import Limits

pytestmark = pytest.mark.skipif(sandbox_problem() is not None, reason=f"no sandbox here: {sandbox_problem()}")

LIMITS = Limits(cell_timeout=60, total_timeout=300)


@pytest.fixture
def failing_launch(tmp_path, monkeypatch):
    """``failing_launch(how)``: see ``fail_kernel_launches``."""
    return lambda how: fail_kernel_launches(monkeypatch, tmp_path, how)


def _run(source: str):
    plan = Plan((RunCell(source, "student", "t1", 1, "cell 1"), CaptureTask("t1")), ())
    return execute_plan(RunRequest(plan, {"t1": TaskCapture("t1", names=("answer",))}, LIMITS, seed=1))


def test_a_kernel_that_dies_at_its_first_start_is_started_again_and_the_run_is_whole(failing_launch, caplog):
    launches = failing_launch("once")
    with caplog.at_level(logging.WARNING, logger="autograder.kernel_start"):
        execution = _run("answer = 6 * 7")
    assert execution.status == RunStatus.COMPLETED, execution.reason
    assert execution.facts["t1"].names["answer"].value == 42
    assert [c.status for c in execution.cells] == ["ok"]
    assert launches() == 2
    assert len(execution.start_failures) == 1 and DIED_AT_START in execution.start_failures[0]
    assert f"attempt 1 of {START_ATTEMPTS}" in caplog.text and DIED_AT_START in caplog.text
    (note,) = execution_notes(execution, LIMITS)
    assert "the kernel failed to start 1 time and was started again" in note and DIED_AT_START in note


def test_a_kernel_that_never_starts_ends_the_run_as_the_harnesss_error(failing_launch):
    launches = failing_launch("always")
    execution = _run("answer = 6 * 7")
    assert execution.status == RunStatus.KERNEL_FAILED_TO_START
    assert launches() == START_ATTEMPTS
    assert execution.reason == f"the kernel failed to start {START_ATTEMPTS} times (RuntimeError: {DIED_AT_START})"
    assert execution.cells == () and execution.facts == {}
    assert GradeStatus.of_run(execution.status) is GradeStatus.HARNESS_ERROR
    assert execution_notes(execution, LIMITS) == []  # the reason says it all


def test_a_kernel_the_students_code_kills_is_not_started_again(failing_launch):
    launches = failing_launch("never")
    execution = _run("import os\nos._exit(3)")
    assert execution.status == RunStatus.KERNEL_DIED and execution.ended_at == "cell 1"
    assert launches() == 1 and execution.start_failures == ()


def test_a_failed_start_says_when_the_out_of_memory_killer_struck_meanwhile(failing_launch, monkeypatch):
    failing_launch("always")
    kills = iter(range(100))
    monkeypatch.setattr(kernel_start, "oom_kills", lambda: next(kills))  # one more each time it is read
    start = asyncio.run(kernel_start.start_kernel(KernelSpec(LIMITS), attempts=1))
    assert start.kernel is None
    (why,) = start.failures
    assert DIED_AT_START in why and "the out-of-memory killer struck meanwhile" in why


def test_a_start_up_slower_than_a_short_cell_timeout_is_not_interrupted(monkeypatch):
    """The harness's start-up code has the start-up timeout, not the cell timeout: with cells cut at one
    second, a start-up that takes longer (here, made to sleep 1.5 s first) still starts the kernel, and
    the cells still get their one second."""
    import autograder.run.kernels.lifecycle as kernel_lifecycle

    startup = kernel_lifecycle.startup_code
    monkeypatch.setattr(kernel_lifecycle, "startup_code", lambda *a: "import time\ntime.sleep(1.5)\n" + startup(*a))
    plan = Plan(
        (
            RunCell("answer = 42", "student", "t1", 1, "cell 1"),
            CaptureTask("t1"),
            RunCell("import time\ntime.sleep(3)", "student", "t2", 2, "cell 2"),
            CaptureTask("t2"),
        ),
        (),
    )
    captures = {"t1": TaskCapture("t1", names=("answer",)), "t2": TaskCapture("t2")}
    run = execute_plan(RunRequest(plan, captures, Limits(cell_timeout=1, total_timeout=120), seed=1))
    assert run.start_failures == () and run.facts["t1"].get("answer").value == 42, run.reason
    assert [c.status for c in run.cells] == ["ok", "timeout"]
