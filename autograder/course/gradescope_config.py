"""A Gradescope assignment's settings: what the zip's config.json holds and run_autograder grades with."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path

from autograder.run import GIB, Limits, ResourceLimits

CONFIG_FILE = "config.json"
LAB_DIR = "lab"  # in the source folder: the project root of the lab's notebooks ($AUTOGRADER_ROOT)
HIDDEN_VISIBILITIES = ("hidden", "after_due_date", "after_published")  # Gradescope's, for hidden checks
# A notebook has 480 s there, under Gradescope's default autograder timeout of 10 minutes, so that the results
# are written before Gradescope ends the run; and its kernel is always sandboxed.
GRADESCOPE_SANDBOX = ResourceLimits()
GRADESCOPE_LIMITS = replace(Limits(), total_timeout=480.0, sandbox=GRADESCOPE_SANDBOX)


class GradescopeError(RuntimeError):
    """The zip cannot be built here, or the container holds no usable configuration."""


@dataclass(frozen=True)
class GradescopeConfig:
    """The settings run_autograder grades with (config.json in the zip): its limits are ``GRADESCOPE_LIMITS``
    with the three an instructor may set (``autograder gradescope``'s options)."""

    lab: str
    hidden_visibility: str = "after_published"
    cell_timeout: float = GRADESCOPE_LIMITS.cell_timeout
    total_timeout: float = GRADESCOPE_LIMITS.total_timeout
    memory_gib: float = GRADESCOPE_SANDBOX.memory_bytes / GIB

    def __post_init__(self):
        if self.hidden_visibility not in HIDDEN_VISIBILITIES:
            raise GradescopeError(
                f"hidden_visibility must be one of {', '.join(HIDDEN_VISIBILITIES)}, not {self.hidden_visibility!r}"
            )

    def limits(self) -> Limits:
        sandbox = replace(GRADESCOPE_SANDBOX, memory_bytes=int(self.memory_gib * GIB))
        return replace(
            GRADESCOPE_LIMITS, cell_timeout=self.cell_timeout, total_timeout=self.total_timeout, sandbox=sandbox
        )


def read_config(source: Path) -> GradescopeConfig:
    try:
        data = json.loads((source / CONFIG_FILE).read_text(encoding="utf-8"))
        return GradescopeConfig(**data)
    except (OSError, ValueError, TypeError) as exc:
        raise GradescopeError(f"{source / CONFIG_FILE} is missing or malformed: {exc}") from None
