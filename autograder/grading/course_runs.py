"""What a run of the course's own notebook (the lab's solution, its untouched student notebook, a known-grade
case) gets that a student's never does: the programs the solution compiled, an answer key, and a malloc that
keeps large blocks (docs/how-grading-works.md, "One grade", step 2)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from autograder.fairness import switched_off
from autograder.lab import Lab
from autograder.run import COMPILED_PROGRAMS_VARIABLE, CompiledPrograms, Limits, compiled_programs_folder


def is_solution(lab: Lab, notebook: Path) -> bool:
    """Is ``notebook`` the lab's own solution, at its place in the course?"""
    solution = lab.solution_path
    return solution.is_file() and notebook.resolve() == solution.resolve()


def course_limits(limits: Limits, lab: Lab, notebook: Path, course_notebook: bool) -> Limits:
    """The run's limits: a course's own notebook's kernel keeps large blocks (``saves_memory`` off)."""
    return replace(limits, saves_memory=False) if course_notebook or is_solution(lab, notebook) else limits


def compiled_programs(lab: Lab, notebook: Path, course_notebook: bool) -> CompiledPrograms | None:
    """The lab's compiled programs, filled by its own solution while none are left, else read by it and by the
    course's own notebooks; None for a student's notebook, or with ``AUTOGRADER_COMPILED_PROGRAMS`` off."""
    solution = lab.solution_path
    if switched_off(COMPILED_PROGRAMS_VARIABLE) or not solution.is_file():
        return None
    own = is_solution(lab, notebook)
    if not (own or course_notebook):
        return None
    try:
        reads = CompiledPrograms(compiled_programs_folder(lab.id, solution))
    except OSError:
        return None
    return CompiledPrograms(reads.folder, fill=True) if own and not reads.left() else reads
