"""Does a grading with no timed task wait for other gradings' timed turns? Three streams of gradings of a
timed lab beside one grading of an untimed notebook, each a separate ``autograder grade`` process.

Every lab has a timed task, so the untimed notebook is a copy of lab 4's solution whose t5 answer cell (the
timed task, the lab's last) is blanked: its plan then ends before t5's cells (the lab's cells after a
student's last code are not run), so it runs no timed cell and the grader measures nothing for it. The
timed notebook is lab 4's solution as a student hands it in (copied outside ``solutions/``). Three loops
grade a copy of the timed notebook back to back; once they have run ``--lead`` seconds, the untimed
notebook is graded ``--untimed`` times, one after another; then the loops end with their current grade.
It prints the untimed grades' ``turn_wait`` (the phase of the results' ``extra_data.phases``: waits for
other gradings' timed turns and for a quiet machine), wall time and other phases (a kernel start's wait for
a turn counts in ``kernel_start``, a check's in ``checks``), and each timed grade's score and ``turn_wait``.
With ``--compare PATH``, it runs the same again with the code of the checkout at ``PATH`` (``PYTHONPATH``),
e.g. a checkout of an earlier commit, and prints both. It reports; it asserts nothing. Figures are this
machine's, under its load of the moment: compare within one run only.

    python bench/untimed_beside_timed.py [--lead 20] [--untimed 2] [--compare ../another-checkout]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import nbformat

from autograder.lab import load_lab

LAB = "lab4_collectives"
TIMED_TASK = "t5"
STREAMS = 3
ROOT = Path(__file__).resolve().parents[1]


def make_notebooks(folder: Path) -> tuple[Path, Path]:
    """(the timed notebook, the untimed one): lab 4's solution, and the same with t5's answer blanked."""
    lab = load_lab(LAB)
    timed = folder / "timed.ipynb"
    shutil.copyfile(lab.solution_path, timed)
    notebook = nbformat.read(lab.solution_path, 4)
    answers = [
        cell
        for cell in notebook.cells
        if cell.metadata.get("autograder", {}).get("task") == TIMED_TASK
        and cell.metadata.get("autograder", {}).get("answer")
    ]
    if not answers:  # the solution's cells carry no metadata: the code cell that binds t5's names
        answers = [cell for cell in notebook.cells if cell.cell_type == "code" and "t_collective =" in cell.source]
    for cell in answers:
        cell.source = ""
    untimed = folder / "untimed.ipynb"
    nbformat.write(notebook, untimed)
    return timed, untimed


def grade(notebook: Path, folder: Path, code: Path) -> dict:
    """One ``autograder grade`` in a process of its own, on a copy of ``notebook`` in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / "submission.ipynb"
    shutil.copyfile(notebook, copy)
    out = folder / "results.json"
    env = {**os.environ, "PYTHONPATH": str(code)}
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "autograder", "grade", str(copy), "--lab", LAB, "--json", str(out)],
        cwd=folder,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    seconds = time.monotonic() - started
    if not out.exists():
        return {"seconds": seconds, "error": done.stderr[-500:]}
    results = json.loads(out.read_text())
    extra = results.get("extra_data", {})
    return {
        "seconds": seconds,
        "score": results.get("score"),
        "max": extra.get("max_score"),
        "phases": extra.get("phases", {}),
    }


def one_run(code: Path, timed: Path, untimed: Path, work: Path, lead: float, untimed_runs: int) -> None:
    stop = threading.Event()
    timed_grades: list[list[dict]] = [[] for _ in range(STREAMS)]

    def stream(index: int) -> None:
        n = 0
        while not stop.is_set():
            timed_grades[index].append(grade(timed, work / f"timed{index}-{n}", code))
            n += 1

    threads = [threading.Thread(target=stream, args=(i,)) for i in range(STREAMS)]
    for thread in threads:
        thread.start()
    time.sleep(lead)
    untimed_grades = [grade(untimed, work / f"untimed-{n}", code) for n in range(untimed_runs)]
    stop.set()
    for thread in threads:
        thread.join()
    print(f"code: {code}")
    for n, result in enumerate(untimed_grades):
        phases = result.get("phases", {})
        print(
            f"  untimed grade {n + 1}: turn_wait {phases.get('turn_wait', float('nan')):.2f} s, wall "
            f"{result['seconds']:.1f} s, score {result.get('score')}/{result.get('max')}; phases "
            + " ".join(f"{phase} {seconds:.1f}" for phase, seconds in phases.items())
            + (f"  ERROR {result['error']}" if "error" in result else "")
        )
    waits = [r.get("phases", {}).get("turn_wait", 0.0) for r in untimed_grades]
    print(f"  untimed turn_wait: median {statistics.median(waits):.2f} s, max {max(waits):.2f} s")
    for index, results in enumerate(timed_grades):
        line = ", ".join(
            f"{r.get('score')}/{r.get('max')} (turn_wait {r.get('phases', {}).get('turn_wait', float('nan')):.1f} s,"
            f" {r['seconds']:.0f} s)"
            for r in results
        )
        print(f"  timed stream {index + 1}: {line}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lead", type=float, default=20.0, help="seconds the timed streams run before the untimed")
    parser.add_argument("--untimed", type=int, default=2, help="untimed grades, one after another")
    parser.add_argument("--compare", type=Path, help="a checkout whose code to run the same with, after this one")
    args = parser.parse_args()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())} ({os.cpu_count()} cores)")
    with tempfile.TemporaryDirectory(prefix="untimed-beside-timed-") as scratch:
        work = Path(scratch)
        timed, untimed = make_notebooks(work)
        for code in [ROOT, *([args.compare] if args.compare else [])]:
            one_run(code, timed, untimed, work / code.name, args.lead, args.untimed)
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
