"""Every lab graded end to end on real notebooks: its solution scores full marks, its untouched student
notebook scores zero, and each submission with known grades (tests/labs/<lab id>_submissions.py) loses exactly
the points of the checks it gets wrong. Each lab's notebooks are executed once per session.

A verdict judged against the grader's own timing (MEASURED_VERDICTS) depends on the machine's speed
and load, so no grade here fixes it: it may fail only with the grader's interval on the other side of 1."""

from __future__ import annotations

import re

import pytest
from lab_submissions import CASES_BY_LAB, LABS_WITHOUT_KNOWN_GRADES, MEASURED_VERDICTS, fixed_checks


def _failed(result, lab_id):
    return {
        t.task: [f"{c.name}: {c.message}" for c in fixed_checks(lab_id, t.checks) if not c.passed] for t in result.tasks
    }


def _fixed_scores(result, lab_id):
    """Each task's points from the checks a known grade may state."""
    return {t.task: sum(c.score for c in fixed_checks(lab_id, t.checks)) for t in result.tasks}


VERDICT_FAILURE = re.compile(r"expected (True|False), found (?:True|False): .* interval ([0-9.e+-]+)–([0-9.e+-]+|∞)")


def _assert_measured_verdicts_follow_the_grader(result, lab_id):
    """A measured verdict that judged a True or False fails only with the grader's interval, as its
    message states it, on the other side of 1."""
    for check in (c for t in result.tasks for c in t.checks if c.name in MEASURED_VERDICTS.get(lab_id, ())):
        assert not check.grader_error, check
        if check.passed or not re.search(r"found (True|False)\b", check.message):
            continue
        expected, low, high = VERDICT_FAILURE.search(check.message).groups()
        assert float(low) > 1 if expected == "True" else float(high) < 1, check


def test_every_lab_has_submissions_with_known_grades():
    """A lab is graded end to end here only through its own tests/labs/<lab id>_submissions.py."""
    assert not LABS_WITHOUT_KNOWN_GRADES, (
        "write "
        + ", ".join(f"tests/{lab_id}_submissions.py" for lab_id in LABS_WITHOUT_KNOWN_GRADES)
        + " (docs/writing-a-lab.md)"
    )
    assert all(CASES_BY_LAB.values()), "a lab's CASES is empty"


@pytest.mark.parametrize("lab_id", list(CASES_BY_LAB))
def test_solution_scores_full_marks(lab_grades, lab_id):
    lab, grades = lab_grades(lab_id)
    result = grades["solution"]
    assert result.status == "graded", result.summary()
    assert not any(_failed(result, lab_id).values()), _failed(result, lab_id)
    _assert_measured_verdicts_follow_the_grader(result, lab_id)
    assert result.max_score == sum(t.points for t in lab.tasks)  # a lab may be worth any total
    for task in result.tasks:  # the graders' points of a task add up to the task's points
        assert sum(c.points for c in task.checks) == task.max_score, task.task


@pytest.mark.parametrize("lab_id", list(CASES_BY_LAB))
def test_untouched_student_notebook_scores_zero(lab_grades, lab_id):
    _, grades = lab_grades(lab_id)
    result = grades["untouched"]
    assert result.status == "graded", result.summary()
    assert result.score == 0
    assert all(c.message and not c.grader_error for t in result.tasks for c in t.checks)


@pytest.mark.parametrize(
    "lab_id, case",
    [(lab, case) for lab, cases in CASES_BY_LAB.items() for case in cases],
    ids=[f"{lab}-{case.name}" for lab, cases in CASES_BY_LAB.items() for case in cases],
)
def test_submission_loses_exactly_its_points(lab_grades, lab_id, case):
    lab, grades = lab_grades(lab_id)
    result = grades[case.name]
    assert result.status == case.status, result.summary()
    assert _fixed_scores(result, lab_id) == {t.id: case.scores.get(t.id, 0) for t in lab.tasks}, _failed(result, lab_id)
    _assert_measured_verdicts_follow_the_grader(result, lab_id)
    assert not [c.message for t in result.tasks for c in t.checks if c.grader_error]
    for task, text in case.messages.items():
        assert text in " ".join(c.message for t in result.tasks if t.task == task for c in t.checks)
