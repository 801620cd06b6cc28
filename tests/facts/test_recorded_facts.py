"""The check tests' recorded facts (tests/support/recorded_facts.py, by the real kernel recorder): what
they record is what facts/fact_reader.py accepts, with the JAX data intact."""

import math

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P
from recorded_facts import fact_of, missing_fact


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
    nan = fact_of(float("nan"))  # the kernel recorder writes JSON's NaN, read back as a float
    assert nan.type == "float" and math.isnan(nan.value)
    tree = fact_of([jnp.ones(2), {"w": jnp.ones(3)}])
    assert len(tree.leaves) == 2 and tree.paths == ("[0]", "[1]['w']")
    assert missing_fact("y").is_missing


def test_a_value_is_recorded_with_its_exact_type():
    cases = [(0.5, "float"), (np.float64(0.5), "numpy.float64"), (np.float32(0.5), "numpy.float32")]
    cases += [(True, "bool"), (np.bool_(True), "numpy.bool"), (3, "int"), (np.int32(3), "numpy.int32")]
    for value, type_name in cases:
        fact = fact_of(value)
        plain = value.item() if isinstance(value, np.generic) else value
        assert (fact.kind, fact.type, fact.value) == ("value", type_name, plain)
        assert type(fact.value) is type(plain)
