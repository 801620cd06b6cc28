"""Every lab graded end to end on real notebooks: its solution scores full marks, its untouched student
notebook scores zero, and each submission with known grades (tests/labN_submissions.py) loses exactly
the points of the checks it gets wrong. Each lab's notebooks are executed once per session."""

from __future__ import annotations

import pytest

from lab_submissions import CASES_BY_LAB


def _failed(result):
    return {t.task: [f"{c.name}: {c.message}" for c in t.checks if not c.passed] for t in result.tasks}


@pytest.mark.parametrize("lab_id", list(CASES_BY_LAB))
def test_solution_scores_full_marks(lab_grades, lab_id):
    lab, grades = lab_grades(lab_id)
    result = grades["solution"]
    assert result.status == "graded", result.summary()
    assert not any(_failed(result).values()), _failed(result)
    assert result.score == result.max_score == sum(t.points for t in lab.tasks) == 100
    for task in result.tasks:  # the graders' points of a task add up to the task's points
        assert sum(c.points for c in task.checks) == task.max_score, task.task


@pytest.mark.parametrize("lab_id", list(CASES_BY_LAB))
def test_untouched_student_notebook_scores_zero(lab_grades, lab_id):
    _, grades = lab_grades(lab_id)
    result = grades["untouched"]
    assert result.status == "graded", result.summary()
    assert result.score == 0
    assert all(c.message and not c.grader_error for t in result.tasks for c in t.checks)


@pytest.mark.parametrize("lab_id, case", [(lab, case) for lab, cases in CASES_BY_LAB.items() for case in cases],
                         ids=[f"{lab}-{case.name}" for lab, cases in CASES_BY_LAB.items() for case in cases])
def test_submission_loses_exactly_its_points(lab_grades, lab_id, case):
    lab, grades = lab_grades(lab_id)
    result = grades[case.name]
    assert result.status == case.status, result.summary()
    scores = {t.task: t.score for t in result.tasks}
    assert scores == {t.id: case.scores.get(t.id, 0) for t in lab.tasks}, _failed(result)
    assert not [c.message for t in result.tasks for c in t.checks if c.grader_error]
    for task, text in case.messages.items():
        assert text in " ".join(c.message for t in result.tasks if t.task == task for c in t.checks)
