"""How a function is built (jitted, with shard_map, what jit was given) and which mesh axes an array
lies on: the checks on the kernel recorder's records, with the messages a student reads."""

import functools

import jax
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P
from recorded_facts import fact_of

from autograder.checks import (
    CheckFailure,
    Layout,
    MeshSpec,
    assert_axis_types,
    assert_jit_given_layouts,
    assert_jitted,
    assert_jitted_shard_map,
    assert_uses,
)
from autograder.facts import CallFact, Fact, ProgramFact
from autograder.facts.capture import Call, Input, TaskCapture
from autograder.facts.fact_reader import load_task_facts
from autograder.kernel import recorder

MESH = MeshSpec((8,), ("x",))
SHAPE = (16, 8)


def recorded(tmp_path, function):
    """The kernel recorder's record of a call of ``function`` on a (16, 8) input sharded over 'x'."""
    capture = TaskCapture("t1", calls=(Call("fn", "fn", args=(Input(SHAPE, mesh=MESH, spec=("x", None)),)),))
    recorder.record_task_facts(capture.manifest(str(tmp_path / "t1"), 3), {"fn": function})
    return load_task_facts(tmp_path / "t1", "t1").calls["fn"]


def failure(check, *args) -> str:
    with pytest.raises(CheckFailure) as info:
        check(*args)
    return info.value.message


def add_one(v):
    return v + 1


def test_every_way_of_jitting_passes_and_a_plain_function_fails_saying_so(tmp_path):
    jitted = jax.jit(add_one)
    for spelled in (
        jitted,
        jax.jit(add_one, out_shardings=NamedSharding(MESH.build(), P())),
        functools.partial(jax.jit, static_argnums=())(add_one),
        lambda v: jitted(v),
    ):
        assert_jitted(recorded(tmp_path, spelled), "f")
    message = failure(assert_jitted, recorded(tmp_path, add_one), "f")
    assert "expected a jitted function" in message and "jax.jit" in message and "add" in message


def test_a_plain_function_whose_one_call_is_a_jitted_library_function_is_not_jitted(tmp_path):
    for library_jitted in (jax.nn.log_softmax, jax.numpy.linalg.norm):
        call = recorded(tmp_path, lambda v, f=library_jitted: f(v))
        assert call.program.top in (("jit",), ("pjit",)) and call.program.top_jit_library
        message = failure(assert_jitted, call, "f")
        assert "a library function that is jitted itself" in message and "wrap it in jax.jit" in message
        assert_jitted(recorded(tmp_path, jax.jit(lambda v, f=library_jitted: f(v))), "f")


def test_shard_map_is_found_inside_jit_and_its_absence_named(tmp_path):
    mapped = jax.shard_map(lambda b: b * 2, mesh=MESH.build(), in_specs=P("x"), out_specs=P("x"))
    assert_uses(recorded(tmp_path, jax.jit(mapped)), "shard_map", "layer_man")
    assert_uses(recorded(tmp_path, mapped), "shard_map", "layer_man")
    message = failure(assert_uses, recorded(tmp_path, jax.jit(add_one)), "shard_map", "layer_man")
    assert "jax.shard_map" in message and "add" in message


def built(top, primitives) -> CallFact:
    """A call whose program record (made by hand) has these top-level and nested primitives."""
    program = ProgramFact(jit_object=False, top=tuple(top), primitives=frozenset(primitives))
    return CallFact(output=Fact(kind="missing"), stdout="", error=None, hlo=None, hlo_error=None, program=program)


def test_a_jitted_shard_map_needs_both_and_the_missing_shard_map_is_said_first():
    assert_jitted_shard_map(built(["jit"], ["jit", "shard_map", "mul"]), "all_to_all")
    assert "found a plain Python function" in failure(
        assert_jitted_shard_map, built(["shard_map"], ["shard_map", "mul"]), "all_to_all"
    )
    message = failure(assert_jitted_shard_map, built(["mul"], ["mul"]), "all_to_all")
    assert "expected a program built with jax.shard_map, found none in its trace (it holds mul)" in message


def test_the_layouts_given_to_jit_are_compared_by_blocks(tmp_path):
    mesh = MESH.build()
    rows, whole = Layout.of_spec(MESH, ("x", None), SHAPE), Layout.replicated(SHAPE)
    given = jax.jit(add_one, in_shardings=NamedSharding(mesh, P("x")), out_shardings=NamedSharding(mesh, P()))
    assert_jit_given_layouts(recorded(tmp_path, given), [rows], [whole], "g")
    message = failure(assert_jit_given_layouts, recorded(tmp_path, given), [rows], [rows], "g")
    assert "out_shardings of g" in message and "replicated" in message
    assert "given none" in failure(assert_jit_given_layouts, recorded(tmp_path, jax.jit(add_one)), [rows], [rows], "g")
    only_out = jax.jit(add_one, out_shardings=NamedSharding(mesh, P("x", None)))
    assert "in_shardings" in failure(assert_jit_given_layouts, recorded(tmp_path, only_out), [rows], [rows], "g")
    assert "no jitted function" in failure(assert_jit_given_layouts, recorded(tmp_path, add_one), [rows], [rows], "g")


def test_axis_types_of_the_mesh_an_array_lies_on():
    values = jax.numpy.ones(SHAPE)
    auto = jax.device_put(values, NamedSharding(MESH.build(), P("x")))
    explicit = jax.device_put(values, NamedSharding(MeshSpec((8,), ("x",), "explicit").build(), P("x")))
    assert_axis_types(fact_of(auto), "Auto", "x_dp")
    assert_axis_types(fact_of(explicit), "Explicit", "x_ex")
    message = failure(assert_axis_types, fact_of(explicit), "Auto", "x_dp")
    assert "x is Explicit" in message and "axis_types" in message
    assert "no mesh" in failure(assert_axis_types, fact_of(values), "Auto", "x_dp")
