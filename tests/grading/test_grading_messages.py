"""What a grader's fixture says when a name or a function is missing: the cell of the task that failed; a
probe that found nothing to examine says so, without speaking of inputs."""

import pytest

from autograder.checks import CheckFailure
from autograder.facts.schema import CallFact, Fact, ProbeFact, TaskFacts
from autograder.grading.submission_facts import SubmissionFacts
from autograder.run.execution import CellOutcome, Execution

MISSING = Fact(kind="missing", error="NameError: name 'D_jit' is not defined")


def _submission(cells):
    missing_call = CallFact(
        output=Fact(kind="missing", error="x"),
        stdout="",
        hlo=None,
        hlo_error=None,
        error="NameError: name 'fsdp_tp_jit' is not defined",
    )
    probes = {
        "layer": ProbeFact({}, "", "NameError: name 'TPLayer' is not defined"),
        "raised": ProbeFact({}, "", "ValueError: shapes (4,) and (8,) do not match"),
    }
    facts = {"t3": TaskFacts("t3", names={"D_jit": MISSING}, calls={"fsdp_tp_jit": missing_call}, probes=probes)}
    execution = Execution("completed", None, None, facts, {}, tuple(cells), 1.0)
    return SubmissionFacts(None, execution, seed=1)


def _message(check, *args):
    with pytest.raises(CheckFailure) as info:
        check(*args)
    return info.value.message


def test_a_name_missing_after_a_locked_cell_failed_shows_that_cells_error():
    cells = [
        CellOutcome("cell 20", "student", "t3", "ok", None, 0.1),
        CellOutcome("cell 21", "lab", "t3", "error", "RuntimeError: rendezvous failed", 0.1),
        CellOutcome("cell 25", "lab", "t4", "error", "ValueError: later", 0.1),
    ]
    message = _message(_submission(cells).name, "t3", "D_jit")
    assert message.startswith("`D_jit` is not defined after task t3")
    assert "cell 21 (a locked cell of the lab) failed with RuntimeError: rendezvous failed" in message
    assert "ValueError" not in message


def test_the_first_failure_of_the_task_is_named_and_a_missing_function_says_it_too():
    cells = [
        CellOutcome("cell 20", "student", "t3", "error", "NameError: name 'block' is not defined", 0.1),
        CellOutcome("cell 21", "lab", "t3", "error", "NameError: name 'fsdp_tp_jit' is not defined", 0.1),
    ]
    submission = _submission(cells)
    assert "cell 20 (your code) failed with NameError: name 'block'" in _message(submission.name, "t3", "D_jit")
    assert "cell 20 (your code)" in _message(submission.call, "t3", "fsdp_tp_jit")


def test_without_a_failed_cell_the_message_is_only_that_the_name_is_missing():
    assert _message(_submission([]).name, "t3", "D_jit") == "`D_jit` is not defined after task t3"


def test_a_probe_that_found_no_name_says_so_and_names_the_failed_cell():
    cells = [CellOutcome("cell 20", "student", "t3", "error", "SyntaxError: invalid syntax", 0.1)]
    submission = _submission(cells)
    message = _message(submission.probe, "t3", "layer")
    assert message.startswith("examining your code failed: NameError: name 'TPLayer' is not defined")
    assert "cell 20 (your code) failed with SyntaxError" in message and "inputs" not in message
    assert _message(submission.probe, "t3", "raised") == (
        "running your code on the grader's inputs failed: ValueError: shapes (4,) and (8,) do not match"
    )
