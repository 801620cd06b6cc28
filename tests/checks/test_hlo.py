"""Collectives read from real compiled HLO, and the messages of the collective checks."""

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from autograder.checks import (
    COLLECTIVES,
    CheckFailure,
    MeshSpec,
    assert_collectives,
    assert_no_collectives,
    collectives_in,
    describe_collectives,
)

MESH = MeshSpec((8,), ("x",))


def compiled_text(body, in_spec, out_spec, check_vma=True) -> str:
    mesh = MESH.build()
    function = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=in_spec, out_specs=out_spec, check_vma=check_vma))
    arg = jax.device_put(jnp.arange(64.0), NamedSharding(mesh, in_spec))
    return function.lower(arg).compile().as_text()


@pytest.fixture(scope="module")
def hlo():
    return {
        "psum": compiled_text(lambda v: jax.lax.psum(v, "x"), P("x"), P()),
        "all_gather": compiled_text(lambda v: jax.lax.all_gather(v, "x", tiled=True), P("x"), P(), check_vma=False),
        "psum_scatter": compiled_text(lambda v: jax.lax.psum_scatter(v, "x", tiled=True), P(), P("x")),
        "elementwise": compiled_text(lambda v: jnp.sin(v) * 2, P("x"), P("x")),
    }


def failure_message(check, *args, **kwargs) -> str:
    with pytest.raises(CheckFailure) as info:
        check(*args, **kwargs)
    return str(info.value)


def test_real_programs_have_the_collectives_of_their_primitives(hlo):
    assert collectives_in(hlo["psum"]) == {"all-reduce": 1}
    assert collectives_in(hlo["all_gather"]) == {"all-gather": 1}
    assert collectives_in(hlo["psum_scatter"]) == {"reduce-scatter": 1}
    assert collectives_in(hlo["elementwise"]) == {}


def test_names_in_identifiers_metadata_and_longer_ops_are_not_counted():
    text = "\n".join(
        [
            '%all-reduce.3 = f32[8]{0} add(f32[8]{0} %a, f32[8]{0} %b), metadata={op_name="all-gather("}',
            '%x = f32[8]{0} custom-call(%all-reduce.3), custom_call_target="ragged-all-to-all("',
            "%ags = (f32[8]{0}, f32[64]{0}) all-gather-start(f32[8]{0} %x), dimensions={0}",
            "%agd = f32[64]{0} all-gather-done((f32[8]{0}, f32[64]{0}) %ags)",
            "%cp = f32[8]{0} collective-permute(f32[8]{0} %x), source_target_pairs={{0,1}}",
            "%r = f32[8]{0} ragged-all-to-all(f32[8]{0} %x)",
        ]
    )
    assert collectives_in(text) == {"all-gather": 1, "collective-permute": 1}


def test_required_collectives(hlo):
    assert_collectives(hlo["psum"], required=["all-reduce"], name="grad")
    message = failure_message(assert_collectives, hlo["elementwise"], required=("all-reduce",), name="grad")
    assert (
        message == "`grad`: expected all-reduce in the compiled code, found none (the compiled code has no collectives)"
    )
    message = failure_message(
        assert_collectives, hlo["all_gather"], required=("all-gather", "reduce-scatter"), name="tp_mlp"
    )
    assert message == (
        "`tp_mlp`: expected reduce-scatter in the compiled code, found none (the compiled code has all-gather ×1)"
    )


def test_forbidden_collectives(hlo):
    assert_collectives(hlo["psum"], forbidden="all-gather", name="f")
    message = failure_message(
        assert_collectives, hlo["all_gather"], required="all-reduce", forbidden="all-gather", name="f"
    )
    assert message == (
        "`f`: expected all-reduce in the compiled code, found none; expected no all-gather,"
        " found 1 all-gather (the compiled code has all-gather ×1)"
    )


def test_no_collectives(hlo):
    assert_no_collectives(hlo["elementwise"], name="layer_man")
    message = failure_message(assert_no_collectives, hlo["psum"], name="layer_man")
    assert message.startswith(
        "`layer_man`: expected no collectives (each device computes its own block), found all-reduce ×1"
    )


def test_code_that_did_not_compile_is_reported_with_its_error():
    message = failure_message(assert_no_collectives, None, name="w", compile_error="TypeError: bad shapes")
    assert message == "`w`: the code could not be compiled, so its collectives cannot be checked: TypeError: bad shapes"
    assert failure_message(assert_collectives, None, required="all-reduce", name="w").endswith("cannot be checked")


def test_an_unknown_collective_name_is_the_grader_s_error():
    with pytest.raises(ValueError, match="unknown collectives"):
        assert_collectives("", required=["allreduce"])


def test_describe_collectives_lists_in_a_fixed_order():
    assert (
        describe_collectives(collectives_in("all-to-all(x) all-gather(y) all-gather(z)"))
        == "all-gather ×2, all-to-all ×1"
    )
    assert len(COLLECTIVES) == 5
