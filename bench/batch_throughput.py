"""Throughput of ``autograder batch`` against the notebooks' own compute and against grading one by one.

Builds a class of complete lab 2 submissions (half the solution, half with a wrong t1; ``--quick``: only
t1–t2 answered, so the rest of the lab is skipped), and measures in this one run, since the machine's
speed varies from run to run:

- bare: one submission of each kind run by plain nbclient as a user would run it instead
  (``grading_overhead.plain_once``: ``jupyter execute``, the ``python3`` kernelspec, only the lab's
  8-device settings, every cell as it is); the median is the unit of ``size × bare``. Its CPU time
  (the process's and its kernel's) over its wall time says how many cores the notebook itself keeps
  busy, which bounds what running submissions side by side can gain;
- one by one: each graded with ``autograder grade`` in a fresh process, as an instructor would in a loop;
- batch: the class as one ``autograder batch`` with ``--workers`` local Dask workers.

It prints batch ÷ (size × bare), the figure to keep low — never below 1 / workers, nor below the cores
the bare kernel keeps busy ÷ the machine's cores, since side by side the notebooks share them —, one
by one ÷ (size × bare) beside it, and the median execution time of a submission (results.json's
``execution_time``: from asking for a kernel to its shutdown, so a kernel's start-up counts unless a
batch worker had started it ahead).

With ``--baseline CHECKOUT`` it also grades the class as a batch with another checkout's code (the
commit before a change), alternating with this checkout's ``--rounds`` times, and prints both.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "tests" / part) for part in ("support", "labs")]

from grading_overhead import plain_once  # noqa: E402

from autograder.authoring.known_grades import make_submission  # noqa: E402
from autograder.lab import load_lab  # noqa: E402

LAB = load_lab("lab2_three_ways")
WRONG_T1 = "A_sharded = jax.device_put(A, NamedSharding(mesh, P('y', 'x')))"


def kinds(quick: bool) -> list[dict[str, str]]:
    """The class's two kinds of submission: solved, and wrong on t1 (complete, or t1–t2 only)."""
    tasks = ["t1", "t2"] if quick else [task.id for task in LAB.tasks]
    solved = {task: "SOLUTION" for task in tasks}
    return [solved, {**solved, "t1": WRONG_T1}]


def make_class(folder: Path, size: int, quick: bool) -> list[Path]:
    answers = kinds(quick)
    return [make_submission(LAB, answers[i % len(answers)], folder / f"student{i:03d}.ipynb") for i in range(size)]


def bare(paths: list[Path]) -> list[tuple[float, float]]:
    """(seconds, CPU seconds) of a plain nbclient run of one submission of each kind."""
    return [plain_once(path) for path in paths[:2]]


def one_by_one(paths: list[Path], out: Path) -> float:
    out.mkdir()
    started = time.perf_counter()
    for path in paths:
        results = out / f"{path.stem}.json"
        subprocess.run(
            [sys.executable, "-m", "autograder", "grade", str(path), "--json", str(results)],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    return time.perf_counter() - started


def median_execution(results: list[Path]) -> float:
    return statistics.median(json.loads(path.read_text())["execution_time"] for path in results)


def batch(folder: Path, out: Path, workers: int, checkout: Path | None = None) -> float:
    """Seconds to grade the class as one batch, with ``checkout``'s code if given."""
    env = None if checkout is None else {**os.environ, "PYTHONPATH": str(checkout)}
    started = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder",
            "batch",
            str(folder),
            "--lab",
            LAB.id,
            "--out",
            str(out),
            "--workers",
            str(workers),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    return time.perf_counter() - started


def against_baseline(folder: Path, tmp: Path, args) -> None:
    this = Path(__file__).resolve().parents[1]
    seconds: dict[str, list[float]] = {"baseline": [], "this": []}
    executions: dict[str, list[float]] = {"baseline": [], "this": []}
    for round_ in range(args.rounds):
        for name, checkout in (("baseline", args.baseline), ("this", this)):
            out = tmp / f"{name}{round_}"
            seconds[name].append(batch(folder, out, args.workers, checkout))
            executions[name].append(median_execution(sorted(out.glob("*/results.json"))))
    for name, checkout in (("baseline", args.baseline), ("this", this)):
        runs = " ".join(f"{s:.1f}" for s in seconds[name])
        print(
            f"batch, {name} ({checkout}): {statistics.median(seconds[name]):.1f} s (runs: {runs}); "
            f"median execution {statistics.median(executions[name]):.1f} s"
        )
    ratio = statistics.median(seconds["baseline"]) / statistics.median(seconds["this"])
    print(f"throughput ratio this / baseline: {ratio:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=12, help="submissions in the class (default 12)")
    parser.add_argument("--workers", type=int, default=2, help="local Dask workers (default 2)")
    parser.add_argument("--baseline", type=Path, help="a checkout whose batch to compare with this one's")
    parser.add_argument("--rounds", type=int, default=2, help="batches of each with --baseline (default 2)")
    parser.add_argument("--quick", action="store_true", help="submissions answering t1–t2 only")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "class"
        paths = make_class(folder, args.size, args.quick)
        if args.baseline is not None:
            return against_baseline(folder, Path(tmp), args)
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
        bare_runs = bare(paths)
        serial = one_by_one(paths, Path(tmp) / "serial")
        parallel = batch(folder, Path(tmp) / "out", args.workers)
        bare_runs += bare(paths)  # before and after: both see the run's load
        unit = statistics.median(seconds for seconds, _ in bare_runs)
        cores = statistics.median(cpu / seconds for seconds, cpu in bare_runs)
        serial_execution = median_execution(sorted((Path(tmp) / "serial").glob("*.json")))
        batch_execution = median_execution(sorted((Path(tmp) / "out").glob("*/results.json")))
    per_minute = lambda seconds: 60 * args.size / seconds  # noqa: E731
    print(f"submissions:          {args.size} ({'t1–t2 only' if args.quick else 'complete'})")
    print(f"bare nbclient run:    {unit:7.1f} s  (median of each kind run before and after, plain nbclient)")
    floor = max(1 / args.workers, cores / os.cpu_count())
    print(
        f"the bare kernel keeps {cores:.2f} cores busy on average; on {os.cpu_count()} cores, batch ÷ "
        f"({args.size} × bare) cannot go below about {floor:.2f}"
    )
    print(f"one by one:           {serial:7.1f} s  {per_minute(serial):6.1f} per minute")
    print(f"batch ({args.workers} workers):    {parallel:7.1f} s  {per_minute(parallel):6.1f} per minute")
    print(f"throughput ratio batch / one by one: {serial / parallel:.2f}")
    print(f"batch / ({args.size} × bare):      {parallel / (args.size * unit):.2f}")
    print(f"one by one / ({args.size} × bare): {serial / (args.size * unit):.2f}")
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"median execution per submission: one by one {serial_execution:.1f} s, batch {batch_execution:.1f} s")


if __name__ == "__main__":
    main()
