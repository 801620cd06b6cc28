"""How a run of a notebook's cells ended, and how one cell's run ended: the words results and logs keep.

``StrEnum`` members are their text: written to JSON or CSV, and compared with text read back, they are
the plain words they always were.
"""

from enum import StrEnum


class RunStatus(StrEnum):
    """How the run of a whole notebook ended."""

    COMPLETED = "completed"  # every cell ran (some may have raised)
    TIMEOUT = "timeout"
    KERNEL_DIED = "kernel died"
    KERNEL_FAILED_TO_START = "kernel failed to start"


class CellStatus(StrEnum):
    """How one cell's run ended."""

    OK = "ok"
    ERROR = "error"
    TIMEOUT = "timeout"
