"""The refusal of a command that would grade with a student notebook older than its solution, and the
option that lifts it: ``grade``, ``check``, ``test``, ``batch`` and ``gradescope`` each ask before they
start anything, so that a solution edited and not yet assigned is not graded with its old tasks and points.

A student's own ``ag.check`` in Jupyter never asks (it runs no command, and students have no solution);
nor do a batch's Dask workers, as the batch asked before it started them, nor Gradescope's container,
whose zip was refused at build time.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

OPTION = "--allow-stale-assignment"


def add_stale_assignment_option(parser: argparse.ArgumentParser, what: str = "grade") -> None:
    parser.add_argument(
        OPTION,
        action="store_true",
        help=f"{what} even when the lab's student notebook under assignments/ is not what `autograder assign` "
        "writes from its solution now (by default the command stops: run `autograder assign LAB`)",
    )


def notebook_lab(notebook: str) -> str | None:
    """The lab a notebook's metadata names, or None (grading then says what is wrong with the notebook).
    Read as plain JSON, unvalidated: grading reads and validates it again, and that costs tens of ms."""
    import nbformat

    from autograder.lab import lab_of_notebook

    try:
        raw = json.loads(Path(notebook).read_bytes())
        return lab_of_notebook(nbformat.from_dict(raw)) if isinstance(raw, dict) else None
    except (OSError, ValueError, AttributeError):  # not a file, not JSON, no metadata: not this check's to say
        return None


def refuses_stale(args: argparse.Namespace, lab_id: str | None) -> bool:
    """Whether the command must stop because ``lab_id``'s student notebook is stale (said on stderr), unless
    ``args`` holds the option. An unknown lab is left to the command, which names it."""
    if lab_id is None or getattr(args, OPTION.removeprefix("--").replace("-", "_")):
        return False
    from autograder.authoring import stale_assignment
    from autograder.lab import LabError, load_lab

    try:
        reason = stale_assignment(load_lab(lab_id))
    except LabError:
        return False
    if reason is None:
        return False
    print(f"autograder: {reason} (or pass {OPTION} to use the student notebook as it is)", file=sys.stderr)
    return True
