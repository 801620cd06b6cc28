"""Where a claimed time came from: the spans of the timing record (kernel/timing_record.py) whose clock values
give it, found exactly from the values the clock returned, whatever the machine's speed."""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from autograder.facts import ClockRead, Compilation, TimingRecord, Wait

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
    """The pairs of clock reads the code subtracted, or, where the record saw none (numpy's ``diff``), each
    read and the next."""
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


def _calls_may_be(chosen: Sequence[Span], count: int, each_span: bool) -> bool:
    """Whether ``count`` calls (in all the spans, or ``each_span``) can be what the spans timed: where each
    span waited for several results, the waits count the calls, and another count is a coincidence."""
    if not all(len(span.waits) >= 2 for span in chosen):
        return True  # waited for once at a loop's end, or never: the record does not count the calls
    if each_span:
        return all(len(span.waits) % count == 0 for span in chosen)
    return sum(len(span.waits) for span in chosen) % count == 0


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
        if (
            count >= 1
            and (count == 1 or count % len(chosen) == 0)
            and agrees(total / count, claimed)
            and _calls_may_be(chosen, count, each_span=False)
        ):
            guessed = count != 1 and not (waited and count == calls)
            methods.append(Method(chosen, f"total divided by {count}", calls if waited else max(count, calls), guessed))
        # The median of loops of several calls, each divided by its number of calls, where the waits do not
        # count them (only a loop's last result waited for, or none).
        middle = statistics.median(span.seconds for span in chosen)
        count = round(middle / claimed)
        if count >= 2 and agrees(middle / count, claimed) and _calls_may_be(chosen, count, each_span=True):
            guessed = not all(len(span.waits) == count for span in chosen)
            methods.append(Method(chosen, "median", max(calls, count * len(chosen)), guessed))
    # A count the record does not fix is a guess that many sets of short spans satisfy to the match's
    # rounding (a few hundred dispatch-only spans, their total over four times their number): where the
    # spans give the time without one, the guess is a coincidence and may not hide that way.
    methods = [m for m in methods if not m.guessed] or methods
    # A median is one of its spans' times, which many sets share: the time comes from spans of one kind (the
    # same results waited for) where some give it, and from the most spans that give it.
    alike = [m for m in methods if len({span.shapes for span in m.spans}) == 1]
    methods = alike or methods
    return [m for m in methods if not any(set(m.spans) < set(other.spans) for other in methods)]
