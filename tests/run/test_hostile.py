"""Hostile submissions (tests/support/hostile_submissions.py) score no point they did not earn, end with a clear
status, and leave the grader and the next submission unharmed."""

import resource
import socket

import pytest
from grading_session import grade_all
from hostile_submissions import CASES, network_case

from autograder.lab import load_lab
from autograder.run.sandbox.bubblewrap import sandbox_problem

pytestmark = [
    pytest.mark.skipif(sandbox_problem() is not None, reason=f"no sandbox here: {sandbox_problem()}"),
    pytest.mark.slow,
]
LAB = load_lab("lab2_three_ways")


@pytest.fixture(scope="session")
def hostile_grades(tmp_path_factory):
    with socket.create_server(("127.0.0.1", 0)) as server:
        cases = CASES + [network_case(server.getsockname()[1])]
        # graded as students' notebooks are: a hostile one must not get what the solution compiled
        folder = tmp_path_factory.mktemp("hostile")
        grades = grade_all(LAB, cases, folder, include_reference=False, course_notebooks=False)
        return {case.name: (case, grades[case.name]) for case in cases}


@pytest.mark.parametrize("name", [c.name for c in CASES] + ["network"])
def test_hostile_submission_earns_only_its_honest_points(hostile_grades, name):
    case, result = hostile_grades[name]
    assert result.status == case.status, result.summary()
    scores = {t.task: t.score for t in result.tasks}
    detail = {t.task: [f"{c.name}: {c.message}" for c in t.checks if not c.passed] for t in result.tasks}
    assert scores == {t.id: case.scores.get(t.id, 0) for t in LAB.tasks}, detail
    for task, text in case.messages.items():
        assert text in " ".join(c.message for t in result.tasks if t.task == task for c in t.checks)


def test_an_uninterruptible_cell_ends_the_run_naming_it(hostile_grades):
    _, result = hostile_grades["sleep_in_c"]
    assert "did not stop when interrupted" in result.reason and result.ended_at


def test_a_fork_bombs_children_are_stopped_and_said(hostile_grades):
    _, result = hostile_grades["fork_bomb"]
    (note,) = [note for note in result.notes if "processes running; they were stopped" in note]
    assert int(note.split(" left ")[1].split()[0]) > 50


def test_an_output_flood_is_truncated_and_said(hostile_grades):
    _, result = hostile_grades["output_flood"]
    assert any("output" in note and "truncated" in note for note in result.notes)


def test_the_grader_stays_small(hostile_grades):
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert peak_kib < 3 * 2**20  # under 3 GiB after a 1 GiB output flood and a memory bomb
