"""A timing method judged by what the timing code did, read exactly from the clock's values (docs/writing-a-lab.md,
"The timing record"): a time that includes a compilation can land inside measurement.py's margins."""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from autograder.checks.found import CheckFailure, found_number, quote
from autograder.facts import ClockRead, Compilation, Fact, TimingRecord, Wait

MATCH = 1e-6  # relative: a claimed time computed from the clock's values agrees with them to rounding
WARM_UP_SKIPS = 3  # a method may leave out its first few spans (warm-ups timed and thrown away)

Shape = tuple[int, ...]


@dataclass(frozen=True)
class Span:
    """Two clock reads the code subtracted, and what happened between them."""

    start: int  # the reads' positions among the record's events
    stop: int
    seconds: float
    waits: tuple[Wait, ...]
    compiled: tuple[Compilation, ...]

    @property
    def per_call(self) -> float:
        return self.seconds / max(1, len(self.waits))

    @property
    def shapes(self) -> frozenset[tuple[Shape, int]]:
        """The (shape, device count) of every array waited for inside the span."""
        return frozenset((shape, devices) for wait in self.waits for shape, _, devices in wait.arrays)


@dataclass(frozen=True)
class Method:
    """How a claimed time was computed: from which spans, by which statistic, over how many calls."""

    spans: tuple[Span, ...]
    statistic: str
    calls: int
    guessed: bool = False  # divided by a count of calls the record does not count (no waits fix it)

    def describe(self) -> str:
        return f"the {self.statistic} of {len(self.spans)} timed span(s), {self.calls} call(s) in all"


def spans(record: TimingRecord) -> list[Span]:
    """The clock-read pairs the code subtracted, or each read and the next where it saw none (numpy's ``diff``)."""
    position = {event.read: i for i, event in enumerate(record.events) if isinstance(event, ClockRead)}
    pairs = [(position[a], position[b]) for a, b in record.spans if a in position and b in position]
    pairs = [(a, b) for a, b in dict.fromkeys(pairs) if a < b]
    if not pairs:
        pairs = list(itertools.pairwise(sorted(position.values())))
    found = []
    for a, b in pairs:
        start, stop = record.events[a], record.events[b]
        assert isinstance(start, ClockRead) and isinstance(stop, ClockRead)
        inside = record.events[a + 1 : b]
        waits = tuple(e for e in inside if isinstance(e, Wait))
        compiled = tuple(e for e in inside if isinstance(e, Compilation))
        found.append(Span(a, b, stop.seconds - start.seconds, waits, compiled))
    return found


def _boundaries(record: TimingRecord, base: list[Span]) -> list[int]:
    """Where a run of like spans may begin or end in ``base``: at a span that compiles, one of another kind
    than the one before it, or one after work outside any span (a warm-up between two timed functions)."""
    bounds = {0, len(base)}
    for i in range(1, len(base)):
        before, span = base[i - 1], base[i]
        between = record.events[before.stop + 1 : span.start]
        if span.compiled or span.shapes != before.shapes or any(isinstance(e, (Wait, Compilation)) for e in between):
            bounds.add(i)
    return sorted(bounds)


def candidates(record: TimingRecord, found: list[Span]) -> Iterable[tuple[Span, ...]]:
    """The sets of spans a claimed time may come from: runs of like spans, whole or less their first few, among
    all spans or those of one kind, every other one of a kind (two functions timed in turn), each span alone."""
    kinds: dict[frozenset, list[Span]] = {}
    for span in found:
        kinds.setdefault(span.shapes, []).append(span)
    bases = [found, *kinds.values()]
    bases += [group[offset::2] for group in kinds.values() for offset in (0, 1)]
    seen = set()
    for base in bases:
        bounds = _boundaries(record, base)
        for k, first in enumerate(bounds[:-1]):
            for start in range(first, min(first + WARM_UP_SKIPS + 1, bounds[k + 1])):
                for end in bounds[k + 1 :]:
                    chosen = tuple(base[start:end])
                    if chosen and chosen not in seen:
                        seen.add(chosen)
                        yield chosen
    for span in found:
        if (span,) not in seen:
            yield (span,)


def _count_fit(chosen: Sequence[Span], count: int, each_span: bool) -> Literal["fits", "miscounted", "coincidence"]:
    """Whether ``count`` calls (in all the spans, or ``each_span``) can be what the spans timed. Where each span
    waited for several results, the waits count the calls: a multiple of ``count`` fits; within one in a
    hundred of it without being it, the loop ran a call short of, or over, the number its time is divided by
    (how the code measured, over the calls the waits count); farther off, the division is a coincidence."""
    waits = [len(span.waits) for span in chosen]
    if not all(n >= 2 for n in waits):
        return "fits"  # waited for once at a loop's end, or never: the record does not count the calls
    counted = waits if each_span else [sum(waits)]
    if all(n % count == 0 for n in counted):
        return "fits"
    return "miscounted" if all(abs(n - count) <= max(1, count // 100) for n in counted) else "coincidence"


def agrees(a: float, b: float) -> bool:
    return abs(a - b) <= MATCH * max(abs(a), abs(b))


def how_measured(record: TimingRecord, claimed: float) -> list[Method]:
    """Every way the record's spans give ``claimed`` seconds per call; [] when none does."""
    if not claimed > 0:
        return []
    methods = []
    for chosen in candidates(record, spans(record)):
        per_call = [span.per_call for span in chosen]
        calls = sum(max(1, len(span.waits)) for span in chosen)
        for statistic, value in (
            ("median", statistics.median(per_call)),
            ("mean", statistics.fmean(per_call)),
            ("least", min(per_call)),
        ):
            if agrees(value, claimed):
                methods.append(Method(chosen, statistic, calls))
        waited = all(span.waits for span in chosen)  # then each call was waited for: the waits count them
        total = sum(span.seconds for span in chosen)  # a loop's time over its number of calls
        count = round(total / claimed)
        # the total itself, k loops of n calls each, or k single calls: a count that is none of these (no
        # multiple of the spans) is a coincidence
        if count >= 1 and (count == 1 or count % len(chosen) == 0) and agrees(total / count, claimed):
            fit = _count_fit(chosen, count, each_span=False)
            if fit == "fits":
                guessed = count != 1 and not (waited and count == calls)
                methods.append(
                    Method(chosen, f"total divided by {count}", calls if waited else max(count, calls), guessed)
                )
            elif fit == "miscounted":
                methods.append(Method(chosen, f"total divided by {count}", calls))
        # The median of loops of several calls, each divided by its number of calls, where the waits do not
        # count them (only a loop's last result waited for, or none).
        middle = statistics.median(span.seconds for span in chosen)
        count = round(middle / claimed)
        if count >= 2 and agrees(middle / count, claimed):
            fit = _count_fit(chosen, count, each_span=True)
            if fit == "fits":
                guessed = not all(len(span.waits) == count for span in chosen)
                methods.append(Method(chosen, "median", max(calls, count * len(chosen)), guessed))
            elif fit == "miscounted":
                methods.append(Method(chosen, "median", calls))
    # A count the record does not fix is a guess many sets of short spans satisfy to the match's rounding:
    # where the spans give the time without one, the guess is a coincidence and may not hide that way.
    methods = [m for m in methods if not m.guessed] or methods
    # A median is one of its spans' times, which many sets share: the time comes from spans of one kind (the
    # same results waited for) where some give it, and from the most spans that give it.
    methods = [m for m in methods if len({span.shapes for span in m.spans}) == 1] or methods
    return [m for m in methods if not any(set(m.spans) < set(other.spans) for other in methods)]


def _judge(
    record: TimingRecord,
    claims: dict[str, float],
    sound: Callable[[Method], bool],
    fallback: Callable[[list[Span]], bool],
    expected: str,
    found: Callable[[list[Method], Sequence[Span]], str],
) -> None:
    """Fail unless some way each claimed time was measured is ``sound``; one no spans give is judged by ``fallback``."""
    every = spans(record)
    if not every:
        raise CheckFailure(
            f"expected clock reads around the timed calls ({expected}); the task's cells read no clock that the "
            "grader saw (time.perf_counter, time.time, time.monotonic, timeit) while they ran"
        )
    for name, claimed in claims.items():
        methods = how_measured(record, claimed)
        if not (any(sound(m) for m in methods) if methods else fallback(every)):
            used = methods[0].spans if methods else every
            raise CheckFailure(f"{quote(name)}: expected {expected}; found {found(methods, used)}")


def claimed_times(
    read: Callable[[str], Fact], names: Iterable[str], accept: Sequence[str] = ("float",)
) -> dict[str, float]:
    """The claimed times a method check judges, by name: a name not bound, or not a number, loses its own
    check and is left out here; none at all fails."""
    claims, problems = {}, []
    for name in names:
        try:
            claims[name] = found_number(read(name), name, accept)
        except CheckFailure as failure:
            problems.append(str(failure))
    if not claims:
        raise CheckFailure("; ".join(problems) or "no claimed time to judge the method of")
    return claims


def _compiled_names(compiled: Iterable[Compilation]) -> str:
    names = sorted({c.function.removeprefix("jit(").removesuffix(")") or "a function" for c in compiled})
    return ", ".join(f"`{n}`" for n in names[:4])


def _traced(span: Span) -> list[Compilation]:
    return [c for c in span.compiled if c.stage == "trace"]


def _made_anew(used: Sequence[Span]) -> bool:
    """Was a function traced again inside these spans (made anew for each call), not once in the first?"""
    if sum(1 for span in used if _traced(span)) >= 2:
        return True
    for span in used:
        names = [c.function for c in _traced(span)]
        if len(span.waits) >= 2 and len(names) > len(set(names)):
            return True
    return False


def assert_warm(record: TimingRecord, claims: dict[str, float]) -> None:
    """Each time was measured warm: nothing was compiled between the clock reads it comes from."""

    def cold(used: Sequence[Span]) -> bool:  # traced, lowered or compiled (a new layout is only compiled)
        return any(span.compiled for span in used) and not _made_anew(used)

    def found(methods: list[Method], used: Sequence[Span]) -> str:
        compiled = [c for span in used for c in span.compiled]
        return (
            f"{_compiled_names(compiled)} traced and compiled between the clock reads the time comes from "
            f"({methods[0].describe() if methods else 'every timed span'}): the first call was timed"
        )

    _judge(
        record,
        claims,
        lambda m: not cold(m.spans),
        lambda every: any(span.waits and not span.compiled for span in every),
        "a warm measurement: the function called once before the clock starts, so that its compilation is not timed",
        found,
    )


def assert_made_once(record: TimingRecord, claims: dict[str, float]) -> None:
    """Each time was measured on one function made once: ``jax.jit(jax.grad(f))`` in the timed call is not."""

    def found(methods: list[Method], used: Sequence[Span]) -> str:
        compiled = [c for span in used for c in _traced(span)]
        return (
            f"{_compiled_names(compiled)} traced anew {len(compiled)} times between the clock reads the time "
            "comes from: a new function was made for each call, and each call compiled it"
        )

    _judge(
        record,
        claims,
        lambda m: not _made_anew(m.spans),
        lambda every: not _made_anew([span for span in every if span.waits]),
        "the jitted function made once, before timing, and called again and again",
        found,
    )


def assert_blocked(record: TimingRecord, claims: dict[str, float]) -> None:
    """Each time's spans waited for a result before the clock stopped: else the clock times the dispatch alone."""

    def found(methods: list[Method], used: Sequence[Span]) -> str:
        unwaited = sum(1 for s in used if not s.waits)
        return (
            f"{unwaited} of the timed spans the time comes from waited for no result before the clock stopped: "
            "the clock timed the dispatch, not the computation"
        )

    _judge(
        record,
        claims,
        lambda m: all(s.waits for s in m.spans),
        lambda every: any(s.waits for s in every),
        "each timed call waited for (jax.block_until_ready) before the clock stops",
        found,
    )


def assert_timed_on(record: TimingRecord, claims: dict[str, float], shapes: Sequence[Shape], what: str) -> None:
    """Each time's spans waited for results of one of ``shapes``: another array gives results of another shape."""
    wanted = {tuple(s) for s in shapes}

    def right(span: Span) -> bool:
        return bool(span.waits) and all(shape in wanted for shape, _ in span.shapes)

    def found(methods: list[Method], used: Sequence[Span]) -> str:
        seen = sorted({shape for s in used for shape, _ in s.shapes})
        return f"results of shape {', '.join(str(s) for s in seen[:4]) or 'none'} waited for inside the timed spans"

    _judge(
        record,
        claims,
        lambda m: all(right(s) for s in m.spans if s.waits),
        lambda every: any(right(s) for s in every),
        f"the time of {what}, whose results are of shape {' or '.join(str(s) for s in sorted(wanted))}",
        found,
    )


def assert_calls(record: TimingRecord, claims: dict[str, float], at_least: int) -> None:
    """Each time comes from at least ``at_least`` timed calls."""

    def found(methods: list[Method], used: Sequence[Span]) -> str:
        if methods:
            return max(methods, key=lambda m: m.calls).describe()
        return f"at most {max(len(s.waits) for s in used)} call(s) waited for in one timed span"

    _judge(
        record,
        claims,
        lambda m: m.calls >= at_least,
        lambda every: sum(len(s.waits) for s in every) >= at_least,
        f"at least {at_least} timed calls",
        found,
    )


MEDIAN_SPANS = 3  # a median of one or two timed spans is their mean as well: it shows no choice of the median


def assert_median(record: TimingRecord, claims: dict[str, float]) -> None:
    """Each time is the median of several timed calls' times, judged by the values alone: it fails only where
    the claimed number is another statistic of the spans and no median of at least ``MEDIAN_SPANS`` of them."""

    def sorted_middle(claimed: float) -> bool:
        """Is it either middle time of an even number of spans of one kind (``sorted(times)[n // 2]``)? Not a
        ``how_measured`` method: a run with one more span often has that middle, and would hide the true run."""
        for chosen in candidates(record, spans(record)):
            per_call = [span.per_call for span in chosen]
            if len(per_call) < MEDIAN_SPANS + 1 or len(per_call) % 2 or len({span.shapes for span in chosen}) > 1:
                continue
            if any(agrees(v, claimed) for v in (statistics.median_low(per_call), statistics.median_high(per_call))):
                return True
        return False

    def found(methods: list[Method], used: Sequence[Span]) -> str:
        other = [m for m in methods if m.statistic != "median"] or methods
        return max(other, key=lambda m: len(m.spans)).describe()

    _judge(
        record,
        {name: claimed for name, claimed in claims.items() if not sorted_middle(claimed)},
        lambda m: m.statistic == "median" and len(m.spans) >= MEDIAN_SPANS,
        lambda every: True,
        f"the median of the times of several timed calls (at least {MEDIAN_SPANS} timed spans)",
        found,
    )
