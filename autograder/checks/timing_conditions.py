"""What a timing check allows for the load each side met: the student's timed cells and the grader's
measurement each read the share of the processors that other work took meanwhile (fairness/others_load.py).
A time taken under more load than the other side's may be as many times longer as its stretch is larger;
the grader's, taken under more load, may have left the student's as many times shorter.

The student's share is read by the harness, outside the kernel, for the check's task; the grading sets it
for each check (``students_load``), so that every lab's timing checks allow for it without naming it. With
neither side loaded (an idle machine, a quota, a check run outside a grading) nothing is allowed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass

from autograder.fairness import stretch

_STUDENT_SHARE: ContextVar[Callable[[], float | None]] = ContextVar("student_share", default=lambda: None)


@contextlib.contextmanager
def students_load(share: Callable[[], float | None]) -> Iterator[None]:
    """Within it, timing checks read the share others took of the processors while the student's timed
    cells ran from ``share`` (asked for when a check needs it: by then the task's cells have run)."""
    token = _STUDENT_SHARE.set(share)
    try:
        yield
    finally:
        _STUDENT_SHARE.reset(token)


@dataclass(frozen=True)
class LoadAllowance:
    """How many times longer (``slower``) or shorter (``faster``) than the grader's band a student's time
    may be because the two sides met different loads; both 1 when they met the same."""

    slower: float
    faster: float
    student_share: float | None
    grader_share: float | None

    def describe(self) -> str:
        """Why the band was widened, for a failure's message; empty when it was not."""
        if self.slower == self.faster == 1.0:
            return ""
        student, grader = _percent(self.student_share), _percent(self.grader_share)
        widened = f"{self.slower:.2g}× higher" if self.slower > 1 else f"{self.faster:.2g}× lower"
        return (
            f" (other work took {student} of the processors while your timed cells ran, {grader} while the grader"
            f" measured: the range reaches {widened} for it)"
        )


def load_allowance(grader_share: float | None) -> LoadAllowance:
    """The allowance for the check under way, given the share others took during the grader's measurement."""
    student_share = _STUDENT_SHARE.get()()
    student, grader = stretch(student_share), stretch(grader_share)
    return LoadAllowance(max(1.0, student / grader), max(1.0, grader / student), student_share, grader_share)


def _percent(share: float | None) -> str:
    return "an unknown share" if share is None else f"{share:.0%}"
