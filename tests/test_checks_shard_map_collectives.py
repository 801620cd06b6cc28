"""Which collectives a function writes inside shard_map: recorded by the probe from the trace, checked with
the messages a student reads — a psum told apart from the all-reduce XLA inserts for a plain jnp.sum."""

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import PartitionSpec as P

from autograder.facts.capture import Call, Input, TaskCapture
from autograder.checks import CheckFailure, MeshSpec, assert_collectives, assert_shard_map_collectives, shard_map_collectives
from autograder.facts.records import FactsError, load_task_facts
from autograder.facts import probe

MESH = MeshSpec((8,), ("x",), "explicit")
RING = [(i, (i + 1) % 8) for i in range(8)]


def recorded(tmp_path, function):
    """The probe's record of a call of ``function`` on a length-64 input sharded over 'x'."""
    capture = TaskCapture("t1", calls=(Call("fn", "fn", args=(Input((64,), mesh=MESH, spec=("x",)),), hlo=True),))
    probe.capture(capture.manifest(str(tmp_path / "t1"), 3), {"fn": function})
    call = load_task_facts(tmp_path / "t1", "t1").calls["fn"]
    assert call.error is None, call.error
    return call


def mapped(body, out_specs=P()):
    return jax.jit(jax.shard_map(body, mesh=MESH.build(), in_specs=P("x"), out_specs=out_specs))


def failure(*args, **kwargs) -> str:
    with pytest.raises(CheckFailure) as info:
        assert_shard_map_collectives(*args, **kwargs)
    return info.value.message


def test_a_psum_in_the_body_passes_where_a_plain_sum_with_the_same_all_reduce_fails(tmp_path):
    with_psum = recorded(tmp_path, mapped(lambda b: jax.lax.psum(jnp.sum(b), "x")))
    plain_sum = recorded(tmp_path, jax.jit(jnp.sum))
    assert_collectives(with_psum.hlo, {"all-reduce"}, name="total")  # the compiled programs agree ...
    assert_collectives(plain_sum.hlo, {"all-reduce"}, name="total")
    assert_shard_map_collectives(with_psum, "total", uses=["psum"], axis="x")  # ... the traces do not
    message = failure(plain_sum, "total", uses=["psum"])
    assert "expected a jax.shard_map whose body uses jax.lax.psum" in message and "found no shard_map" in message
    assert "XLA inserts" in message


def test_a_body_without_the_collective_says_what_it_holds_instead(tmp_path):
    local_only = recorded(tmp_path, mapped(lambda b: jnp.sum(b, keepdims=True), P("x")))
    message = failure(local_only, "total", uses=["psum"])
    assert "expected its shard_map body to use jax.lax.psum" in message and "found no collective" in message
    gathered = recorded(tmp_path, mapped(lambda b: jnp.sum(jax.lax.all_gather(b, "x", tiled=True), keepdims=True), P("x")))
    message = failure(gathered, "total", uses=["psum"])
    assert "found only all_gather over 'x'" in message and "missing: psum" in message
    assert "not to use jax.lax.all_gather" in failure(gathered, "total", avoids=["all_gather"])


def test_psum_scatter_ppermute_and_all_to_all_are_named_as_written_even_inside_a_loop(tmp_path):
    def body(b):
        b = jax.lax.fori_loop(0, 3, lambda i, c: jax.lax.ppermute(c, "x", RING), b)
        scattered = jax.lax.psum_scatter(b, "x", tiled=True)
        swapped = jax.lax.all_to_all(b.reshape(8, 1), "x", 0, 0, tiled=True)
        return scattered.sum(keepdims=True) + swapped.sum(keepdims=True) + jax.lax.pmean(b, "x").sum(keepdims=True)

    call = recorded(tmp_path, mapped(body, P("x")))
    assert shard_map_collectives(call, "f") == [
        ("ppermute", ("x",)), ("psum_scatter", ("x",)), ("all_to_all", ("x",)), ("psum", ("x",))]
    assert_shard_map_collectives(call, "f", uses=["ppermute", "psum_scatter", "all_to_all"], avoids=["all_gather"])
    assert "over 'y'" in failure(call, "f", uses=["ppermute"], axis="y")
    with pytest.raises(ValueError, match="unknown collective"):
        assert_shard_map_collectives(call, "f", uses=["reduce_scatter"])


def test_no_requirement_passes_without_shard_map_and_a_forged_record_is_refused(tmp_path):
    assert_shard_map_collectives(recorded(tmp_path, jax.jit(jnp.sum)), "f", avoids=["all_gather"])
    call = {"output": {"kind": "value", "type": "int", "value": 1},
            "program": {"jit_object": True, "collectives": [{"primitive": "psum", "axes": "x"}]}}
    (tmp_path / "t2").mkdir()
    (tmp_path / "t2" / "facts.json").write_text(__import__("json").dumps({"task": "t2", "calls": {"f": call}}))
    with pytest.raises(FactsError, match="axes"):
        load_task_facts(tmp_path / "t2", "t2")


def test_through_the_sandboxed_kernel_a_psum_is_told_from_a_plain_sum(tmp_path):
    from autograder.run.execute import Limits, execute_plan
    from autograder.run.plan import CaptureTask, Plan, RunCell
    from autograder.run.sandbox import sandbox_problem

    if sandbox_problem() is not None:
        pytest.skip(f"no sandbox here: {sandbox_problem()}")
    cell = ("import jax, jax.numpy as jnp\nfrom jax.sharding import PartitionSpec as P\n"
            "mesh = jax.make_mesh((8,), ('x',))\n"
            "reduced = jax.jit(jax.shard_map(lambda b: jax.lax.psum(jnp.sum(b), 'x'), mesh=mesh,"
            " in_specs=P('x'), out_specs=P()))\n"
            "summed = jax.jit(jnp.sum)\n")
    arg = (Input((64,), mesh=MESH, spec=("x",)),)
    capture = TaskCapture("t1", calls=(Call("reduced", "reduced", args=arg), Call("summed", "summed", args=arg)))
    execution = execute_plan(Plan((RunCell(cell, "student", "t1", 1, "cell 1"), CaptureTask("t1")), ()),
                             {"t1": capture}, Limits(cell_timeout=120, total_timeout=300), seed=1)
    assert execution.status == "completed", execution.reason
    calls = execution.facts["t1"].calls
    assert_shard_map_collectives(calls["reduced"], "reduced", uses=["psum"], axis="x")
    assert "found no shard_map" in failure(calls["summed"], "summed", uses=["psum"])
