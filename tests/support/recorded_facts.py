"""Test helpers for the checks: real objects recorded by the kernel recorder itself (kernel/recorder.py, as
in the kernel) and read back through facts/fact_reader.py, as a grader receives them."""

import tempfile
from pathlib import Path

from autograder.facts.capture import TaskCapture
from autograder.facts.fact_reader import load_task_facts
from autograder.facts.schema import Fact, TypeFact
from autograder.kernel import recorder


def fact_of(obj) -> Fact:
    """``obj`` (array, number, PartitionSpec, list/dict of arrays, a ``jax.typeof`` result) as a grader
    receives it: bound to a name the kernel recorder records after a task."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "t0"
        recorder.record_task_facts(TaskCapture("t0", names=("v",)).manifest(str(out), 0), {"v": obj})
        return load_task_facts(out, "t0").get("v")


def missing_fact(name: str) -> Fact:
    return Fact(kind="missing", error=f"NameError: name '{name}' is not defined")


def type_fact_of(abstract) -> TypeFact:
    """A ``jax.typeof`` result (taken inside or outside jit) as the kernel recorder records it."""
    fact = fact_of(abstract)
    assert fact.kind == "type", fact
    return fact.typeof
