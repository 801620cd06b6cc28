"""Where a batch's time went (``OUT/batch-timing.json``), so that an instructor, or bench/batch_cost.py, sees
what grading a class cost: the grades' phases, the batch's own work, and the longest wait for others' timed turns."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

from autograder.grading import GradeResult, write_atomically

TIMING_FILE = "batch-timing.json"


@dataclass
class BatchTiming:
    workers: int | None
    started: float = field(default_factory=time.monotonic)
    graded: int = 0
    phases: dict[str, float] = field(default_factory=dict)  # summed over the grades of this run
    warming: float = 0.0  # the references computed ahead, on the workers
    publishing: float = 0.0  # each result's feedback page, gradebook row and class summaries, here
    worker_cores: dict[str, tuple[int, ...]] = field(default_factory=dict)  # each worker's, as it graded
    longest_wait: dict = field(default_factory=dict)  # the grade that waited longest for others' timed turns

    def add(self, result: GradeResult, publishing: float) -> None:
        self.graded += 1
        self.publishing += publishing
        for phase, seconds in result.phases.items():
            self.phases[phase] = self.phases.get(phase, 0.0) + seconds
        waited = result.turn_waits.get("seconds", 0.0)
        if waited > self.longest_wait.get("seconds", 0.0):
            self.longest_wait = {"notebook": result.notebook, **result.turn_waits}

    def to_dict(self) -> dict:
        return {
            "wall": round(time.monotonic() - self.started, 3),
            "workers": self.workers,
            "graded": self.graded,
            "warming": round(self.warming, 3),
            "publishing": round(self.publishing, 3),
            "worker_cores": self.worker_cores,
            "phases": {phase: round(seconds, 3) for phase, seconds in self.phases.items()},
            "longest_wait": self.longest_wait,
        }

    def write(self, out: Path) -> None:
        write_atomically(out / TIMING_FILE, json.dumps(self.to_dict(), indent=2) + "\n")
