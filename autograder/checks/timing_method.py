"""A timing method judged by what the timing code did (kernel/timing_record.py), not by its numbers alone: a
time that includes a compilation, or one taken on a smaller array, can land inside the margins of the
grader's measurement (timing.py). docs/writing-a-lab.md, "The timing record"."""

from __future__ import annotations

import statistics
from collections.abc import Callable, Iterable, Sequence

from autograder.checks.found import CheckFailure, found_number, quote
from autograder.checks.timing_spans import Method, Shape, Span, agrees, candidates, how_measured, spans
from autograder.facts import Compilation, Fact, TimingRecord


def _judge(
    record: TimingRecord,
    claims: dict[str, float],
    sound: Callable[[Method], bool],
    fallback: Callable[[list[Span]], bool],
    expected: str,
    found: Callable[[list[Method], Sequence[Span]], str],
) -> None:
    """Fail unless, for every claimed time, some way it was measured is ``sound``; a time no spans give is
    judged on all the task's spans by ``fallback``. ``found`` says what was found, given the ways and the
    spans of the first way (all spans where there is none)."""
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
    """Was a function traced again and again inside these spans (made anew for every call), rather than
    once, in the first of them (the first call timed)?"""
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
    """Each time was measured on one function made once: ``jax.jit(jax.grad(f))`` written inside the timed call
    is made anew, and compiled, every time."""

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
    """Each time's spans waited for a result before the clock stopped (``jax.block_until_ready``, or a
    transfer to the host): without it the clock times the dispatch alone."""

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
    """Each time's spans waited for results of one of ``shapes``: those of the function named by the text,
    on the arrays it names (``what``, for the message); another array gives results of another shape."""
    wanted = {tuple(s) for s in shapes}

    def right(span: Span) -> bool:
        return bool(span.waits) and all(shape in wanted for shape, _ in span.shapes)

    def found(methods: list[Method], used: Sequence[Span]) -> str:
        seen = sorted({shape for s in used for shape, _ in s.shapes})
        return f"results of shape {', '.join(str(s) for s in seen[:4]) or 'none'} waited for inside the timed spans"

    wanted_text = " or ".join(str(s) for s in sorted(wanted))
    _judge(
        record,
        claims,
        lambda m: all(right(s) for s in m.spans if s.waits),
        lambda every: any(right(s) for s in every),
        f"the time of {what}, whose results are of shape {wanted_text}",
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

    def median(method: Method) -> bool:
        return method.statistic == "median" and len(method.spans) >= MEDIAN_SPANS

    def found(methods: list[Method], used: Sequence[Span]) -> str:
        other = [m for m in methods if m.statistic != "median"] or methods
        return max(other, key=lambda m: len(m.spans)).describe()

    _judge(
        record,
        {name: claimed for name, claimed in claims.items() if not sorted_middle(claimed)},
        median,
        lambda every: True,
        f"the median of the times of several timed calls (at least {MEDIAN_SPANS} timed spans)",
        found,
    )
