"""The instructor's adjustments and writing the outputs they change. A grader's overrides are kept in
``OUT/overrides.csv`` (student, task, points, comment, grader[, time]): a later row replaces an earlier one
(``auto``: back to the automatic points), so the file also records who changed what. They and the late policy
(late.py) are applied to the automatic result kept in grade.json whenever outputs are written, so they survive
a rerun and a regrade."""

from __future__ import annotations

import csv
import io
import math
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from autograder.course.class_summary import class_summary_html
from autograder.course.gradebook import gradebook_csv, load_results, write_student
from autograder.course.late import Extension, LatePolicy, apply_late, load_policy, read_extensions
from autograder.course.lms_gradebook import publish_lms_gradebook
from autograder.grading import GradeResult, ManualScore, TaskResult, feedback_html, write_atomically
from autograder.lab import load_lab

REPORT_FILE = "report.html"
GRADES_FILE = "grades.csv"
OVERRIDES_FILE = "overrides.csv"
COLUMNS = ("student", "task", "points", "comment", "grader", "time")
REQUIRED = COLUMNS[:5]
AUTO = "auto"  # as the points: back to the automatic points


class OverrideError(ValueError):
    """Overrides that cannot be applied; the message names each bad row."""


@dataclass(frozen=True)
class Override:
    student: str
    task: str
    points: float | None  # None: back to the automatic points
    comment: str
    grader: str
    time: str | None = None
    line: int = 0  # in overrides.csv (0: not from the file)


def parse_points(text: str) -> float | None:
    """Points as written in a row or on the command line; None for ``auto``; ValueError otherwise."""
    text = text.strip()
    if text.lower() == AUTO:
        return None
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"points {text!r} are not a number (or {AUTO!r})") from None
    if not math.isfinite(value):
        raise ValueError(f"points {text!r} are not a finite number")
    return value


def parse_overrides(text: str, source: str = OVERRIDES_FILE) -> list[Override]:
    """The rows of an overrides file; raises ``OverrideError`` naming every row that cannot be read."""
    reader = csv.DictReader(io.StringIO(text))
    header = [name.strip() for name in reader.fieldnames or []]
    if not text.strip():
        return []
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise OverrideError(
            f"{source}: expected the columns {', '.join(REQUIRED)} (and optionally time); "
            f"found {', '.join(header) or 'no header'}"
        )
    rows, problems = [], []
    for row in reader:
        row = {(k or "").strip(): (v or "").strip() if isinstance(v, str) else "" for k, v in row.items()}
        line = reader.line_num
        if not any(row.get(c) for c in REQUIRED):
            continue  # a blank line
        try:
            points = parse_points(row["points"])
        except ValueError as exc:
            problems.append(f"{source} line {line}: {exc}")
            continue
        rows.append(
            Override(row["student"], row["task"], points, row["comment"], row["grader"], row.get("time") or None, line)
        )
    if problems:
        raise OverrideError("\n".join(problems))
    return rows


def validate_overrides(
    rows: list[Override], students: set[str], task_points: dict[str, float], source: str = OVERRIDES_FILE
) -> None:
    """Raise ``OverrideError`` naming every row with an unknown student or task or points out of range."""
    problems = []
    for row in rows:
        where = f"{source} line {row.line}" if row.line else "the override"
        if row.student not in students:
            problems.append(f"{where}: unknown student {row.student!r} (no submission of that name was graded)")
        if row.task not in task_points:
            problems.append(f"{where}: unknown task {row.task!r}; the tasks are {', '.join(task_points)}")
        elif row.points is not None and not 0 <= row.points <= task_points[row.task]:
            problems.append(f"{where}: {row.points:g} points for {row.task} are outside 0..{task_points[row.task]:g}")
    if problems:
        raise OverrideError("\n".join(problems))


def load_overrides(out: Path, students: set[str], task_points: dict[str, float]) -> dict[str, dict[str, Override]]:
    """OUT's overrides in force, checked against ``students`` and the tasks (``OverrideError`` if not)."""
    path = out / OVERRIDES_FILE
    rows = parse_overrides(path.read_text(encoding="utf-8"), str(path)) if path.is_file() else []
    validate_overrides(rows, students, task_points, str(path))
    return current_overrides(rows)


def current_overrides(rows: list[Override]) -> dict[str, dict[str, Override]]:
    """student -> task -> the override in force (the last row for that pair, unless it says ``auto``)."""
    current: dict[str, dict[str, Override]] = {}
    for row in rows:
        tasks = current.setdefault(row.student, {})
        if row.points is None:
            tasks.pop(row.task, None)
        else:
            tasks[row.task] = row
    return {student: tasks for student, tasks in current.items() if tasks}


def apply_overrides(result: GradeResult, overrides: dict[str, Override], task_points: dict[str, float]) -> GradeResult:
    """``result`` with these overrides, and no other; a task it lacks is added, so a grader can score it by hand."""
    tasks = []
    for task in result.tasks:
        row = overrides.get(task.task)
        tasks.append(replace(task, override=_manual(row) if row else None))
    present = {t.task for t in result.tasks}
    for task_id, row in overrides.items():
        if task_id not in present:
            tasks.append(TaskResult(task_id, task_points[task_id], (), _manual(row)))
    order = list(task_points)
    tasks.sort(key=lambda t: order.index(t.task) if t.task in order else len(order))
    return replace(result, tasks=tuple(tasks))


def _manual(row: Override) -> ManualScore:
    assert row.points is not None  # an `auto` row is no override in force (current_overrides drops it)
    return ManualScore(row.points, row.comment, row.grader, row.time)


def append_override(out: Path, row: Override, students: set[str], task_points: dict[str, float]) -> None:
    """Add ``row`` to ``OUT/overrides.csv`` once it and every row there are checked."""
    load_overrides(out, students, task_points)
    validate_overrides([row], students, task_points)
    path = out / OVERRIDES_FILE
    existing = path.read_text(encoding="utf-8") if path.is_file() else ""
    if not existing.strip():
        existing = ",".join(COLUMNS)
    existing += "" if existing.endswith("\n") else "\n"
    buffer = io.StringIO()
    values = asdict(row) | {"points": AUTO if row.points is None else f"{row.points:g}", "time": row.time or ""}
    columns = next(csv.reader(io.StringIO(existing)))  # the file's own, in its order
    csv.writer(buffer, lineterminator="\n").writerow([values.get(name.strip(), "") for name in columns])
    write_atomically(path, existing + buffer.getvalue())


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


def refresh(out: Path, lab: str, adjustments: Adjustments, results: dict[str, GradeResult]) -> None:
    """Rewrite the students whose outputs ``adjustments`` change (``results`` updated in place), then the summaries."""
    for student in sorted(results):
        adjusted = adjustments.apply(student, results[student])
        if adjusted != results[student]:
            publish_student(out, student, adjusted)
            results[student] = adjusted
    publish_summaries(out, lab, list(adjustments.task_points), results)


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
    before = results[student]
    refresh(out, lab.id, Adjustments.load(out, task_points, set(results)), results)
    return before, results[student]
