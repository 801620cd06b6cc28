"""What a lab's reference gives the students' package: its code only where marked ``@shareable``, else the
values it returned, stored when the package is built: a reference is often the task's answer."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from autograder.caches.reference_entry import read_entry, write_entry

F = TypeVar("F", bound=Callable[..., Any])

RESULTS_FILE = "reference_results.npz"
RESULTS_KEY = {"kind": "the students' reference results"}


def shareable(function: F) -> F:
    """Mark a reference whose code the students' package may carry: plain mathematics or tooling that
    answers no task (``x @ W + b``, a shape formula)."""
    function.__shareable__ = True  # type: ignore[attr-defined]  # a mark on the object, which no type declares
    return function


def is_shareable(function: Any) -> bool:
    # under @cached_reference, the mark is on the CachedReference too: update_wrapper copies the function's __dict__
    return getattr(function, "__shareable__", False) is True


def write_results(lab_dir: Path, results: dict[str, Any]) -> None:
    path = lab_dir / RESULTS_FILE
    write_entry(path, RESULTS_KEY, results)
    path.chmod(0o644)  # read by whoever installs the package


@functools.cache
def _results(path: str) -> dict[str, Any]:
    return read_entry(Path(path), RESULTS_KEY)


class StoredResult:
    """A reference without arguments, answered by its stored result."""

    def __init__(self, module_file: str, name: str):
        self.path, self.__name__ = str(Path(module_file).resolve().parent / RESULTS_FILE), name

    def __call__(self) -> Any:
        return _results(self.path)[self.__name__]
