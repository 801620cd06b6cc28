"""What each ``shard_map`` of a function receives of the operands the grader names (one of them, or all its
inputs: the blocks its in_specs cut), and whether any device ever holds one of them whole.

The trace keeps no names, so an operand is found by the global shape of the grader's input for it
(docs/writing-a-lab.md, "A `shard_map`'s operands, named by the grader").
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from autograder.checks.found import CheckFailure, listed, quote
from autograder.checks.program import assert_uses, traced_program
from autograder.facts import CallFact, ShardMapBody

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
    """The one ``shard_map`` of the function's program (nested programs included), or a CheckFailure."""
    bodies = traced_program(call, name).bodies
    if len(bodies) != 1:
        taking = "; ".join(", ".join(map(_shape, body.operands)) or "no array" for body in bodies)
        raise CheckFailure(
            f"{quote(name)}: expected exactly one jax.shard_map in its program, found "
            + (f"{len(bodies)}, taking {taking}" if bodies else "none in its trace")
        )
    return bodies[0]


def operand_blocks(call: CallFact, name: str, operand: str, shape: Shape) -> list[Shape]:
    """The block each ``shard_map`` of the function gives one device of the operand ``operand``, the grader's
    input of global shape ``shape``; a CheckFailure if one lacks it."""
    blocks = []
    for body in _bodies(call, name, operand):
        position = _position(body, shape)
        if position is None:
            raise _not_taken(name, [(operand, shape)], [body])
        blocks.append(tuple(body.blocks[position]))
    return blocks


def _not_taken(name: str, operands: Sequence[tuple[str, Shape]], bodies: Sequence[ShardMapBody]) -> CheckFailure:
    found = "; ".join(", ".join(map(_shape, body.operands)) or "none" for body in bodies)
    taken = listed(f"{operand} ({_shape(shape)})" for operand, shape in operands)
    names = listed(operand for operand, _ in operands)
    arguments = "arguments" if len(operands) > 1 else "an argument"
    return CheckFailure(
        f"{quote(name)}: expected its shard_map to take {taken} as {arguments}, found operands of shapes {found}"
        f" — pass {names} to the shard_map-ed function; don't use the notebook's own arrays inside"
    )


def _position(body: ShardMapBody, shape: Shape, later: int = 0) -> int | None:
    """Where the operand of global shape ``shape`` stands among the body's operands (None: it takes none): the
    last of that shape, or, with ``later`` more of the grader's inputs of that shape after it, as many before."""
    found = [i for i, whole in enumerate(body.operands[: len(body.blocks)]) if tuple(whole) == tuple(shape)]
    return found[-1 - later] if len(found) > later else None


def _positions(body: ShardMapBody, shapes: Sequence[Shape]) -> list[int] | None:
    """Where each of the grader's inputs of global shapes ``shapes`` stands among the body's operands; None
    unless the body takes them all."""
    positions = []
    for i, shape in enumerate(shapes):
        position = _position(body, shape, later=shapes[i + 1 :].count(shape))
        if position is None:
            return None
        positions.append(position)
    return positions


def assert_operand_block(call: CallFact, name: str, operand: str, shape: Shape, block: Shape, hint: str = "") -> None:
    for found in operand_blocks(call, name, operand, shape):
        if found != tuple(block):
            raise CheckFailure(
                f"{quote(name)}: expected each device to receive a {_shape(block)} block of {operand}"
                f" ({_shape(shape)}), found a {_shape(found)} block" + (f" — {hint}" if hint else "")
            )


def assert_operand_replicated(call: CallFact, name: str, operand: str, shape: Shape, hint: str = "") -> None:
    assert_operand_block(call, name, operand, shape, shape, hint or f"its in_specs entry for {operand} should be P()")


def assert_body_receives_blocks(
    call: CallFact, name: str, operands: Iterable[tuple[str, Shape, Shape]], in_specs: str
) -> None:
    """Fail unless a ``shard_map`` takes every one of ``operands`` (``(operand, shape, block)``) and each that
    takes them all gives each device those blocks, as ``in_specs`` (the text the message quotes) cut them."""
    assert_uses(call, "shard_map", name)
    wanted = [(operand, tuple(shape), tuple(block)) for operand, shape, block in operands]
    shapes = [shape for _, shape, _ in wanted]
    bodies = _bodies(call, name, listed(operand for operand, _, _ in wanted))
    taking = [(body, positions) for body in bodies if (positions := _positions(body, shapes)) is not None]
    if not taking:
        raise _not_taken(name, [(operand, shape) for operand, shape, _ in wanted], bodies)
    for body, positions in taking:
        found = [tuple(body.blocks[position]) for position in positions]
        cut_otherwise = [operand for (operand, _, block), got in zip(wanted, found) if got != block]
        if cut_otherwise:
            raise CheckFailure(
                f"{quote(name)}: expected its shard_map ({in_specs}) to give each device "
                + listed(f"a {_shape(block)} block of {operand} ({_shape(shape)})" for operand, shape, block in wanted)
                + ", found "
                + listed(f"a {_shape(got)} block of {operand}" for (operand, _, _), got in zip(wanted, found))
                + f" — its in_specs cut {listed(cut_otherwise)} otherwise"
            )


def assert_body_never_holds_whole(call: CallFact, name: str, operand: str, shape: Shape) -> None:
    """Fail unless each device holds only its own part of the operand ``operand`` in every ``shard_map`` that
    takes it (one must): received split, not laid out whole right before, and no value of the body as large
    as the whole, however gathered. Choose the grader's input sizes so that no honest value is that large."""
    taking = [(body, _position(body, shape)) for body in _bodies(call, name, operand)]
    if all(position is None for _, position in taking):
        raise _not_taken(name, [(operand, shape)], [body for body, _ in taking])
    whole = tuple(shape)
    size = f"{_shape(whole)} = {math.prod(whole)} entries"
    for body, position in taking:
        if position is None:
            continue
        block = tuple(body.blocks[position])
        if position < len(body.whole_before) and body.whole_before[position]:
            raise CheckFailure(
                f"{quote(name)}: expected each device to hold only its own block of {operand}, found"
                f" {operand} laid out whole on every device ({size}) right before the shard_map"
                " (a with_sharding_constraint, device_put or in_shardings to a replicated layout): that"
                f" gathers {operand} before the body runs"
            )
        if math.prod(block) >= math.prod(whole):
            raise CheckFailure(
                f"{quote(name)}: expected its shard_map body to receive {operand} split, each device"
                f" its own block, found each device receiving it whole ({size}) — its in_specs entry for"
                f" {operand} does not split it over the mesh"
            )
        held = [(value, dtype) for value, dtype in body.values if math.prod(value) >= math.prod(whole)]
        if held:
            value, dtype = held[0]
            raise CheckFailure(
                f"{quote(name)}: expected its shard_map body never to hold {operand} whole ({size}; each"
                f" device receives a {_shape(block)} block), found a value of {dtype}[{','.join(map(str, value))}]"
                f" in it — the body gathered {operand}, by all_gather or by stacking what ppermute brought"
            )
