"""Whether a lab's student notebook is what ``autograder assign`` would write from its solution now: the
commands that grade with it refuse an older one.

The comparison loads otter-grader, some 2.5 s, where a grade should pay a few milliseconds: a verdict that
the notebook is current is kept in the cache, keyed by both notebooks, the code that writes student
notebooks and otter-grader's version. A stale verdict is never kept.
"""

from __future__ import annotations

import contextlib
import hashlib
from importlib import metadata
from pathlib import Path

from autograder.caches import cache_root, make_private_dirs, source_hash
from autograder.grading import write_atomically
from autograder.lab import Lab

ASSIGN_MODULE = "autograder.authoring.assign"  # imported only to compare: it loads unittest.mock and asyncio


def _verdict_file(lab: Lab) -> Path:
    """The key of the last comparison that found the student notebook current."""
    where = str(lab.assignment_path.resolve()).encode()
    return cache_root() / "assignments" / f"{lab.id}-{hashlib.sha256(where).hexdigest()[:16]}"


def _key(lab: Lab) -> str:
    """What the student notebook ``assign`` writes depends on: the solution, the lab id, the code."""
    try:
        otter = metadata.version("otter-grader")
    except metadata.PackageNotFoundError:
        otter = ""
    digest = hashlib.sha256()
    for part in (
        lab.id.encode(),
        lab.solution_path.read_bytes(),
        lab.assignment_path.read_bytes(),
        source_hash(ASSIGN_MODULE).encode(),
        otter.encode(),
    ):
        digest.update(f"{len(part)}\0".encode() + part)
    return digest.hexdigest()


def stale_assignment(lab: Lab) -> str | None:
    """Why ``lab``'s student notebook is not what ``assign`` would write now; None when it is, or when a
    notebook is missing (grading says so itself)."""
    if not (lab.solution_path.is_file() and lab.assignment_path.is_file()):
        return None
    key, verdict = _key(lab), _verdict_file(lab)
    with contextlib.suppress(OSError, UnicodeDecodeError):
        if verdict.read_text(encoding="ascii") == key:
            return None
    from autograder.authoring.assign import assign_lab

    try:
        stale = assign_lab(lab.solution_path, lab.assignment_path, lab.id, compare_only=True).changed
    except ValueError as exc:  # the solution's markers are malformed, or it is not a notebook
        return (
            f"{lab.solution_path} cannot be assigned ({exc}), so {lab.assignment_path} may not match it: "
            f"fix the solution and run `autograder assign {lab.id}`"
        )
    if not stale:
        with contextlib.suppress(OSError):  # a cache that cannot be written only means comparing again
            make_private_dirs(verdict.parent)
            write_atomically(verdict, key)
        return None
    return (
        f"{lab.assignment_path} is not what `autograder assign` writes from {lab.solution_path} now "
        f"(the solution, or the harness, changed since it was written): run `autograder assign {lab.id}`"
    )
