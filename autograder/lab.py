"""A lab: its solution and student notebooks, its tasks and points, what to capture, and its graders. A
course's labs are imported as ``autograder.labs.<lab>`` too, so a course's copy of a bundled lab takes
its place."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import nbformat

from autograder.paths import BUNDLED_LABS, LABS_PACKAGE, Course, CourseFileError, bundled_root, current_course

if TYPE_CHECKING:
    from autograder.facts import TaskCapture


class LabError(LookupError):
    """No such lab, or the lab's files are missing."""


class NotAssigned(LabError):
    """The lab exists but its student notebook does not: ``autograder assign`` has not written it yet."""


def _lab_folders(labs_dir: Path) -> list[str]:
    return sorted(p.parent.name for p in labs_dir.glob("*/__init__.py") if p.is_file())


def bundled_lab_ids() -> list[str]:
    return _lab_folders(BUNDLED_LABS)


def course_in_view() -> Course | None:
    """The course folder commands work on, or None; LabError where its marker cannot be read."""
    try:
        return current_course()
    except CourseFileError as exc:
        raise LabError(str(exc)) from exc


def _course_lab_ids(course: Course | None) -> list[str]:
    if course is None or course.is_bundled:
        return []
    return _lab_folders(course.labs_dir)


def lab_ids() -> list[str]:
    bundled = bundled_lab_ids()
    return bundled + [lab_id for lab_id in _course_lab_ids(course_in_view()) if lab_id not in bundled]


@dataclass(frozen=True)
class Task:
    id: str
    points: float


@dataclass(frozen=True)
class Lab:
    id: str
    root: Path  # where its solutions/ and assignments/ are
    package_dir: Path  # its captures, reference and graders

    @property
    def solution_path(self) -> Path:
        return self.root / "solutions" / self.id / f"{self.id}.ipynb"

    @property
    def assignment_path(self) -> Path:
        return self.root / "assignments" / self.id / f"{self.id}.ipynb"

    @property
    def is_bundled(self) -> bool:
        return self.package_dir.parent.resolve() == BUNDLED_LABS

    @property
    def known_grades_path(self) -> Path:
        return self.root / "tests" / "labs" / f"{self.id}_submissions.py"

    @property
    def grader_path(self) -> Path:
        return self.package_dir / f"test_{self.id}.py"

    @property
    def grader_paths(self) -> tuple[Path, ...]:
        """``test_<lab>.py``, then each ``test_<lab>_<part>.py`` by name: the order the checks run in."""
        parts = sorted(self.package_dir.glob(f"test_{self.id}_*.py"))
        return (self.grader_path, *parts)

    @property
    def kernel_probe_path(self) -> Path | None:
        path = self.package_dir / "kernel_probe.py"
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

    def package_name(self) -> str:
        labs = importlib.import_module(LABS_PACKAGE)
        if str(self.package_dir.parent) not in labs.__path__:
            labs.__path__.insert(0, str(self.package_dir.parent))
        return f"{labs.__name__}.{self.id}"

    @property
    def package(self) -> ModuleType:
        """Imported by Python's import system, whose locks make a second thread wait for the whole module."""
        return importlib.import_module(self.package_name())

    @property
    def captures_in_init(self) -> bool:
        """A course's lab written before captures had a module of their own: its ``__init__`` holds
        ``CAPTURES`` and imports its reference."""
        return not (self.package_dir / "captures.py").is_file()

    @cached_property
    def captures(self) -> dict[str, TaskCapture]:
        module = self.package if self.captures_in_init else importlib.import_module(f"{self.package_name()}.captures")
        return {c.task: c for c in module.CAPTURES}

    @property
    def reference(self) -> ModuleType:
        """The lab's ``reference.py`` (it imports JAX: the grader's side only). A lab whose ``__init__`` holds
        its captures imports ``reference`` from there too: its package is imported first, else a thread
        importing ``reference`` and another reading ``captures`` would deadlock."""
        if self.captures_in_init:
            self.package  # noqa: B018  (imported first, on its own)
        return importlib.import_module(f"{self.package_name()}.reference")


def load_lab(lab_id: str) -> Lab:
    course = course_in_view()
    if course is not None and lab_id in _course_lab_ids(course):
        return Lab(lab_id, course.root, course.labs_dir / lab_id)
    if lab_id in bundled_lab_ids():
        return Lab(lab_id, bundled_root(), BUNDLED_LABS / lab_id)
    where = f" (and the course at {course.root})" if course and not course.is_bundled else " (no course folder here)"
    raise LabError(f"unknown lab {lab_id!r}; labs{where}: {', '.join(lab_ids())}")


def lab_of_notebook(nb: nbformat.NotebookNode) -> str | None:
    """The lab id ``assign`` wrote into a notebook's metadata, if it survived."""
    meta = nb.metadata.get("autograder")
    lab = meta.get("lab") if isinstance(meta, dict) else None
    return lab if isinstance(lab, str) and lab in lab_ids() else None
