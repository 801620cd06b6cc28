"""The class's final grades as Moodle's assignment imports them (``OUT/moodle-grades.csv``).

Moodle's assignment takes back its own grading worksheet ("Download grading worksheet", then "Upload
grading worksheet"): ``Identifier`` (``Participant 12345``, the number the download's folders carry),
``Full name``, the identity fields the site shows (``Email address``...), ``Status``, ``Grade``,
``Maximum grade``, ``Grade can be changed``, ``Last modified (submission)``, the submission plugins'
columns, ``Last modified (grade)`` and ``Feedback comments``. Its import reads ``Identifier``, ``Grade``
and ``Last modified (grade)`` (and the feedback columns); it skips a grade above the maximum, and one
whose ``Last modified (grade)`` is older than the grade Moodle holds unless the upload's "Allow updating
records that have been modified more recently in Moodle than in the spreadsheet" is ticked. Given the
worksheet (``template``), every column and row is kept as it is and each student's ``Grade`` is filled,
scaled to the worksheet's ``Maximum grade``. Without one, the file has the worksheet's columns with
``Identifier``, ``Full name``, ``Grade`` and ``Maximum grade`` filled and the rest blank. A student of the
download missing from the worksheet gets a row of their own at the end.

Sources: MoodleDocs' "Assignment settings", Feedback types, "Offline grading worksheet"
(https://docs.moodle.org/401/en/index.php?title=Assignment_settings), a walk-through of downloading and
filling the worksheet (http://itrascastro.github.io/moodle-offline-task-grading-spreadsheet), and the
import, ``assignfeedback_offline_grade_importer`` in moodle/moodle
``mod/assign/feedback/offline/importgradeslib.php`` with ``process_import_grades`` in its ``locallib.php``.
"""

from __future__ import annotations

import csv
import io
import re

from autograder.course.lms_roster import LmsError, LmsStudent, grade_cell

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
        header, rows = list(COLUMNS), []
    else:
        table = list(csv.reader(io.StringIO(template.lstrip("\ufeff"))))
        header = table[0] if table else []
        if missing := [name for name in NEEDED if name not in header]:
            raise LmsError(
                f"--lms-template: expected Moodle's grading worksheet ({', '.join(COLUMNS)}); it lacks "
                f"{', '.join(missing)}"
            )
        rows = [(row + [""] * len(header))[: len(header)] for row in table[1:] if any(c.strip() for c in row)]
    identifier, name, grade, maximum = (header.index(n) for n in ("Identifier", "Full name", "Grade", "Maximum grade"))
    points = next((p for p in (_number(row[maximum]) for row in rows) if p), max_score)
    by_number = {student.lms_id: score for student, score in grades if student.lms_id is not None}
    present: set[str | None] = set()
    for row in rows:
        number = participant_number(row[identifier]) or ""
        present.add(number)
        found = by_number.get(number)
        if found is not None:
            row[grade] = grade_cell(found * (_number(row[maximum]) or points) / max_score)
    for student, score in grades:
        if student.lms_id not in present:
            cells = [""] * len(header)
            cells[identifier], cells[name] = f"Participant {student.lms_id}", student.name
            cells[maximum] = f"{points:.2f}"
            cells[grade] = "" if score is None else grade_cell(score * points / max_score)
            rows.append(cells)
            present.add(student.lms_id)
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows([header, *rows])
    return buffer.getvalue()


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", ".")) or None
    except ValueError:
        return None
