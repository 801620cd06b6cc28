"""A batch warms the lab's references on the first worker free while the other workers grade: no
grading waits for the warming (dask_cluster.start_warming); and it tells its last gradings, one per thread
of the cluster, that none follows them, so that their workers start no spare kernel
(dask_cluster.last_gradings). The gradings and the warming are stand-ins on a cluster of two threads, so
that one can tell whether the other had started."""

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


TOLD_LAST: dict[str, bool] = {}  # each stand-in grading's ``last``


def _grade(student, filename, data, lab, limits_data, last=False) -> dict:
    GRADED.set()
    TOLD_LAST[student] = last
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


def test_the_last_gradings_one_per_thread_are_told_none_follows(two_thread_cluster, monkeypatch, tmp_path):
    TOLD_LAST.clear()
    monkeypatch.setattr(batch, "grade_on_worker", _grade)
    submissions = tmp_path / "class"
    submissions.mkdir()
    students = ["ada", "bob", "cy", "dee", "eve"]
    for student in students:
        (submissions / f"{student}.ipynb").write_bytes(LAB.assignment_path.read_bytes())
    (submissions / "fay").mkdir()  # a folder without a notebook: graded by no worker, so not among the last
    results = run_batch(submissions, BatchOptions(LAB.id, tmp_path / "out", workers=2, similarity=False))
    assert results["fay"].status == GradeStatus.NOT_A_NOTEBOOK
    assert TOLD_LAST == {"ada": False, "bob": False, "cy": False, "dee": True, "eve": True}


def test_the_last_gradings_are_as_many_as_the_clusters_threads():
    class Cluster:  # a client's view: each worker's threads
        def nthreads(self):
            return {"tcp://a": 1, "tcp://b": 2}

    assert list(dask_cluster.last_gradings(Cluster(), 10)) == [7, 8, 9]
    assert list(dask_cluster.last_gradings(Cluster(), 2)) == [0, 1]
    assert list(dask_cluster.last_gradings(Cluster(), 0)) == []
