"""A rule of the harness that an environment variable can turn off, for a benchmark's comparison: the
timed turns (``AUTOGRADER_TIMED_TURNS``) and grading processes pinned to cores (``AUTOGRADER_PIN_WORKERS``:
a batch's workers, a grading pool's processes) read their variable the same way."""

from __future__ import annotations

import os

OFF = ("off", "0", "false", "no")


def switched_off(variable: str) -> bool:
    """Whether ``variable`` says off (any case); unset, or any other value, is on."""
    return os.environ.get(variable, "on").lower() in OFF
