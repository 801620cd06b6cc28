"""Authoring, for the TA: from a lab's solution notebook to the notebook students receive, and new labs.

``markers`` reads the solution's task regions and answers, and ``assign`` writes the student's notebook,
with the self-check cells, one after each task (``self_check_cell_text`` writes them, and the run's
plan recognises them); ``assign_verification`` grades what ``assign`` wrote (solution full marks, blank
notebook zero) before it is handed out, and ``assignment_freshness`` says whether a student notebook is
still what ``assign`` writes, before a command grades with it. ``new_lab`` scaffolds a lab that runs
(solution notebook, captures, reference, graders, known-grade submissions), opening with ``setup_cell``,
every lab's first cell. ``lab_tests`` runs every test of one lab (``autograder test``). Above grading,
which it uses.
"""

from typing import TYPE_CHECKING

from autograder.doors import lazy_exports

if TYPE_CHECKING:
    from autograder.authoring.assign import assign_lab
    from autograder.authoring.assign_verification import verification_problems
    from autograder.authoring.assignment_freshness import stale_assignment
    from autograder.authoring.lab_tests import run_lab_tests
    from autograder.authoring.markers import has_solution, parse_questions, read_solution
    from autograder.authoring.new_lab import NewLabError, scaffold_lab
    from autograder.authoring.requirement_table import task_texts, text_literals
    from autograder.authoring.setup_cell import STUDENT_DISTRIBUTION

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
