"""What each ``shard_map`` of a function receives of one operand, the operand named by the grader.

The trace keeps no names: a body's parameters and the function's arguments are named as the student
likes, and closed-over arrays and the flattening of pytrees move an operand's position. What the grader
controls is its own inputs, so it names an operand and gives the global shape of the input it passed
for it (choose inputs whose shapes differ); the operand is the one of that shape in every ``shard_map``.
"""

from __future__ import annotations

from autograder.checks.failure import CheckFailure
from autograder.checks.found import quote
from autograder.checks.program import traced_program
from autograder.facts import CallFact, ShardMapBody

__all__ = ["assert_one_shard_map", "operand_blocks", "assert_operand_block", "assert_operand_replicated"]

Shape = tuple[int, ...]


def _shape(shape: Shape) -> str:
    return "×".join(map(str, shape)) or "scalar"


def _bodies(call: CallFact, name: str, operand: str) -> tuple[ShardMapBody, ...]:
    bodies = traced_program(call, name).bodies
    if not bodies:
        raise CheckFailure(
            f"{quote(name)}: expected a jax.shard_map taking {operand}, found none in its trace"
            " (the grader could not see what each device receives)"
        )
    return bodies


def assert_one_shard_map(call: CallFact, name: str) -> ShardMapBody:
    """Fail unless the function's program holds exactly one ``shard_map`` (nested programs included); its
    record otherwise, for the checks that read one body."""
    bodies = traced_program(call, name).bodies
    if len(bodies) != 1:
        taking = "; ".join(", ".join(map(_shape, body.operands)) or "no array" for body in bodies)
        raise CheckFailure(
            f"{quote(name)}: expected exactly one jax.shard_map in its program, found "
            + (f"{len(bodies)}, taking {taking}" if bodies else "none in its trace")
        )
    return bodies[0]


def operand_blocks(call: CallFact, name: str, operand: str, shape: Shape) -> list[Shape]:
    """The block each ``shard_map`` of the function gives one device of the operand ``operand``, the
    grader's input of global shape ``shape``: one entry per ``shard_map``, a CheckFailure if one lacks it."""
    shape = tuple(shape)
    blocks = []
    for body in _bodies(call, name, operand):
        received = {tuple(whole): tuple(block) for whole, block in zip(body.operands, body.blocks)}
        if shape not in received:
            raise CheckFailure(
                f"{quote(name)}: expected its shard_map to take {operand} ({_shape(shape)}) as an argument, found"
                f" operands of shapes {', '.join(map(_shape, body.operands)) or 'none'} — pass {operand} to the"
                " shard_map-ed function; don't use the notebook's own arrays inside"
            )
        blocks.append(received[shape])
    return blocks


def assert_operand_block(call: CallFact, name: str, operand: str, shape: Shape, block: Shape, hint: str = "") -> None:
    """Fail unless every ``shard_map`` of the function gives each device a ``block`` of the operand
    ``operand`` (the grader's input of global shape ``shape``); ``hint`` says which in_specs do."""
    for found in operand_blocks(call, name, operand, shape):
        if found != tuple(block):
            raise CheckFailure(
                f"{quote(name)}: expected each device to receive a {_shape(block)} block of {operand}"
                f" ({_shape(shape)}), found a {_shape(found)} block" + (f" — {hint}" if hint else "")
            )


def assert_operand_replicated(call: CallFact, name: str, operand: str, shape: Shape, hint: str = "") -> None:
    """Fail unless every ``shard_map`` of the function gives each device the whole of the operand
    ``operand`` (its in_specs entry ``P()``): the body finds it whole, as a weight every device needs."""
    assert_operand_block(call, name, operand, shape, shape, hint or f"its in_specs entry for {operand} should be P()")
