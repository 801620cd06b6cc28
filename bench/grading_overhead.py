"""What a grade costs against what a user would run instead: plain nbclient on the same notebook.

Per lab (all four by default), a student's copy of the lab's solution, copied to a temporary folder
outside ``solutions/`` (there the grader treats a notebook as a student's: no compiled programs of the
solution's to reuse, its kernel's memory-saving malloc on), is run two ways, each a fresh process timed
from its start to its exit:

- plain: ``jupyter execute --kernel_name=python3 COPY`` (nbclient's own command, jupyter's ``python3``
  kernelspec of this venv), every cell as it is in the notebook, self-check cells included, in an
  environment with nothing of the harness's: this process's own, less any device, JAX or malloc setting,
  plus the lab's 8-device settings (``PLAIN_SETTINGS``), which the lab's setup cell asks for;
- grade: ``autograder grade COPY --lab LAB --json results.json``, as a user runs it.

One warm-up grade first (it fills the reference cache, as any machine has it after its first grade), then
plain and grade alternate ``--runs`` times, so that both see the same machine. The line to read is the
median of each grade ÷ the plain run just before it. Under it, the seconds a grade adds beyond its
notebook by phase (medians over the runs): its process's start to its kernel's process (seen from here,
``psutil``), the phases the grade reports (``GradeResult.phases``, run/phase_clock.py), the kernel's end
to the first line of the grade's report, and writing the report and results.json to the exit (stdout
unbuffered, so that its first byte marks the start of the writing).

    python bench/grading_overhead.py [--lab lab4_collectives] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil

from autograder.lab import lab_ids, load_lab
from autograder.run.phase_clock import PHASES

# What the lab asks of a kernel, and all a plain run gets beyond the user's own environment.
PLAIN_SETTINGS = {
    "XLA_FLAGS": "--xla_force_host_platform_device_count=8",
    "JAX_PLATFORMS": "cpu",
    "PJRT_NPROC": "16",
}
# A user's shell has none of these unless set by hand; the harness sets them for its own kernels.
NOT_INHERITED = ("XLA_", "JAX_", "PJRT_", "MALLOC_", "AUTOGRADER_", "JPY_")
JUPYTER_EXECUTE = Path(sys.executable).with_name("jupyter-execute")
AUTOGRADER = Path(sys.executable).with_name("autograder")


def load_line(when: str) -> str:
    return f"load average {when}: " + " ".join(f"{x:.2f}" for x in os.getloadavg()) + f" ({os.cpu_count()} cores)"


def student_copy(lab: str, folder: Path, name: str = "submission.ipynb") -> Path:
    """The lab's solution as a student hands it in: a file of its own, away from ``solutions/``."""
    copy = folder / name
    shutil.copyfile(load_lab(lab).solution_path, copy)
    return copy


def plain_environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(NOT_INHERITED)}
    return {**env, **PLAIN_SETTINGS}


def plain_once(notebook: Path) -> tuple[float, float]:
    """Wall seconds of ``jupyter execute`` on the notebook, start to exit, and the CPU seconds it and its
    kernel used (meaningful only when no other child ends meanwhile). Raises if a cell raised."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(
        [str(JUPYTER_EXECUTE), "--kernel_name=python3", "--timeout=900", notebook.name],
        cwd=notebook.parent,
        env=plain_environment(),
        capture_output=True,
        text=True,
        timeout=1800,
    )
    seconds = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"jupyter execute {notebook} failed:\n{done.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, cpu


def _kernel_started(process: psutil.Process, found: list[float], stop: threading.Event) -> None:
    """When the grade's kernel process was created, by the system's record (so polling slowly loses
    nothing), on the same clock as the grade process's own ``create_time``."""
    while not stop.wait(0.05):
        try:
            for child in process.children(recursive=True):
                if any("ipykernel_launcher" in part for part in child.cmdline()):
                    found.append(child.create_time())
                    return
        except psutil.Error:
            continue


# Where a grade's seconds go outside the phases it reports, seen from here.
BEFORE, AFTER, WRITING = "to kernel", "after kernel", "writing"


def grade_once(notebook: Path, lab: str) -> dict:
    """One ``autograder grade`` process: its wall seconds, score, and seconds by phase: those it reports,
    and around them the start to its kernel's process, the kernel's end to its report, and the writing."""
    out = notebook.with_name("results.json")
    with tempfile.TemporaryFile() as errors:
        started = time.monotonic()
        process = psutil.Popen(
            [str(AUTOGRADER), "grade", str(notebook), "--lab", lab, "--json", str(out)],
            cwd=notebook.parent,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            stdout=subprocess.PIPE,
            stderr=errors,
        )
        started_at = process.create_time()  # its boot-time offset cancels out against the kernel's
        kernel: list[float] = []
        stop = threading.Event()
        watcher = threading.Thread(target=_kernel_started, args=(process, kernel, stop), daemon=True)
        watcher.start()
        assert process.stdout is not None
        first_output = time.monotonic() if process.stdout.read(1) else None  # the report is its first output
        process.stdout.read()
        process.wait(timeout=1800)
        wall = time.monotonic() - started
        stop.set()
        watcher.join()
        if process.returncode != 0 or not out.is_file():
            errors.seek(0)
            raise RuntimeError(f"autograder grade {notebook} failed:\n{errors.read().decode()[-3000:]}")
    results = json.loads(out.read_text(encoding="utf-8"))
    execution = results["execution_time"]
    to_kernel = kernel[0] - started_at if kernel else float("nan")
    writing = wall - (first_output - started) if first_output is not None else float("nan")
    return {
        "wall": wall,
        "score": results["score"],
        "max_score": results["extra_data"]["max_score"],
        "seconds": {
            BEFORE: to_kernel,
            **results["extra_data"].get("phases", {}),
            AFTER: wall - to_kernel - execution - writing,
            WRITING: writing,
        },
    }


def bench_lab(lab: str, runs: int) -> dict:
    """Plain and grade alternated ``runs`` times after a warm-up grade; every run kept."""
    with tempfile.TemporaryDirectory(prefix="grade-cost-") as tmp:
        copy = student_copy(lab, Path(tmp))
        warm = grade_once(copy, lab)
        print(f"{lab}: warm-up grade {warm['wall']:.1f} s, score {warm['score']:g}/{warm['max_score']:g}", flush=True)
        plains, grades = [], []
        for i in range(1, runs + 1):
            plains.append(plain_once(copy)[0])
            grades.append(grade_once(copy, lab))
            g = grades[-1]
            print(
                f"{lab} run {i}: plain {plains[-1]:.1f} s, grade {g['wall']:.1f} s"
                f" (score {g['score']:g}/{g['max_score']:g})",
                flush=True,
            )
    return {"plain": plains, "grades": grades}


def median_phases(grades: list[dict]) -> dict[str, float]:
    """Each phase's median over the runs, in the order a grading goes through them."""
    reported = {name for g in grades for name in g["seconds"]} - {BEFORE, AFTER, WRITING}
    names = [BEFORE, *(p for p in PHASES if p in reported), *sorted(reported - set(PHASES)), AFTER, WRITING]
    return {name: statistics.median(g["seconds"].get(name, 0.0) for g in grades) for name in names}


def report(summary: dict[str, dict], runs: int) -> None:
    print(f"\nmedians of {runs} runs; grade ÷ plain: the median of each grade ÷ the plain run just before it")
    print(f"{'lab':<24} {'plain s':>8} {'grade s':>8} {'grade÷plain':>12} {'added s':>8}  full marks")
    for lab, m in summary.items():
        walls = [g["wall"] for g in m["grades"]]
        ratio = statistics.median(g / p for g, p in zip(walls, m["plain"]))
        added = statistics.median(g - p for g, p in zip(walls, m["plain"]))
        full = all(g["score"] == g["max_score"] for g in m["grades"])
        print(
            f"{lab:<24} {statistics.median(m['plain']):8.1f} {statistics.median(walls):8.1f} {ratio:12.2f}"
            f" {added:8.1f}  {'yes' if full else 'NO'}"
        )
    print(
        "\nwhere a grade's seconds go (medians): to kernel = process start to the kernel's process; then the"
        " grade's phases\n(cells: the notebook itself; checks run beside the kernel, so not all they take is"
        " added);\nafter kernel = the kernel's end to the report; writing = the report and results.json, to exit"
    )
    table = {lab: median_phases(m["grades"]) for lab, m in summary.items()}
    names = list(next(iter(table.values())))
    print(f"{'lab':<24} " + " ".join(f"{name:>12}" for name in names))
    for lab, phases in table.items():
        print(f"{lab:<24} " + " ".join(f"{phases[name]:12.2f}" for name in names))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="plain and grade alternated this many times (default 3)")
    parser.add_argument("--lab", action="append", choices=lab_ids(), help="a lab to measure (repeatable; default all)")
    args = parser.parse_args(argv)
    labs = args.lab or lab_ids()
    print(f"labs {', '.join(labs)}; a warm-up grade, then plain and grade alternated {args.runs} times")
    print(load_line("before"), flush=True)
    summary = {lab: bench_lab(lab, args.runs) for lab in labs}
    print(load_line("after"))
    report(summary, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
