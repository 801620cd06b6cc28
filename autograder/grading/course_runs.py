"""What a run of the course's own notebook gets that a student's never does.

The course's own notebooks are the lab's solution, its untouched student notebook and the known-grade
cases of ``autograder test`` (``course_notebook``). Their kernels read the programs the lab's solution
compiled (run/kernels/compiled_programs.py), an answer key a student's kernel must never see, and keep
large blocks from the start (``saves_memory`` off, run/kernels/malloc.py): they need not fit a student's
container (docs/how-grading-works.md, "One grade", step 2, says what each saves)."""

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
    """The lab's compiled programs for the run of ``notebook``: filled by the lab's own solution while no
    run has left them, else read by it and by the course's own notebooks (``course_notebook``). None for a
    student's notebook, a lab without its solution here, or with ``AUTOGRADER_COMPILED_PROGRAMS`` off (a
    benchmark's comparison)."""
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
