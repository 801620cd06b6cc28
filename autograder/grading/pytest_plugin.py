"""Running a lab's pytest graders in this (trusted) process against the facts of one submission, which they
receive as the ``submission`` fixture. No conftest.py is read, nor anything under the submission's directory."""

from __future__ import annotations

import collections
import contextlib
import functools
import io
import os
from collections.abc import Callable, Collection

import pytest

from autograder.checks import CheckFailure, students_load
from autograder.facts import PARSER_LOCK
from autograder.fairness import checks_running
from autograder.grading.results import CheckResult
from autograder.grading.submission_facts import FactsSource, SubmissionFacts
from autograder.lab import Lab

# No pytest plugin but this module's: those installed beside pytest cost time at each session's end, and
# pytest's reports of unraisable exceptions and of exceptions in threads collect garbage several times then.
PLUGINS_OFF = ("--disable-plugin-autoload", "-p", "no:unraisableexception", "-p", "no:threadexception")
# No configuration file of the folders around the lab's (a checkout's pyproject.toml, a course's pytest.ini,
# ``-c os.devnull``): a grading runs the same in a checkout, a course and an installed harness.
OPTIONS = ("-p", "no:cacheprovider", "--noconftest", "-c", os.devnull, "--strict-markers", "--import-mode=importlib")
QUIET = ("-q", "-W", "ignore", "--tb=no", *PLUGINS_OFF)
MARKERS = (
    "task(id): the lab task a check belongs to",
    "points(n): what a check is worth",
    "hidden: a check the student's self-check does not run, and whose message the student does not see",
)


class _GraderPlugin:
    def __init__(self, submission: SubmissionFacts, tasks: Collection[str] | None = None, on_check=None):
        self._submission = submission
        self._tasks = None if tasks is None else frozenset(tasks)
        self._on_check = on_check
        self.results: list[CheckResult] = []
        self.collection_errors: list[str] = []

    def pytest_configure(self, config):
        for line in MARKERS:
            config.addinivalue_line("markers", line)

    @pytest.fixture(scope="session")
    def submission(self) -> SubmissionFacts:
        return self._submission

    @pytest.fixture(scope="session")
    def per_grading(self):
        """``per_grading(fn)``: ``fn()``, called at most once in this grading (one grading is one session).
        What the grader measures itself, such as its own timings, is measured by each grading anew."""
        return functools.cache(lambda fn: fn())

    def pytest_collection_modifyitems(self, config, items):
        """The checks of tasks that time code run last: they wait for the grader's own measurement, which
        waits for the notebook's end, and the other tasks' checks need not wait behind them. With
        ``tasks``, only the checks of those tasks run (a check without a task marker still runs)."""
        named = collections.Counter(item.name for item in items)
        twice = sorted(name for name, count in named.items() if count > 1)
        if twice:  # a check's name is its id in every grade: two files of the graders may not share one
            self.collection_errors.append(f"checks named alike in two files of the graders: {', '.join(twice)}")
            items[:] = []
            return
        timed = {task for task, capture in self._submission.lab.captures.items() if capture.times_code}
        items.sort(key=lambda item: _task_of(item) in timed)  # stable: the file's order otherwise
        if self._tasks is None:
            return
        kept, dropped = [], []
        for item in items:
            task = _task_of(item)
            (dropped if task is not None and task not in self._tasks else kept).append(item)
        items[:] = kept
        config.hook.pytest_deselected(items=dropped)

    def pytest_collection_finish(self, session):
        """Set up, now, what the kept checks will time (their lab's ``SET_UP_AHEAD``): while the kernel
        starts and runs its first cells, not after the notebook, where the measurement waits for it."""
        try:
            set_up_ahead = getattr(self._submission.lab.reference, "SET_UP_AHEAD", {})
        except Exception:  # no reference module, or a broken one: the graders' collection reports it
            return
        tasks = {_task_of(item) for item in session.items}
        for task, calls in set_up_ahead.items():
            if task not in tasks:
                continue
            for call in calls:  # a call that fails, the task's checks make again, and report its failure
                with contextlib.suppress(Exception), checks_running():  # compiling, it waits for another's timed task
                    call()

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        """Each check runs held like a running cell, never while another grading here times code; its timing
        checks allow for the load its task's timed cells met (checks/measurement.py)."""
        task = _task_of(item)
        share = functools.partial(self._submission.others_share, task) if task is not None else lambda: None
        with checks_running(), students_load(share):
            yield

    def pytest_collectreport(self, report):
        if report.failed:
            self.collection_errors.append(str(report.longrepr)[-4000:])

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
            self.results.append(_result(item, call.excinfo))
            if self._on_check is not None:
                self._on_check(list(self.results))


def _task_of(item) -> str | None:
    marker = item.get_closest_marker("task")
    return marker.args[0] if marker is not None and marker.args else None


def _result(item, excinfo) -> CheckResult:
    task = item.get_closest_marker("task")
    points = item.get_closest_marker("points")
    if task is None or points is None:
        raise pytest.UsageError(f"{item.nodeid} needs @pytest.mark.task and @pytest.mark.points")
    title = (item.function.__doc__ or item.name).strip().splitlines()[0]
    common = dict(
        task=task.args[0],
        name=item.name,
        title=title,
        points=float(points.args[0]),
        hidden=item.get_closest_marker("hidden") is not None,
    )
    if excinfo is None:
        return CheckResult(passed=True, message="", **common)
    error = excinfo.value
    if isinstance(error, CheckFailure):
        return CheckResult(
            passed=False,
            message=str(error),
            expected_picture=error.expected_picture,
            found_picture=error.found_picture,
            **common,
        )
    if isinstance(error, AssertionError):
        return CheckResult(passed=False, message=str(error).split("\nassert")[0] or "check failed", **common)
    return CheckResult(
        passed=False, grader_error=True, message=f"the check could not run: {type(error).__name__}: {error}", **common
    )


class GraderError(RuntimeError):
    """The lab's graders could not be collected: a problem of the lab, not of the submission."""


def run_graders(
    lab: Lab,
    facts_source: FactsSource,
    seed: int,
    public_only: bool = False,
    tasks: Collection[str] | None = None,
    on_check: Callable[[list[CheckResult]], None] | None = None,
) -> list[CheckResult]:
    """The lab's checks' results; ``on_check`` gets those so far after each, kept should the grader be stopped."""
    plugin = _GraderPlugin(SubmissionFacts(lab, facts_source, seed), tasks, on_check)
    args = [*map(str, lab.grader_paths), *OPTIONS, "--rootdir", str(lab.grader_path.parent), *QUIET]
    if public_only:
        args += ["-m", "not hidden"]
    # the graders import the lab's modules as autograder.labs.<lab>: a course's lab's folder joins that
    # package's search path first (the run's thread may not have read the lab's captures yet)
    lab.package_name()
    # pytest sessions share process-wide state, and use ``ast``: one at a time (see facts.PARSER_LOCK)
    with PARSER_LOCK, facts_source.grader_busy(), contextlib.redirect_stdout(io.StringIO()) as log:
        code = pytest.main(args, plugins=[plugin])
    if code == pytest.ExitCode.INTERRUPTED:  # Ctrl-C reached pytest: stop grading, not only the checks
        raise KeyboardInterrupt
    if plugin.collection_errors or code in (pytest.ExitCode.INTERNAL_ERROR, pytest.ExitCode.USAGE_ERROR):
        raise GraderError("\n".join(plugin.collection_errors) or log.getvalue()[-4000:])
    return plugin.results
