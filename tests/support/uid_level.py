"""The uid level with Landlock for one test: bubblewrap left out, the uid level allowed though this
checkout is readable by any user (Landlock keeps it from the kernel), and a Python the kernel's uid can
run (searchable_python.py). Skipped where it cannot be: not root, or no Landlock in this OS kernel."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import pytest
from searchable_python import python_searchable_by_all, restore_modes

import autograder.run.sandbox
from autograder.run.landlock import landlock_problem


@contextlib.contextmanager
def at_the_uid_level(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    if os.geteuid() != 0:
        pytest.skip("the uid level needs root (CI runs as root)")
    if landlock_problem() is not None:
        pytest.skip(f"no Landlock in this OS kernel: {landlock_problem()}")
    monkeypatch.setattr(autograder.run.sandbox, "sandbox_problem", lambda: "bubblewrap left out by the test")
    monkeypatch.setattr(autograder.run.sandbox, "uid_sandbox_problem", lambda: None)
    restore = python_searchable_by_all()
    try:
        yield
    finally:
        restore_modes(restore)
