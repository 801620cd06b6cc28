"""A lab: its solution and student notebooks, its tasks and points, what to capture, and its graders."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import nbformat

from autograder.paths import PACKAGE_DIR, project_root

if TYPE_CHECKING:
    from autograder.facts import TaskCapture

LABS_PACKAGE = PACKAGE_DIR / "labs"


class LabError(LookupError):
    """No such lab, or the lab's files are missing."""


class NotAssigned(LabError):
    """The lab exists but its student notebook does not: ``autograder assign`` has not written it yet."""


def lab_ids() -> list[str]:
    return sorted(p.name for p in LABS_PACKAGE.iterdir() if (p / "__init__.py").is_file())


@dataclass(frozen=True)
class Task:
    id: str
    points: float


@dataclass(frozen=True)
class Lab:
    id: str
    root: Path

    @property
    def solution_path(self) -> Path:
        return self.root / "solutions" / self.id / f"{self.id}.ipynb"

    @property
    def assignment_path(self) -> Path:
        return self.root / "assignments" / self.id / f"{self.id}.ipynb"

    @property
    def grader_path(self) -> Path:
        return LABS_PACKAGE / self.id / f"test_{self.id}.py"

    @property
    def kernel_probe_path(self) -> Path | None:
        """The lab's own probe functions, run inside the kernel (optional)."""
        path = LABS_PACKAGE / self.id / "kernel_probe.py"
        return path if path.is_file() else None

    @cached_property
    def template(self) -> nbformat.NotebookNode:
        """The student notebook as ``assign`` wrote it: the trusted version of every locked cell."""
        if not self.assignment_path.is_file():
            raise NotAssigned(
                f"the student notebook of {self.id} is missing ({self.assignment_path}): "
                f"`autograder assign {self.id}` writes it"
            )
        return nbformat.read(self.assignment_path, as_version=4)

    @cached_property
    def tasks(self) -> tuple[Task, ...]:
        meta = self.template.metadata.get("autograder", {})
        return tuple(Task(t["id"], float(t["points"])) for t in meta.get("tasks", []))

    @property
    def max_score(self) -> float:
        return sum(t.points for t in self.tasks)

    @property
    def package(self) -> ModuleType:
        """The lab's package (``autograder.labs.<lab>``), imported by Python's import system, whose locks
        make a thread that asks for it while another imports it wait for the whole module."""
        return importlib.import_module(f"autograder.labs.{self.id}")

    @cached_property
    def captures(self) -> dict[str, TaskCapture]:
        return {c.task: c for c in self.package.CAPTURES}

    @property
    def reference(self) -> ModuleType:
        """The lab's ``reference.py``, imported on first use (it imports JAX: the grader's side only).

        The lab's package is imported first, on its own: its ``__init__`` imports ``reference`` too, and a
        thread importing ``reference`` before its package would hold that module's lock while waiting for the
        package's, which another thread (the run reading ``captures``, or pytest loading the graders) holds
        while waiting for ``reference``'s: Python breaks that deadlock with an error or a half-loaded lab."""
        self.package  # noqa: B018  (imported first, on its own)
        return importlib.import_module(f"autograder.labs.{self.id}.reference")


def load_lab(lab_id: str) -> Lab:
    if lab_id not in lab_ids():
        raise LabError(f"unknown lab {lab_id!r}; labs: {', '.join(lab_ids())}")
    return Lab(lab_id, project_root())


def lab_of_notebook(nb: nbformat.NotebookNode) -> str | None:
    """The lab id ``assign`` wrote into a notebook's metadata, if it survived."""
    meta = nb.metadata.get("autograder")
    lab = meta.get("lab") if isinstance(meta, dict) else None
    return lab if isinstance(lab, str) and lab in lab_ids() else None
