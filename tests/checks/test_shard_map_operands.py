"""What a function's shard_map receives of an operand the grader names by its input's shape (or of all its
inputs, as its in_specs cut them), whether it ever holds that operand whole, and how many shard_maps it has:
checked on program records made by hand, as the kernel recorder writes them."""

import pytest

from autograder.checks import (
    CheckFailure,
    assert_body_never_holds_whole,
    assert_body_receives_blocks,
    assert_one_shard_map,
    assert_operand_block,
    assert_operand_replicated,
    operand_blocks,
)
from autograder.facts import CallFact, Fact, ProgramFact, ShardMapBody

X, W, B = (128, 4), (4, 2), (2,)


def body(*pairs):
    """A shard_map taking operands of these (global shape, block) pairs, in this order."""
    return ShardMapBody(operands=tuple(whole for whole, _ in pairs), blocks=tuple(b for _, b in pairs), values=())


def call(*bodies, error=None):
    program = ProgramFact(
        jit_object=True, top=("jit",), primitives=frozenset({"jit", "shard_map"}), bodies=bodies, error=error
    )
    return CallFact(output=Fact(kind="missing"), stdout="", error=None, hlo=None, hlo_error=None, program=program)


RIGHT = call(body((X, (16, 4)), (W, W), (B, B)))


def message(check, *args) -> str:
    with pytest.raises(CheckFailure) as info:
        check(*args)
    return info.value.message


def test_an_operand_is_found_by_its_shape_wherever_it_stands():
    assert operand_blocks(RIGHT, "layer", "W", W) == [W]
    swapped = call(body((B, B), (W, W), (X, (16, 4))))  # a closed-over constant first, another order
    assert operand_blocks(swapped, "layer", "x", X) == [(16, 4)]


def test_a_missing_operand_names_the_shapes_found():
    text = message(operand_blocks, call(body((X, (16, 4)), (W, W))), "layer", "b", B)
    assert "expected its shard_map to take b (2) as an argument, found operands of shapes 128×4, 4×2" in text


def test_no_shard_map_is_said():
    assert "expected a jax.shard_map taking W, found none" in message(operand_blocks, call(), "layer", "W", W)


def test_a_split_operand_passes_and_a_whole_one_fails_with_the_hint():
    assert_operand_block(RIGHT, "layer", "x", X, (16, 4))
    whole = call(body((X, X), (W, W), (B, B)))
    text = message(assert_operand_block, whole, "layer", "x", X, (16, 4), "in_specs should be (P('x'), P(), P())")
    assert "expected each device to receive a 16×4 block of x (128×4), found a 128×4 block" in text
    assert text.endswith("in_specs should be (P('x'), P(), P())")


def test_a_replicated_operand_passes_and_a_split_one_fails():
    assert_operand_replicated(RIGHT, "layer", "W", W)
    split = call(body((X, (16, 4)), (W, (4, 1)), (B, B)))
    text = message(assert_operand_replicated, split, "layer", "W", W)
    assert "expected each device to receive a 4×2 block of W (4×2), found a 4×1 block" in text
    assert "its in_specs entry for W should be P()" in text


def test_every_shard_map_is_held_to_it():
    second = body((X, (16, 4)), (W, (2, 2)), (B, B))
    assert "found a 2×2 block" in message(assert_operand_replicated, call(RIGHT.program.bodies[0], second), "f", "W", W)


def test_exactly_one_shard_map():
    assert assert_one_shard_map(RIGHT, "layer") == RIGHT.program.bodies[0]
    two = call(body((X, (16, 4))), body((W, W), (B, B)))
    assert "expected exactly one jax.shard_map in its program, found 2, taking 128×4; 4×2, 2" in message(
        assert_one_shard_map, two, "layer"
    )
    assert "found none in its trace" in message(assert_one_shard_map, call(), "layer")


def test_an_untraceable_function_says_why():
    text = message(assert_one_shard_map, call(error="TypeError: boom"), "layer")
    assert "could not trace it with jax.make_jaxpr: TypeError: boom" in text


LHS, RHS, SCALE = (32, 64), (64, 16), (8, 16)  # a matmul's inputs, and an array the body closes over
SPLIT = ((LHS, (4, 64)), (RHS, (8, 16)))


def matmul(*pairs, values=(), whole_before=()):
    return call(
        ShardMapBody(
            operands=tuple(w for w, _ in pairs),
            blocks=tuple(b for _, b in pairs),
            values=values,
            whole_before=whole_before,
        )
    )


def test_rhs_is_found_by_name_where_a_closed_over_array_moves_it():
    assert_body_never_holds_whole(matmul(*SPLIT), "mm", "rhs", RHS)
    closed_over = ((SCALE, SCALE), *SPLIT)  # rhs third: its place among the operands says nothing
    assert_body_never_holds_whole(matmul(*closed_over, values=(((32, 16), "float32"),)), "mm", "rhs", RHS)
    held = matmul(*closed_over, values=(((64, 16), "float32"),))
    text = message(assert_body_never_holds_whole, held, "mm", "rhs", RHS)
    assert "never to hold rhs whole (64×16 = 1024 entries; each device receives a 8×16 block)" in text
    assert "found a value of float32[64,16] in it" in text
    laid_out_whole = matmul(*closed_over, whole_before=(False, False, True))
    assert "found rhs laid out whole on every device (64×16 = 1024 entries)" in message(
        assert_body_never_holds_whole, laid_out_whole, "mm", "rhs", RHS
    )


def test_only_the_named_operand_is_held_to_it():
    lhs_whole = matmul((SCALE, SCALE), (LHS, LHS), (RHS, (8, 16)), whole_before=(False, True, False))
    assert_body_never_holds_whole(lhs_whole, "mm", "rhs", RHS)  # lhs, second as rhs used to be, may be whole
    text = message(assert_body_never_holds_whole, matmul((SCALE, SCALE), (LHS, (4, 64)), (RHS, RHS)), "mm", "rhs", RHS)
    assert "found each device receiving it whole (64×16 = 1024 entries) — its in_specs entry for rhs" in text


def test_a_shard_map_without_the_operand_is_not_held_to_it_but_one_must_take_it():
    assert_body_never_holds_whole(call(body(*SPLIT), body((LHS, LHS))), "mm", "rhs", RHS)
    text = message(assert_body_never_holds_whole, call(body((LHS, (4, 64))), body((SCALE, SCALE))), "mm", "rhs", RHS)
    assert "expected its shard_map to take rhs (64×16) as an argument, found operands of shapes 32×64; 8×16" in text
    assert "expected a jax.shard_map taking rhs, found none" in message(
        assert_body_never_holds_whole, call(), "mm", "rhs", RHS
    )


ROWS = "in_specs=(P('x', None), P('x', None))"
CUT = (("lhs", LHS, (4, 64)), ("rhs", RHS, (8, 16)))


def test_the_blocks_in_specs_cut_are_found_by_name_where_a_closed_over_array_moves_them():
    assert_body_receives_blocks(matmul(*SPLIT), "mm", CUT, ROWS)
    assert_body_receives_blocks(matmul((SCALE, SCALE), *SPLIT), "mm", CUT, ROWS)  # lhs and rhs second and third
    assert_body_receives_blocks(matmul((RHS, RHS), *SPLIT), "mm", CUT, ROWS)  # a closed-over array of rhs's shape
    assert_body_receives_blocks(call(body(*SPLIT), body((SCALE, (1, 16)))), "mm", CUT, ROWS)  # another shard_map


def test_in_specs_that_cut_an_operand_otherwise_fail_saying_what_was_expected_and_found():
    text = message(assert_body_receives_blocks, matmul((SCALE, SCALE), (LHS, LHS), (RHS, RHS)), "mm", CUT, ROWS)
    assert text == (
        "`mm`: expected its shard_map (in_specs=(P('x', None), P('x', None))) to give each device a 4×64 block of"
        " lhs (32×64) and a 8×16 block of rhs (64×16), found a 32×64 block of lhs and a 64×16 block of rhs — its"
        " in_specs cut lhs and rhs otherwise"
    )
    second = body((LHS, (4, 64)), (RHS, RHS))
    assert "found a 4×64 block of lhs and a 64×16 block of rhs" in message(
        assert_body_receives_blocks, call(body(*SPLIT), second), "mm", CUT, ROWS
    )


def test_grader_inputs_of_one_shape_are_the_last_operands_of_that_shape_in_order():
    square = (("a", W, (1, 2)), ("b", W, (4, 2)))
    assert_body_receives_blocks(call(body((W, W), (W, (1, 2)), (W, W))), "f", square, "in_specs=(P('x'), P())")
    text = message(assert_body_receives_blocks, call(body((W, (1, 2)), (W, W))), "f", square[::-1], "in_specs")
    assert "found a 1×2 block of b and a 4×2 block of a — its in_specs cut b and a otherwise" in text


def test_a_shard_map_not_taking_the_inputs_fails_naming_the_shapes_it_takes():
    text = message(assert_body_receives_blocks, call(body((LHS, (4, 64))), body((SCALE, SCALE))), "mm", CUT, ROWS)
    assert text == (
        "`mm`: expected its shard_map to take lhs (32×64) and rhs (64×16) as arguments, found operands of shapes"
        " 32×64; 8×16 — pass lhs and rhs to the shard_map-ed function; don't use the notebook's own arrays inside"
    )
    no_shard_map = CallFact(
        output=Fact(kind="missing"),
        stdout="",
        error=None,
        hlo=None,
        hlo_error=None,
        program=ProgramFact(jit_object=True, top=("jit",), primitives=frozenset({"jit", "dot_general"})),
    )
    assert "expected a program built with jax.shard_map, found none" in message(
        assert_body_receives_blocks, no_shard_map, "mm", CUT, ROWS
    )
