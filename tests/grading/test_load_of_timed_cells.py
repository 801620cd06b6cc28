"""The grading hands each check the load its task's timed cells met (pytest_plugin.py), so that every
lab's timing checks allow for it (checks/measurement.py) without naming it."""

from __future__ import annotations

import types

import pytest

from autograder.checks import load_allowance
from autograder.grading.pytest_plugin import SubmissionFacts, _GraderPlugin
from autograder.lab import load_lab
from autograder.run.execution import CellOutcome, Execution

LAB1 = "lab1_distributed_arrays"


def cell(task: str, seconds: float, share: float | None) -> CellOutcome:
    return CellOutcome(f"cell of {task}", "student", task, "ok", None, seconds, others_share=share)


def execution(*cells: CellOutcome) -> Execution:
    return Execution("completed", None, None, {}, {}, cells, 10.0)


def test_a_task_s_share_is_its_timed_cells_by_how_long_each_ran():
    run = execution(cell("t7", 5.0, None), cell("t8", 3.0, 0.1), cell("t8", 1.0, 0.9), cell("t8", 0.5, None))
    facts = SubmissionFacts(load_lab(LAB1), run, seed=1)
    assert facts.others_share("t8") == pytest.approx((3.0 * 0.1 + 1.0 * 0.9) / 4.0)
    assert facts.others_share("t7") is None  # not timed: nothing read
    assert facts.others_share("t9") is None  # not run


def item_of(task: str | None):
    marker = types.SimpleNamespace(args=(task,))
    return types.SimpleNamespace(get_closest_marker=lambda name: marker if name == "task" and task else None)


@pytest.mark.parametrize(("task", "expected"), [("t8", 0.6), ("t7", None), (None, None)])
def test_each_check_reads_the_share_of_its_own_task(task, expected):
    run = execution(cell("t7", 1.0, None), cell("t8", 2.0, 0.6))
    plugin = _GraderPlugin(SubmissionFacts(load_lab(LAB1), run, seed=1))
    assert load_allowance(0.0).student_share is None
    wrapper = plugin.pytest_runtest_protocol(item_of(task), None)
    next(wrapper)  # the check runs here
    assert load_allowance(0.0).student_share == (pytest.approx(expected) if expected is not None else None)
    with pytest.raises(StopIteration):
        wrapper.send(None)
    assert load_allowance(0.0).student_share is None  # the next check starts afresh
