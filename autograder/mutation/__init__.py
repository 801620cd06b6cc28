"""Mutation testing of a lab's graders, for the TA: how hard they are to fool.

``operators`` makes the small changes students make in these labs (a jit dropped, a PartitionSpec entry swapped, a
collective replaced by a cousin, a timing without its warm-up ...), ``source_mutants`` tries them on a cell's answer
lines, ``text_mutants`` changes the literals the task's text names where the answer uses them, ``right_variants``
rewrites right answers in forms the text allows (they must keep full marks), ``mutants`` on the solution's answer
cells, ``grading`` grades each mutant as a submission on the batch machinery, ``equivalents`` reads the mutants a lab
accepts as equivalent, and ``report`` counts and shows what survived. Above the course's batches, which it uses."""

from typing import TYPE_CHECKING

from autograder.doors import lazy_exports

if TYPE_CHECKING:
    from autograder.mutation.equivalents import EquivalentsError, recorded_equivalents
    from autograder.mutation.grading import MutantGradingOptions, grade_mutants
    from autograder.mutation.mutants import LabMutants, Mutant, lab_mutants
    from autograder.mutation.operators import OPERATORS
    from autograder.mutation.report import MutationReport, mutation_report, print_report
    from autograder.mutation.right_variants import VARIANTS
    from autograder.mutation.text_mutants import OPERATORS as TEXT_OPERATORS

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
