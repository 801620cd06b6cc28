"""The checker process behind ``autograder.self_check``: a lab's public checks on the facts a notebook
recorded, in a fresh Python, so the checks are the harness's whatever the notebook patched. One JSON
request a line on stdin, one reply line each on stdout::

    {"id": 1, "lab": "lab2_three_ways", "seed": 123, "tasks": {"t1": "/tmp/autograder-self-check-x/t1"}}
    {"id": 1, "checks": [{"task": "t1", "name": "test_t1_layout", "passed": false, ...}, ...]}
    {"id": 2, "error": "unknown lab 'lab9'; labs: ..."}
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from autograder.facts import FactsError, TaskFacts, load_task_facts
from autograder.grading import CheckResult, GraderError, run_graders
from autograder.lab import Lab, LabError, load_lab
from autograder.run import Execution, RunStatus, configure_grader_process
from autograder.self_check.checker_process import FOLDER_PREFIX


class RequestError(ValueError):
    """A request that is not what the checker reads."""


def public_checks(
    lab: Lab, facts: Mapping[str, TaskFacts], seed: int, fact_errors: Mapping[str, str]
) -> list[CheckResult]:
    """The public checks of the tasks in ``facts`` and ``fact_errors``, run on those facts."""
    tasks = set(facts) | set(fact_errors)
    execution = Execution(
        status=RunStatus.COMPLETED,
        reason=None,
        ended_at=None,
        facts=dict(facts),
        fact_errors=dict(fact_errors),
        cells=(),
        seconds=0.0,
    )
    checks = run_graders(lab, execution, seed, public_only=True, tasks=tasks)
    return [c for c in checks if not c.hidden and c.task in tasks]


def answer(request: Any) -> dict[str, Any]:
    if not isinstance(request, dict):
        raise RequestError("a request must be a JSON object")
    lab_id, seed, tasks = request.get("lab"), request.get("seed"), request.get("tasks")
    if not isinstance(lab_id, str):
        raise RequestError("a request needs the lab's id")
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise RequestError("a request needs a non-negative integer seed")
    if not isinstance(tasks, dict) or not all(isinstance(d, str) for d in tasks.values()):
        raise RequestError("a request needs its tasks, each with the directory of its facts")
    lab = load_lab(lab_id)
    unknown = sorted(set(tasks) - set(lab.captures))
    if unknown:
        raise RequestError(f"{lab_id} has no task {', '.join(unknown)}; its tasks are {', '.join(lab.captures)}")
    facts, fact_errors = {}, {}
    for task, directory in tasks.items():
        try:
            facts[task] = load_task_facts(Path(directory), task)
        except FactsError as exc:
            fact_errors[task] = str(exc)
    return {"checks": [dataclasses.asdict(c) for c in public_checks(lab, facts, seed, fact_errors)]}


def serve(requests: TextIO, replies: TextIO) -> None:
    for line in requests:
        request_id = None
        try:
            request = json.loads(line)
            request_id = request.get("id") if isinstance(request, dict) else None
            reply = answer(request)
        except (json.JSONDecodeError, RequestError, LabError, GraderError) as exc:
            reply = {"error": str(exc)}
        except Exception as exc:  # a fault of the checks themselves: say so, and keep serving
            reply = {"error": f"the checks could not run: {type(exc).__name__}: {exc}"}
        replies.write(json.dumps({"id": request_id, **reply}) + "\n")
        replies.flush()


def main() -> None:
    # An interrupt of the student's cell reaches the kernel's whole process group: it is not for the
    # checker, which its parent stops itself when a request takes too long.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    configure_grader_process()
    # Replies get stdout to themselves: anything else printed here (by a library, or C code) goes to stderr.
    replies = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    try:
        serve(sys.stdin, replies)
    finally:
        _remove_own_folder()


def _remove_own_folder() -> None:
    """The parent may have died without removing the folder it made for this checker (a kernel killed at
    shutdown)."""
    folder = Path.cwd()
    if folder.name.startswith(FOLDER_PREFIX):
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
