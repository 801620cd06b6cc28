"""``autograder test LAB``: every test of one lab, as a TA runs them after each edit of the lab.

The tests are the checkout's own (``tests/`` beside ``solutions/``): those parametrized by the lab, which
``--lab`` selects (tests/conftest.py) — the solution's full marks and the untouched notebook's zero, each
known-grade case, the setup cell, the student notebook as ``assign`` wrote it and its check cells, the
plan, and the notebooks run as a student runs them (from the wheel, in a venv of their own). They need
a checkout installed with its test extra (``pip install -e '.[test]'``, ``.ci/setup``).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from autograder.lab import LabError, load_lab, project_root


def tests_folder() -> Path:
    """The checkout's ``tests/``; LabError where there is none (an installed wheel has no tests)."""
    folder = project_root() / "tests"
    if not (folder / "conftest.py").is_file():
        raise LabError(
            f"no tests at {folder}: `autograder test` runs a checkout's tests; run it in the lab's "
            "checkout (installed with `pip install -e '.[test]'`), or set AUTOGRADER_ROOT to it"
        )
    return folder


def lab_test_command(lab_id: str, pytest_args: Sequence[str] = ()) -> list[str]:
    """The pytest command that runs every test of ``lab_id`` (and ``pytest_args``, e.g. ``-x``)."""
    load_lab(lab_id)
    return [
        sys.executable,
        "-m",
        "pytest",
        str(tests_folder()),
        "--lab",
        lab_id,
        "-p",
        "no:cacheprovider",
        *pytest_args,
    ]


def run_lab_tests(lab_id: str, pytest_args: Sequence[str] = ()) -> int:
    """Run them in the checkout; pytest's exit status."""
    command = lab_test_command(lab_id, list(pytest_args))
    print(" ".join(command), flush=True)
    return subprocess.run(command, cwd=project_root()).returncode
