"""When the grader may time code itself: never while a student's kernel of this process runs cells, whose
load it would measure."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

_changed = threading.Condition()
_running = 0


def _count(change: int) -> None:
    global _running
    with _changed:
        _running += change
        _changed.notify_all()


@contextlib.contextmanager
def student_code_running() -> Iterator[None]:
    """Hold while a student's kernel of this process is running cells."""
    _count(1)
    try:
        yield
    finally:
        _count(-1)


def wait_for_quiet(timeout: float | None = None) -> bool:
    """Wait until no student kernel of this process runs cells; False if ``timeout`` passed first."""
    with _changed:
        return _changed.wait_for(lambda: _running == 0, timeout)


@contextlib.contextmanager
def not_running() -> Iterator[None]:
    """Held by a kernel that holds ``student_code_running`` but waits, running nothing."""
    _count(-1)
    try:
        yield
    finally:
        _count(1)
