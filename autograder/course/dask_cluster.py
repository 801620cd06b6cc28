"""The Dask cluster a class's batch and a lab's mutants grade on, what its workers run, and the progress bar
shown meanwhile. No JAX imported here: a worker imports this module first, and its functions set up the
devices before anything imports JAX."""

from __future__ import annotations

import contextlib
import tempfile
import time
from pathlib import Path

from autograder.grading import GradeResult, GradeStatus
from autograder.run import Limits, claim


def grade_on_worker(student: str, filename: str, data: bytes, lab: str, limits_data: dict, last: bool = False) -> dict:
    """Grade one submission on a Dask worker; the result as plain data. ``last``: among ``last_gradings``."""
    from autograder.run import configure_grader_process, worker_pool

    configure_grader_process()
    from autograder.grading import GradeOptions, grade_notebook

    limits = Limits.from_dict(limits_data)
    with tempfile.TemporaryDirectory(prefix="autograder-submission-") as folder:
        claim(Path(folder))  # removed by a later grader should this worker be killed (stale_roots.py)
        path = Path(folder) / filename
        path.write_bytes(data)
        try:
            executor = worker_pool().executor(start_next=not last)
            result = grade_notebook(path, GradeOptions(lab, limits=limits, executor=executor))
        except Exception as exc:  # the grader's own failure (e.g. no sandbox here): retried by a rerun
            result = GradeResult(
                lab, filename, GradeStatus.GRADER_ERROR, f"{type(exc).__name__}: {exc}", 0.0, seed=None
            )
    return result.to_dict()


def prepare_on_worker(lab: str, limits_data: dict) -> None:
    """A spare kernel started and JAX loaded while the references warm, not one after the other."""
    from autograder.run import KernelSpec, configure_grader_process, worker_pool

    configure_grader_process()
    from autograder.lab import load_lab

    worker_pool().prepare(KernelSpec(Limits.from_dict(limits_data), load_lab(lab).kernel_probe_path))
    import jax

    jax.devices()


def prepare_workers(client, lab: str, limits_data: dict) -> list:
    """``prepare_on_worker`` on every worker: the futures, kept while the batch runs (else Dask forgets them)."""
    return [
        client.submit(
            prepare_on_worker,
            lab,
            limits_data,
            workers=[address],
            allow_other_workers=False,
            key=f"prepare-{lab}-{address}-{time.time_ns()}",
            pure=False,
        )
        for address in sorted(client.scheduler_info()["workers"])
    ]


def last_gradings(client, count: int) -> range:
    """The last ``count`` gradings (Dask starts them in order): a spare kernel beside one would go unused."""
    return range(max(0, count - sum(client.nthreads().values())), count)


def release_kernels() -> None:
    """Shut down this worker's spare kernel, once the batch has no more work."""
    import sys

    pool = sys.modules.get("autograder.run.kernel_pool")  # imported only where something was graded
    if pool is not None:
        pool.close_worker_pool()


def warm_on_worker(lab: str) -> tuple[str, float]:
    """``warm_here`` on a Dask worker: its summary and seconds."""
    from autograder.grading import warm_here

    warmed = warm_here(lab)
    return warmed.summary(), warmed.seconds


def start_warming(client, lab: str):
    """Warm the lab's references ahead of the gradings; the others do not wait, a check computes what it lacks."""
    return client.submit(warm_on_worker, lab, key=f"warm-{lab}-{time.time_ns()}", pure=False, priority=10)


def report_warming(warming, progress: GradingProgress) -> float:
    """Print ``start_warming``'s summary; its seconds (0 when it failed: a grading computes what it lacks)."""
    try:
        summary, seconds = warming.result()
    except Exception as exc:
        summary, seconds = f"the lab's references could not be computed ahead: {type(exc).__name__}: {exc}", 0.0
    progress.progress.console.print(f"references: {summary}")
    return seconds


def warm_references(client, lab: str, progress: GradingProgress) -> None:
    """Warm the lab's references on one worker and wait: every grading after reads them from disk."""
    report_warming(start_warming(client, lab), progress)


def default_workers() -> int:
    """One per core this process may run on."""
    from autograder.fairness import process_cores

    return max(1, len(process_cores()))


def pin_workers(client) -> None:
    """Each worker on a core of its own, if enough: a timed task then holds up only its own core."""
    from autograder.fairness import cores_to_pin, pin_process

    addresses = sorted(client.scheduler_info()["workers"])
    for address, core in zip(addresses, cores_to_pin(len(addresses)), strict=False):
        client.run(pin_process, core, workers=[address])


def dask_client(workers: int | None = None, scheduler: str | None = None):
    """(client, local cluster or None): the cluster at ``scheduler``, else a local one of ``workers``."""
    import logging

    import dask
    from dask.distributed import Client, LocalCluster

    logging.getLogger("distributed").setLevel(logging.ERROR)
    if scheduler:
        return Client(scheduler, timeout=30), None
    workers = workers or default_workers()
    # Each worker's statistical profiler samples its threads every 10 ms: CPU taken from the core it grades
    # on, for a dashboard a local batch does not show.
    with dask.config.set({"distributed.worker.profile.enabled": False}):
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            memory_limit=0,
            dashboard_address=None,
            death_timeout=10,
        )
    client = Client(cluster)
    client.wait_for_workers(workers, timeout=60)
    pin_workers(client)
    return client, cluster


def close_client(client, cluster) -> None:
    """Shut down the workers' spare kernels, the client and the local cluster (either may be None)."""
    if client is not None:
        with contextlib.suppress(Exception):  # a worker gone: its kernels went with it (they die with their parent)
            client.run(release_kernels)
        client.close(timeout=10)
    if cluster is not None:
        cluster.close(timeout=10)


class GradingProgress:
    """A rich progress bar: done, failed, remaining and time left."""

    def __init__(self, total: int, already: int = 0, already_failed: int = 0, label: str = "grading"):
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

        self.progress = Progress(
            TextColumn(f"[bold]{label}"),
            BarColumn(),
            TextColumn(
                "{task.completed}/{task.total} done · {task.fields[failed]} failed · "
                "{task.fields[remaining]} remaining ·"
            ),
            TimeElapsedColumn(),
            TextColumn("elapsed ·"),
            TimeRemainingColumn(),
            TextColumn("left"),
        )
        self.task = self.progress.add_task(
            "grading", total=total, completed=already, failed=already_failed, remaining=total - already
        )
        self.total, self.failed = total, already_failed

    def __enter__(self):
        self.progress.__enter__()
        return self

    def __exit__(self, *exc):
        self.progress.__exit__(*exc)

    def advance(self, result: GradeResult) -> None:
        self.failed += result.status != GradeStatus.GRADED
        remaining = self.total - self.progress.tasks[0].completed - 1
        self.progress.update(self.task, advance=1, failed=self.failed, remaining=remaining)
