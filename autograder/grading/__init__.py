"""Grading: one notebook's grade, from the facts its run took; what a grade is made of, and how it is
printed, written and worded for the student (docs/how-grading-works.md maps the modules). The student's
self-check and the course's batches take ``GradeResult`` from here."""

from typing import TYPE_CHECKING

from autograder.doors import lazy_exports

if TYPE_CHECKING:
    from autograder.grading.feedback import feedback_html, scoped_style, task_section
    from autograder.grading.html_page import TABLE_STYLE, escape, escape_with_code, page_html
    from autograder.grading.pipeline import GradeOptions, grade_notebook, read_submission, warm_here
    from autograder.grading.pytest_plugin import GraderError, run_graders
    from autograder.grading.results import (
        GRADING_FAULTS,
        HARNESS_ERROR_ADVICE,
        HARNESS_ERRORS,
        RESULTS_FILE,
        CheckResult,
        GradeResult,
        GradeStatus,
        LatePenalty,
        ManualScore,
        TaskResult,
        shown_points,
        write_atomically,
        write_results_json,
    )
    from autograder.grading.terminal_table import print_grade
    from autograder.grading.versions import (
        DISTRIBUTION,
        STUDENT_DISTRIBUTION,
        grader_versions,
        tested_range,
        version_problem,
    )

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
