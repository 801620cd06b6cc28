"""The uid level with Landlock for one test: bubblewrap left out, the uid level allowed though this
checkout is readable by any user (Landlock keeps it from the kernel), and a Python the kernel's uid can
run (searchable_python.py). Skipped where it cannot be: not root, or no Landlock in this OS kernel.

A test whose grading runs in other processes (a batch's Dask workers) cannot patch them: it hides
bubblewrap from their PATH and runs them from a private copy of the harness (``private_harness``), as
the uid level asks of the harness's files."""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from searchable_python import python_searchable_by_all, restore_modes

import autograder.run.sandbox.bubblewrap
from autograder.lab import Lab
from autograder.paths import COURSE_FILE, PACKAGE_DIR
from autograder.run.sandbox.confinement import landlock_problem


def skip_without_the_uid_level() -> None:
    if os.geteuid() != 0:
        pytest.skip("the uid level needs root (CI runs as root)")
    if landlock_problem() is not None:
        pytest.skip(f"no Landlock in this OS kernel: {landlock_problem()}")


@contextlib.contextmanager
def python_for_the_uid_level() -> Iterator[None]:
    """The folders above this Python searchable by the kernels' uids while the test runs."""
    restore = python_searchable_by_all()
    try:
        yield
    finally:
        restore_modes(restore)


@contextlib.contextmanager
def at_the_uid_level(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    skip_without_the_uid_level()
    monkeypatch.setattr(autograder.run.sandbox.bubblewrap, "sandbox_problem", lambda: "bubblewrap left out by the test")
    monkeypatch.setattr(autograder.run.sandbox.bubblewrap, "uid_sandbox_problem", lambda: None)
    with python_for_the_uid_level():
        yield


def private_harness(folder: Path, lab: Lab) -> Path:
    """A copy of this checkout's harness (the package, the course marker, ``lab``'s notebooks) in
    ``folder``, which must be private (0700): the checkout to run a command from (its folder and
    ``PYTHONPATH``), whose files no other user can read."""
    checkout = folder / "checkout"
    shutil.copytree(PACKAGE_DIR, checkout / "autograder", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(PACKAGE_DIR.parent / COURSE_FILE, checkout / COURSE_FILE)
    for notebook in (lab.solution_path, lab.assignment_path):
        target = checkout / notebook.relative_to(PACKAGE_DIR.parent)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(notebook, target)
    return checkout
