"""The grader's own timing: warmed up, blocked, repeated, interleaved, summarised by medians, as load from other
work shifts a single repeat by up to 40 % (JAX_NOTES.md); and the students' timing claims checked against it,
allowing for the load each side met (docs/how-grading-works.md, "Timing" and "The load each side met"). The
grading sets the student's share for each check (``students_load``), so that no lab names it."""

from __future__ import annotations

import contextlib
import functools
import math
import statistics
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import jax
import psutil

from autograder.checks.found import CheckFailure, found_bool, found_number, quote
from autograder.fairness import (
    checks_waiting,
    measuring,
    min_sample_seconds,
    others_share,
    process_cpu_seconds,
    start_reading,
    stretch,
    wait_for_quiet,
    wait_until_machine_quiet,
)
from autograder.run import GRADER_PHASES, MEASURE, TURN_WAIT, under_timing_malloc


@dataclass(frozen=True)
class TimingStats:
    """Seconds per call: the median, the samples in order taken, the share other work took (None: not read)."""

    median: float
    samples: tuple[float, ...]
    others_share: float | None = None

    @property
    def fast(self) -> float:
        """The 10th percentile (the smallest of fewer than 10): load only ever slows a call, so it stays put."""
        return self._deciles()[0]

    @property
    def slow(self) -> float:
        """The 90th percentile (the largest of fewer than 10): load raises it, as it does the student's."""
        return self._deciles()[-1]

    def _deciles(self) -> tuple[float, float]:
        ordered = sorted(self.samples) or [self.median]
        if len(ordered) < 10:
            return ordered[0], ordered[-1]
        deciles = statistics.quantiles(ordered, n=10, method="inclusive")
        return deciles[0], deciles[-1]


TIE = 0.1  # gains under 10 % are too small to call on a shared machine: either verdict passes
QUIET_TIMEOUT = 900.0  # longer than any run may last: past it, measure anyway
MEDIAN_CONFIDENCE = 0.9  # of an early stop (each median within its precision) and of a measured ratio's interval
DEFAULT_PRECISION = 0.1  # ±10 %: far inside the factors (2.5×, 4×) the claims' checks allow
VERDICT_ROUNDS = 3  # a verdict still open after its rounds gets up to this many times as many


def measure_interleaved(
    fns: dict[str, Callable[[], Any]],
    repeats: int = 15,
    warmup: int = 2,
    min_repeats: int | None = None,
    precision: float = DEFAULT_PRECISION,
    verdict: tuple[str, str] | None = None,
) -> dict[str, TimingStats]:
    """Each function timed in rounds of one blocked call each, stopping once ``min_repeats`` are taken and every
    median is within ``precision``; a ``verdict`` (numerator, denominator) still open gets more rounds."""
    if repeats < 1 or warmup < 0:
        raise ValueError(f"repeats must be at least 1 and warmup at least 0, not {repeats} and {warmup}")
    if verdict is not None and not set(verdict) <= set(fns):
        raise ValueError(f"the verdict's two sides {verdict} must be among the functions timed, {sorted(fns)}")
    min_repeats = repeats if min_repeats is None else max(1, min(min_repeats, repeats))
    samples: dict[str, list[float]] = {name: [] for name in fns}
    most = repeats if verdict is None else VERDICT_ROUNDS * repeats
    with checks_waiting(), contextlib.ExitStack() as turn:  # the check holds nothing while it waits
        with GRADER_PHASES.timed(TURN_WAIT):  # for its kernel to stop, then for the turn
            wait_for_quiet(QUIET_TIMEOUT)
            turn.enter_context(measuring())  # the machine's timed turn: no other grading runs meanwhile
            wait_until_machine_quiet("the grader's measurement")  # nor what was under way before it
        with GRADER_PHASES.timed(MEASURE), under_timing_malloc():  # as the student's kernel times
            # this process's CPU seconds are all the measurement's: the kernel it graded runs nothing meanwhile
            own_seconds = functools.partial(process_cpu_seconds, psutil.Process())
            reading = start_reading(own_seconds)
            span = min_sample_seconds()  # under a CPU quota, a sample spans several scheduler periods
            for round_index in range(warmup + most):
                for name in reversed(samples) if round_index % 2 else samples:  # each side first in turn
                    elapsed = _seconds_per_call(fns[name], span)
                    if round_index >= warmup:
                        samples[name].append(elapsed)
                done = round_index + 1 - warmup
                if done < min_repeats or (verdict is not None and verdict_is_open(*(samples[s] for s in verdict))):
                    continue
                if done >= repeats or all(median_is_settled(s, precision) for s in samples.values()):
                    break
            share = others_share(reading, own_seconds)
    return {name: TimingStats(statistics.median(s), tuple(s), share) for name, s in samples.items()}


def verdict_is_open(numerator: list[float], denominator: list[float]) -> bool:
    """Whether the ratio's median is clear of a tie while its interval still allows either answer."""
    low, median, high = _median_interval(a / b for a, b in zip(numerator, denominator))
    clear_of_a_tie = not 1 / (1 + TIE) <= median <= 1 + TIE
    return clear_of_a_tie and len(MeasuredRatio(median, low, high).verdicts()) == 2


def _seconds_per_call(fn: Callable[[], Any], span: float) -> float:
    """Seconds per blocked call of ``fn``: one call, or as many as it takes to last ``span`` seconds."""
    calls, start = 0, time.perf_counter()
    while True:
        jax.block_until_ready(fn())
        calls += 1
        elapsed = time.perf_counter() - start
        if elapsed >= span:
            return elapsed / calls


def called_once(calls: dict[str, Callable[[], Any]]) -> dict[str, Callable[[], Any]]:
    """The calls, each made once and blocked (compiled, arrays allocated) while the kernel starts (``SET_UP_AHEAD``)."""
    for call in calls.values():
        jax.block_until_ready(call())
    return calls


def median_is_settled(samples: list[float], precision: float) -> bool:
    """Whether the median's order-statistic interval lies within ``1 + precision`` of it (False with few samples)."""
    low, median, high = _median_interval(samples)
    return low > 0 and median / low <= 1 + precision and high / median <= 1 + precision


def _median_interval(values: Iterable[float]) -> tuple[float, float, float]:
    """The median between the ends of its order-statistic interval at ``MEDIAN_CONFIDENCE`` (0 to ∞ where none)."""
    ordered = sorted(values)
    n, best = len(ordered), None
    below = 0.0  # P(Binomial(n, 1/2) <= k - 1)
    for k in range(1, n // 2 + 1):
        below += math.comb(n, k - 1) / 2**n
        if 1 - 2 * below < MEDIAN_CONFIDENCE:
            break
        best = k
    median = statistics.median(ordered)
    return (0.0, median, math.inf) if best is None else (ordered[best - 1], median, ordered[n - best])


@dataclass(frozen=True)
class MeasuredRatio:
    """The median of two timed calls' per-round ratios and its interval at ``MEDIAN_CONFIDENCE``."""

    median: float
    low: float
    high: float
    rounds: int = 0

    def __post_init__(self):
        if not (0 <= self.low <= self.median <= self.high and self.median > 0):
            raise ValueError(
                f"a measured ratio needs 0 <= low <= median <= high, not {self.low!r}, {self.median!r}, {self.high!r}"
            )

    def verdicts(self) -> set[bool]:
        """The answers to "is the first faster?" it allows: both while its interval reaches within ``TIE`` of 1."""
        if self.high < 1 / (1 + TIE):
            return {False}
        if self.low > 1 + TIE:
            return {True}
        return {False, True}

    def describe(self) -> str:
        """``0.75 (90% interval 0.71–0.8 over 9 rounds)``."""
        rounds = f" over {self.rounds} rounds" if self.rounds else ""
        high = "∞" if math.isinf(self.high) else f"{self.high:.3g}"
        return f"{self.median:.3g} ({MEDIAN_CONFIDENCE:.0%} interval {self.low:.3g}–{high}{rounds})"


def measured_ratio(numerator: TimingStats, denominator: TimingStats) -> MeasuredRatio:
    """numerator ÷ denominator round by round (a round's two samples met the same load): median and interval."""
    if len(numerator.samples) != len(denominator.samples) or not numerator.samples:
        raise ValueError(
            f"expected the same positive number of rounds on both sides, found"
            f" {len(numerator.samples)} and {len(denominator.samples)}"
        )
    _require_positive(**{f"sample {i}": t for i, t in enumerate(numerator.samples + denominator.samples)})
    low, median, high = _median_interval(a / b for a, b in zip(numerator.samples, denominator.samples))
    return MeasuredRatio(median, low, high, len(numerator.samples))


def _require_positive(**values: float) -> None:
    for key, value in values.items():
        if not value > 0:
            raise ValueError(f"{key} must be a positive number of seconds or a ratio, not {value!r}")


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
