"""Every lab graded end to end on real notebooks: its solution scores full marks, its untouched student
notebook scores zero, and each submission with known grades (tests/labs/<lab id>_submissions.py) loses exactly
the points of the checks it gets wrong. Each lab's notebooks are executed once per session.

A verdict judged against the grader's own timing (MEASURED_VERDICTS) depends on the machine's speed
and load, so no grade here fixes it: it may fail only with the grader's interval on the other side of 1."""

from __future__ import annotations

import pytest
from lab_submissions import CASES_BY_LAB, LABS_WITHOUT_KNOWN_GRADES, MEASURED_VERDICTS

from autograder.authoring.grade_expectations import case_problems, full_marks_problems, zero_problems


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
    problems = full_marks_problems(lab, grades["solution"], MEASURED_VERDICTS[lab_id])
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("lab_id", list(CASES_BY_LAB))
def test_untouched_student_notebook_scores_zero(lab_grades, lab_id):
    problems = zero_problems(lab_grades(lab_id)[1]["untouched"])
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    "lab_id, case",
    [(lab, case) for lab, cases in CASES_BY_LAB.items() for case in cases],
    ids=[f"{lab}-{case.name}" for lab, cases in CASES_BY_LAB.items() for case in cases],
)
def test_submission_loses_exactly_its_points(lab_grades, lab_case_groups, lab_id, case):
    lab, grades = lab_grades(lab_id)
    group = lab_case_groups(lab_id)[case.name]
    problems = case_problems(lab, case, grades[case.name], MEASURED_VERDICTS[lab_id], group)
    assert not problems, "\n".join(problems)
