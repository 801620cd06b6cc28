"""Types: ``jax.typeof`` of explicitly sharded arrays, inside and outside jit, against the expected type."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P
from recorded_facts import fact_of, missing_fact, type_fact_of

from autograder.checks import CheckFailure, MeshSpec, assert_type, assert_value_type, is_type, normalise_axes, type_text
from autograder.facts.schema import TypeFact

EXPLICIT_1D = MeshSpec((8,), ("x",), "explicit")
AUTO_1D = MeshSpec((8,), ("x",), "auto")
EXPLICIT_2D = MeshSpec((4, 2), ("a", "b"), "explicit")


def data(mesh: MeshSpec, spec, shape=(128, 2)):
    return jax.device_put(jnp.ones(shape, jnp.float32), NamedSharding(mesh.build(), spec))


def message(*args) -> str:
    with pytest.raises(CheckFailure) as info:
        assert_type(*args)
    return str(info.value)


def test_type_of_an_explicit_array_outside_jit_passes():
    found = type_fact_of(jax.typeof(data(EXPLICIT_1D, P("x"))))
    assert found.text == "float32[128@x,2]"
    assert_type(found, (128, 2), "float32", ("x",), "out_explicit")
    assert_type(found, (128, 2), jnp.float32, [("x",), None], "out_explicit")


def test_type_seen_inside_jit_passes_and_keeps_the_sharded_axes():
    seen = []

    @jax.jit
    def layer(x):
        seen.append(jax.typeof(x))
        return x @ jnp.ones((2, 3), jnp.float32)

    out = layer(data(EXPLICIT_1D, P("x")))
    assert_type(type_fact_of(seen[0]), (128, 2), "float32", ["x"], "x inside layer")
    assert_type(type_fact_of(jax.typeof(out)), (128, 3), "float32", "x", "out_explicit")
    with pytest.raises(CheckFailure):
        assert_type(type_fact_of(seen[0]), (128, 2), "float32", [None, "x"], "x inside layer")


def test_an_auto_mesh_array_fails_with_the_auto_not_explicit_hint():
    found = type_fact_of(jax.typeof(data(AUTO_1D, P("x"))))
    assert message(found, (128, 2), "float32", ("x",), "out_explicit") == (
        "`out_explicit`: expected float32[128@x,2], found float32[128,2] (dimension 0 not sharded instead of"
        " sharded over x) — the mesh axes are Auto, not Explicit: jax.typeof shows sharding only on an Explicit"
        " mesh (jax.make_mesh(..., axis_types=(AxisType.Explicit,)))"
    )


def test_given_the_mesh_its_axis_types_are_part_of_the_type_not_its_text():
    auto, explicit = fact_of(data(AUTO_1D, P())), fact_of(data(EXPLICIT_1D, P()))
    assert auto.typeof.text == explicit.typeof.text == "float32[128,2]"
    assert explicit.typeof.axis_types == ("Explicit",) and auto.typeof.axis_types == ("Auto",)
    assert_type(explicit, (128, 2), "float32", (), "W_ex", mesh=EXPLICIT_1D)
    assert message(auto, (128, 2), "float32", (), "W_ex", EXPLICIT_1D) == (
        "`W_ex`: expected float32[128,2], found float32[128,2] (a mesh with 'x' Auto axes instead of 'x' Explicit axes)"
    )
    other_names = fact_of(data(MeshSpec((8,), ("y",), "explicit"), P()))
    assert "mesh axes ('y',) instead of ('x',)" in message(other_names, (128, 2), "float32", (), "W", EXPLICIT_1D)
    assert "no mesh instead of" in message(fact_of(jnp.ones((128, 2))), (128, 2), "float32", (), "W", EXPLICIT_1D)
    assert is_type(explicit, (128, 2), "float32", (), EXPLICIT_1D) and not is_type(
        auto, (128, 2), "float32", (), EXPLICIT_1D
    )


def test_an_array_fact_gives_the_precise_reason_it_is_unsharded():
    auto = message(fact_of(data(AUTO_1D, P("x"))), (128, 2), "float32", ("x",), "out")
    assert auto.endswith(
        "the mesh axes are Auto, not Explicit: jax.typeof shows sharding only on an Explicit"
        " mesh (jax.make_mesh(..., axis_types=(AxisType.Explicit,)))"
    )
    replicated = message(fact_of(data(EXPLICIT_1D, P())), (128, 2), "float32", ("x",), "out")
    assert replicated.endswith("the mesh axes are Explicit, but the array is replicated over them: it was not sharded")
    assert message(fact_of(jnp.ones((128, 2))), (128, 2), "float32", ("x",), "out").endswith(
        "it was never placed on a mesh"
    )
    assert_type(fact_of(data(EXPLICIT_1D, P("x"))), (128, 2), "float32", ("x",), "out")


def test_wrong_axes_dtype_and_shape_are_each_named():
    found = type_fact_of(jax.typeof(data(EXPLICIT_2D, P("b", "a"), (8, 4))))
    assert message(found, (8, 4), "float32", ("a", "b"), "B") == (
        "`B`: expected float32[8@a,4@b], found float32[8@b,4@a] (dimension 0 sharded over b instead of sharded"
        " over a; dimension 1 sharded over a instead of sharded over b)"
    )
    assert "(dtype float32 instead of int32)" in message(found, (8, 4), "int32", ("b", "a"), "B")
    assert "(shape (8, 4) instead of (4, 8))" in message(found, (4, 8), "float32", ("b", "a"), "B")


def test_several_axes_on_one_dimension():
    found = type_fact_of(jax.typeof(data(EXPLICIT_2D, P(("a", "b")), (8, 4))))
    assert found.text == type_text((8, 4), "float32", [("a", "b")]) == "float32[8@(a,b),4]"
    assert is_type(found, (8, 4), "float32", [("a", "b"), None])
    assert not is_type(found, (8, 4), "float32", [("b", "a")])


def test_axes_are_normalised():
    assert normalise_axes("x", 2) == normalise_axes([("x",)], 2) == normalise_axes(["x", None], 2) == (("x",), None)
    assert normalise_axes([(), None], 2) == normalise_axes(None, 2) == (None, None)
    with pytest.raises(ValueError, match="3 sharded-axes entries for a 2-dimensional type"):
        normalise_axes(["x", None, None], 2)


def test_weak_scalar_and_missing_values():
    weak = type_fact_of(jax.typeof(1.0))
    assert weak.text == "~float32[]" and is_type(weak, (), "float32", ())
    assert message(missing_fact("out"), (2,), "float32", (), "out") == "`out` is not defined after this task"
    assert message(fact_of(2.5), (2,), "float32", (), "out") == (
        "`out`: expected a jax.Array of type float32[2] (or that type, from jax.typeof), found float 2.5"
    )
    assert "no type was recorded" in message(None, (2,), "float32", (), "out")
    assert not is_type(None, (2,), "float32", ())


def test_a_recorded_type_with_extra_trailing_entries_is_read_leniently():
    found = TypeFact(text="float32[4]", shape=(4,), dtype="float32", sharded_axes=(None, None))
    assert is_type(found, (4,), "float32", ())


@pytest.mark.parametrize(
    "value, accept, found",
    [
        (np.float32(0.5), "float", "a numpy.float32 0.5"),
        (np.bool_(True), "bool", "a numpy.bool True — write bool(...)"),
        ([1, 2], "tuple", "a list of 2 items — write tuple(...)"),
        (jnp.float32(0.5), "float", "a jax.Array float32[] — write float(...)"),
        (repr(ValueError("boom")), ("float", "int"), "a str \"ValueError('boom')\""),
    ],
)
def test_a_value_of_another_type_than_the_one_asked_fails_naming_both(value, accept, found):
    with pytest.raises(CheckFailure) as info:
        assert_value_type(fact_of(value), accept, "v")
    assert found in info.value.message and info.value.message.startswith("`v`: expected a")


def test_a_value_of_the_asked_type_passes_and_numpys_float64_is_a_float():
    assert_value_type(fact_of(np.float64(0.5)), "float", "v")
    assert_value_type(fact_of((1, 2)), "tuple", "v")
    assert_value_type(fact_of(np.bool_(True)), ("bool", "numpy.bool"), "v")
    assert_value_type(0.5, "float", "v")
