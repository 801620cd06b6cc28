"""Which runs use the programs the lab's solution compiled (run/compiled_programs.py): the run of the
solution leaves them, the runs of the course's own notebooks read them, and a student's run never sees
them (they are an answer key)."""

from __future__ import annotations

from pathlib import Path

from autograder.lab import Lab
from autograder.run import COMPILED_PROGRAMS_VARIABLE, CompiledPrograms, compiled_programs_folder, switched_off


def compiled_programs(lab: Lab, notebook: Path, course_notebook: bool) -> CompiledPrograms | None:
    """The lab's compiled programs for the run of ``notebook``: filled by the lab's own solution while no
    run has left them, else read by it and by the course's own notebooks (``course_notebook``). None for a
    student's notebook, a lab without its solution here, or with ``AUTOGRADER_COMPILED_PROGRAMS`` off (a
    benchmark's comparison)."""
    solution = lab.solution_path
    if switched_off(COMPILED_PROGRAMS_VARIABLE) or not solution.is_file():
        return None
    is_solution = notebook.resolve() == solution.resolve()
    if not (is_solution or course_notebook):
        return None
    try:
        reads = CompiledPrograms(compiled_programs_folder(lab.id, solution))
    except OSError:
        return None
    return CompiledPrograms(reads.folder, fill=True) if is_solution and not reads.left() else reads
