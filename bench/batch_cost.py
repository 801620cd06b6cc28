"""What a class costs to grade against what its notebooks cost to run, per lab, and where a batch's time goes.

For each lab, a class of ``--copies`` copies of its solution (default 8):

- bare: the notebooks run by stock nbclient (``grading_overhead.bare_once``: allow_errors, the harness's
  kernel environment, its self-check cells left out, which the grader does not run), ``--workers`` at a
  time, each in a process of its own: the class's own compute at the batch's parallelism;
- batch: ``autograder batch`` of the same notebooks with ``--workers`` local workers (default: the
  batch's own default, one per core).

The lab's references are warmed first (``autograder warm``), as on any machine after its first batch. Bare
and batch alternate (bare, batch, bare, batch, …) ``--rounds`` times in this one run, so that both see the
same machine; each is summarised by its median, and the line to read is batch ÷ bare. Under it, the
batch's time per phase summed over the class, as the batch writes it (``batch-timing.json``, from each
grade's phases, ``run/phase_clock.py``): kernel start, the cells (the student's and the lab's), capturing
the facts, waiting for another grading's timed turn or a quiet machine, the grader's own timing
measurements, the checks; and the batch's own work: warming the references, publishing each result (its
feedback page, the gradebook, the class summaries). A phase's sum can exceed the wall time: workers run
side by side, and a grading's checks load while its kernel starts.

With ``--unpinned-too``, each round also runs a batch whose workers are not pinned to cores of their own
(``AUTOGRADER_PIN_WORKERS=off``: every timed task then holds up the whole machine), printed beside.

    python bench/batch_cost.py [--labs lab2_three_ways lab4_collectives] [--copies 8] [--rounds 2] [--unpinned-too]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent)]

from grading_overhead import bare_once  # noqa: E402

from autograder.course.batch_timing import TIMING_FILE  # noqa: E402
from autograder.course.gradebook import GRADE_FILE  # noqa: E402
from autograder.lab import lab_ids, load_lab  # noqa: E402
from autograder.run.core_pinning import PIN_VARIABLE  # noqa: E402


def make_class(lab_id: str, folder: Path, copies: int) -> list[Path]:
    folder.mkdir(parents=True)
    solution = load_lab(lab_id).solution_path.read_bytes()
    paths = [folder / f"student{i:02d}.ipynb" for i in range(copies)]
    for path in paths:
        path.write_bytes(solution)
    return paths


def _bare_seconds(path: Path) -> float:
    return bare_once(path, without_self_check_cells=True)[0]


def bare(paths: list[Path], workers: int) -> float:
    """Wall seconds to run the class by bare nbclient, ``workers`` notebooks at a time."""
    started = time.perf_counter()
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        list(pool.map(_bare_seconds, paths))
    return time.perf_counter() - started


def batch(lab_id: str, folder: Path, out: Path, workers: int | None, pinned: bool = True) -> float:
    """Wall seconds of ``autograder batch`` on the class (its workers pinned to cores of their own, as the
    batch does where there is a core for each, or not)."""
    command = [sys.executable, "-m", "autograder", "batch", str(folder), "--lab", lab_id, "--out", str(out)]
    if workers is not None:
        command += ["--workers", str(workers)]
    started = time.perf_counter()
    env = {**os.environ, PIN_VARIABLE: "on" if pinned else "off"}
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.perf_counter() - started


def batch_timing(out: Path) -> tuple[dict, list[float]]:
    """The batch's own account of its time (``batch-timing.json``) and each grade's score."""
    timing = json.loads((out / TIMING_FILE).read_text())
    scores = [json.loads(grade.read_text())["score"] for grade in sorted(out.glob(f"*/{GRADE_FILE}"))]
    return timing, scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--labs", nargs="+", default=lab_ids())
    parser.add_argument("--copies", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers", type=int, default=None, help="default: the batch's own (one per core)")
    parser.add_argument("--unpinned-too", action="store_true", help="also a batch whose workers share every core")
    args = parser.parse_args()
    workers = args.workers or os.cpu_count() or 1
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; {args.copies} copies, {workers} at a time")
    for lab_id in args.labs:
        # The lab's references are computed once per machine (``autograder warm``, or a first batch): the
        # cost measured here is a class's, not that first time's.
        subprocess.run([sys.executable, "-m", "autograder", "warm", lab_id], check=True, stdout=subprocess.DEVNULL)
        with tempfile.TemporaryDirectory(prefix="batch-cost-") as tmp:
            paths = make_class(lab_id, Path(tmp) / "class", args.copies)
            bare_runs, batch_runs, unpinned_runs = [], [], []
            for round_ in range(args.rounds):
                bare_runs.append(bare(paths, workers))
                if args.unpinned_too:
                    out = Path(tmp) / f"unpinned{round_}"
                    unpinned_runs.append(batch(lab_id, paths[0].parent, out, args.workers, pinned=False))
                    unpinned_timing, unpinned_scores = batch_timing(out)
                out = Path(tmp) / f"out{round_}"
                batch_runs.append(batch(lab_id, paths[0].parent, out, args.workers))
                timing, scores = batch_timing(out)
            ratio = statistics.median(batch_runs) / statistics.median(bare_runs)
            print(
                f"{lab_id}: batch {statistics.median(batch_runs):.1f} s ÷ bare {statistics.median(bare_runs):.1f} s"
                f" = {ratio:.2f} (bare {' '.join(f'{s:.1f}' for s in bare_runs)};"
                f" batch {' '.join(f'{s:.1f}' for s in batch_runs)}); scores of the last batch:"
                f" {sorted(set(scores))}"
            )
            cores = sorted(map(tuple, timing.get("worker_cores", {}).values()))
            phases = ", ".join(f"{phase} {seconds:.1f} s" for phase, seconds in timing["phases"].items())
            print(f"   workers' cores {cores}; summed over the class: {phases}")
            if unpinned_runs:
                unpinned = statistics.median(unpinned_runs)
                phases = ", ".join(f"{phase} {s:.1f} s" for phase, s in unpinned_timing["phases"].items())
                print(
                    f"   unpinned: batch {unpinned:.1f} s ÷ bare = {unpinned / statistics.median(bare_runs):.2f}"
                    f" (batch {' '.join(f'{s:.1f}' for s in unpinned_runs)}); scores {sorted(set(unpinned_scores))};"
                    f" summed: {phases}"
                )
            print(f"   the batch itself: warming {timing['warming']:.1f} s, publishing {timing['publishing']:.1f} s")


if __name__ == "__main__":
    main()
