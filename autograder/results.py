"""A submission's grade: per task and per check, with how the run went; Gradescope's results.json."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from autograder.grading import CheckResult
from autograder.sandbox import LEVEL_DESCRIPTIONS

# Every status a submission can end with; "graded" means the notebook ran to its end.
STATUSES = ("graded", "timeout", "kernel died", "kernel failed to start", "not a notebook", "unknown lab",
            "grader error")


@dataclass(frozen=True)
class TaskResult:
    task: str
    max_score: float
    checks: tuple[CheckResult, ...]

    @property
    def score(self) -> float:
        return sum(c.score for c in self.checks)

    @property
    def passed(self) -> bool:
        return all(c.passed for c in self.checks)


@dataclass(frozen=True)
class GradeResult:
    lab: str | None
    notebook: str
    status: str
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
    sandbox: str | None = None  # the level the kernel ran at (sandbox.py); None when no kernel ran

    @property
    def score(self) -> float:
        return sum(t.score for t in self.tasks)

    def summary(self) -> str:
        """What happened to the run, in a few lines (the top of every report)."""
        lines = [f"Status: {self.status}" + (f" — {self.reason}" if self.reason else "")]
        if self.ended_at:
            lines.append(f"The run ended at {self.ended_at}; tasks after it could not be graded.")
        lines += list(self.changes) + list(self.notes)
        if self.sandbox:
            lines.append(f"Sandbox: {LEVEL_DESCRIPTIONS.get(self.sandbox, self.sandbox)}")
        return "\n".join(lines)

    def to_dict(self) -> dict:
        data = asdict(self)
        data["score"] = self.score
        return data

    @classmethod
    def from_dict(cls, data: dict) -> "GradeResult":
        data = dict(data)
        data.pop("score", None)
        tasks = tuple(TaskResult(t["task"], t["max_score"], tuple(CheckResult(**c) for c in t["checks"]))
                      for t in data.pop("tasks", ()))
        for key in ("changes", "cell_errors", "notes"):
            data[key] = tuple(data.get(key, ()))
        return cls(tasks=tasks, **data)

    def to_gradescope(self, hidden_visibility: str = "after_published", stdout_visibility: str = "hidden") -> dict:
        """Gradescope's results.json: one test per check. Hidden checks get ``hidden_visibility``
        ("hidden", "after_due_date" or "after_published") and say nothing but that they failed;
        the run's stdout (the grader's log) is shown as ``stdout_visibility``."""
        tests = []
        for task in self.tasks:
            for check in task.checks:
                output = "" if check.passed else check.message
                if check.hidden and not check.passed:
                    output = hidden_failure(check)
                tests.append({
                    "name": f"{task.task}: {check.title}", "score": check.score, "max_score": check.points,
                    "status": "passed" if check.passed else "failed", "output": output,
                    "visibility": hidden_visibility if check.hidden else "visible",
                })
        return {
            "score": self.score, "execution_time": round(self.seconds, 1), "output": self.summary(),
            "stdout_visibility": stdout_visibility, "tests": tests,
            "extra_data": {"lab": self.lab, "max_score": self.max_score, "status": self.status,
                           "reason": self.reason, "seed": self.seed, "sandbox": self.sandbox},
        }


def hidden_failure(check: CheckResult) -> str:
    """What a student reads of a failed hidden check: its task and points, never its content."""
    return f"A hidden check of task {check.task} failed (0/{check.points:g} points)."
