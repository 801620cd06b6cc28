"""Students' timing claims checked against the grader's own measurement (measurement.py), allowing for the load
each side met; why the tolerances are as they are: docs/how-grading-works.md, "Timing" and "The load each side
met". The grading sets the student's share for each check (``students_load``), so that no lab names it."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from autograder.checks.found import CheckFailure, found_bool, found_number, quote
from autograder.checks.measurement import TIE, MeasuredRatio, TimingStats, _require_positive
from autograder.fairness import stretch

SPEEDUP_SELF_CONSISTENCY = 0.05  # the claimed ratio may differ from claimed_a / claimed_b by 5 %
_STUDENT_SHARE: ContextVar[Callable[[], float | None]] = ContextVar("student_share", default=lambda: None)


@contextlib.contextmanager
def students_load(share: Callable[[], float | None]) -> Iterator[None]:
    """Timing checks read the student's share from ``share``, asked when needed: by then the task's cells ran."""
    token = _STUDENT_SHARE.set(share)
    try:
        yield
    finally:
        _STUDENT_SHARE.reset(token)


@dataclass(frozen=True)
class LoadAllowance:
    """How many times longer (``slower``) or shorter (``faster``) a student's time may be for the loads met."""

    slower: float
    faster: float
    student_share: float | None
    grader_share: float | None

    def describe(self) -> str:
        if self.slower == self.faster == 1.0:
            return ""
        student, grader = _percent(self.student_share), _percent(self.grader_share)
        widened = f"{self.slower:.2g}× higher" if self.slower > 1 else f"{self.faster:.2g}× lower"
        return (
            f" (other work took {student} of the processors while your timed cells ran, {grader} while the grader"
            f" measured: the range reaches {widened} for it)"
        )


def load_allowance(grader_share: float | None) -> LoadAllowance:
    student_share = _STUDENT_SHARE.get()()
    student, grader = stretch(student_share), stretch(grader_share)
    return LoadAllowance(max(1.0, student / grader), max(1.0, grader / student), student_share, grader_share)


def _percent(share: float | None) -> str:
    return "an unknown share" if share is None else f"{share:.0%}"


def assert_time_consistent(
    claimed: Any,
    measured: float | TimingStats,
    name: str,
    factor: float = 4.0,
    accept: Sequence[str] = ("float",),
) -> None:
    """Fail unless the claimed seconds lie within ``factor`` of the grader's fastest and slowest, widened for load."""
    stats = measured if isinstance(measured, TimingStats) else TimingStats(measured, ())
    median, fast, slow = stats.median, stats.fast, stats.slow
    _require_positive(measured=median)
    seconds = found_number(claimed, name, accept)
    load = load_allowance(stats.others_share)
    low, high = fast / factor / load.faster, slow * factor * load.slower
    if seconds < low:
        raise CheckFailure(
            f"{quote(name)}: you report {format_seconds(seconds)} per call, but the grader measures"
            f" {_measured(median, fast, 'fastest')} — more than {fast / low:.3g}× less{load.describe()}. This looks"
            " like only the dispatch was timed: call jax.block_until_ready on the result before stopping the clock"
            " (and time the jitted function, after a warm-up call)"
        )
    if seconds > high and low <= seconds / 1000 <= high:
        raise CheckFailure(
            f"{quote(name)}: you report {seconds:.4g} per call, about 1000× the grader's measurement of"
            f" {_measured(median, slow, 'slowest')}: it looks like milliseconds where seconds were asked —"
            f" report seconds ({seconds / 1000:.4g} s, not {seconds:.4g})"
        )
    if seconds > high:
        raise CheckFailure(
            f"{quote(name)}: you report {format_seconds(seconds)} per call, but the grader measures"
            f" {_measured(median, slow, 'slowest')} — more than {high / slow:.3g}× more{load.describe()}. The time"
            " probably includes compilation (call the function once before starting the clock), or is a total"
            " rather than per call, or the function was not jitted"
        )


def _measured(median: float, end: float, which: str) -> str:
    if end == median:
        return format_seconds(median)
    return f"{format_seconds(median)}, {format_seconds(end)} at its {which}"


def assert_speedup_claim(
    claimed_speedup: Any,
    claimed_a: Any,
    claimed_b: Any,
    measured_ratio: float,
    name: str,
    factor: float = 2.5,
    a_name: str = "the first time",
    b_name: str = "the second time",
    measured_a: float | TimingStats | None = None,
    measured_b: float | TimingStats | None = None,
    accept: Sequence[str] = ("float",),
) -> None:
    """Fail unless the claimed speedup is claimed_a / claimed_b and within ``factor`` of the measured ratio."""
    for claimed, measured, time_name in ((claimed_a, measured_a, a_name), (claimed_b, measured_b, b_name)):
        if measured is not None:
            assert_time_consistent(claimed, measured, time_name, accept=accept)
    _require_positive(measured_ratio=measured_ratio)
    speedup = found_number(claimed_speedup, name, accept)
    a, b = found_number(claimed_a, a_name, accept), found_number(claimed_b, b_name, accept)
    own_ratio = a / b
    if abs(speedup - own_ratio) > SPEEDUP_SELF_CONSISTENCY * own_ratio:
        raise CheckFailure(
            f"{quote(name)}: expected {quote(a_name)} / {quote(b_name)} = {format_seconds(a)} / {format_seconds(b)}"
            f" = {own_ratio:.3g}, found {speedup:.3g}: the speedup must be computed from your two times"
        )
    least = most = measured_ratio  # widened to the ratios load can make of the grader's samples of both sides
    if isinstance(measured_a, TimingStats) and isinstance(measured_b, TimingStats):
        least, most = min(least, measured_a.fast / measured_b.slow), max(most, measured_a.slow / measured_b.fast)
    low, high = least / factor, most * factor
    if not low <= speedup <= high:
        spread = "" if least == most else f", {least:.3g}–{most:.3g} from its fastest and slowest calls,"
        raise CheckFailure(
            f"{quote(name)}: your speedup {speedup:.3g} is outside {low:.3g}–{high:.3g}, the range allowed around"
            f" the grader's measured {measured_ratio:.3g}{spread} (a factor of {factor:g}): check that both times"
            " are warm, blocked and per call"
        )


def assert_faster_verdict(
    claimed: Any,
    measured: MeasuredRatio,
    name: str,
    ratio: str = "single ÷ sharded",
    candidate: str = "the sharded code",
    accept: Sequence[str] = ("bool",),
) -> None:
    """Fail unless the claimed "``candidate`` is faster" agrees with the measured ``ratio``'s interval."""
    verdict = found_bool(claimed, name, accept)
    if verdict in measured.verdicts():
        return
    slower = "slower" if measured.high < 1 else "faster"
    raise CheckFailure(
        f"{quote(name)}: expected {not verdict}, found {verdict}: the grader measured {ratio} ="
        f" {measured.describe()}, so {candidate} is clearly {slower} on this machine (by more than {TIE:.0%})"
    )


def format_seconds(seconds: float) -> str:
    """``12.3 ms``, ``45 µs``, ``1.2 s``."""
    for unit, least, scale in (("s", 1, 1), ("ms", 1e-3, 1e3), ("µs", 1e-6, 1e6)):
        if seconds >= least:
            return f"{seconds * scale:.3g} {unit}"
    return f"{seconds * 1e9:.3g} ns"
