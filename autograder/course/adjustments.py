"""The instructor's adjustments (overrides, the late policy) and writing the outputs they change: applied to
the automatic result kept in grade.json whenever outputs are written, so they survive a rerun and a regrade."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from autograder.course.class_summary import class_summary_html
from autograder.course.gradebook import gradebook_csv, load_results, write_student
from autograder.course.late import Extension, LatePolicy, apply_late, load_policy, read_extensions
from autograder.course.lms_gradebook import publish_lms_gradebook
from autograder.course.overrides import (
    Override,
    OverrideError,
    append_override,
    apply_overrides,
    load_overrides,
    parse_points,
)
from autograder.grading import GradeResult, feedback_html, write_atomically
from autograder.lab import load_lab

REPORT_FILE = "report.html"
GRADES_FILE = "grades.csv"


@dataclass(frozen=True)
class Adjustments:
    task_points: dict[str, float]  # the lab's tasks and their points, in order
    overrides: dict[str, dict[str, Override]]  # student -> task -> override in force
    policy: LatePolicy | None
    extensions: dict[str, Extension] = field(default_factory=dict)  # student -> a later due date

    @classmethod
    def load(cls, out: Path, task_points: dict[str, float], students: set[str]) -> Adjustments:
        """Raises ``OverrideError`` or ``LatePolicyError`` with what is wrong in OUT's files."""
        overrides = load_overrides(out, students, task_points)
        return cls(dict(task_points), overrides, load_policy(out), read_extensions(out, students))

    def apply(self, student: str, result: GradeResult) -> GradeResult:
        """The student's result as published: automatic points, then overrides, then the late penalty."""
        adjusted = apply_overrides(result.automatic(), self.overrides.get(student, {}), self.task_points)
        return apply_late(adjusted, self.policy, self.extensions.get(student))


def publish_student(out: Path, student: str, result: GradeResult) -> None:
    write_student(out, student, result, feedback_html(result, student))


def publish_summaries(out: Path, lab: str, task_ids: list[str], results: dict[str, GradeResult]) -> None:
    write_atomically(out / GRADES_FILE, gradebook_csv(results, task_ids))
    write_atomically(out / REPORT_FILE, class_summary_html(results, lab, task_ids))
    publish_lms_gradebook(out, lab, results)


def refresh(out: Path, adjustments: Adjustments, results: dict[str, GradeResult]) -> None:
    """Rewrite the students whose outputs ``adjustments`` change (``results`` updated in place)."""
    for student in sorted(results):
        adjusted = adjustments.apply(student, results[student])
        if adjusted != results[student]:
            publish_student(out, student, adjusted)
            results[student] = adjusted


def record_override(
    out: Path, student: str, task: str, points: str, comment: str, grader: str
) -> tuple[GradeResult, GradeResult]:
    """Append an override and rewrite the outputs; the student's result before and after (``OverrideError``)."""
    results = load_results(out) if out.is_dir() else {}
    if not results:
        raise OverrideError(f"{out} holds no graded student: run `autograder batch` first")
    labs = {r.lab for r in results.values() if r.lab}
    if len(labs) != 1:
        raise OverrideError(f"{out} holds results of {len(labs)} labs ({', '.join(sorted(labs))}); expected one")
    lab = load_lab(labs.pop())
    task_points = {t.id: t.points for t in lab.tasks}
    try:
        value = parse_points(points)
    except ValueError as exc:
        raise OverrideError(f"the override: {exc}") from None
    when = datetime.now(UTC).isoformat(timespec="seconds")
    append_override(out, Override(student, task, value, comment, grader, when), set(results), task_points)
    adjustments = Adjustments.load(out, task_points, set(results))
    before = results[student]
    results[student] = adjustments.apply(student, before)
    publish_student(out, student, results[student])
    publish_summaries(out, lab.id, list(task_points), results)
    return before, results[student]
