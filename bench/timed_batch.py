"""Do right timing answers keep their points in a batch, and under a CPU quota? The machine's timed turn.

For each lab with a timed task (lab 2's t8, lab 4's t5), a class of copies of its solution is graded
with ``autograder batch`` at 1 worker, one per core and one more than the cores, with the timed turn
(the rule: a timed task runs alone on the machine) and without it (``AUTOGRADER_TIMED_TURNS=off``),
alternating, in this one run. It prints, per batch, how many rows kept full marks and the batch's wall
time, and the wall time with the turn ÷ without. With ``--quota``, it also grades the solution
``--regrades`` times with ``autograder grade`` in a cgroup of half a CPU (root and cgroups needed, as
Gradescope's container: ``tests/support/cgroup_box.py``) and prints how many kept full marks.
Figures are this machine's, under its load of the moment: compare within one run only.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1] / "tests" / part) for part in ("support", "labs")]

from autograder.authoring.known_grades import make_submission  # noqa: E402
from autograder.lab import load_lab  # noqa: E402

LABS = ("lab2_three_ways", "lab4_collectives")


def make_class(lab, folder: Path, size: int) -> None:
    answers = {task.id: "SOLUTION" for task in lab.tasks}
    for i in range(size):
        make_submission(lab, answers, folder / f"student{i:02d}.ipynb")


def batch(lab, folder: Path, out: Path, workers: int, turns: bool) -> tuple[int, int, float, list[str]]:
    """(rows at full marks, rows, seconds, the checks that lost points) of one batch."""
    env = {**os.environ, "AUTOGRADER_TIMED_TURNS": "on" if turns else "off"}
    started = time.perf_counter()
    subprocess.run(
        [
            sys.executable,
            "-m",
            "autograder",
            "batch",
            str(folder),
            "--lab",
            lab.id,
            "--out",
            str(out),
            "--workers",
            str(workers),
            "--no-similarity",
        ],
        check=True,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    seconds = time.perf_counter() - started
    with open(out / "grades.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    full = sum(float(row["score"]) == float(row["max_score"]) for row in rows)
    lost = []
    for results in sorted(out.glob("*/results.json")):
        for test in json.loads(results.read_text())["tests"]:
            if test["score"] < test["max_score"]:
                lost.append(test["name"].split(":")[0])
    return full, len(rows), seconds, lost


def regrade_in_quota(lab, folder: Path, regrades: int) -> tuple[int, list[float]]:
    from cgroup_box import box_problem, run_in_box

    problem = box_problem()
    if problem:
        print(f"{lab.id}: no cgroup here ({problem}): the half-CPU regrades are skipped")
        return 0, []
    full, scores = 0, []
    path = next(folder.glob("*.ipynb"))
    for i in range(regrades):
        out = folder.parent / f"quota{i}.json"
        run = run_in_box(
            [sys.executable, "-m", "autograder", "grade", str(path), "--json", str(out)],
            memory_bytes=3 * 2**30,
            cpus=0.5,
        )
        result = json.loads(out.read_text()) if out.exists() else {"score": 0.0}
        score = float(result.get("score", 0.0))
        scores.append(score)
        full += score == float(lab.max_score)
        if run.returncode != 0:
            print(f"  regrade {i}: exit {run.returncode}: {run.output[-300:]}")
    return full, scores


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=6, help="solution copies in each batch (default 6)")
    parser.add_argument("--labs", nargs="*", default=list(LABS))
    parser.add_argument("--workers", type=int, nargs="*", help="worker counts (default: 1, cores, cores + 1)")
    parser.add_argument("--quota", action="store_true", help="also regrade the solution in half a CPU")
    parser.add_argument("--regrades", type=int, default=3)
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    workers = args.workers or sorted({1, cores, cores + 1})
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; {cores} cores", flush=True)
    for lab_id in args.labs:
        lab = load_lab(lab_id)
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp) / "class"
            make_class(lab, folder, args.size)
            for count in workers:
                seconds = {}
                for turns in (True, False):
                    full, rows, seconds[turns], lost = batch(
                        lab, folder, Path(tmp) / f"out{count}{turns}", count, turns
                    )
                    rule = "timed turns" if turns else "no turns   "
                    print(
                        f"{lab_id}, {count} worker(s), {rule}: {full}/{rows} rows at full marks, "
                        f"{seconds[turns]:6.1f} s" + (f"; lost: {', '.join(sorted(set(lost)))}" if lost else ""),
                        flush=True,
                    )
                print(
                    f"{lab_id}, {count} worker(s): wall time with ÷ without the turns "
                    f"{seconds[True] / seconds[False]:.2f}",
                    flush=True,
                )
            if args.quota:
                full, scores = regrade_in_quota(lab, folder, args.regrades)
                print(
                    f"{lab_id}, half a CPU: {full}/{len(scores)} regrades at full marks (scores {scores})", flush=True
                )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
