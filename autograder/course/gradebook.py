"""The class's results on disk: one folder per student, written atomically, and the CSV gradebook."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime
from pathlib import Path

from autograder.grading import GRADING_FAULTS, RESULTS_FILE, GradeResult, write_atomically, write_results_json

GRADE_FILE = "grade.json"  # the full result, written last: its presence means "graded"
FEEDBACK_FILE = "feedback.html"
LOG_FILE = "graded.log"  # one line per grading, in the order they finished


def write_student(out: Path, student: str, result: GradeResult, feedback_html: str) -> None:
    """Write one student's files, each atomically, the full result last."""
    folder = out / student
    write_results_json(folder / RESULTS_FILE, result.to_gradescope())
    write_atomically(folder / FEEDBACK_FILE, feedback_html)
    write_atomically(folder / GRADE_FILE, json.dumps(result.to_dict(), indent=1) + "\n")


def log_grading(out: Path, student: str, result: GradeResult, kind: str = "graded") -> None:
    """One line in graded.log: student, status, automatic score, when, and whether it was a regrade."""
    when = datetime.now(UTC).isoformat(timespec="seconds")
    with open(out / LOG_FILE, "a", encoding="utf-8") as log:
        log.write(f"{student}\t{result.status}\t{result.auto_score:g}\t{when}\t{kind}\n")


def load_results(out: Path) -> dict[str, GradeResult]:
    """Every student's saved result; unreadable ones are skipped (and graded again)."""
    results = {}
    for path in sorted(out.glob(f"*/{GRADE_FILE}")):
        try:
            results[path.parent.name] = GradeResult.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError, KeyError):
            continue
    return results


def is_done(result: GradeResult | None) -> bool:
    return result is not None and result.status not in GRADING_FAULTS  # a rerun grades a fault again


def gradebook_csv(results: dict[str, GradeResult], task_ids: list[str]) -> str:
    """One row per student: the final grade first, then how it came to be."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    header = ["student", "lab", "score", "max_score", "status", "reason", *task_ids]
    header += ["raw_score", "late_penalty", "auto_score", *[f"{t}_auto" for t in task_ids]]
    writer.writerow([*header, "submitted_at", "late", "overrides", "sandbox"])
    for student in sorted(results):
        result = results[student]
        per_task = {t.task: f"{t.score:g}" for t in result.tasks}
        auto = {t.task: f"{t.auto_score:g}" for t in result.tasks}
        overrides = "; ".join(
            f"{t.task}: {t.auto_score:g} → {t.score:g} by {override.grader} ({override.comment})"
            for t, override in result.overrides
        )
        row = [student, result.lab or "", f"{result.score:g}", f"{result.max_score:g}", result.status]
        row += [result.reason or "", *[per_task.get(t, "0") for t in task_ids]]
        row += [f"{result.raw_score:g}", f"{result.penalty:g}", f"{result.auto_score:g}"]
        row += [auto.get(t, "0") for t in task_ids]
        row += [result.submitted_at or "", result.late.reason if result.late else "", overrides, result.sandbox or ""]
        writer.writerow(row)
    return buffer.getvalue()
