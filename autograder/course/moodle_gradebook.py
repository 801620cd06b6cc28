"""The class's final grades as Moodle's assignment imports them (``OUT/moodle-grades.csv``).

Moodle's assignment takes back its own grading worksheet ("Download grading worksheet", then "Upload
grading worksheet"). Its import reads ``Identifier``, ``Grade`` and ``Last modified (grade)``; it skips a
grade above the maximum, and one older than the grade Moodle holds unless the upload's "Allow updating
records that have been modified more recently in Moodle than in the spreadsheet" is ticked.
docs/instructors.md says what is filled, with the worksheet (``template``) and without one.

Sources: MoodleDocs' "Assignment settings", Feedback types, "Offline grading worksheet"
(https://docs.moodle.org/401/en/index.php?title=Assignment_settings), a walk-through of downloading and
filling the worksheet (http://itrascastro.github.io/moodle-offline-task-grading-spreadsheet), and the
import, ``assignfeedback_offline_grade_importer`` in moodle/moodle
``mod/assign/feedback/offline/importgradeslib.php`` with ``process_import_grades`` in its ``locallib.php``.
"""

from __future__ import annotations

import re

from autograder.course.lms_roster import LmsError, LmsStudent, csv_text, grade_cell, number_in, read_export

COLUMNS = [
    "Identifier",
    "Full name",
    "Email address",
    "Status",
    "Grade",
    "Maximum grade",
    "Grade can be changed",
    "Last modified (submission)",
    "Last modified (grade)",
    "Feedback comments",
]
NEEDED = ("Identifier", "Full name", "Grade", "Maximum grade", "Last modified (grade)")  # the import reads these


def participant_number(identifier: str) -> str | None:
    """``Participant 12345`` -> ``12345``."""
    match = re.fullmatch(r"\D*(\d+)\s*", identifier)
    return match.group(1) if match else None


def moodle_gradebook_csv(
    max_score: float, grades: list[tuple[LmsStudent, float | None]], template: str | None = None
) -> str:
    """The worksheet for ``grades``: each student with their final score out of ``max_score`` (None: no
    grade to give, such as the grader's own failure, and the cell keeps what the worksheet had)."""
    if template is None:
        header, rows = list(COLUMNS), list[list[str]]()
    else:
        header, rows = read_export(template)
        if missing := [name for name in NEEDED if name not in header]:
            raise LmsError(
                f"--lms-template: expected Moodle's grading worksheet ({', '.join(COLUMNS)}); it lacks "
                f"{', '.join(missing)}"
            )
    identifier, name, grade, maximum = (header.index(n) for n in ("Identifier", "Full name", "Grade", "Maximum grade"))
    points = next((p for p in (number_in(row[maximum]) for row in rows) if p), max_score)
    by_number = {student.lms_id: score for student, score in grades if student.lms_id is not None}
    present: set[str | None] = set()
    for row in rows:
        number = participant_number(row[identifier]) or ""
        present.add(number)
        found = by_number.get(number)
        if found is not None:
            row[grade] = grade_cell(found * (number_in(row[maximum]) or points) / max_score)
    for student, score in grades:
        if student.lms_id not in present:
            cells = [""] * len(header)
            cells[identifier], cells[name] = f"Participant {student.lms_id}", student.name
            cells[maximum] = f"{points:.2f}"
            cells[grade] = "" if score is None else grade_cell(score * points / max_score)
            rows.append(cells)
            present.add(student.lms_id)
    return csv_text([header, *rows])
