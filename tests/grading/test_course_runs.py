"""What a run of the course's own notebook gets (grading/pipeline.py): its kernel keeps large blocks
(``saves_memory`` off) for the lab's solution and for a notebook graded as the course's; a student's
notebook, wherever it lies, keeps the limits it was given."""

import shutil
from dataclasses import replace

from autograder.grading.pipeline import course_limits
from autograder.lab import load_lab
from autograder.run.sandbox.limits import Limits

LAB = load_lab("lab1_distributed_arrays")
GIVEN = replace(Limits(), cell_timeout=30.0)


def test_the_solution_and_the_courses_notebooks_keep_large_blocks_and_nothing_else_changes():
    assert course_limits(GIVEN, LAB, LAB.solution_path, course_notebook=False) == replace(GIVEN, saves_memory=False)
    assert course_limits(GIVEN, LAB, LAB.assignment_path, course_notebook=True) == replace(GIVEN, saves_memory=False)


def test_a_students_notebook_keeps_the_given_limits_even_as_a_copy_of_the_solution(tmp_path):
    copy = tmp_path / LAB.solution_path.name
    shutil.copyfile(LAB.solution_path, copy)
    assert course_limits(GIVEN, LAB, copy, course_notebook=False) == GIVEN
    assert course_limits(GIVEN, LAB, LAB.assignment_path, course_notebook=False) == GIVEN
    assert GIVEN.saves_memory is None  # left to the machine that runs it (kernels/malloc.memory_decided)
