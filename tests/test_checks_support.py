"""Test helpers for the checks: real objects recorded by the probe itself (facts/probe.py, as in the kernel)
and read back through facts/fact_reader.py, as a grader receives them."""

import math
import tempfile
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec as P

from autograder.facts import probe
from autograder.facts.capture import TaskCapture
from autograder.facts.fact_reader import load_task_facts
from autograder.facts.schema import Fact, TypeFact


def fact_of(obj) -> Fact:
    """``obj`` (array, number, PartitionSpec, list/dict of arrays, a ``jax.typeof`` result) as a grader
    receives it: bound to a name the probe records after a task."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "t0"
        probe.capture(TaskCapture("t0", names=("v",)).manifest(str(out), 0), {"v": obj})
        return load_task_facts(out, "t0").get("v")


def missing_fact(name: str) -> Fact:
    return Fact(kind="missing", error=f"NameError: name '{name}' is not defined")


def type_fact_of(abstract) -> TypeFact:
    """A ``jax.typeof`` result (taken inside or outside jit) as the probe records it."""
    fact = fact_of(abstract)
    assert fact.kind == "type", fact
    return fact.typeof


# The helpers themselves: they must produce what facts/fact_reader.py accepts, with the JAX data intact.

def test_array_fact_keeps_values_blocks_and_type():
    mesh = jax.make_mesh((4, 2), ("a", "b"))
    arr = jax.device_put(jnp.arange(32.0).reshape(8, 4), NamedSharding(mesh, P("a", "b")))
    fact = fact_of(arr)
    assert fact.kind == "array" and fact.shape == (8, 4) and fact.dtype == "float32"
    np.testing.assert_array_equal(fact.values, np.arange(32.0).reshape(8, 4))
    assert fact.sharding.device_indices[3] == ((2, 4), (2, 4))
    assert fact.sharding.mesh.axis_types == ("Explicit", "Explicit")
    assert fact.typeof.text == "float32[8@a,4@b]" and fact.typeof.sharded_axes == (("a",), ("b",))


def test_other_kinds_round_trip():
    assert fact_of(np.ones(3)).sharding is None
    assert fact_of(P("x", None)).spec == (("x",), None)
    named = fact_of(NamedSharding(jax.make_mesh((8,), ("x",)), P(None, "x")))
    assert (named.kind, named.type, named.spec) == ("spec", "NamedSharding", (None, ("x",)))
    nan = fact_of(float("nan"))  # the probe writes JSON's NaN, read back as a float
    assert nan.type == "float" and math.isnan(nan.value)
    tree = fact_of([jnp.ones(2), {"w": jnp.ones(3)}])
    assert len(tree.leaves) == 2 and tree.paths == ("[0]", "[1]['w']")
    assert missing_fact("y").is_missing
