"""A batch warms the lab's references on the first worker free while the other workers grade: no
grading waits for the warming (dask_cluster.start_warming). The gradings and the warming are stand-ins on
a cluster of two threads, so that one can tell whether the other had started."""

from __future__ import annotations

import threading

import pytest
from dask.distributed import Client, LocalCluster

from autograder.course import batch, dask_cluster
from autograder.course.batch import BatchOptions, run_batch
from autograder.grading import GradeResult, GradeStatus
from autograder.lab import load_lab

LAB = load_lab("lab4_collectives")
WAIT = 60.0  # seconds the stand-in warming waits for a grading to start at most


@pytest.fixture
def two_thread_cluster(monkeypatch):
    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None)
    client = Client(cluster)
    monkeypatch.setattr(batch, "dask_client", lambda workers, scheduler: (client, cluster))
    monkeypatch.setattr(batch, "prepare_workers", lambda client, lab, limits: [])
    yield client
    client.close()
    cluster.close()


GRADED = threading.Event()  # set by the first stand-in grading (module-level: Dask pickles tasks by reference)
SEEN_BY_THE_WARMING: list[bool] = []


def _warm(lab: str) -> tuple[str, float]:
    SEEN_BY_THE_WARMING.append(GRADED.wait(WAIT))
    return f"{lab}: stand-in", 0.0


def _grade(student, filename, data, lab, limits_data) -> dict:
    GRADED.set()
    return GradeResult(lab, filename, GradeStatus.GRADED, None, LAB.max_score).to_dict()


def test_the_other_worker_grades_while_one_warms_the_references(two_thread_cluster, monkeypatch, tmp_path):
    GRADED.clear()
    SEEN_BY_THE_WARMING.clear()
    monkeypatch.setattr(dask_cluster, "warm_on_worker", _warm)
    monkeypatch.setattr(batch, "grade_on_worker", _grade)
    submissions = tmp_path / "class"
    submissions.mkdir()
    for student in ("ada", "bob", "cy"):
        (submissions / f"{student}.ipynb").write_bytes(LAB.assignment_path.read_bytes())
    results = run_batch(submissions, BatchOptions(LAB.id, tmp_path / "out", workers=2, similarity=False))
    assert sorted(results) == ["ada", "bob", "cy"]
    assert all(r.status == GradeStatus.GRADED for r in results.values())
    assert SEEN_BY_THE_WARMING == [True], "the warming ran alone: no submission was graded while it ran"
