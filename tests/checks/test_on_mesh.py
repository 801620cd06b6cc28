"""The mesh an array lies on, against the grader's MeshSpec: checked on array facts made by hand."""

import numpy as np
import pytest

from autograder.checks import CheckFailure, MeshSpec, assert_on_mesh
from autograder.facts import Fact, MeshFact, ShardingFact

MESH = MeshSpec((2, 4), ("x", "y"), "auto")
WORDS = "`mesh`, the (2, 4) mesh"


def on(shape=(2, 4), names=("x", "y"), types=("Auto", "Auto"), ids=None):
    ids = np.arange(8).reshape(shape) if ids is None else np.asarray(ids)
    mesh = MeshFact(axis_names=names, shape=shape, axis_types=types, device_ids=ids)
    sharding = ShardingFact(kind="NamedSharding", repr="", device_indices={}, mesh=mesh)
    return Fact(kind="array", type="jax.Array", shape=(4, 16), dtype="float32", sharding=sharding)


def message(fact, **options) -> str:
    with pytest.raises(CheckFailure) as info:
        assert_on_mesh(fact, MESH, "A", WORDS, **options)
    return info.value.message


def test_the_grader_mesh_passes():
    assert_on_mesh(on(), MESH, "A", WORDS)


def test_each_difference_is_named():
    assert "its axes are named ('a', 'b'), not ('x', 'y')" in message(on(names=("a", "b")))
    assert "its shape is (4, 2), not (2, 4)" in message(on(shape=(4, 2), names=("x", "y")))
    assert "its axes are Explicit, not Auto (jax.make_mesh makes Explicit" in message(on(types=("Explicit",) * 2))


def test_the_device_order_counts_unless_the_text_fixes_none():
    reordered = on(ids=np.arange(8)[::-1].reshape(2, 4))
    text = message(reordered)
    assert text.startswith("`A`: expected it on `mesh`, the (2, 4) mesh, found it on a (2, 4) mesh with Auto axes")
    assert "its devices are in the order [[7, 6, 5, 4], [3, 2, 1, 0]]" in text
    assert_on_mesh(reordered, MESH, "A", WORDS, device_order=False)


def test_an_array_on_no_mesh_or_no_array_fails():
    single = Fact(kind="array", type="jax.Array", shape=(4,), dtype="float32", sharding=None)
    assert "expected an array on `mesh`, the (2, 4) mesh, found a jax.Array float32[4] on no mesh" in message(single)
    assert "found float 1.0 on no mesh" in message(Fact(kind="value", type="float", value=1.0))
