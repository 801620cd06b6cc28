"""``autograder warm``: compute and store each lab's ``CACHED_CALLS`` before any grading needs them."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from autograder.caches.reference_cache import CachedReference, references_dir


@dataclass(frozen=True)
class WarmResult:
    lab: str
    computed: tuple[str, ...]
    cached: tuple[str, ...]
    seconds: float

    def summary(self) -> str:
        return f"{self.lab}: {len(self.computed)} computed, {len(self.cached)} already cached ({self.seconds:.1f} s)"


def cached_calls(lab_id: str) -> tuple[Callable[[], Any], ...]:
    from autograder.lab import load_lab

    return tuple(getattr(load_lab(lab_id).reference, "CACHED_CALLS", ()))


def _unpack(call: Callable[[], Any]) -> tuple[CachedReference, tuple]:
    function: Callable[..., Any] = call
    args: tuple = ()
    if isinstance(call, functools.partial):
        if call.keywords:
            raise TypeError(f"{call}: a cached call takes positional arguments only")
        function, args = call.func, call.args
    if not isinstance(function, CachedReference):
        raise TypeError(f"{function!r} in CACHED_CALLS is not decorated with @cached_reference")
    return function, args


def describe(call: Callable[[], Any]) -> str:
    function, args = _unpack(call)
    return f"{function.function.__qualname__}({', '.join(map(repr, args))})"


def warm_lab(lab_id: str) -> WarmResult:
    computed: list[str] = []
    cached: list[str] = []
    start = time.perf_counter()
    for call in cached_calls(lab_id):
        function, args = _unpack(call)
        (cached if function.stored(*args) else computed).append(describe(call))
        function(*args)
    return WarmResult(lab_id, tuple(computed), tuple(cached), time.perf_counter() - start)


def warm_labs(lab_ids: list[str]) -> None:
    print(f"reference cache: {references_dir()}")
    for lab_id in lab_ids:
        result = warm_lab(lab_id)
        print(result.summary() + (f": {', '.join(result.computed)}" if result.computed else ""))
