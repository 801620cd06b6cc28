"""How a student's function is built, read from its trace: jitted or not, what it uses, what jit was given."""

from __future__ import annotations

from collections.abc import Sequence

from autograder.checks.found import CheckFailure, quote
from autograder.checks.layout import Layout, assert_same_layout, describe_layout
from autograder.facts import CallFact, ProgramFact, ShardingFact

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
    """Fail unless the function is jitted: a ``jax.jit`` function, or one whose whole work is one call of a
    jitted function of the student's; a library function that is jitted itself (``jax.nn.log_softmax``,
    ``jnp.linalg.norm``) does not make a plain function that calls it jitted."""
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
    """Fail unless the function's program contains ``primitive`` (e.g. ``shard_map``)."""
    program = traced_program(call, name)
    if primitive in program.primitives:
        return
    spelled = PRIMITIVE_SPELLING.get(primitive, primitive)
    raise CheckFailure(
        f"{quote(name)}: expected a program built with {spelled}, found none in its trace"
        f" (it holds {', '.join(sorted(program.primitives)[:8]) or 'nothing'})"
    )


def assert_jitted_shard_map(call: CallFact, name: str) -> None:
    """Fail unless the function is a ``jax.shard_map`` wrapped in ``jax.jit``: built with a shard_map
    (``assert_uses``), and jitted (``assert_jitted``), the shard_map's absence said first."""
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
            _assert_given(
                found, layout, f"{keyword}[{index}] of {name}" if len(expected) > 1 else f"{keyword} of {name}"
            )


def _assert_given(found: ShardingFact | None, expected: Layout, label: str) -> None:
    if found is None:
        raise CheckFailure(f"{quote(label)}: expected {describe_layout(expected)}, found no sharding given")
    assert_same_layout(Layout(expected.shape, dict(found.device_indices)), expected, label)
