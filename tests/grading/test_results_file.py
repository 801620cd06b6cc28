"""The one writer of results.json: a reader sees the old file or the new one, never half of either, and a
write that fails leaves the old file and nothing beside it."""

import json

import pytest

from autograder.grading import RESULTS_FILE, write_results_json


class Unwritable:
    """A value json.dumps cannot write: the write fails before anything reaches the file."""


def test_results_json_is_replaced_whole_and_a_failed_write_keeps_the_old_one(tmp_path):
    path = tmp_path / "results" / RESULTS_FILE
    write_results_json(path, {"score": 5.0, "tests": []})
    assert json.loads(path.read_text()) == {"score": 5.0, "tests": []}
    with pytest.raises(TypeError):
        write_results_json(path, {"score": Unwritable()})
    assert json.loads(path.read_text())["score"] == 5.0
    assert sorted(p.name for p in path.parent.iterdir()) == [RESULTS_FILE]
    write_results_json(path, {"score": 7.0, "tests": []})
    assert json.loads(path.read_text())["score"] == 7.0
    assert sorted(p.name for p in path.parent.iterdir()) == [RESULTS_FILE]
