"""Reading a timed task's timing record (kernel/timing_record.py) from its facts, event by event."""

from __future__ import annotations

from typing import Any

from autograder.facts.schema import ClockRead, Compilation, FactsError, TimingRecord, Wait
from autograder.facts.validation import is_count, is_finite_number, require


def read_timing_record(raw: Any) -> TimingRecord:
    """A timed task's record (kernel/timing_record.py): its events and spans, validated one by one."""
    require(isinstance(raw, dict), "the timing record must be an object")
    events, spans, dropped = raw.get("events"), raw.get("spans"), raw.get("dropped", 0)
    require(isinstance(events, list) and isinstance(spans, list), "the timing record needs events and spans")
    require(is_count(dropped), "bad dropped count")
    found: list[ClockRead | Compilation | Wait] = []
    for event in events:
        require(isinstance(event, list) and len(event) in (3, 4) and isinstance(event[0], str), "bad event")
        kind = event[0]
        require(len(event) == (4 if kind == "clock" else 3), f"bad {kind} event")
        if kind == "clock":
            _, read, clock, seconds = event
            require(is_count(read) and isinstance(clock, str) and is_finite_number(seconds), "bad clock read")
            found.append(ClockRead(read, clock[:40], float(seconds)))
        elif kind == "compile":
            _, stage, function = event
            require(isinstance(stage, str) and isinstance(function, str), "bad compilation")
            found.append(Compilation(stage[:20], function[:200]))
        elif kind == "wait":
            _, how, arrays = event
            require(isinstance(how, str) and isinstance(arrays, list), "bad wait")
            described = []
            for array in arrays:
                require(isinstance(array, list) and len(array) == 3, "bad array of a wait")
                shape, dtype, devices = array
                require(isinstance(shape, list) and all(is_count(d) for d in shape), "bad shape of a wait")
                require(isinstance(dtype, str) and is_count(devices), "bad array of a wait")
                described.append((tuple(shape), dtype[:40], devices))
            found.append(Wait(how[:40], tuple(described)))
        else:
            raise FactsError(f"unknown timing event {kind!r}")
    pairs = []
    for span in spans:
        require(isinstance(span, list) and len(span) == 2 and all(is_count(r) for r in span), "bad span")
        pairs.append((span[0], span[1]))
    return TimingRecord(tuple(found), tuple(pairs), dropped)
