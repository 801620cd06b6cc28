"""Which collectives a function writes inside its ``shard_map`` bodies, read from its trace.

The compiled program cannot tell them apart from what XLA inserts (a ``jnp.sum`` of a sharded array compiles
to an all-reduce too); the trace can: only a ``jax.lax`` collective written in a ``shard_map`` body is there.
"""

from __future__ import annotations

from typing import Iterable

from autograder.checks.failure import CheckFailure
from autograder.checks.found import quote
from autograder.checks.program import traced_program
from autograder.facts import CallFact

__all__ = ["SHARD_MAP_COLLECTIVES", "shard_map_collectives", "assert_shard_map_collectives"]

# What a student writes (``jax.lax.<name>``) -> the primitives that show it in a trace, across JAX versions.
# ``pmean`` traces as ``psum`` followed by a division.
SHARD_MAP_COLLECTIVES = {
    "psum": frozenset({"psum", "psum2", "psum_invariant"}),
    "pmax": frozenset({"pmax"}),
    "pmin": frozenset({"pmin"}),
    "all_gather": frozenset({"all_gather", "all_gather_invariant"}),
    "psum_scatter": frozenset({"reduce_scatter"}),
    "ppermute": frozenset({"ppermute"}),
    "all_to_all": frozenset({"all_to_all"}),
}
_SPELLED = {primitive: spelled for spelled, primitives in SHARD_MAP_COLLECTIVES.items() for primitive in primitives}


def shard_map_collectives(call: CallFact, name: str) -> list[tuple[str, tuple[str, ...]]]:
    """The collectives written in the function's ``shard_map`` bodies, in trace order: ``(name, axes)``
    with the name as written (``psum``, ``psum_scatter``, ...)."""
    program = traced_program(call, name)
    return [(_SPELLED.get(use.primitive, use.primitive), use.axes) for use in program.collectives]


def _describe(uses: Iterable[tuple[str, tuple[str, ...]]]) -> str:
    counted: dict[str, int] = {}
    for collective, axes in uses:
        text = f"{collective} over {', '.join(repr(a) for a in axes)}" if axes else collective
        counted[text] = counted.get(text, 0) + 1
    return ", ".join(text + (f" ({n}×)" if n > 1 else "") for text, n in counted.items())


def assert_shard_map_collectives(call: CallFact, name: str, uses: Iterable[str] = (), avoids: Iterable[str] = (),
                                 axis: str | None = None) -> None:
    """Fail unless the function's ``shard_map`` bodies use every collective of ``uses`` (over mesh axis
    ``axis`` when given) and none of ``avoids``; names as in ``jax.lax`` (``psum``, ``all_gather``,
    ``psum_scatter``, ``ppermute``, ``all_to_all``, ``pmax``, ``pmin``)."""
    uses, avoids = tuple(uses), tuple(avoids)
    unknown = [c for c in uses + avoids if c not in SHARD_MAP_COLLECTIVES]
    if unknown:
        raise ValueError(f"unknown collective(s) {unknown}; known: {sorted(SHARD_MAP_COLLECTIVES)}")
    program = traced_program(call, name)
    found = shard_map_collectives(call, name)
    wanted = " and ".join(f"jax.lax.{c}" for c in uses) + (f" over {axis!r}" if axis and uses else "")
    if "shard_map" not in program.primitives:
        if not uses:
            return
        raise CheckFailure(
            f"{quote(name)}: expected a jax.shard_map whose body uses {wanted}, found no shard_map in its trace"
            f" (it holds {', '.join(sorted(program.primitives)[:8]) or 'nothing'}) — a jnp.sum of a sharded"
            " array compiles to an all-reduce XLA inserts, not a collective the function writes")
    missing = [c for c in uses if not any(c == f and (axis is None or axis in axes) for f, axes in found)]
    if missing:
        raise CheckFailure(
            f"{quote(name)}: expected its shard_map body to use {wanted}, found "
            + (f"only {_describe(found)}" if found else "no collective in it — inside shard_map, jnp.sum or"
               " jnp.concatenate work on the device's own block only")
            + f" (missing: {', '.join(missing)})")
    banned = [(f, axes) for f, axes in found if f in avoids]
    if banned:
        raise CheckFailure(
            f"{quote(name)}: expected its shard_map body not to use "
            f"{' or '.join(f'jax.lax.{c}' for c in avoids)}, found {_describe(banned)}")
