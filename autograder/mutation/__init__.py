"""Mutation testing of a lab's graders, for the TA: how hard they are to fool. The solution's answers are
changed as students err (and rewritten in right forms that must keep full marks), graded as a batch, and
counted (docs/how-grading-works.md maps the modules). Above the course's batches, which it uses.
"""

from typing import TYPE_CHECKING

from autograder.doors import lazy_exports

if TYPE_CHECKING:
    from autograder.mutation.grading import MutantGradingOptions, grade_mutants
    from autograder.mutation.mutants import LabMutants, Mutant, lab_mutants
    from autograder.mutation.operators import OPERATORS
    from autograder.mutation.report import (
        EquivalentsError,
        MutationReport,
        mutation_report,
        print_report,
        recorded_equivalents,
    )
    from autograder.mutation.source_mutants import VARIANTS
    from autograder.mutation.text_mutants import OPERATORS as TEXT_OPERATORS

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
