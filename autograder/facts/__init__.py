"""Facts: what the harness takes from a student's kernel (``capture`` declares it per task), moved out of the
kernel's reach at once (``taken_facts``) and validated (``fact_reader``, a timed task's record too) into the
frozen records of ``schema``, which the checks and graders read. Nothing here runs a kernel or imports JAX."""

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
