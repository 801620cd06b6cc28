"""What does grading cost on top of running the notebook? Bare nbclient execution vs ``autograder grade``.

(a) bare: the notebook's cells as they are, run by stock nbclient (allow_errors) in a fresh kernel with
    the environment the harness gives its kernels (``autograder.devices.kernel_environment()``), in an
    empty temporary directory; timed from kernel start to kernel shutdown.
(b) grade: ``python -m autograder grade NOTEBOOK --json out.json`` as a subprocess (the ``autograder
    grade`` CLI), timed from process start to exit. A subprocess, not in-process ``grade_notebook``:
    the grader's reference results and its own timing of grad_loss are cached per process, so a second
    in-process grading would skip them. results.json's ``execution_time`` (GradeResult.seconds: the
    kernel's start, cells, probes and shutdown) splits the grade into execution and the rest (process
    start, imports, pytest graders, reference computations and the grader's timing measurement).

The two are interleaved (bare, grade, bare, grade, ...) so that both see the same load; each is
summarised by its median. One run, ratios only: the machine is shared and noisy.

    python bench/grading_overhead.py --runs 3
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

import nbformat
from jupyter_client import AsyncKernelManager
from nbclient import NotebookClient

from autograder.devices import kernel_environment

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = REPO / "solutions" / "lab2_three_ways" / "lab2_three_ways.ipynb"


def bare_once(notebook: Path) -> tuple[float, int]:
    """Seconds to run the notebook under plain nbclient, and how many cells raised."""
    nb = nbformat.read(notebook, as_version=4)
    with tempfile.TemporaryDirectory(prefix="bare-nbclient-") as workdir:
        client = NotebookClient(nb, km=AsyncKernelManager(kernel_name="python3"), timeout=600, allow_errors=True,
                                resources={"metadata": {"path": workdir}})
        started = time.monotonic()
        client.execute(env=kernel_environment())  # starts, runs every cell, shuts the kernel down
        seconds = time.monotonic() - started
    errors = sum(1 for c in nb.cells if c.cell_type == "code"
                 for o in c.get("outputs", []) if o.get("output_type") == "error")
    return seconds, errors


def grade_once(notebook: Path, extra: list[str]) -> tuple[float, float, float]:
    """Wall seconds of one grading subprocess, the execution seconds it reports, and its score."""
    with tempfile.TemporaryDirectory(prefix="grade-overhead-") as workdir:
        out = Path(workdir) / "results.json"
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "autograder", "grade", str(notebook), "--json", str(out), *extra],
                       check=True, capture_output=True, cwd=workdir, timeout=900)
        wall = time.monotonic() - started
        data = json.loads(out.read_text(encoding="utf-8"))
    return wall, data["execution_time"], data["score"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="repeats of each side (default 3)")
    parser.add_argument("--notebook", type=Path, default=NOTEBOOK, help="the notebook (lab 2's solution)")
    parser.add_argument("--grade-arg", action="append", default=[], metavar="ARG",
                        help="passed on to `autograder grade`, e.g. --grade-arg=--no-sandbox (repeatable)")
    args = parser.parse_args(argv)
    print(f"notebook {args.notebook}; {args.runs} runs of each, interleaved; grade args {args.grade_arg}")
    print("load average before: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()) + f" ({os.cpu_count()} cores)")
    bare, grade, execution = [], [], []
    for i in range(1, args.runs + 1):
        seconds, errors = bare_once(args.notebook)
        bare.append(seconds)
        print(f"run {i}: bare nbclient {seconds:.1f} s ({errors} cells raised)", flush=True)
        wall, exec_s, score = grade_once(args.notebook, args.grade_arg)
        grade.append(wall)
        execution.append(exec_s)
        print(f"run {i}: autograder grade {wall:.1f} s (execution {exec_s:.1f} s, score {score:g})", flush=True)
    print("load average after: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    b, g, e = statistics.median(bare), statistics.median(grade), statistics.median(execution)
    print(f"\nmedian of {args.runs}: bare nbclient {b:.1f} s; autograder grade {g:.1f} s "
          f"= execution {e:.1f} s + rest {g - e:.1f} s")
    print(f"grade / bare = {g / b:.2f}; execution / bare = {e / b:.2f}; execution / grade = {e / g:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
