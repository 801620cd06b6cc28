"""The grader's own timing within a grading: measured anew by each grading (never kept from an earlier
one in the same process, as a batch worker's), and its calls set up while the kernel starts."""

import threading
import time

import pytest

from autograder.checks import TimingStats
from autograder.facts.taken_facts import TakenFacts
from autograder.grading.pytest_plugin import run_graders
from autograder.kernel import recorder
from autograder.lab import load_lab
from autograder.labs.lab2_three_ways import reference as lab2_reference
from autograder.run.execution import LiveExecution

LAB2 = "lab2_three_ways"
HONEST_T8 = {"t_unsharded": 0.02, "t_sharded": 0.025, "speedup": 0.8, "cpu_faster": False}
SWAPPED_T8 = {"t_unsharded": 0.025, "t_sharded": 0.02, "speedup": 1.25, "cpu_faster": True}


def _with_t8_facts(tmp_path, names=HONEST_T8) -> LiveExecution:
    """A run that has ended after task t8, whose names are ``names`` (HONEST_T8 by default)."""
    written = tmp_path / "written"
    recorder.record_task_facts(load_lab(LAB2).captures["t8"].manifest(str(written), 7), dict(names))
    live, taken = LiveExecution(), TakenFacts(tmp_path / "taken")
    live.started(taken, [])
    taken.take("t8", written, "")
    live.ended("completed", None, None)
    return live


STEADY = {"single": TimingStats(0.02, (0.02,) * 5), "sharded": TimingStats(0.025, (0.025,) * 5)}
SCATTERED = {
    "single": TimingStats(0.02, (0.02, 0.03, 0.015, 0.02, 0.035)),  # single ÷ sharded 0.6–1.4
    "sharded": TimingStats(0.025, (0.025, 0.025, 0.025, 0.025, 0.025)),
}


class Measurements(list):
    """The settings of each measurement made, and the fake measurement each returns."""

    returns = STEADY


@pytest.fixture
def measurements(monkeypatch):
    """Each measurement lab 2's graders make (a fake one, STEADY unless ``measurements.returns`` is set:
    20 ms single, 25 ms sharded, in every round)."""
    made = Measurements()

    def fake_measure(calls, **settings):
        made.append(settings)
        return made.returns

    monkeypatch.setattr(lab2_reference, "measure_interleaved", fake_measure)
    monkeypatch.setattr(lab2_reference, "grad_loss_calls", lambda: {"single": None, "sharded": None})
    monkeypatch.setattr(lab2_reference, "SET_UP_AHEAD", {})
    return made


# t8's checks of the timing method read the timing record (tests/checks/test_timing_method.py), which facts
# made up here do not have: these tests are about the checks judged by the numbers.
METHOD_CHECKS = {"test_t8_warm", "test_t8_blocked_inside", "test_t8_median"}


def _by_numbers(checks):
    return [c for c in checks if c.name not in METHOD_CHECKS]


def test_swapped_times_pass_every_check_of_their_own_but_not_the_verdict(tmp_path, measurements):
    """Times swapped so that they say sharding is faster are each within the tolerance of the grader's
    times, and their speedup within its of the grader's ratio; the verdict follows the grader's ratio."""
    checks = _by_numbers(run_graders(load_lab(LAB2), _with_t8_facts(tmp_path, SWAPPED_T8), seed=7, tasks=["t8"]))
    failed = [c for c in checks if not c.passed]
    assert len(checks) == 4 and [c.name for c in failed] == ["test_t8_verdict"], checks
    assert "expected False, found True" in failed[0].message and "0.8 (90% interval 0.8–0.8" in failed[0].message


def test_either_verdict_passes_when_the_grader_s_interval_holds_one(tmp_path, measurements):
    measurements.returns = SCATTERED
    for run, names in enumerate((HONEST_T8, SWAPPED_T8)):
        checks = run_graders(load_lab(LAB2), _with_t8_facts(tmp_path / str(run), names), seed=7, tasks=["t8"])
        assert {c.name: c.passed for c in checks}["test_t8_verdict"], checks


def test_a_grading_measures_once_for_all_its_timing_checks(tmp_path, measurements):
    checks = _by_numbers(run_graders(load_lab(LAB2), _with_t8_facts(tmp_path), seed=7, tasks=["t8"]))
    assert len(checks) == 4 and all(c.passed for c in checks), checks
    assert len(measurements) == 1


def test_each_grading_in_a_process_measures_anew(tmp_path, measurements):
    """A batch worker grades many submissions in one process: each grading's measurement reflects the
    machine's load at its own time."""
    for run in range(3):
        run_graders(load_lab(LAB2), _with_t8_facts(tmp_path / str(run)), seed=7, tasks=["t8"])
    assert len(measurements) == 3


def test_a_submission_without_its_times_is_failed_without_measuring(tmp_path, measurements):
    live = LiveExecution()
    live.started(TakenFacts(tmp_path / "taken"), [])
    live.ended("kernel died", "the kernel died", "cell 80")
    checks = run_graders(load_lab(LAB2), live, seed=7, tasks=["t8"])
    assert checks and not any(c.passed for c in checks)
    assert measurements == []


def _recording_set_up(monkeypatch, live: LiveExecution) -> list[bool]:
    """Replaces lab 2's set-up ahead of t8 by one that records, each time it runs, whether the grader was
    busy then (so that a cell that times code would wait for it)."""
    busy = []
    monkeypatch.setattr(lab2_reference, "SET_UP_AHEAD", {"t8": (lambda: busy.append(not live._grader_idle()),)})
    return busy


def test_what_a_task_times_is_set_up_before_any_fact_arrives(tmp_path, monkeypatch, measurements):
    """While the kernel starts: the grader does not wait for the notebook, nor for the task, to set it up."""
    live = LiveExecution()
    live.started(TakenFacts(tmp_path / "taken"), [])
    busy = _recording_set_up(monkeypatch, live)
    grader = threading.Thread(target=run_graders, args=(load_lab(LAB2), live, 7), kwargs={"tasks": ["t1", "t8"]})
    grader.start()
    deadline = time.monotonic() + 60
    while not busy and time.monotonic() < deadline:
        time.sleep(0.01)
    live.ended("kernel died", "the kernel died", "cell 2")  # no task was ever taken
    grader.join(60)
    assert busy == [True]  # once, while the grader held its checks: a timed cell would have waited


@pytest.mark.parametrize(
    "tasks, public_only, set_up",
    [
        (["t1"], False, False),  # t8's checks are not run: nothing to set up
        (None, False, True),
        (None, True, True),  # t8's verdict is a public check of lab 2
    ],
)
def test_only_a_task_whose_checks_run_is_set_up(tmp_path, monkeypatch, measurements, tasks, public_only, set_up):
    live = LiveExecution()
    live.started(TakenFacts(tmp_path / "taken"), [])
    live.ended("kernel died", "the kernel died", "cell 2")
    busy = _recording_set_up(monkeypatch, live)
    run_graders(load_lab(LAB2), live, seed=7, public_only=public_only, tasks=tasks)
    assert busy == ([True] if set_up else [])


def test_a_set_up_that_fails_is_reported_by_the_tasks_checks(tmp_path, monkeypatch):
    def broken():
        raise RuntimeError("no devices")

    monkeypatch.setattr(lab2_reference, "SET_UP_AHEAD", {"t8": (broken,)})
    monkeypatch.setattr(lab2_reference, "grad_loss_calls", broken)
    checks = run_graders(load_lab(LAB2), _with_t8_facts(tmp_path), seed=7, tasks=["t1", "t8"])
    t8 = _by_numbers([c for c in checks if c.task == "t8"])
    assert len(t8) == 4 and all(c.grader_error and "no devices" in c.message for c in t8)
    assert all(not c.grader_error for c in checks if c.task == "t1")
