"""A submission with known grades: which answer cells it fills, and what each task must score."""

from dataclasses import dataclass, field

from submission_notebooks import SOLUTION


@dataclass(frozen=True)
class Case:
    name: str
    answers: dict  # task -> answer source(s), or SOLUTION; unanswered tasks stay blank
    # task -> expected points, leaving out the lab's MEASURED_VERDICTS (lab_submissions.py); tasks not named score 0
    scores: dict
    status: str = "graded"
    cell_timeout: float = 120.0
    messages: dict = field(default_factory=dict)  # task -> text that a failing message must contain


def solved(*tasks):
    """Answers: the solution's, for these tasks."""
    return {t: SOLUTION for t in tasks}
