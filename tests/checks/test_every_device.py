"""What a task's text commonly demands beyond a value: every device holding the right block, a tuple where
a tuple is asked, a type bound with jax.typeof — recorded by the real kernel recorder and read back as a
grader does."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from autograder.checks import CheckFailure, MeshSpec, assert_allclose, assert_type, found_tuple
from autograder.facts.capture import Call, Input, TaskCapture
from autograder.facts.fact_reader import load_task_facts
from autograder.kernel import recorder

MESH = MeshSpec((8,), ("x",), "explicit")


def named(tmp_path, **namespace):
    """The facts of ``namespace``'s names, as the kernel recorder records them right after a task."""
    capture = TaskCapture("t1", names=tuple(namespace))
    recorder.record_task_facts(capture.manifest(str(tmp_path / "t1"), 3), namespace)
    return load_task_facts(tmp_path / "t1", "t1").names


def called(tmp_path, function):
    capture = TaskCapture("t1", calls=(Call("fn", "fn", args=(Input((64,), mesh=MESH, spec=("x",)),)),))
    recorder.record_task_facts(capture.manifest(str(tmp_path / "t1"), 3), {"fn": function})
    call = load_task_facts(tmp_path / "t1", "t1").calls["fn"]
    assert call.error is None, call.error
    return call


def gather(body):
    return jax.jit(jax.shard_map(body, mesh=MESH.build(), in_specs=P("x"), out_specs=P(), check_vma=False))


def test_a_replicated_result_is_judged_on_every_device_not_on_the_copy_the_array_shows(tmp_path):
    v = np.asarray(Input((64,), mesh=MESH, spec=("x",)).build(3))
    right = called(tmp_path, gather(lambda b: jax.lax.all_gather(b, "x", tiled=True)))
    assert right.output.blocks == {}  # every device holds what the array shows: nothing more is written
    assert_allclose(right.output, v, "ring_gather(v)")
    # device d adds d: device 0, whose copy the array shows, is right; the seven others are not
    skewed = called(tmp_path, gather(lambda b: jax.lax.all_gather(b, "x", tiled=True) + jax.lax.axis_index("x")))
    assert sorted(skewed.output.blocks) == [1, 2, 3, 4, 5, 6, 7]
    np.testing.assert_allclose(np.asarray(skewed.output.values), v)  # what the global value alone would say
    with pytest.raises(CheckFailure) as info:
        assert_allclose(skewed.output, v, "ring_gather(v)")
    assert info.value.message.startswith(
        "`ring_gather(v)`: the array reads right, but device 1 holds other values in its block [0:64] — 64 of 64"
        " values differ from the expected (max abs difference 1); first at index (0,): expected"
    )
    assert "check_vma=False and a replicated out_specs (P())" in info.value.message


def test_a_sharded_array_records_no_block_twice(tmp_path):
    mesh = jax.make_mesh((4, 2), ("a", "b"))
    y = jax.device_put(jnp.arange(32.0).reshape(8, 4), NamedSharding(mesh, P("a", None)))
    fact = named(tmp_path, y=y)["y"]
    assert fact.blocks == {} and len(list((tmp_path / "t1").glob("*.npy"))) == 1
    assert_allclose(fact, np.arange(32.0).reshape(8, 4), "y")


@pytest.mark.parametrize(
    "value, message",
    [
        ([16], "`shape`: expected a tuple of ints, found a list [16] — a list is not a tuple: write (16,)"),
        (16, "`shape`: expected a tuple of ints, found a int 16"),
        ((16.0,), "`shape`: expected a tuple of ints, found a tuple of float: (16.0,)"),
        ((True,), "`shape`: expected a tuple of ints, found a tuple of bool: (True,)"),
    ],
)
def test_a_tuple_asked_for_is_a_tuple_of_ints(tmp_path, value, message):
    assert found_tuple(named(tmp_path, shape=(2, 16))["shape"], "shape") == (2, 16)
    assert found_tuple(named(tmp_path, shape=())["shape"], "shape") == ()
    with pytest.raises(CheckFailure) as info:
        found_tuple(named(tmp_path, shape=value)["shape"], "shape")
    assert info.value.message == message


def test_a_name_bound_to_jax_typeof_is_a_type_fact(tmp_path):
    x = jax.device_put(jnp.ones((16, 4)), NamedSharding(MESH.build(), P("x", None)))
    fact = named(tmp_path, x_type=jax.typeof(x))["x_type"]
    assert (fact.kind, fact.typeof.text) == ("type", "float32[16@x,4]")
    assert fact.describe() == "the type float32[16@x,4]"
    assert_type(fact, (16, 4), "float32", [("x",), None], "x_type")
    with pytest.raises(CheckFailure) as info:
        assert_type(fact, (16, 4), "float32", [None, None], "x_type")
    assert info.value.message.startswith("`x_type`: expected float32[16,4], found float32[16@x,4]")
