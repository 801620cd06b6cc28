"""The LMS's grade import, written beside grades.csv whenever the grades are (``--gradebook canvas|moodle``).

The grade each student gets is the gradebook's final score, overrides and late penalty applied
(adjustments.py), taken as it is from the results; a grading that failed through no fault of the student
(the grader's or the harness's error) gives no grade, so the import leaves that student's grade as it
was. Which LMS, its own export to fill and who each student is there come from ``OUT/lms_roster.json``.
"""

from __future__ import annotations

from pathlib import Path

from autograder.course.canvas_gradebook import canvas_gradebook_csv
from autograder.course.gradebook import RETRIED_STATUSES
from autograder.course.lms_roster import LmsRoster, load_roster
from autograder.course.moodle_gradebook import moodle_gradebook_csv
from autograder.grading import GradeResult, write_atomically

LMS_FILES = {"canvas": "canvas-grades.csv", "moodle": "moodle-grades.csv"}


def lms_gradebook_csv(roster: LmsRoster, lab: str, results: dict[str, GradeResult]) -> str | None:
    """The import CSV of ``roster``'s LMS for the students it knows, or None when no LMS's CSV is asked for."""
    if roster.gradebook is None or not results:
        return None
    max_score = max(result.max_score for result in results.values())
    grades = [
        (roster.students[student], None if result.status in RETRIED_STATUSES else result.score)
        for student, result in sorted(results.items())
        if student in roster.students and roster.students[student].lms == roster.gradebook
    ]
    if roster.gradebook == "canvas":
        return canvas_gradebook_csv(lab, max_score, grades, roster.template)
    return moodle_gradebook_csv(max_score, grades, roster.template)


def publish_lms_gradebook(out: Path, lab: str, results: dict[str, GradeResult]) -> None:
    roster = load_roster(out)
    text = None if roster is None else lms_gradebook_csv(roster, lab, results)
    if roster is not None and roster.gradebook is not None and text is not None:
        write_atomically(out / LMS_FILES[roster.gradebook], text)
