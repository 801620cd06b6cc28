"""The submission as a lab's graders see it: the ``submission`` fixture of every check (docs/writing-a-lab.md).

A check asks for a task's facts by name (``name``), for the grader's calls of a student function
(``call``, ``inputs``), for the lab probe's records (``probe``), for what the timed cells did (``timing``,
``others_share``) and for the task's seed. Each read waits, if the run is still going, until the task's
facts are taken, and fails with a ``CheckFailure`` that says what was missing and why. It reads the run
through ``FactsSource``: a finished ``Execution`` or a ``LiveExecution`` still running.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Protocol

from autograder.checks import CheckFailure
from autograder.facts import Call, CallFact, Fact, ProbeFact, TaskFacts, TimingRecord, build_argument, task_seed
from autograder.fairness import checks_waiting
from autograder.lab import Lab
from autograder.run import CellOutcome, CellStatus, timed_cells_share


class FactsSource(Protocol):
    """What the graders read of a run: each task's facts once taken, the cells' outcomes, how it ended; and
    what they tell it: that they are checking."""

    @property
    def status(self) -> object: ...

    @property
    def reason(self) -> str | None: ...

    @property
    def ended_at(self) -> str | None: ...

    @property
    def cells(self) -> Sequence[CellOutcome]: ...

    def wait_for(self, task: str) -> None: ...

    def task_facts(self, task: str) -> tuple[TaskFacts | None, str | None]: ...

    def grader_busy(self) -> AbstractContextManager[object]:
        """Held while the checks run: a live run's timed cells wait for them."""
        ...


class SubmissionFacts:
    """The facts of one submission as the graders see them, by task: from a finished ``Execution``, or
    from a ``LiveExecution`` still running, in which case asking for a task waits until it is taken."""

    def __init__(self, lab: Lab, facts_source: FactsSource, seed: int):
        self.lab, self.facts_source, self.seed_value = lab, facts_source, seed

    def task(self, task: str) -> TaskFacts:
        with checks_waiting():  # waiting for the kernel, the check holds up no other grading's timed task
            self.facts_source.wait_for(task)
        facts, error = self.facts_source.task_facts(task)
        if facts is not None:
            return facts
        if error is not None:
            raise CheckFailure(f"nothing could be read after task {task}: {error}")
        ended = self.facts_source.ended_at or "an earlier cell"
        raise CheckFailure(
            f"the notebook stopped before task {task} was reached "
            f"({self.facts_source.status} at {ended}: {self.facts_source.reason})"
        )

    def name(self, task: str, name: str) -> Fact:
        """The object bound to ``name`` right after ``task``; fails when it is not defined."""
        fact = self.task(task).get(name)
        if fact.is_missing:
            raise CheckFailure(f"`{name}` is not defined after task {task}{self.failed_cell(task)}")
        return fact

    def failed_cell(self, task: str) -> str:
        """The usual cause of a missing name: the first cell of the task that raised, with its error."""
        cells = self.facts_source.cells
        failed = next(((c, c.error) for c in cells if c.task == task and c.status != CellStatus.OK and c.error), None)
        if failed is None:
            return ""
        cell, error = failed
        whose = "a locked cell of the lab" if cell.origin == "lab" else "your code"
        return f": {cell.label} ({whose}) failed with {error[:1000]}"

    def call(self, task: str, call_id: str) -> CallFact:
        """The result of the grader's call of a student function; fails when the call raised."""
        call = self.task(task).calls.get(call_id)
        if call is None:
            raise CheckFailure(f"the grader could not call the function of task {task}")
        if call.output.is_missing or call.error:
            error = call.error or call.output.error or ""
            cause = self.failed_cell(task) if error.startswith("NameError") else ""
            raise CheckFailure(f"calling it on the grader's inputs failed: {error}{cause}")
        return call

    def probe(self, task: str, probe_id: str) -> ProbeFact:
        """What the lab's own probe recorded; fails with the probe's error (e.g. the student's class raised)."""
        probe = self.task(task).probes.get(probe_id)
        if probe is None:
            raise CheckFailure(f"the grader could not examine the code of task {task}")
        if probe.error:
            if probe.error.startswith("NameError"):  # what the probe looks at was never defined: no input involved
                raise CheckFailure(f"examining your code failed: {probe.error}{self.failed_cell(task)}")
            raise CheckFailure(f"running your code on the grader's inputs failed: {probe.error}")
        return probe

    def timing(self, task: str) -> TimingRecord:
        """What the task's timed cells did: recorded in the grading kernel only, so its checks are ``@hidden``."""
        record = self.task(task).timing
        if record is None:
            raise CheckFailure(
                f"task {task}'s cells left no timing record: they ran outside the grading kernel, or the task is "
                "not marked times_code=True in the lab's captures"
            )
        return record

    def others_share(self, task: str) -> float | None:
        """The processors' share other work took while the task's timed cells ran (None: nothing read)."""
        return timed_cells_share(list(self.facts_source.cells), task)

    def seed(self, task: str) -> int:
        return task_seed(self.seed_value, task)

    def inputs(self, task: str, call_id: str) -> list:
        """The exact inputs the kernel recorder built for a call, rebuilt here from the same seed."""
        call: Call = next(c for c in self.lab.captures[task].calls if c.id == call_id)
        return [build_argument(arg, self.seed(task)) for arg in call.args]
