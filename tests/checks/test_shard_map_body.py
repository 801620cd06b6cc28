"""Which collectives a function writes inside shard_map: recorded by the kernel recorder from the trace,
checked with the messages a student reads — a psum told apart from the all-reduce XLA inserts for a plain
jnp.sum."""

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from autograder.checks import (
    CheckFailure,
    MeshSpec,
    assert_body_never_holds_whole,
    assert_body_receives_blocks,
    assert_collectives,
    assert_ppermute_ring,
    assert_shard_map_collectives,
    shard_map_collectives,
)
from autograder.facts.capture import Call, Input, TaskCapture
from autograder.facts.fact_reader import load_task_facts
from autograder.facts.schema import FactsError
from autograder.kernel import recorder

MESH = MeshSpec((8,), ("x",), "explicit")
RING = [(i, (i + 1) % 8) for i in range(8)]
LHS, RHS = (32, 64), (64, 16)  # the matmul checks' inputs: rhs found by its shape


def recorded(tmp_path, function):
    """The kernel recorder's record of a call of ``function`` on a length-64 input sharded over 'x'."""
    capture = TaskCapture("t1", calls=(Call("fn", "fn", args=(Input((64,), mesh=MESH, spec=("x",)),), hlo=True),))
    recorder.record_task_facts(capture.manifest(str(tmp_path / "t1"), 3), {"fn": function})
    call = load_task_facts(tmp_path / "t1", "t1").calls["fn"]
    assert call.error is None, call.error
    return call


REPLICATED = P()


def mapped(body, out_specs=REPLICATED):
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
    gathered = recorded(
        tmp_path, mapped(lambda b: jnp.sum(jax.lax.all_gather(b, "x", tiled=True), keepdims=True), P("x"))
    )
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
        ("ppermute", ("x",)),
        ("psum_scatter", ("x",)),
        ("all_to_all", ("x",)),
        ("pmean", ("x",)),
    ]
    assert_shard_map_collectives(call, "f", uses=["ppermute", "psum_scatter", "all_to_all"], avoids=["all_gather"])
    assert "over 'y'" in failure(call, "f", uses=["ppermute"], axis="y")
    with pytest.raises(ValueError, match="unknown collective"):
        assert_shard_map_collectives(call, "f", uses=["reduce_scatter"])


def test_a_pmean_is_recorded_as_pmean_and_is_not_the_psum_a_task_asks_for(tmp_path):
    mean = recorded(tmp_path, mapped(lambda b: jax.lax.pmean(b, "x"), P()))
    total = recorded(tmp_path, mapped(lambda b: jax.lax.psum(b, "x"), P()))
    assert shard_map_collectives(mean, "f") == [("pmean", ("x",))]
    assert shard_map_collectives(total, "f") == [("psum", ("x",))]
    assert_shard_map_collectives(mean, "f", uses=["pmean"], avoids=["psum"])
    assert "found only pmean over 'x'" in failure(mean, "f", uses=["psum"])


def test_no_requirement_passes_without_shard_map_and_a_forged_record_is_refused(tmp_path):
    assert_shard_map_collectives(recorded(tmp_path, jax.jit(jnp.sum)), "f", avoids=["all_gather"])
    call = {
        "output": {"kind": "value", "type": "int", "value": 1},
        "program": {"jit_object": True, "collectives": [{"primitive": "psum", "axes": "x"}]},
    }
    (tmp_path / "t2").mkdir()
    (tmp_path / "t2" / "facts.json").write_text(__import__("json").dumps({"task": "t2", "calls": {"f": call}}))
    with pytest.raises(FactsError, match="axes"):
        load_task_facts(tmp_path / "t2", "t2")


def test_through_the_sandboxed_kernel_a_psum_is_told_from_a_plain_sum(tmp_path):
    from autograder.run.execute import RunRequest, execute_plan
    from autograder.run.plan import CaptureTask, Plan, RunCell
    from autograder.run.sandbox.bubblewrap import sandbox_problem
    from autograder.run.sandbox.limits import Limits

    if sandbox_problem() is not None:
        pytest.skip(f"no sandbox here: {sandbox_problem()}")
    cell = (
        "import jax, jax.numpy as jnp\nfrom jax.sharding import PartitionSpec as P\n"
        "mesh = jax.make_mesh((8,), ('x',))\n"
        "reduced = jax.jit(jax.shard_map(lambda b: jax.lax.psum(jnp.sum(b), 'x'), mesh=mesh,"
        " in_specs=P('x'), out_specs=P()))\n"
        "summed = jax.jit(jnp.sum)\n"
    )
    arg = (Input((64,), mesh=MESH, spec=("x",)),)
    capture = TaskCapture("t1", calls=(Call("reduced", "reduced", args=arg), Call("summed", "summed", args=arg)))
    execution = execute_plan(
        RunRequest(
            Plan((RunCell(cell, "student", "t1", 1, "cell 1"), CaptureTask("t1")), ()),
            {"t1": capture},
            Limits(cell_timeout=120, total_timeout=300),
            seed=1,
        )
    )
    assert execution.status == "completed", execution.reason
    calls = execution.facts["t1"].calls
    assert_shard_map_collectives(calls["reduced"], "reduced", uses=["psum"], axis="x")
    assert "found no shard_map" in failure(calls["summed"], "summed", uses=["psum"])


# The structure a task's text asks for: a ring of ppermutes, and an operand never held whole


def ring_failure(call, **kwargs) -> str:
    with pytest.raises(CheckFailure) as info:
        assert_ppermute_ring(call, "ring_gather", axis="x", axis_size=8, **kwargs)
    return info.value.message


def unrolled_ring(pairs_of_step):
    """A ring all-gather whose step k sends with the pairs ``pairs_of_step(k)``."""

    def body(block):
        received, current = [block], block
        for k in range(7):
            current = jax.lax.ppermute(current, "x", pairs_of_step(k))
            received.append(current)
        return jnp.concatenate(received)

    return jax.jit(jax.shard_map(body, mesh=MESH.build(), in_specs=P("x"), out_specs=P(), check_vma=False))


def test_a_ring_of_seven_one_step_ppermutes_passes_either_way_and_in_a_loop(tmp_path):
    back = [(i, (i - 1) % 8) for i in range(8)]
    assert_ppermute_ring(recorded(tmp_path, unrolled_ring(lambda k: RING)), "f", "x", 8, steps=7)
    assert_ppermute_ring(recorded(tmp_path, unrolled_ring(lambda k: back)), "f", "x", 8, steps=7)

    def looped(block):
        step = lambda k, current: jax.lax.ppermute(current, "x", back)  # noqa: E731
        return jax.lax.fori_loop(0, 7, step, block)

    call = recorded(tmp_path, mapped(looped, out_specs=P("x")))
    assert [use.repeats for use in call.program.collectives] == [7]
    assert_ppermute_ring(call, "f", "x", 8, steps=7)


def test_ppermutes_that_jump_or_take_another_count_of_steps_fail_naming_what_they_do(tmp_path):
    jumping = recorded(tmp_path, unrolled_ring(lambda k: [(i, (i + k + 1) % 8) for i in range(8)]))
    assert ring_failure(jumping, steps=7).startswith(
        "`ring_gather`: expected every ppermute to pass each device's block one device along the ring of 8"
        " ([(0, 1), (1, 2), (2, 3), (3, 4), …] or the reverse), found one with the pairs [(0, 2), (1, 3)"
    )

    def eight_steps(block):
        return jax.lax.fori_loop(0, 8, lambda k, current: jax.lax.ppermute(current, "x", RING), block)

    assert ring_failure(recorded(tmp_path, mapped(eight_steps, out_specs=P("x"))), steps=7) == (
        "`ring_gather`: expected blocks to move 7 steps around the ring (7 ppermutes, a loop's counted once per"
        " iteration), found 8"
    )
    assert "found no such ppermute (it writes all_gather over 'x')" in ring_failure(
        recorded(tmp_path, mapped(lambda b: jax.lax.all_gather(b, "x", tiled=True), out_specs=P("x")))
    )


def test_an_operand_held_whole_in_the_body_fails_whichever_collective_gathered_it(tmp_path):
    def call_of(body):
        matmul = jax.jit(
            jax.shard_map(body, mesh=MESH.build(), in_specs=(P("x", None), P("x", None)), out_specs=P("x", None))
        )
        capture = TaskCapture(
            "t4",
            calls=(
                Call(
                    "mm",
                    "mm",
                    args=(
                        Input(LHS, key=1, mesh=MESH, spec=("x", None)),
                        Input(RHS, key=2, mesh=MESH, spec=("x", None)),
                    ),
                ),
            ),
        )
        recorder.record_task_facts(capture.manifest(str(tmp_path / "t4"), 3), {"mm": matmul})
        return load_task_facts(tmp_path / "t4", "t4").calls["mm"]

    def stacked(a, b):  # every rhs block brought by ppermute, stacked, then one product
        blocks, current = [b], b
        for _ in range(7):
            current = jax.lax.ppermute(current, "x", [(i, (i - 1) % 8) for i in range(8)])
            blocks.append(current)
        me = jax.lax.axis_index("x")
        whole = jnp.roll(jnp.concatenate(blocks), me * b.shape[0], axis=0)
        return a @ whole

    def passing(a, b):  # the blocks multiplied as they arrive
        me, chunk = jax.lax.axis_index("x"), b.shape[0]
        out, current = jnp.zeros((a.shape[0], b.shape[1]), a.dtype), b
        for k in range(8):
            out = out + jax.lax.dynamic_slice_in_dim(a, ((me + k) % 8) * chunk, chunk, axis=1) @ current
            current = jax.lax.ppermute(current, "x", [(i, (i - 1) % 8) for i in range(8)])
        return out

    assert_body_never_holds_whole(call_of(passing), "mm", "rhs", RHS)
    for body in (stacked, lambda a, b: a @ jax.lax.all_gather(b, "x", tiled=True)):
        with pytest.raises(CheckFailure) as info:
            assert_body_never_holds_whole(call_of(body), "mm", "rhs", RHS)
        assert info.value.message.startswith(
            "`mm`: expected its shard_map body never to hold rhs whole (64×16 = 1024 entries; each device receives"
            " a 8×16 block), found a value of float32["
        )  # the largest: [64,16], or what jnp.roll makes of it
        assert "in it — the body gathered rhs" in info.value.message


AUTO = MeshSpec((8,), ("x",), "auto")  # where a shard_map reshards what it is given (on Explicit axes it refuses)


def _matmul_call(tmp_path, function, placed=True):
    """The kernel recorder's record of ``function(lhs, rhs)`` on a (32, 64) and a (64, 16) input, both rows
    over 'x' (or, not ``placed``, uncommitted numpy arrays: jit refuses committed ones its in_shardings
    contradict)."""
    mesh, spec = (AUTO, ("x", None)) if placed else (None, None)
    args = (Input(LHS, key=1, mesh=mesh, spec=spec), Input(RHS, key=2, mesh=mesh, spec=spec))
    recorder.record_task_facts(
        TaskCapture("t4", calls=(Call("mm", "mm", args=args),)).manifest(str(tmp_path / "t4"), 3), {"mm": function}
    )
    call = load_task_facts(tmp_path / "t4", "t4").calls["mm"]
    assert call.error is None, call.error
    return call


def _local_product(a, b):  # a body that holds only its own blocks (its product is wrong; only its holdings matter)
    return a[:, : b.shape[0]] @ b


def test_an_operand_the_body_receives_whole_fails_however_small_what_it_makes(tmp_path):
    whole_in = jax.jit(
        jax.shard_map(_local_product, mesh=AUTO.build(), in_specs=(P("x", None), P()), out_specs=P("x", None))
    )
    with pytest.raises(CheckFailure) as info:
        assert_body_never_holds_whole(_matmul_call(tmp_path, whole_in), "mm", "rhs", RHS)
    assert "found each device receiving it whole (64×16 = 1024 entries)" in info.value.message


@pytest.mark.parametrize("how", ["constraint", "device_put", "in_shardings"])
def test_an_operand_laid_out_whole_right_before_the_shard_map_fails(tmp_path, how):
    mesh = AUTO.build()
    replicated = NamedSharding(mesh, P())
    mapped = jax.shard_map(_local_product, mesh=mesh, in_specs=(P("x", None), P("x", None)), out_specs=P("x", None))
    if how == "constraint":
        function = jax.jit(lambda a, b: mapped(a, jax.lax.with_sharding_constraint(b, replicated)))
    elif how == "device_put":
        jitted = jax.jit(mapped)
        function = lambda a, b: jitted(a, jax.device_put(b, replicated))  # noqa: E731
    else:
        function = jax.jit(mapped, in_shardings=(NamedSharding(mesh, P("x", None)), replicated))
    with pytest.raises(CheckFailure) as info:
        assert_body_never_holds_whole(_matmul_call(tmp_path, function, placed=how != "in_shardings"), "mm", "rhs", RHS)
    assert "found rhs laid out whole on every device (64×16 = 1024 entries) right before the shard_map" in (
        info.value.message
    )
    assert_body_never_holds_whole(_matmul_call(tmp_path, jax.jit(mapped)), "mm", "rhs", RHS)


def test_an_operand_is_found_by_name_where_a_closed_over_array_moves_it(tmp_path):
    scale = jnp.ones((8, 16))  # closed over by the body: the trace puts it before lhs and rhs

    def scaled(a, b):
        return _local_product(a, b * scale[0])

    mapped = jax.shard_map(scaled, mesh=AUTO.build(), in_specs=(P("x", None), P("x", None)), out_specs=P("x", None))
    call = _matmul_call(tmp_path, jax.jit(mapped))
    assert call.program is not None and call.program.bodies[0].operands == ((8, 16), LHS, RHS)
    assert_body_never_holds_whole(call, "mm", "rhs", RHS)
    whole = jax.shard_map(scaled, mesh=AUTO.build(), in_specs=(P("x", None), P()), out_specs=P("x", None))
    with pytest.raises(CheckFailure) as info:
        assert_body_never_holds_whole(_matmul_call(tmp_path, jax.jit(whole)), "mm", "rhs", RHS)
    assert "found each device receiving it whole (64×16 = 1024 entries)" in info.value.message


ROWS = "in_specs=(P('x', None), P('x', None))"
BLOCKS = (("lhs", LHS, (4, 64)), ("rhs", RHS, (8, 16)))


def test_a_body_closing_over_an_array_receives_the_blocks_its_in_specs_cut(tmp_path):
    offsets = jnp.arange(8)  # closed over by the body: the trace puts it before lhs and rhs

    def scaled(a, b):
        return _local_product(a, b) * offsets[0]

    rows = jax.shard_map(scaled, mesh=AUTO.build(), in_specs=(P("x", None), P("x", None)), out_specs=P("x", None))
    call = _matmul_call(tmp_path, jax.jit(rows))
    assert call.program is not None and call.program.bodies[0].operands == ((8,), LHS, RHS)
    assert_body_receives_blocks(call, "mm", BLOCKS, ROWS)
    rhs_whole = jax.shard_map(scaled, mesh=AUTO.build(), in_specs=(P("x", None), P()), out_specs=P("x", None))
    with pytest.raises(CheckFailure) as info:
        assert_body_receives_blocks(_matmul_call(tmp_path, jax.jit(rhs_whole)), "mm", BLOCKS, ROWS)
    assert info.value.message == (
        "`mm`: expected its shard_map (in_specs=(P('x', None), P('x', None))) to give each device a 4×64 block of"
        " lhs (32×64) and a 8×16 block of rhs (64×16), found a 4×64 block of lhs and a 64×16 block of rhs — its"
        " in_specs cut rhs otherwise"
    )
