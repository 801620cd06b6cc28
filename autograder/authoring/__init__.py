"""Authoring, for the TA: from a lab's solution notebook to the notebook students receive (verified by
grading both), new labs, and the tests of one lab (docs/how-grading-works.md maps the modules). Above
grading, which it uses.
"""

from typing import TYPE_CHECKING

from autograder.doors import lazy_exports

if TYPE_CHECKING:
    from autograder.authoring.assign import assign_lab
    from autograder.authoring.assignment_freshness import stale_assignment
    from autograder.authoring.grade_expectations import verification_problems
    from autograder.authoring.lab_suite import run_lab_tests
    from autograder.authoring.markers import has_solution, parse_questions, read_solution
    from autograder.authoring.new_lab import NewLabError, scaffold_lab
    from autograder.authoring.requirement_table import task_texts, text_literals
    from autograder.authoring.setup_cell import STUDENT_DISTRIBUTION

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
