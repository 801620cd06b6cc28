"""The final grades as the LMS's grade import, written beside grades.csv whenever the grades are
(``--gradebook canvas|moodle``), filling the LMS's own export (``template``) when one is given;
docs/instructors.md says which columns are kept and filled.

A grading that failed through no fault of the student gives no grade, so the import leaves that student's
grade as it was.

Canvas imports the CSV its Gradebook exports and matches rows by ``ID``. Sources: Canvas's guide "How do I
import grades in the Gradebook?"
(https://community.canvaslms.com/t5/Instructor-Guide/How-do-I-import-grades-in-the-Gradebook/ta-p/807),
the columns an import needs as a university's guide lists them
(https://teaching.resources.osu.edu/toolsets/carmencanvas/guides/calculating-final-grades/import-csv-file-carmen-grades),
the export's notes (https://ts.vcu.edu/askit/teaching-and-learning/canvas/faculty/grading-faculty/gradebook-action-menu-faculty/),
and the export itself, ``GradebookExporter#csv_data`` in instructure/canvas-lms ``lib/gradebook_exporter.rb``.

Moodle's assignment takes back its own grading worksheet ("Download grading worksheet", then "Upload
grading worksheet"). Its import reads ``Identifier``, ``Grade`` and ``Last modified (grade)``; it skips a
grade above the maximum, and one older than the grade Moodle holds unless the upload's "Allow updating
records that have been modified more recently in Moodle than in the spreadsheet" is ticked. Sources:
MoodleDocs' "Assignment settings", Feedback types, "Offline grading worksheet"
(https://docs.moodle.org/401/en/index.php?title=Assignment_settings), a walk-through of downloading and
filling the worksheet (http://itrascastro.github.io/moodle-offline-task-grading-spreadsheet), and the
import, ``assignfeedback_offline_grade_importer`` in moodle/moodle
``mod/assign/feedback/offline/importgradeslib.php`` with ``process_import_grades`` in its ``locallib.php``.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

from autograder.course.lms_submissions import LmsError, LmsRoster, LmsStudent, load_roster, squash
from autograder.grading import GRADING_FAULTS, GradeResult, write_atomically

Grades = list[tuple[LmsStudent, float | None]]  # each student, and their score or None: no grade to give
LMS_FILES = {"canvas": "canvas-grades.csv", "moodle": "moodle-grades.csv"}
CANVAS_IDENTITY = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
POINTS_POSSIBLE = "    Points Possible"
_ASSIGNMENT = re.compile(r".+ \(\d+\)")
MOODLE_COLUMNS = [
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
MOODLE_NEEDED = ("Identifier", "Full name", "Grade", "Maximum grade", "Last modified (grade)")  # the import reads these


def lms_gradebook_csv(roster: LmsRoster, lab: str, results: dict[str, GradeResult]) -> str:
    """The import CSV of ``roster``'s LMS for the students it knows (``results`` are some)."""
    max_score = max(result.max_score for result in results.values())
    grades = [
        (roster.students[student], None if result.status in GRADING_FAULTS else result.score)
        for student, result in sorted(results.items())
        if student in roster.students and roster.students[student].lms == roster.gradebook
    ]
    return lms_csv(roster.gradebook, lab, max_score, grades, roster.template)


def lms_csv(gradebook: str | None, lab: str, max_score: float, grades: Grades, template: str | None) -> str:
    """That LMS's import CSV; raises ``LmsError`` when ``template`` is not the LMS's own export."""
    if gradebook == "canvas":
        return canvas_gradebook_csv(lab, max_score, grades, template)
    return moodle_gradebook_csv(max_score, grades, template)


def publish_lms_gradebook(out: Path, lab: str, results: dict[str, GradeResult]) -> None:
    roster = load_roster(out)
    if roster is not None and roster.gradebook is not None and results:
        write_atomically(out / LMS_FILES[roster.gradebook], lms_gradebook_csv(roster, lab, results))


def grade_cell(score: float) -> str:
    """A score as both LMSs' imports read it: at most two decimals, no exponent, no thousands separator."""
    return f"{round(score, 2):.2f}".rstrip("0").rstrip(".")


def number_in(cell: str) -> float | None:
    """A positive number an LMS's export writes (a decimal comma too), or None."""
    try:
        return float(cell.replace(",", ".")) or None
    except ValueError:
        return None


def read_export(template: str) -> tuple[list[str], list[list[str]]]:
    """An LMS's own CSV export: its header and its rows but the blank ones, each as wide as the header."""
    table = list(csv.reader(io.StringIO(template.lstrip("\ufeff"))))
    header = table[0] if table else []
    return header, [(row + [""] * len(header))[: len(header)] for row in table[1:] if any(c.strip() for c in row)]


def csv_text(rows: list[list[str]]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    return buffer.getvalue()


def canvas_gradebook_csv(lab: str, max_score: float, grades: Grades, template: str | None = None) -> str:
    """Canvas's Gradebook import, each score out of ``max_score``; a student with no grade keeps the export's."""
    header, rows = _template(template, lab, max_score)
    column, id_column = len(header) - 1, header.index("ID")
    points_row = next((row for row in rows if row[0].strip() == POINTS_POSSIBLE.strip()), None)
    points = (number_in(points_row[column]) if points_row else None) or max_score
    by_id = {student.lms_id: score for student, score in grades if student.lms_id is not None}
    for row in rows:
        score = by_id.get(row[id_column])
        if score is not None:
            row[column] = grade_cell(score * points / max_score)
    present = {row[id_column] for row in rows}
    for student, score in grades:
        if not student.lms_id or student.lms_id not in present:
            cells = [""] * len(header)
            cells[0], cells[id_column] = student.name, student.lms_id or ""
            cells[column] = "" if score is None else grade_cell(score * points / max_score)
            rows.append(cells)
            present.add(student.lms_id or "")
    return csv_text([header, *rows])


def _template(template: str | None, lab: str, max_score: float) -> tuple[list[str], list[list[str]]]:
    """The header and rows to fill: the identity columns and the lab's, of the export or of Canvas."""
    if template is None:
        return [*CANVAS_IDENTITY, lab], [[POINTS_POSSIBLE, "", "", "", "", grade_cell(max_score)]]
    header, rows = read_export(template)
    if "ID" not in header or "Section" not in header:
        raise LmsError(
            "--lms-template: expected Canvas's Gradebook export (Student, ID, SIS User ID, SIS Login ID, "
            f"Section, then the assignments); found {', '.join(header) or 'nothing'}"
        )
    identity = header.index("Section") + 1
    assignments = [i for i, name in enumerate(header) if i >= identity and _ASSIGNMENT.fullmatch(name)]
    named = [i for i in assignments if squash(lab) in squash(header[i])]
    chosen = assignments if len(assignments) == 1 else named
    if len(chosen) != 1:
        listed = ", ".join(header[i] for i in assignments) or "none"
        raise LmsError(
            f"--lms-template: cannot tell which assignment is {lab}: the export's assignments are {listed}; "
            "export the Gradebook with the lab's assignment alone shown, or name it for the lab"
        )
    keep = [*range(identity), chosen[0]]
    return [header[i] for i in keep], [[row[i] for i in keep] for row in rows]


def participant_number(identifier: str) -> str | None:
    """``Participant 12345`` -> ``12345``."""
    match = re.fullmatch(r"\D*(\d+)\s*", identifier)
    return match.group(1) if match else None


def moodle_gradebook_csv(max_score: float, grades: Grades, template: str | None = None) -> str:
    """Moodle's grading worksheet, each score out of ``max_score``; a student with no grade keeps the worksheet's."""
    if template is None:
        header, rows = list(MOODLE_COLUMNS), list[list[str]]()
    else:
        header, rows = read_export(template)
        if missing := [name for name in MOODLE_NEEDED if name not in header]:
            raise LmsError(
                f"--lms-template: expected Moodle's grading worksheet ({', '.join(MOODLE_COLUMNS)}); it lacks "
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
