"""Collectives in compiled HLO text (``jitted.lower(...).compile().as_text()``) and their checks."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from autograder.checks.found import CheckFailure, listed, quote

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
    required, forbidden = _ops(required), _ops(forbidden)
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


def _ops(ops: Iterable[str]) -> tuple[str, ...]:
    ops = (ops,) if isinstance(ops, str) else tuple(ops)
    unknown = [op for op in ops if op not in COLLECTIVES]
    if unknown:
        raise ValueError(f"unknown collectives {unknown}; known: {COLLECTIVES}")
    return ops
