"""Timing the grader's own runs and checking students' timing claims against them.

Why the tolerances are as they are (jax 0.10.2, 2 cores, 8 virtual CPU devices; see JAX_NOTES.md):

- Sharding over virtual CPU devices does not speed code up: single ÷ sharded was 0.6–1.1 on an idle
  machine, and another process burning a core shifted it by up to 40 %; on a heavily shared machine
  single repeats ranged 0.43–2.9. So every measurement is warmed up, blocked, repeated, interleaved
  (both sides see the same load) and summarised by its median.
  It stops repeating early once every median is known within ±10 % (distribution-free, 90 %):
  on a quiet machine that is after 5 rounds, under load it takes them all.
- A student's time is measured in another process at another moment, so it can only agree with ours
  within a factor: 4× for a time per call (wider than the load shifts of a median), 2.5× for a ratio
  of two times (load affects both sides of a ratio alike, so it moves less than either time).
- The mistakes the checks must catch lie far outside those factors: timing only the dispatch (the clock
  stopped before ``jax.block_until_ready``) reads 100–1000× below the compute time; timing the first
  call adds compilation, many times the compute time of these small programs.
- Whether sharding was "faster" is decided by the grader's measurement alone: the single ÷ sharded
  ratio of each interleaved round, and a distribution-free 90 % interval of their median
  (``MeasuredRatio``). When the interval holds 1 the difference is within the grader's own noise and
  either answer passes; otherwise only the answer on the interval's side does. Load scatters the
  rounds, which widens the interval by itself. Nothing the student reports widens it: a student's
  times are claims, checked on their own points, never evidence for a verdict.
"""

from __future__ import annotations

import contextlib
import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jax

from autograder.checks.failure import CheckFailure
from autograder.checks.found import found_bool, found_number, quote
from autograder.run import (
    GRADER_PHASES,
    MEASURE,
    TURN_WAIT,
    checks_waiting,
    measuring,
    min_sample_seconds,
    under_kernel_malloc,
    wait_for_quiet,
    wait_until_machine_quiet,
)

SPEEDUP_SELF_CONSISTENCY = 0.05  # the claimed ratio may differ from claimed_a / claimed_b by 5 %


@dataclass(frozen=True)
class TimingStats:
    """Seconds per call: the median and every sample, in the order taken."""

    median: float
    samples: tuple[float, ...]

    @property
    def spread(self) -> float:
        """How far the samples range: the ratio of their 90th to their 10th percentile (of the largest to the
        smallest with fewer than 10), 1 for a single sample. A loaded machine, or a CPU quota, widens it."""
        ordered = sorted(self.samples)
        if len(ordered) < 2 or ordered[0] <= 0:
            return 1.0
        if len(ordered) < 10:
            return ordered[-1] / ordered[0]
        deciles = statistics.quantiles(ordered, n=10, method="inclusive")
        return deciles[-1] / deciles[0]


SPREAD_ALLOWANCE = 2.0  # a claimed time may be this many spreads (see TimingStats.spread) off the median
TIE = 0.1  # gains under 10 % are too small to call on a shared machine: either verdict passes
QUIET_TIMEOUT = 900.0  # longer than any run may last: past it, measure anyway
MEDIAN_CONFIDENCE = 0.9  # of an early stop (each median within its precision) and of a measured ratio's interval
DEFAULT_PRECISION = 0.1  # ±10 %: far inside the factors (2.5×, 4×) used below


def measure_interleaved(
    fns: dict[str, Callable[[], Any]],
    repeats: int = 15,
    warmup: int = 2,
    min_repeats: int | None = None,
    precision: float = DEFAULT_PRECISION,
) -> dict[str, TimingStats]:
    """Time each function up to ``repeats`` times, one call of each per round (order alternating between
    rounds), each call blocked until its result is ready, after ``warmup`` untimed rounds; never while
    a student's kernel of this process is running cells (it waits until none is).

    With ``min_repeats``, it stops after that many rounds or more as soon as every function's median is
    known within ``precision`` (see ``median_is_settled``): a quiet machine gives tight samples and needs
    few rounds, a loaded one gets all ``repeats``."""
    if repeats < 1 or warmup < 0:
        raise ValueError(f"repeats must be at least 1 and warmup at least 0, not {repeats} and {warmup}")
    min_repeats = repeats if min_repeats is None else max(1, min(min_repeats, repeats))
    with checks_waiting(), contextlib.ExitStack() as turn:  # the check holds nothing while it waits
        with GRADER_PHASES.timed(TURN_WAIT):  # for its kernel to stop, then for the turn
            wait_for_quiet(QUIET_TIMEOUT)
            turn.enter_context(measuring())  # the machine's timed turn: no other grading runs meanwhile
            wait_until_machine_quiet("the grader's measurement")  # nor what was under way before it
        with GRADER_PHASES.timed(MEASURE), under_kernel_malloc():  # as the student's kernel times
            return _measure(fns, repeats, warmup, min_repeats, precision)


def _measure(
    fns: dict[str, Callable[[], Any]], repeats: int, warmup: int, min_repeats: int, precision: float
) -> dict[str, TimingStats]:
    names = list(fns)
    samples: dict[str, list[float]] = {name: [] for name in names}
    span = min_sample_seconds()  # under a CPU quota, a sample spans several scheduler periods
    for round_index in range(warmup + repeats):
        order = names if round_index % 2 == 0 else names[::-1]
        for name in order:
            elapsed = _seconds_per_call(fns[name], span)
            if round_index >= warmup:
                samples[name].append(elapsed)
        done = round_index + 1 - warmup
        if done >= min_repeats and done < repeats and all(median_is_settled(s, precision) for s in samples.values()):
            break
    return {name: TimingStats(statistics.median(s), tuple(s)) for name, s in samples.items()}


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
    """The calls, each made once and blocked until ready (compiled, arrays allocated): a lab sets up what it
    will time this way ahead of the measurement, while the student's kernel starts (``SET_UP_AHEAD`` in a
    lab's reference), so that the measurement after the notebook needs only one warm-up round."""
    for call in calls.values():
        jax.block_until_ready(call())
    return calls


def median_is_settled(samples: list[float], precision: float, confidence: float = MEDIAN_CONFIDENCE) -> bool:
    """Whether a distribution-free confidence interval of the median (order statistics: no assumption on
    how the times are spread) lies within a factor ``1 + precision`` of the sample median on both sides.
    False when there are too few samples for that confidence (fewer than 5 at 90 %)."""
    ordered = sorted(samples)
    n = len(ordered)
    rank = _median_interval_rank(n, confidence)
    if rank is None:
        return False
    low, high, median = ordered[rank - 1], ordered[n - rank], statistics.median(ordered)
    return low > 0 and median / low <= 1 + precision and high / median <= 1 + precision


def _median_interval_rank(n: int, confidence: float) -> int | None:
    """The largest k such that [x(k), x(n-k+1)] holds the true median with at least ``confidence``."""
    best = None
    below = 0.0  # P(Binomial(n, 1/2) <= k - 1)
    for k in range(1, n // 2 + 1):
        below += math.comb(n, k - 1) / 2**n
        if 1 - 2 * below < confidence:
            break
        best = k
    return best


@dataclass(frozen=True)
class MeasuredRatio:
    """The grader's measured ratio of two timed calls: the median of the per-round ratios and its
    distribution-free interval (``low``–``high``, at ``MEDIAN_CONFIDENCE``) from ``rounds`` rounds."""

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
        """The answers to "is the first faster?" (ratio > 1) that the measurement allows: both when its
        interval reaches within ``TIE`` of 1 (too close to call: the student's measurement, taken at another
        moment, may fall either side), else the one on the interval's side."""
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


def measured_ratio(
    numerator: TimingStats, denominator: TimingStats, confidence: float = MEDIAN_CONFIDENCE
) -> MeasuredRatio:
    """numerator ÷ denominator as measured by ``measure_interleaved``: the ratio of each round (the two
    samples of a round were taken back to back, under the same load), their median, and the
    order-statistic interval of that median. Too few rounds for the confidence give an interval from 0
    to infinity: nothing can be called."""
    if len(numerator.samples) != len(denominator.samples) or not numerator.samples:
        raise ValueError(
            f"expected the same positive number of rounds on both sides, found"
            f" {len(numerator.samples)} and {len(denominator.samples)}"
        )
    _require_positive(**{f"sample {i}": t for i, t in enumerate(numerator.samples + denominator.samples)})
    ratios = sorted(a / b for a, b in zip(numerator.samples, denominator.samples))
    n, median = len(ratios), statistics.median(ratios)
    rank = _median_interval_rank(n, confidence)
    if rank is None:
        return MeasuredRatio(median, 0.0, math.inf, n)
    return MeasuredRatio(median, ratios[rank - 1], ratios[n - rank], n)


def assert_time_consistent(
    claimed: Any,
    measured: float | TimingStats,
    name: str,
    factor: float = 4.0,
    accept: Sequence[str] = ("float",),
) -> None:
    """Fail unless the claimed seconds per call, a Python float (or one of the exact types ``accept``
    names), are within ``factor`` of the grader's measurement. Given
    the grader's samples (``TimingStats``), the band follows their spread: on a loaded machine or under a
    CPU quota, where the student's one measurement varies as much, it widens to ``SPREAD_ALLOWANCE`` times
    the spread when that is wider than ``factor``."""
    if isinstance(measured, TimingStats):
        factor = max(factor, SPREAD_ALLOWANCE * measured.spread)
        measured = measured.median
    _require_positive(measured=measured)
    seconds = found_number(claimed, name, accept)
    if seconds < measured / factor:
        raise CheckFailure(
            f"{quote(name)}: you report {format_seconds(seconds)} per call, but the grader measures"
            f" {format_seconds(measured)} — more than {factor:.3g}× less. This looks like only the dispatch was"
            " timed: call jax.block_until_ready on the result before stopping the clock (and time the jitted"
            " function, after a warm-up call)"
        )
    if seconds > measured * factor and measured / factor <= seconds / 1000 <= measured * factor:
        raise CheckFailure(
            f"{quote(name)}: you report {seconds:.4g} per call, about 1000× the grader's measurement of"
            f" {format_seconds(measured)}: it looks like milliseconds where seconds were asked — report"
            f" seconds ({seconds / 1000:.4g} s, not {seconds:.4g})"
        )
    if seconds > measured * factor:
        raise CheckFailure(
            f"{quote(name)}: you report {format_seconds(seconds)} per call, but the grader measures"
            f" {format_seconds(measured)} — more than {factor:.3g}× more. The time probably includes compilation"
            " (call the function once before starting the clock), or is a total rather than per call, or the"
            " function was not jitted"
        )


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
    """Fail unless the claimed speedup (three Python floats, or of the types ``accept`` names) equals
    claimed_a / claimed_b (within 5 %) and is within
    ``factor`` of the grader's measured ratio. Given the grader's own ``measured_a`` and ``measured_b``,
    each claimed time must first agree with it (``assert_time_consistent``): a speedup from unsound times
    is not sound."""
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
    low, high = measured_ratio / factor, measured_ratio * factor
    if not low <= speedup <= high:
        raise CheckFailure(
            f"{quote(name)}: your speedup {speedup:.3g} is outside {low:.3g}–{high:.3g}, the range allowed around"
            f" the grader's measured {measured_ratio:.3g} (a factor of {factor:g}): check that both times are"
            " warm, blocked and per call"
        )


def assert_faster_verdict(
    claimed: Any,
    measured: MeasuredRatio,
    name: str,
    ratio: str = "single ÷ sharded",
    candidate: str = "the sharded code",
    accept: Sequence[str] = ("bool",),
) -> None:
    """Fail unless the claimed "``candidate`` is faster", a Python bool (or of the types ``accept`` names),
    agrees with the grader's measured ``ratio`` (the other code's time ÷ the candidate's: above 1 when the
    candidate is faster).

    The grader's interval alone decides: either answer passes when it holds 1, only the answer on its
    side when it does not."""
    verdict = found_bool(claimed, name, accept)
    if verdict in measured.verdicts():
        return
    slower = "slower" if measured.high < 1 else "faster"
    raise CheckFailure(
        f"{quote(name)}: expected {not verdict}, found {verdict}: the grader measured {ratio} ="
        f" {measured.describe()}, so {candidate} is clearly {slower} on this machine (by more than"
        f" {TIE:.0%})"
    )


def _require_positive(**values: float) -> None:
    for key, value in values.items():
        if not value > 0:
            raise ValueError(f"{key} must be a positive number of seconds or a ratio, not {value!r}")


def format_seconds(seconds: float) -> str:
    """``12.3 ms``, ``45 µs``, ``1.2 s``."""
    if seconds >= 1:
        return f"{seconds:.3g} s"
    if seconds >= 1e-3:
        return f"{seconds * 1e3:.3g} ms"
    if seconds >= 1e-6:
        return f"{seconds * 1e6:.3g} µs"
    return f"{seconds * 1e9:.3g} ns"
