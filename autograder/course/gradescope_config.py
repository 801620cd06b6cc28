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
# are written before Gradescope ends the run; its kernel is always sandboxed, and always saves memory: the
# default container has 768 MB, and a container whose cgroup cannot be read would show the host's memory.
GRADESCOPE_SANDBOX = ResourceLimits()
GRADESCOPE_LIMITS = replace(Limits(), total_timeout=480.0, sandbox=GRADESCOPE_SANDBOX, saves_memory=True)


class GradescopeError(RuntimeError):
    """The zip cannot be built here, or the container holds no usable configuration."""


def _settings(limits: Limits) -> dict[str, float]:
    """The limits an instructor may set (``autograder gradescope``'s options), under config.json's keys."""
    if limits.sandbox is None:
        raise GradescopeError("Gradescope's kernels are always sandboxed")
    memory_gib = limits.sandbox.memory_bytes / GIB
    return {"cell_timeout": limits.cell_timeout, "total_timeout": limits.total_timeout, "memory_gib": memory_gib}


def _limits(cell_timeout: float, total_timeout: float, memory_gib: float) -> Limits:
    """``GRADESCOPE_LIMITS`` with the settings under config.json's keys (``_settings``)."""
    sandbox = replace(GRADESCOPE_SANDBOX, memory_bytes=int(memory_gib * GIB))
    return replace(GRADESCOPE_LIMITS, cell_timeout=cell_timeout, total_timeout=total_timeout, sandbox=sandbox)


@dataclass(frozen=True)
class GradescopeConfig:
    """The zip's config.json: the lab, when students see its hidden checks, and ``GRADESCOPE_LIMITS`` but for
    the three an instructor may set."""

    lab: str
    hidden_visibility: str = "after_published"
    limits: Limits = GRADESCOPE_LIMITS

    def __post_init__(self):
        if self.hidden_visibility not in HIDDEN_VISIBILITIES:
            raise GradescopeError(
                f"hidden_visibility must be one of {', '.join(HIDDEN_VISIBILITIES)}, not {self.hidden_visibility!r}"
            )
        if self.limits != _limits(**_settings(self.limits)):  # config.json could not hold them
            raise GradescopeError(
                "config.json holds only the timeouts and the memory of Gradescope's limits (the others are "
                f"GRADESCOPE_LIMITS'): it cannot hold {self.limits}"
            )

    def to_json(self) -> dict:
        """config.json's keys: lab, hidden_visibility, cell_timeout, total_timeout and memory_gib."""
        return {"lab": self.lab, "hidden_visibility": self.hidden_visibility, **_settings(self.limits)}

    @classmethod
    def from_json(cls, data: dict) -> GradescopeConfig:
        """The config ``to_json`` gave; a setting left out has its default; TypeError names a missing or unknown key."""
        if not isinstance(data, dict):
            raise TypeError(f"config.json holds {type(data).__name__}, not a JSON object")
        settings = _settings(GRADESCOPE_LIMITS)
        given = {key: value for key, value in data.items() if key in settings}
        rest = {key: value for key, value in data.items() if key not in settings}
        return cls(**rest, limits=_limits(**{**settings, **given}))


def read_config(source: Path) -> GradescopeConfig:
    try:
        data = json.loads((source / CONFIG_FILE).read_text(encoding="utf-8"))
        return GradescopeConfig.from_json(data)
    except (OSError, ValueError, TypeError) as exc:
        raise GradescopeError(f"{source / CONFIG_FILE} is missing or malformed: {exc}") from None
