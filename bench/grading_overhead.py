"""What does grading cost on top of running the notebook? Bare nbclient execution vs ``autograder grade``.

For each lab's solution notebook:

(a) bare: the notebook's cells as they are, run by stock nbclient (allow_errors) in a fresh kernel with
    the environment the harness gives its kernels (``autograder.run.devices.kernel_environment()``), in an
    empty temporary directory; timed from kernel start to kernel shutdown.
(b) grade: ``python -m autograder grade NOTEBOOK --json out.json`` as a subprocess (the ``autograder
    grade`` CLI), timed from process start to exit, with the reference cache filled beforehand by
    ``autograder warm`` (a cache of this run's own, in a temporary directory). results.json's
    ``execution_time`` (the kernel's start, cells, captures and shutdown) is printed beside it: the graders
    run while the kernel does, so grade minus execution is what grading adds after the notebook ends.
(c) cold: one grade with an empty reference cache, which computes every reference itself.

Bare and warm grade are interleaved (bare, grade, bare, grade, ...) so that both see the same load;
each is summarised by its median. One run, ratios only: the machine is shared and noisy.

    python bench/grading_overhead.py --runs 3 [--lab lab2_three_ways]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from autograder.run.devices import kernel_environment
from autograder.run.self_check_cells import is_self_check_cell

REPO = Path(__file__).resolve().parents[1]
LABS = ("lab1_distributed_arrays", "lab2_three_ways", "lab3_fsdp_tp")


def bare_once(notebook: Path, without_self_check_cells: bool = False) -> tuple[float, int, float]:
    """Seconds to run the notebook under plain nbclient, how many cells raised, and the CPU seconds its
    kernel used. ``without_self_check_cells`` leaves out the self-check cells ``assign`` adds (the grader
    does not run them): what remains is the student's own compute."""
    nb = nbformat.read(notebook, as_version=4)
    if without_self_check_cells:
        nb.cells = [cell for cell in nb.cells if not is_self_check_cell(cell)]
    with tempfile.TemporaryDirectory(prefix="bare-nbclient-") as workdir:
        # no km of our own: nbclient shuts down only a kernel whose manager it made itself
        client = NotebookClient(
            nb, kernel_name="python3", timeout=600, allow_errors=True, resources={"metadata": {"path": workdir}}
        )
        # Its sockets are files in the working directory, as the harness's kernels' are: TCP ports picked
        # before the kernel binds them collide now and then when two kernels start at once.
        client.create_kernel_manager()
        client.km.transport, client.km.ip = "ipc", str(Path(workdir) / "kernel")
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.monotonic()
        client.execute(env=kernel_environment())  # starts, runs every cell, shuts the kernel down
        seconds = time.monotonic() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the kernel has been waited for
    errors = sum(
        1 for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.get("output_type") == "error"
    )
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, errors, cpu


def grade_once(notebook: Path, extra: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """Wall seconds of one grading subprocess, the execution seconds it reports, and its score."""
    with tempfile.TemporaryDirectory(prefix="grade-overhead-") as workdir:
        out = Path(workdir) / "results.json"
        started = time.monotonic()
        subprocess.run(
            [sys.executable, "-m", "autograder", "grade", str(notebook), "--json", str(out), *extra],
            check=True,
            capture_output=True,
            cwd=workdir,
            timeout=900,
            env=env,
        )
        wall = time.monotonic() - started
        data = json.loads(out.read_text(encoding="utf-8"))
    return wall, data["execution_time"], data["score"]


def cache_env(directory: Path) -> dict[str, str]:
    return {**os.environ, "AUTOGRADER_CACHE_DIR": str(directory)}


def lab_notebook(lab: str) -> Path:
    return REPO / "solutions" / lab / f"{lab}.ipynb"


def bench_lab(lab: str, runs: int, extra: list[str], cache: Path) -> dict[str, float]:
    """Median bare and warm-cache grade seconds of one lab (interleaved), and one cold-cache grade."""
    notebook = lab_notebook(lab)
    with tempfile.TemporaryDirectory(prefix="cold-cache-") as cold:
        wall, exec_s, score = grade_once(notebook, extra, cache_env(Path(cold)))
    print(f"{lab}: cold cache: autograder grade {wall:.1f} s (execution {exec_s:.1f} s, score {score:g})", flush=True)
    cold_wall = wall
    bare, grade, execution = [], [], []
    for i in range(1, runs + 1):
        seconds, errors, _ = bare_once(notebook)
        bare.append(seconds)
        print(f"{lab} run {i}: bare nbclient {seconds:.1f} s ({errors} cells raised)", flush=True)
        wall, exec_s, score = grade_once(notebook, extra, cache_env(cache))
        grade.append(wall)
        execution.append(exec_s)
        print(f"{lab} run {i}: autograder grade {wall:.1f} s (execution {exec_s:.1f} s, score {score:g})", flush=True)
    return {
        "bare": statistics.median(bare),
        "grade": statistics.median(grade),
        "execution": statistics.median(execution),
        "cold": cold_wall,
        "paired": statistics.median(g / b for g, b in zip(grade, bare)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="repeats of each side per lab (default 3)")
    parser.add_argument("--lab", action="append", choices=LABS, help="a lab to measure (repeatable; default all)")
    parser.add_argument(
        "--grade-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="passed on to `autograder grade`, e.g. --grade-arg=--no-sandbox (repeatable)",
    )
    args = parser.parse_args(argv)
    labs = args.lab or list(LABS)
    print(f"labs {', '.join(labs)}; {args.runs} runs of each side, interleaved; grade args {args.grade_arg}")
    print("load average before: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()) + f" ({os.cpu_count()} cores)")
    summary = {}
    with tempfile.TemporaryDirectory(prefix="warm-cache-") as cache:
        subprocess.run(
            [sys.executable, "-m", "autograder", "warm", *labs],
            check=True,
            capture_output=True,
            env=cache_env(Path(cache)),
            timeout=900,
        )
        for lab in labs:
            summary[lab] = bench_lab(lab, args.runs, args.grade_arg, Path(cache))
    print("load average after: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    print(f"\nmedians of {args.runs} (grade with a warm reference cache; cold: one grade with an empty cache)")
    print(
        "paired: the median of each run's grade ÷ the bare run just before it (less swayed by the machine's"
        " speed drifting during the benchmark)"
    )
    print(
        f"{'lab':<24} {'bare s':>7} {'grade s':>8} {'exec s':>7} {'grade/bare':>11} {'paired':>7} {'cold s':>7}"
        f" {'cold/bare':>10}"
    )
    for lab, m in summary.items():
        print(
            f"{lab:<24} {m['bare']:7.1f} {m['grade']:8.1f} {m['execution']:7.1f} {m['grade'] / m['bare']:11.2f}"
            f" {m['paired']:7.2f} {m['cold']:7.1f} {m['cold'] / m['bare']:10.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
