"""Lab 2 graded end to end on real notebooks: the solution, the untouched student notebook, and
submissions with known grades (tests/lab2_submissions.py), each executed once per session."""

from __future__ import annotations

import pytest

from autograder.execute import Limits
from autograder.lab import load_lab
from lab2_submissions import CASES, FULL
from grading_session import grade_all

LAB = load_lab("lab2_three_ways")


@pytest.fixture(scope="session")
def lab2_grades(tmp_path_factory):
    return grade_all(LAB, CASES, tmp_path_factory.mktemp("lab2"))


def test_solution_scores_full_marks(lab2_grades):
    result = lab2_grades["solution"]
    assert result.status == "graded"
    failed = [f"{c.task} {c.name}: {c.message}" for t in result.tasks for c in t.checks if not c.passed]
    assert failed == []
    assert result.score == result.max_score == 100


def test_untouched_student_notebook_scores_zero(lab2_grades):
    result = lab2_grades["untouched"]
    assert result.status == "graded"
    assert result.score == 0
    assert all(c.message for t in result.tasks for c in t.checks)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_submission_loses_exactly_its_points(lab2_grades, case):
    result = lab2_grades[case.name]
    assert result.status == case.status, result.summary()
    scores = {t.task: t.score for t in result.tasks}
    expected = {task: case.scores.get(task, 0) for task in FULL}
    detail = {t.task: [f"{c.name}: {c.message}" for c in t.checks if not c.passed] for t in result.tasks}
    assert scores == expected, detail
    for task, text in case.messages.items():
        messages = " ".join(c.message for t in result.tasks if t.task == task for c in t.checks)
        assert text in messages


def test_every_failed_check_says_expected_and_found(lab2_grades):
    result = lab2_grades["wrong_axis_order"]
    (layout,) = [c for t in result.tasks for c in t.checks if c.name == "test_t1_layout"]
    assert "expected" in layout.message and "found" in layout.message
    assert layout.expected_picture and layout.found_picture
    assert layout.expected_picture != layout.found_picture


def test_kernel_death_names_the_cell(lab2_grades):
    result = lab2_grades["kernel_dies"]
    assert result.ended_at and result.ended_at.startswith("cell")
    assert "died" in result.reason


def test_timed_out_cell_is_reported_and_grading_goes_on(lab2_grades):
    result = lab2_grades["infinite_loop"]
    assert any("CellTimeoutError" in error for error in result.cell_errors)
    assert result.score == 8


def test_grades_are_gradescope_results(lab2_grades):
    data = lab2_grades["wrong_axis_order"].to_gradescope()
    assert data["score"] == 3 and data["extra_data"]["max_score"] == 100
    statuses = {t["status"] for t in data["tests"]}
    assert statuses == {"passed", "failed"}
    assert all({"name", "score", "max_score", "status", "output", "visibility"} <= set(t) for t in data["tests"])
    hidden = [t for t in data["tests"] if t["visibility"] == "after_published" and t["status"] == "failed"]
    assert hidden and all(t["output"] == "A hidden check failed." for t in hidden)
