"""The notes a grade carries about what the harness did to the run: output it cut, on whichever side
cut it first, timed cells run on a crowded machine, and processes a cell left running."""

from autograder.grading.pipeline import execution_notes
from autograder.run.execution import CellOutcome, Execution
from autograder.run.sandbox.limits import Limits


def _execution(cells=(), output_cut_by_task=None):
    return Execution("completed", None, None, {}, {}, tuple(cells), 1.0, (), output_cut_by_task)


def _cell(label, truncated=False, leftovers=0, task="t1", share=None, seconds=0.1):
    return CellOutcome(label, "student", task, "ok", None, seconds, truncated, leftovers, share)


def test_output_cut_by_the_grader_names_the_first_cell():
    (note,) = execution_notes(_execution([_cell("cell 3"), _cell("cell 4", truncated=True)]), Limits())
    assert note.startswith("output was truncated from cell 4 on")


def test_output_cut_only_in_the_kernel_is_said_too():
    (note,) = execution_notes(_execution([_cell("cell 3")], output_cut_by_task="t2"), Limits())
    assert note.startswith("output was truncated by the end of task t2")


def test_leftover_processes_are_counted_per_cell():
    notes = execution_notes(_execution([_cell("cell 3", leftovers=255), _cell("cell 5", leftovers=1)]), Limits())
    assert notes == [
        "cell 3 left 255 processes running; they were stopped",
        "cell 5 left 1 process running; it was stopped",
    ]


def test_a_quiet_run_has_no_notes():
    assert execution_notes(_execution([_cell("cell 1")]), Limits()) == []


def test_timed_cells_that_met_load_from_other_work_are_noted_by_task():
    cells = [
        _cell("cell 3", task="t7", share=0.2),  # little: no note
        _cell("cell 5", task="t8", share=0.1, seconds=1.0),
        _cell("cell 6", task="t8", share=0.9, seconds=1.0),
    ]
    assert execution_notes(_execution(cells), Limits()) == [
        "other work took 50% of the processors while t8's timed cells ran: its timing checks allowed for the load"
        " each side met"
    ]
