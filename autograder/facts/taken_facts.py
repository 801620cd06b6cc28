"""Taking a task's facts out of the kernel's reach the moment the kernel recorder has written them (a later
cell, or a thread the notebook left running, could rewrite them), and reading them later."""

from __future__ import annotations

import os
import shutil
import stat
import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the schema (and numpy) load when facts are first read, after the kernel has started
    from autograder.facts.schema import TaskFacts

MAX_FACTS_BYTES = 512 * 2**20
MAX_FACTS_FILES = 10_000
_CHUNK = 2**20


class FactsTooLarge(ValueError):
    """The kernel wrote more facts than the grader takes."""


def copy_facts(source: Path, destination: Path, budget: dict[str, int] | None = None) -> None:
    """Copy the facts directory ``source`` to ``destination`` (which must not exist), private to this
    process; raises ``FactsTooLarge`` past the limits (what was copied so far stays)."""
    destination.mkdir(mode=0o700, parents=True)
    budget = {"bytes": MAX_FACTS_BYTES, "files": MAX_FACTS_FILES} if budget is None else budget
    if not source.is_dir() or source.is_symlink():
        return
    with os.scandir(source) as entries:
        for entry in entries:
            budget["files"] -= 1
            if budget["files"] < 0:
                raise FactsTooLarge(f"more than {MAX_FACTS_FILES} files")
            if entry.is_dir(follow_symlinks=False):
                copy_facts(Path(entry.path), destination / entry.name, budget)
            elif entry.is_file(follow_symlinks=False):
                _copy_file(Path(entry.path), destination / entry.name, budget)


def _copy_file(source: Path, target: Path, budget: dict[str, int]) -> None:
    """Copy one regular file, opened without following links or blocking (a FIFO is skipped)."""
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return
    with os.fdopen(fd, "rb") as reader:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return
        with open(os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as writer:
            while chunk := reader.read(_CHUNK):
                budget["bytes"] -= len(chunk)
                if budget["bytes"] < 0:
                    raise FactsTooLarge(f"more than {MAX_FACTS_BYTES // 2**20} MiB")
                writer.write(chunk)


class TakenFacts:
    """The facts taken from the kernel so far, by task, parsed and validated on first use; thread-safe, as
    the grader reads a task while the kernel goes on with the next ones."""

    def __init__(self, directory: Path):
        self.directory = directory
        self._lock = threading.Lock()
        self._taken: dict[str, tuple[Path, str]] = {}  # task -> (its copy, why the recorder may have failed)
        self._facts: dict[str, TaskFacts] = {}
        self._errors: dict[str, str] = {}
        self.order: list[str] = []

    def take(self, task: str, source: Path, capture_error: str) -> None:
        """Copy the facts of ``task`` at ``source``; ``capture_error`` says why they may be missing or bad."""
        copy = self.directory / task
        try:
            copy_facts(source, copy)
        except (FactsTooLarge, OSError) as exc:
            with self._lock:
                self._errors[task] = f"the facts of {task} could not be taken: {exc}"
                self.order.append(task)
            return
        with self._lock:
            self._taken[task] = (copy, capture_error)
            self.order.append(task)

    def __contains__(self, task: str) -> bool:
        with self._lock:
            return task in self.order

    def read(self, task: str) -> TaskFacts | None:
        """The task's facts (None when it was not taken or its facts are bad: see ``error``)."""
        from autograder.facts.fact_reader import PARSER_LOCK, load_task_facts
        from autograder.facts.schema import FactsError

        with PARSER_LOCK, self._lock:
            if task in self._taken:
                copy, capture_error = self._taken.pop(task)
                try:
                    self._facts[task] = load_task_facts(copy, task)
                except FactsError as exc:
                    self._errors[task] = str(exc) + capture_error
                shutil.rmtree(copy, ignore_errors=True)
            return self._facts.get(task)

    def error(self, task: str) -> str | None:
        self.read(task)
        with self._lock:
            return self._errors.get(task)

    def read_all(self) -> tuple[dict[str, TaskFacts], dict[str, str]]:
        """Every task's facts and every task's error, in the order they were taken."""
        for task in list(self.order):
            self.read(task)
        with self._lock:
            return dict(self._facts), dict(self._errors)
