"""Facts: what the harness takes from a student's kernel, and the plain data graders read.

``capture`` declares, per task, what to take (names, calls on inputs the grader can rebuild, and a lab's own probes);
``recorder``, the kernel recorder, which runs inside the kernel (copied there alone, after the kernel's housekeeping
from ``run``: it imports nothing of the harness), writes it (the student's self-check runs it in the notebook's own
kernel: ``record_task_facts``); ``timing_record``, also in the kernel (loaded before the recorder), records what a
timed task's cells did, which the recorder takes with the task's facts; ``taken_facts`` moves it out of the kernel's
reach at once and reads it later; ``fact_reader`` validates it into the frozen records ``schema`` declares (``Fact``,
``TaskFacts``…), which the checks and graders read. Nothing here runs a kernel, and only ``recorder`` and
``timing_record`` import JAX."""

from typing import TYPE_CHECKING

from autograder.doors import lazy_exports

if TYPE_CHECKING:
    from autograder.facts.capture import Argument, Call, Input, Probe, TaskCapture, build_argument, task_seed
    from autograder.facts.fact_reader import PARSER_LOCK, load_task_facts
    from autograder.facts.recorder import LAB_PROBE_MODULE
    from autograder.facts.recorder import capture as record_task_facts
    from autograder.facts.schema import (
        CallFact,
        ClockRead,
        CollectiveUse,
        Compilation,
        Fact,
        FactsError,
        MeshFact,
        ProbeFact,
        ProgramFact,
        ShardingFact,
        ShardMapBody,
        TaskFacts,
        TimingRecord,
        TypeFact,
        Wait,
    )
    from autograder.facts.taken_facts import TakenFacts

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)
