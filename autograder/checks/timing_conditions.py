"""What a timing check allows for the load each side met (docs/how-grading-works.md, "The load each side
met"); the grading sets the student's share for each check (``students_load``), so that no lab names it."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass

from autograder.fairness import stretch

_STUDENT_SHARE: ContextVar[Callable[[], float | None]] = ContextVar("student_share", default=lambda: None)


@contextlib.contextmanager
def students_load(share: Callable[[], float | None]) -> Iterator[None]:
    """Timing checks read the student's share from ``share``, asked when needed: by then the task's cells ran."""
    token = _STUDENT_SHARE.set(share)
    try:
        yield
    finally:
        _STUDENT_SHARE.reset(token)


@dataclass(frozen=True)
class LoadAllowance:
    """How many times longer (``slower``) or shorter (``faster``) a student's time may be for the loads met."""

    slower: float
    faster: float
    student_share: float | None
    grader_share: float | None

    def describe(self) -> str:
        if self.slower == self.faster == 1.0:
            return ""
        student, grader = _percent(self.student_share), _percent(self.grader_share)
        widened = f"{self.slower:.2g}× higher" if self.slower > 1 else f"{self.faster:.2g}× lower"
        return (
            f" (other work took {student} of the processors while your timed cells ran, {grader} while the grader"
            f" measured: the range reaches {widened} for it)"
        )


def load_allowance(grader_share: float | None) -> LoadAllowance:
    student_share = _STUDENT_SHARE.get()()
    student, grader = stretch(student_share), stretch(grader_share)
    return LoadAllowance(max(1.0, student / grader), max(1.0, grader / student), student_share, grader_share)


def _percent(share: float | None) -> str:
    return "an unknown share" if share is None else f"{share:.0%}"
