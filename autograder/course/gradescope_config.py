"""A Gradescope assignment's settings: what the zip's config.json holds and run_autograder grades with."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from autograder.run import ResourceLimits

CONFIG_FILE = "config.json"
LAB_DIR = "lab"  # in the source folder: the project root of the lab's notebooks ($AUTOGRADER_ROOT)
HIDDEN_VISIBILITIES = ("hidden", "after_due_date", "after_published")  # Gradescope's, for hidden checks


class GradescopeError(RuntimeError):
    """The zip cannot be built here, or the container holds no usable configuration."""


@dataclass(frozen=True)
class GradescopeConfig:
    """The settings run_autograder grades with (config.json in the zip)."""

    lab: str
    hidden_visibility: str = "after_published"
    cell_timeout: float = 120.0
    total_timeout: float = 480.0  # under Gradescope's default limit of 10 minutes, so results are written
    memory_gib: float = 4.0

    def __post_init__(self):
        if self.hidden_visibility not in HIDDEN_VISIBILITIES:
            raise GradescopeError(f"hidden_visibility must be one of {', '.join(HIDDEN_VISIBILITIES)}, "
                                  f"not {self.hidden_visibility!r}")

    def limits(self):
        from autograder.run import Limits

        return Limits(cell_timeout=self.cell_timeout, total_timeout=self.total_timeout,
                      sandbox=ResourceLimits(memory_bytes=int(self.memory_gib * 2**30)))


def read_config(source: Path) -> GradescopeConfig:
    try:
        data = json.loads((source / CONFIG_FILE).read_text(encoding="utf-8"))
        return GradescopeConfig(**data)
    except (OSError, ValueError, TypeError) as exc:
        raise GradescopeError(f"{source / CONFIG_FILE} is missing or malformed: {exc}") from None
