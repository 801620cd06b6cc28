"""A submission's grade: per check (the graders' output), per task, with the status its run ended with (a
``StrEnum``: read back from a file, it equals its member); Gradescope's results.json, written by one function
whoever grades, and the grade's files, each replaced at once (never half written)."""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from autograder.run import LEVEL_DESCRIPTIONS, RunStatus


@dataclass(frozen=True)
class CheckResult:
    task: str
    name: str
    title: str
    points: float
    passed: bool
    message: str
    hidden: bool
    grader_error: bool = False
    expected_picture: str | None = None
    found_picture: str | None = None

    @property
    def score(self) -> float:
        return self.points if self.passed else 0.0


class GradeStatus(StrEnum):
    GRADED = "graded"  # the notebook ran to its end
    TIMEOUT = RunStatus.TIMEOUT.value
    KERNEL_DIED = RunStatus.KERNEL_DIED.value
    # what grades saved before ``harness error`` existed say for it; read back, it is one
    KERNEL_FAILED_TO_START = RunStatus.KERNEL_FAILED_TO_START.value
    NOT_A_NOTEBOOK = "not a notebook"
    UNKNOWN_LAB = "unknown lab"
    GRADER_ERROR = "grader error"
    HARNESS_ERROR = "harness error"

    @classmethod
    def of_run(cls, status: str) -> GradeStatus:
        """A completed run is graded; one whose kernel never started is the harness's error."""
        if status == RunStatus.COMPLETED:
            return cls.GRADED
        if status == RunStatus.KERNEL_FAILED_TO_START:
            return cls.HARNESS_ERROR
        return cls(status)


# What a student reads when the harness failed them: it is no grade, and what to do.
HARNESS_ERROR_ADVICE = (
    "This is not your fault, and not a grade: the grading machine could not run your notebook. "
    "Resubmit it, or ask your instructor if this happens again."
)

# The harness's error (its kernel never started, however often tried), under both its names.
HARNESS_ERRORS = (GradeStatus.HARNESS_ERROR, GradeStatus.KERNEL_FAILED_TO_START)
# The grading's own faults, not the submission's, and no score: a batch grades them again.
GRADING_FAULTS = (GradeStatus.GRADER_ERROR, *HARNESS_ERRORS)


@dataclass(frozen=True)
class ManualScore:
    """A grader's points for a task, replacing the automatic points (which the checks keep)."""

    points: float
    comment: str
    grader: str
    at: str | None = None  # when it was recorded (ISO 8601)


@dataclass(frozen=True)
class LatePenalty:
    """How late a submission was and what it cost; ``points`` come off the score after overrides."""

    due: str  # ISO 8601
    submitted_at: str | None  # ISO 8601; None when the submission time is unknown
    time_source: str | None  # where the submission time comes from, in words (None if no one said)
    seconds_late: float
    percent: float
    points: float
    reason: str

    @property
    def is_late(self) -> bool:
        return self.seconds_late > 0


@dataclass(frozen=True)
class TaskResult:
    task: str
    max_score: float
    checks: tuple[CheckResult, ...]
    override: ManualScore | None = None

    @property
    def auto_score(self) -> float:
        """The points the checks gave."""
        return sum(c.score for c in self.checks)

    @property
    def score(self) -> float:
        """The task's points: the grader's when overridden, else the automatic ones."""
        return self.override.points if self.override is not None else self.auto_score

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)


@dataclass(frozen=True)
class GradeResult:
    lab: str | None
    notebook: str
    status: GradeStatus
    reason: str | None
    max_score: float
    tasks: tuple[TaskResult, ...] = ()
    ended_at: str | None = None
    changes: tuple[str, ...] = ()
    cell_errors: tuple[str, ...] = ()
    seed: int | None = None
    seconds: float = 0.0
    public_only: bool = False
    notes: tuple[str, ...] = field(default_factory=tuple)
    sandbox: str | None = None  # the level the kernel ran at (run/sandbox/bubblewrap.py); None when no kernel ran
    submitted_at: str | None = None  # ISO 8601, when the student submitted (None: unknown)
    submitted_time_source: str | None = None  # where that time comes from, in words
    late: LatePenalty | None = None  # set when a late policy applies
    graded_by: dict = field(default_factory=dict)  # the harness's, JAX's, jaxlib's, NumPy's, Python's versions
    phases: dict = field(default_factory=dict)  # seconds per phase of the grading (run/phase_clock.py)
    turn_waits: dict = field(default_factory=dict)  # seconds waited behind others' timed turns, and whose

    @property
    def auto_score(self) -> float:
        """The score the checks gave, before any override or late penalty."""
        return sum(t.auto_score for t in self.tasks)

    @property
    def raw_score(self) -> float:
        """The score with the graders' overrides, before any late penalty."""
        return sum(t.score for t in self.tasks)

    @property
    def penalty(self) -> float:
        return self.late.points if self.late is not None else 0.0

    @property
    def score(self) -> float:
        """The final score: overrides applied, late penalty taken off."""
        return self.raw_score - self.penalty

    @property
    def overrides(self) -> tuple[tuple[TaskResult, ManualScore], ...]:
        """The tasks whose points a grader set, each with the grader's score."""
        return tuple((t, t.override) for t in self.tasks if t.override is not None)

    def automatic(self) -> GradeResult:
        """This result as the checks left it: no override (tasks only an override added are dropped), no penalty."""
        tasks = tuple(replace(t, override=None) for t in self.tasks if t.override is None or t.checks)
        return replace(self, tasks=tasks, late=None)

    def summary(self) -> str:
        """What happened to the run, in a few lines (the top of every report)."""
        lines = [f"Status: {self.status}" + (f" — {self.reason}" if self.reason else "")]
        if self.status in HARNESS_ERRORS:
            lines.insert(0, HARNESS_ERROR_ADVICE)
        if self.ended_at:
            lines.append(f"The run ended at {self.ended_at}; tasks after it could not be graded.")
        lines += list(self.changes) + list(self.notes)
        if self.sandbox:
            lines.append(f"Sandbox: {LEVEL_DESCRIPTIONS.get(self.sandbox, self.sandbox)}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return asdict(self) | {"score": self.score, "raw_score": self.raw_score, "auto_score": self.auto_score}

    @classmethod
    def from_dict(cls, data: dict) -> GradeResult:
        data = {key: value for key, value in data.items() if key not in ("score", "raw_score", "auto_score")}
        tasks = tuple(
            TaskResult(
                t["task"],
                t["max_score"],
                tuple(CheckResult(**c) for c in t["checks"]),
                ManualScore(**t["override"]) if t.get("override") else None,
            )
            for t in data.pop("tasks", ())
        )
        for key in ("changes", "cell_errors", "notes"):
            data[key] = tuple(data.get(key, ()))
        if data.get("late"):
            data["late"] = LatePenalty(**data["late"])
        data["status"] = GradeStatus(data["status"])
        return cls(tasks=tasks, **data)

    def to_gradescope(self, hidden_visibility: str = "after_published") -> dict:
        """Gradescope's results.json: one test per check. Hidden checks get ``hidden_visibility`` ("hidden",
        "after_due_date" or "after_published") and say nothing but that they failed; the grader's log is hidden."""
        tests = []
        for task in self.tasks:
            for check in task.checks:
                output = "" if check.passed else hidden_failure(check) if check.hidden else check.message
                tests.append(
                    {
                        "name": f"{task.task}: {check.title}",
                        "score": check.score,
                        "max_score": check.points,
                        "status": "passed" if check.passed else "failed",
                        "output": output,
                        "visibility": hidden_visibility if check.hidden else "visible",
                    }
                )
            if task.override is not None:
                change = f"{shown_points(task.auto_score)} → {shown_points(task.score)} points: {task.override.comment}"
                tests.append(_adjustment(f"{task.task}: points set by a grader", task.score - task.auto_score, change))
        if self.late is not None and self.late.points:
            tests.append(_adjustment("late penalty", -self.late.points, self.late.reason, "failed"))
        return {
            "score": self.score,
            "execution_time": round(self.seconds, 1),
            "output": self.summary(),
            "stdout_visibility": "hidden",
            "tests": tests,
            "extra_data": {
                "lab": self.lab,
                "max_score": self.max_score,
                "status": self.status,
                "reason": self.reason,
                "seed": self.seed,
                "sandbox": self.sandbox,
                "auto_score": self.auto_score,
                "raw_score": self.raw_score,
                "late_penalty": self.penalty,
                "submitted_at": self.submitted_at,
                "graded_by": self.graded_by,
                "phases": self.phases,  # where the grading's time went (run/phase_clock.py)
                "overrides": {
                    t.task: asdict(override) | {"auto_score": t.auto_score} for t, override in self.overrides
                },
            },
        }


def _adjustment(name: str, score: float, output: str, status: str = "passed") -> dict:
    """A test of results.json that is no check: it adds or takes off points, out of none."""
    return {"name": name, "score": score, "max_score": 0, "status": status, "visibility": "visible", "output": output}


def hidden_failure(check: CheckResult) -> str:
    """What a student reads of a failed hidden check: its task and points, never its content."""
    return f"A hidden check of task {check.task} failed (0/{check.points:g} points)."


def shown_points(value: float) -> str:
    """Points as every report shows them: ``3``, ``2.5``."""
    return f"{value:g}"


RESULTS_FILE = "results.json"  # Gradescope's format


def write_atomically(path: Path, text: str) -> None:
    """``text`` at ``path``: written beside it, then moved over it, so a reader sees the old file or the new."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_results_json(path: Path, data: dict[str, Any]) -> None:
    """Gradescope's ``results.json`` (``GradeResult.to_gradescope()``, with what the caller adds) at ``path``."""
    write_atomically(path, json.dumps(data, indent=2) + "\n")
