"""The class's final grades as Canvas's Gradebook imports them (``OUT/canvas-grades.csv``).

Canvas imports the CSV its Gradebook exports and matches rows by ``ID``; docs/instructors.md says which
columns are kept and filled, with the Gradebook's own export (``template``) and without one.

Sources: Canvas's guide "How do I import grades in the Gradebook?"
(https://community.canvaslms.com/t5/Instructor-Guide/How-do-I-import-grades-in-the-Gradebook/ta-p/807),
the columns an import needs as a university's guide lists them
(https://teaching.resources.osu.edu/toolsets/carmencanvas/guides/calculating-final-grades/import-csv-file-carmen-grades),
the export's notes (https://ts.vcu.edu/askit/teaching-and-learning/canvas/faculty/grading-faculty/gradebook-action-menu-faculty/),
and the export itself, ``GradebookExporter#csv_data`` in instructure/canvas-lms ``lib/gradebook_exporter.rb``.
"""

from __future__ import annotations

import re

from autograder.course.lms_roster import LmsError, LmsStudent, csv_text, grade_cell, number_in, read_export, squash

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
    """The header and rows to fill: the export's identity columns and the lab's assignment column, its
    rows in its order; or, without an export, Canvas's identity columns, a column for the lab and the
    Points Possible row."""
    if template is None:
        return [*IDENTITY, lab], [[POINTS_POSSIBLE, "", "", "", "", grade_cell(max_score)]]
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
