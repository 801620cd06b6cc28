"""The outcome of one check of one submission, as plain data (the graders' output)."""

from __future__ import annotations

from dataclasses import dataclass


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
