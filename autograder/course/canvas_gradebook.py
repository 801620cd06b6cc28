"""The class's final grades as Canvas's Gradebook imports them (``OUT/canvas-grades.csv``).

Canvas imports the CSV its Gradebook exports: ``Student``, ``ID`` (the Canvas user id, which the
download's file names carry), ``SIS User ID``, ``SIS Login ID``, ``Section`` (with ``Integration ID`` and
``Root Account`` in some accounts), then a column per assignment named ``Assignment Name (assignment id)``;
its second row is ``    Points Possible`` with each assignment's points. It matches rows by the ids and
creates an assignment for a column it does not know. Given the Gradebook's own export (``template``), the
file keeps that export's identity columns and rows and the lab's assignment column (the one assignment
there, else the one named for the lab), and fills each student's grade there, scaled to the assignment's
points possible; other assignments' columns are left out, so the import changes nothing else. Without
one, the assignment column is named for the lab (Canvas offers to create it) and the SIS ids and Section
are blank. A student of the download missing from the export gets a row of their own at the end.

Sources: Canvas's guide "How do I import grades in the Gradebook?"
(https://community.canvaslms.com/t5/Instructor-Guide/How-do-I-import-grades-in-the-Gradebook/ta-p/807),
the columns an import needs as a university's guide lists them
(https://teaching.resources.osu.edu/toolsets/carmencanvas/guides/calculating-final-grades/import-csv-file-carmen-grades),
the export's notes (https://ts.vcu.edu/askit/teaching-and-learning/canvas/faculty/grading-faculty/gradebook-action-menu-faculty/),
and the export itself, ``GradebookExporter#csv_data`` in instructure/canvas-lms ``lib/gradebook_exporter.rb``.
"""

from __future__ import annotations

import csv
import io
import re

from autograder.course.lms_roster import LmsError, LmsStudent, grade_cell

IDENTITY = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
POINTS_POSSIBLE = "    Points Possible"
_ASSIGNMENT = re.compile(r".+ \(\d+\)")


def canvas_gradebook_csv(
    lab: str, max_score: float, grades: list[tuple[LmsStudent, float | None]], template: str | None = None
) -> str:
    """The import CSV for ``grades``: each student with their final score out of ``max_score`` (None: no
    grade to give, such as the grader's own failure, and the cell keeps what the export had)."""
    header, rows = _template(template, lab, max_score)
    column, id_column = len(header) - 1, header.index("ID")
    points_row = next((row for row in rows if row[0].strip() == POINTS_POSSIBLE.strip()), None)
    points = (_number(points_row[column]) if points_row else None) or max_score
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
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows([header, *rows])
    return buffer.getvalue()


def _template(template: str | None, lab: str, max_score: float) -> tuple[list[str], list[list[str]]]:
    """The header and rows to fill: the export's identity columns and the lab's assignment column, its
    rows in its order; or, without an export, Canvas's identity columns, a column for the lab and the
    Points Possible row."""
    if template is None:
        return [*IDENTITY, lab], [[POINTS_POSSIBLE, "", "", "", "", grade_cell(max_score)]]
    table = list(csv.reader(io.StringIO(template.lstrip("\ufeff"))))
    header = table[0] if table else []
    if "ID" not in header or "Section" not in header:
        raise LmsError(
            "--lms-template: expected Canvas's Gradebook export (Student, ID, SIS User ID, SIS Login ID, "
            f"Section, then the assignments); found {', '.join(header) or 'nothing'}"
        )
    identity = header.index("Section") + 1
    assignments = [i for i, name in enumerate(header) if i >= identity and _ASSIGNMENT.fullmatch(name)]
    named = [i for i in assignments if _squash(lab) in _squash(header[i])]
    chosen = assignments if len(assignments) == 1 else named
    if len(chosen) != 1:
        listed = ", ".join(header[i] for i in assignments) or "none"
        raise LmsError(
            f"--lms-template: cannot tell which assignment is {lab}: the export's assignments are {listed}; "
            "export the Gradebook with the lab's assignment alone shown, or name it for the lab"
        )
    keep = [*range(identity), chosen[0]]
    rows = [[(row + [""] * len(header))[i] for i in keep] for row in table[1:] if any(cell.strip() for cell in row)]
    return [header[i] for i in keep], rows


def _squash(text: str) -> str:
    return "".join(c for c in text.lower() if c.isalnum())


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", ".")) or None
    except ValueError:
        return None
