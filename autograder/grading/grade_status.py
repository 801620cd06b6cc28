"""Every status a submission's grade can end with: how its run ended, or why it was not run. A member is
its text (``StrEnum``), so a status read back from results.json or grade.json equals its member."""

from enum import StrEnum

from autograder.run import RunStatus


class GradeStatus(StrEnum):
    GRADED = "graded"  # the notebook ran to its end
    TIMEOUT = RunStatus.TIMEOUT.value
    KERNEL_DIED = RunStatus.KERNEL_DIED.value
    # what grades saved before ``harness error`` existed say for it; read back, it is one
    KERNEL_FAILED_TO_START = RunStatus.KERNEL_FAILED_TO_START.value
    NOT_A_NOTEBOOK = "not a notebook"
    UNKNOWN_LAB = "unknown lab"
    GRADER_ERROR = "grader error"
    HARNESS_ERROR = "harness error"

    @classmethod
    def of_run(cls, status: str) -> "GradeStatus":
        """A completed run is graded; one whose kernel never started is the harness's error."""
        if status == RunStatus.COMPLETED:
            return cls.GRADED
        if status == RunStatus.KERNEL_FAILED_TO_START:
            return cls.HARNESS_ERROR
        return cls(status)


# What a student reads when the harness failed them: it is no grade, and what to do.
HARNESS_ERROR_ADVICE = (
    "This is not your fault, and not a grade: the grading machine could not run your notebook. "
    "Resubmit it, or ask your instructor if this happens again."
)

# The harness's error (its kernel never started, however often tried), under both its names.
HARNESS_ERRORS = (GradeStatus.HARNESS_ERROR, GradeStatus.KERNEL_FAILED_TO_START)
# The grading's own faults, not the submission's, and no score: a batch grades them again.
GRADING_FAULTS = (GradeStatus.GRADER_ERROR, *HARNESS_ERRORS)
