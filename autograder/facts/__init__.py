"""Facts: what the harness takes from a student's kernel, and the plain data graders read.

``capture`` declares, per task, what to take (names, calls on inputs the grader can rebuild, and a lab's own probes);
the kernel package's recorder (autograder/kernel, the one stage that runs inside the kernel) writes it;
``taken_facts`` moves it out of the kernel's reach at once and reads it later; ``fact_reader`` validates it into
the frozen records ``schema`` declares (``Fact``, ``TaskFacts``…), which the checks and graders read. Nothing
here runs a kernel or imports JAX."""

from typing import TYPE_CHECKING

from autograder.doors import lazy_exports

if TYPE_CHECKING:
    from autograder.facts.capture import Argument, Call, Input, Probe, TaskCapture, build_argument, task_seed
    from autograder.facts.fact_reader import PARSER_LOCK, load_task_facts
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
