"""What a class costs to grade as one batch against what a user would run instead: plain nbclient on each.

For each lab (labs 2 and 4 by default), a class of ``--copies`` students' copies of its solution (default
8), in a temporary folder outside ``solutions/``, so that the grader treats each as a student's:

- plain: each copy run by ``jupyter execute`` as ``grading_overhead.plain_once`` runs it (the ``python3``
  kernelspec, only the lab's 8-device settings beyond the user's own environment, self-check cells
  included), as many at a time as the batch has workers;
- batch: ``autograder batch CLASS --lab LAB --out OUT`` at its default workers (one per core) unless
  ``--workers`` is given.

The lab's references are warmed first (``autograder warm``), as on any machine after its first batch.
Plain and batch alternate ``--rounds`` times (default 2), so that both see the same machine; the line to
read is the median batch ÷ the median plain, and whether every row of every batch had full marks. Under
it, the batch's own account of its time (``batch-timing.json``): each phase summed over the class
(run/phase_clock.py), and warming and publishing. A phase's sum can exceed the wall time: workers run side
by side, and a grading's checks load while its kernel starts.

With ``--unpinned-too`` each round also runs a batch whose workers share every core
(``AUTOGRADER_PIN_WORKERS=off``), printed beside.

    python bench/batch_cost.py [--labs lab2_three_ways lab4_collectives] [--copies 8] [--rounds 2]
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
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent)]

from grading_overhead import AUTOGRADER, load_line, plain_once, student_copy  # noqa: E402

from autograder.course.batch import TIMING_FILE  # noqa: E402
from autograder.course.dask_cluster import default_workers  # noqa: E402
from autograder.course.gradebook import GRADE_FILE  # noqa: E402
from autograder.fairness.core_pinning import PIN_VARIABLE  # noqa: E402
from autograder.lab import lab_ids  # noqa: E402

DEFAULT_LABS = ["lab2_three_ways", "lab4_collectives"]


def make_class(lab: str, folder: Path, copies: int) -> list[Path]:
    folder.mkdir(parents=True)
    return [student_copy(lab, folder, f"student{i:02d}.ipynb") for i in range(copies)]


def plain(paths: list[Path], at_a_time: int) -> float:
    """Wall seconds to run the class by plain nbclient, ``at_a_time`` processes side by side."""
    started = time.monotonic()
    with ThreadPoolExecutor(at_a_time) as pool:
        list(pool.map(plain_once, paths))
    return time.monotonic() - started


def batch(lab: str, folder: Path, out: Path, workers: int | None, pinned: bool = True) -> float:
    """Wall seconds of ``autograder batch`` on the class, process start to exit."""
    command = [str(AUTOGRADER), "batch", str(folder), "--lab", lab, "--out", str(out)]
    if workers is not None:
        command += ["--workers", str(workers)]
    env = {**os.environ, PIN_VARIABLE: "on" if pinned else "off"}
    started = time.monotonic()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    return time.monotonic() - started


def rows_below_full_marks(out: Path, copies: int) -> list[str]:
    """The rows of a batch without full marks (a row missing counts)."""
    grades = {path.parent.name: json.loads(path.read_text()) for path in out.glob(f"*/{GRADE_FILE}")}
    below = [name for name, g in sorted(grades.items()) if g["score"] != g["max_score"]]
    return below + [f"{copies - len(grades)} rows missing"] * (len(grades) < copies)


def summed_phases(out: Path) -> str:
    timing = json.loads((out / TIMING_FILE).read_text())
    phases = ", ".join(f"{phase} {seconds:.1f} s" for phase, seconds in timing["phases"].items())
    return f"{phases}; warming {timing['warming']:.1f} s, publishing {timing['publishing']:.1f} s"


def runs(values: list[float]) -> str:
    return " ".join(f"{v:.1f}" for v in values)


def bench_lab(lab: str, copies: int, rounds: int, workers: int | None, unpinned_too: bool) -> None:
    at_a_time = workers or default_workers()
    # References are computed once per machine (``autograder warm``, or a first batch): the cost measured
    # here is a class's, not that first time's.
    subprocess.run([str(AUTOGRADER), "warm", lab], check=True, stdout=subprocess.DEVNULL)
    with tempfile.TemporaryDirectory(prefix="batch-cost-") as tmp:
        paths = make_class(lab, Path(tmp) / "class", copies)
        sides: dict[str, list[float]] = {"plain": [], "batch": [], "unpinned": []}
        below: list[str] = []
        for round_ in range(rounds):
            sides["plain"].append(plain(paths, at_a_time))
            for side, pinned in (("batch", True), ("unpinned", False))[: 1 + unpinned_too]:
                out = Path(tmp) / f"{side}{round_}"
                sides[side].append(batch(lab, paths[0].parent, out, workers, pinned))
                below += [f"{side} round {round_ + 1}: {row}" for row in rows_below_full_marks(out, copies)]
                phases = summed_phases(out)
                print(f"{lab} round {round_ + 1}: plain {sides['plain'][-1]:.1f} s, {side} {sides[side][-1]:.1f} s")
                print(f"   summed over the class: {phases}", flush=True)
    plain_median = statistics.median(sides["plain"])
    for side in ("batch", "unpinned")[: 1 + unpinned_too]:
        median = statistics.median(sides[side])
        print(
            f"{lab}: {side} {median:.1f} s ÷ plain {plain_median:.1f} s = {median / plain_median:.2f}"
            f" ({side} {runs(sides[side])}; plain {runs(sides['plain'])})"
        )
    print(f"{lab}: every row of every batch full marks" if not below else f"{lab}: BELOW FULL MARKS: {below}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--labs", nargs="+", choices=lab_ids(), default=DEFAULT_LABS)
    parser.add_argument("--copies", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--workers", type=int, default=None, help="default: the batch's own (one per core)")
    parser.add_argument("--unpinned-too", action="store_true", help="also a batch whose workers share every core")
    args = parser.parse_args()
    at_a_time = args.workers or default_workers()
    print(f"labs {', '.join(args.labs)}; {args.copies} copies, {at_a_time} at a time, {args.rounds} rounds")
    print(load_line("before"), flush=True)
    for lab in args.labs:
        bench_lab(lab, args.copies, args.rounds, args.workers, args.unpinned_too)
    print(load_line("after"))


if __name__ == "__main__":
    main()
