"""How a student's function is built, read from its trace: jit, what it uses, its ``shard_map`` bodies' collectives
(XLA inserts its own) and operands, found by shape (docs/writing-a-lab.md, "A `shard_map`'s operands, named by
the grader"); and the collectives in its compiled HLO text (``jitted.lower(...).compile().as_text()``)."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Collection, Iterable, Sequence

from autograder.checks.found import CheckFailure, listed, quote
from autograder.checks.layout import Layout, assert_same_layout, describe_layout
from autograder.facts import CallFact, ProgramFact, ShardMapBody

# What a student writes, for the primitive that shows it in a trace.
PRIMITIVE_SPELLING = {"shard_map": "jax.shard_map", "sharding_constraint": "jax.lax.with_sharding_constraint"}


def traced_program(call: CallFact, name: str) -> ProgramFact:
    """The record of how the function is built, or a CheckFailure saying why the grader has none."""
    program = call.program
    if program is None:
        raise CheckFailure(f"{quote(name)}: the grader could not read how the function is built")
    if program.error:
        raise CheckFailure(f"{quote(name)}: the grader could not trace it with jax.make_jaxpr: {program.error}")
    return program


def assert_jitted(call: CallFact, name: str) -> None:
    """Fail unless the function is jitted, or its whole work one call of the student's own jitted function."""
    program = traced_program(call, name)
    if program.is_jitted:
        return
    if program.top_jit_library:
        raise CheckFailure(
            f"{quote(name)}: expected a jitted function, found a plain Python function whose one call is a"
            " library function that is jitted itself — that jit covers the library's work, not your function:"
            f" wrap it in jax.jit (`@jax.jit` above the def, or `{name} = jax.jit(...)`)"
        )
    done = ", ".join(sorted(set(program.top))[:6]) or "nothing"
    raise CheckFailure(
        f"{quote(name)}: expected a jitted function, found a plain Python function that runs its operations"
        f" one by one ({done}) — wrap it in jax.jit (`@jax.jit` above the def, or `{name} = jax.jit(...)`)"
    )


def assert_uses(call: CallFact, primitive: str, name: str) -> None:
    program = traced_program(call, name)
    if primitive in program.primitives:
        return
    spelled = PRIMITIVE_SPELLING.get(primitive, primitive)
    raise CheckFailure(
        f"{quote(name)}: expected a program built with {spelled}, found none in its trace"
        f" (it holds {', '.join(sorted(program.primitives)[:8]) or 'nothing'})"
    )


def assert_jitted_shard_map(call: CallFact, name: str) -> None:
    """Fail unless the function is a ``jax.shard_map`` wrapped in ``jax.jit``, the shard_map's absence said first."""
    assert_uses(call, "shard_map", name)
    assert_jitted(call, name)


def assert_jit_given_layouts(
    call: CallFact, expected_in: Sequence[Layout], expected_out: Sequence[Layout], name: str
) -> None:
    """Fail unless the function is ``jax.jit(..., in_shardings=..., out_shardings=...)`` with these layouts."""
    program = traced_program(call, name)
    if program.in_shardings is None or program.out_shardings is None:  # the kernel recorder records both or neither
        raise CheckFailure(
            f"{quote(name)}: expected jax.jit(..., in_shardings=..., out_shardings=...), found"
            " no jitted function at the top of its program"
        )
    for keyword, given, expected in (
        ("in_shardings", program.in_shardings, expected_in),
        ("out_shardings", program.out_shardings, expected_out),
    ):
        if all(g is None for g in given):
            raise CheckFailure(f"{quote(name)}: expected jax.jit to be given {keyword}, found it given none")
        for index, (found, layout) in enumerate(zip(given, expected)):
            label = f"{keyword}[{index}] of {name}" if len(expected) > 1 else f"{keyword} of {name}"
            if found is None:
                raise CheckFailure(f"{quote(label)}: expected {describe_layout(layout)}, found no sharding given")
            assert_same_layout(Layout(layout.shape, dict(found.device_indices)), layout, label)


COLLECTIVES = ("all-gather", "all-reduce", "reduce-scatter", "all-to-all", "collective-permute")

# The op name as an instruction (followed by "(" or "-start("), not part of a "%all-reduce.3" identifier
# nor of a longer op name such as "ragged-all-to-all"; quoted text (metadata, named scopes) is dropped first.
_OP = re.compile(r"(?<![\w.%-])(" + "|".join(COLLECTIVES) + r")(?:-start)?\(")
_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')


def collectives_in(hlo_text: str) -> Counter:
    """How many times each collective op occurs in the HLO text (ops absent are not keys)."""
    return Counter(match.group(1) for match in _OP.finditer(_QUOTED.sub('""', hlo_text)))


def describe_collectives(counts: Counter) -> str:
    """ "all-gather ×2, all-reduce ×1", or "no collectives"."""
    if not counts:
        return "no collectives"
    return ", ".join(f"{op} ×{counts[op]}" for op in COLLECTIVES if counts[op])


def assert_collectives(
    hlo_text: str | None,
    required: Iterable[str] = (),
    forbidden: Iterable[str] = (),
    name: str = "the compiled code",
    compile_error: str | None = None,
) -> None:
    """Fail unless every ``required`` op occurs in the HLO and no ``forbidden`` op does."""
    required, forbidden = _known(required, COLLECTIVES), _known(forbidden, COLLECTIVES)
    counts = _counts(hlo_text, name, compile_error)
    missing = [op for op in required if not counts[op]]
    present = [op for op in forbidden if counts[op]]
    problems = []
    if missing:
        problems.append(f"expected {listed(missing)} in the compiled code, found none")
    if present:
        problems.append(f"expected no {listed(present)}, found {listed(f'{counts[op]} {op}' for op in present)}")
    if problems:
        has = describe_collectives(counts)
        raise CheckFailure(f"{quote(name)}: {'; '.join(problems)} (the compiled code has {has})")


def assert_no_collectives(
    hlo_text: str | None, name: str = "the compiled code", compile_error: str | None = None
) -> None:
    """Fail if the compiled code communicates between devices at all."""
    counts = _counts(hlo_text, name, compile_error)
    if counts:
        raise CheckFailure(
            f"{quote(name)}: expected no collectives (each device computes its own block),"
            f" found {describe_collectives(counts)} — an input's layout differs from the one the computation needs"
        )


def _counts(hlo_text: str | None, name: str, compile_error: str | None) -> Counter:
    if hlo_text is None:
        reason = f": {compile_error}" if compile_error else ""
        raise CheckFailure(
            f"{quote(name)}: the code could not be compiled, so its collectives cannot be checked{reason}"
        )
    return collectives_in(hlo_text)


def _known(names: Iterable[str], known: Collection[str]) -> tuple[str, ...]:
    """The collectives a check names (one name alone too), each one of ``known``: a lab's typo is a ValueError."""
    names = (names,) if isinstance(names, str) else tuple(names)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown collectives {unknown}; known: {sorted(known)}")
    return names


# What a student writes (``jax.lax.<name>``) -> the primitives that show it in a trace, across JAX versions.
# ``pmean`` traces as ``psum`` followed by a division: the recorder notes it as written (``CollectiveUse.written``).
SHARD_MAP_COLLECTIVES = {
    "psum": frozenset({"psum", "psum2", "psum_invariant"}),
    "pmean": frozenset(),
    "pmax": frozenset({"pmax"}),
    "pmin": frozenset({"pmin"}),
    "all_gather": frozenset({"all_gather", "all_gather_invariant"}),
    "psum_scatter": frozenset({"reduce_scatter"}),
    "ppermute": frozenset({"ppermute"}),
    "all_to_all": frozenset({"all_to_all"}),
}
_SPELLED = {primitive: spelled for spelled, primitives in SHARD_MAP_COLLECTIVES.items() for primitive in primitives}


def shard_map_collectives(call: CallFact, name: str) -> list[tuple[str, tuple[str, ...]]]:
    """The collectives written in the function's ``shard_map`` bodies, in trace order: ``(name as written, axes)``."""
    program = traced_program(call, name)
    return [(use.written or _SPELLED.get(use.primitive, use.primitive), use.axes) for use in program.collectives]


def _describe(uses: Iterable[tuple[str, tuple[str, ...]]]) -> str:
    counted = Counter(f"{c} over {', '.join(repr(a) for a in axes)}" if axes else c for c, axes in uses)
    return ", ".join(text + (f" ({n}×)" if n > 1 else "") for text, n in counted.items())


def assert_shard_map_collectives(
    call: CallFact, name: str, uses: Iterable[str] = (), avoids: Iterable[str] = (), axis: str | None = None
) -> None:
    """Fail unless its shard_map bodies use all of ``uses`` (over ``axis``) and none of ``avoids``: pmean is no psum."""
    uses, avoids = _known(uses, SHARD_MAP_COLLECTIVES), _known(avoids, SHARD_MAP_COLLECTIVES)
    program = traced_program(call, name)
    found = shard_map_collectives(call, name)
    wanted = " and ".join(f"jax.lax.{c}" for c in uses) + (f" over {axis!r}" if axis and uses else "")
    if "shard_map" not in program.primitives:
        if not uses:
            return
        raise CheckFailure(
            f"{quote(name)}: expected a jax.shard_map whose body uses {wanted}, found no shard_map in its trace"
            f" (it holds {', '.join(sorted(program.primitives)[:8]) or 'nothing'}) — a jnp.sum of a sharded"
            " array compiles to an all-reduce XLA inserts, not a collective the function writes"
        )
    missing = [c for c in uses if not any(c == f and (axis is None or axis in axes) for f, axes in found)]
    if missing:
        raise CheckFailure(
            f"{quote(name)}: expected its shard_map body to use {wanted}, found "
            + (
                f"only {_describe(found)}"
                if found
                else "no collective in it — inside shard_map, jnp.sum or"
                " jnp.concatenate work on the device's own block only"
            )
            + f" (missing: {', '.join(missing)})"
        )
    banned = [(f, axes) for f, axes in found if f in avoids]
    if banned:
        raise CheckFailure(
            f"{quote(name)}: expected its shard_map body not to use "
            f"{' or '.join(f'jax.lax.{c}' for c in avoids)}, found {_describe(banned)}"
        )


def _pairs(pairs: Sequence[tuple[int, int]], shown: int = 4) -> str:
    text = ", ".join(f"({a}, {b})" for a, b in pairs[:shown])
    return f"[{text}{', …' if len(pairs) > shown else ''}]"


def assert_ppermute_ring(call: CallFact, name: str, axis: str, axis_size: int, steps: int | None = None) -> None:
    """Fail unless every ppermute over ``axis`` moves each block one step along the ring, ``steps`` times in all if
    given (a loop's counted once per iteration; a ``while`` loop's count is unknown)."""
    program = traced_program(call, name)
    ppermutes = [use for use in program.collectives if _SPELLED.get(use.primitive) == "ppermute" and axis in use.axes]
    if not ppermutes:
        raise CheckFailure(
            f"{quote(name)}: expected its shard_map body to pass blocks around the ring with"
            f" jax.lax.ppermute over {axis!r}, found no such ppermute"
            + (f" (it writes {_describe(shard_map_collectives(call, name))})" if program.collectives else "")
        )
    ring = [(i, (i + 1) % axis_size) for i in range(axis_size)]
    either_way = (ring, sorted((b, a) for a, b in ring))
    for use in ppermutes:
        if use.perm is not None and sorted(use.perm) not in either_way:
            raise CheckFailure(
                f"{quote(name)}: expected every ppermute to pass each device's block one device along the ring"
                f" of {axis_size} ({_pairs(ring)} or the reverse), found one with the pairs {_pairs(use.perm)}"
            )
    repeats = [use.repeats for use in ppermutes if use.repeats is not None]
    if steps is None or len(repeats) < len(ppermutes):  # a ppermute inside a while loop runs an unknown count
        return
    moved = sum(repeats)
    if moved != steps:
        raise CheckFailure(
            f"{quote(name)}: expected blocks to move {steps} steps around the ring ({steps} ppermutes,"
            f" a loop's counted once per iteration), found {moved}"
        )


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
    """The block each ``shard_map`` gives one device of the grader's input ``operand`` of global ``shape``."""
    blocks = []
    for body in _bodies(call, name, operand):
        positions = _positions(body, [tuple(shape)])
        if positions is None:
            raise _not_taken(name, [(operand, shape)], [body])
        blocks.append(tuple(body.blocks[positions[0]]))
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


def _taking(call: CallFact, name: str, operands: Sequence[tuple[str, Shape]]) -> list[tuple[ShardMapBody, list[int]]]:
    """The shard_maps that take all the grader's inputs ``(operand, shape)``, each with their positions (one must)."""
    bodies = _bodies(call, name, listed(operand for operand, _ in operands))
    shapes = [tuple(shape) for _, shape in operands]
    taking = [(body, positions) for body in bodies if (positions := _positions(body, shapes)) is not None]
    if not taking:
        raise _not_taken(name, operands, bodies)
    return taking


def _positions(body: ShardMapBody, shapes: Sequence[Shape]) -> list[int] | None:
    """Where each of the grader's inputs of global ``shapes`` stands among the body's operands (of a shape k later
    inputs share, the k-th from the last), None unless the body takes them all."""
    positions = []
    for i, shape in enumerate(shapes):
        found = [j for j, whole in enumerate(body.operands[: len(body.blocks)]) if tuple(whole) == shape]
        later = shapes[i + 1 :].count(shape)
        if len(found) <= later:
            return None
        positions.append(found[-1 - later])
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
    """Fail unless some shard_map takes all ``(operand, shape, block)`` and each that does gives those blocks."""
    assert_uses(call, "shard_map", name)
    wanted = [(operand, tuple(shape), tuple(block)) for operand, shape, block in operands]
    for body, positions in _taking(call, name, [(operand, shape) for operand, shape, _ in wanted]):
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
    whole = tuple(shape)
    size = f"{_shape(whole)} = {math.prod(whole)} entries"
    for body, (position,) in _taking(call, name, [(operand, whole)]):
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
