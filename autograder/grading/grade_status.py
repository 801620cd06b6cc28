"""Every status a submission's grade can end with: how its run ended, or why it was not run.

``StrEnum`` members are their text, so results.json, the gradebook's CSV and grade.json keep the same
words, and a status read back from a file compares equal to its member.
"""

from enum import StrEnum

from autograder.run import RunStatus


class GradeStatus(StrEnum):
    GRADED = "graded"  # the notebook ran to its end
    TIMEOUT = RunStatus.TIMEOUT.value
    KERNEL_DIED = RunStatus.KERNEL_DIED.value
    KERNEL_FAILED_TO_START = RunStatus.KERNEL_FAILED_TO_START.value
    NOT_A_NOTEBOOK = "not a notebook"
    UNKNOWN_LAB = "unknown lab"
    GRADER_ERROR = "grader error"

    @classmethod
    def of_run(cls, status: str) -> "GradeStatus":
        """The grade's status for a run that ended with ``status``: a completed run is graded."""
        return cls.GRADED if status == RunStatus.COMPLETED else cls(status)
