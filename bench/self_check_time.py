"""How long does the self-check take? ``autograder.self_check`` on lab 2's solution.

The solution's code cells up to task t6 are executed in this process (which, like a student's kernel,
has 8 CPU devices set before JAX starts); then a layout task (t1: ``A_sharded``, values and layout) and a
function task (t6: ``layer_man`` called on fresh inputs, its HLO compiled) are checked, first once each
(the checker process starts and computes its references: reported apart), then ``--runs`` times each,
alternating. A check is timed as the notebook's cell does it: capture in this process, public checks in
the checker process, the HTML built. Prints the median, the range, and the load average around it.

    python bench/self_check_time.py --runs 10
"""

from __future__ import annotations

import os

os.environ.update({"XLA_FLAGS": "--xla_force_host_platform_device_count=8", "JAX_PLATFORMS": "cpu", "PJRT_NPROC": "16"})

import argparse  # noqa: E402
import contextlib  # noqa: E402
import io  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import autograder.self_check as ag  # noqa: E402
from autograder.authoring.markers import parse_questions, read_solution  # noqa: E402
from autograder.lab import load_lab  # noqa: E402
from autograder.self_check.cell_output import self_check_html  # noqa: E402

LAB = "lab2_three_ways"
TASKS = {"t1": "layout task", "t6": "function task"}


def solution_namespace(last_task: str) -> dict:
    """What the solution's code cells bind, run up to the end of ``last_task``."""
    solution = read_solution(load_lab(LAB).solution_path)
    end = next(q.last_cell for q in parse_questions(solution) if q.task == last_task)
    namespace = {"__name__": "__main__"}
    with contextlib.redirect_stdout(io.StringIO()):
        for cell in solution.cells[: end + 1]:
            if cell.cell_type == "code":
                exec(compile(cell.source, f"<{cell.get('id')}>", "exec"), namespace)
    return namespace


def timed_self_check(namespace: dict, task: str) -> float:
    started = time.perf_counter()
    report = ag.self_check_namespace(namespace, task, LAB)
    self_check_html(report)
    seconds = time.perf_counter() - started
    verdicts = [t.verdict for t in report.tasks]
    if report.problem or verdicts != ["passed"]:
        raise SystemExit(f"{task}: expected a pass, found {report.problem or verdicts}")
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="checks of each task (default 10)")
    args = parser.parse_args(argv)
    print("load average before: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()) + f" ({os.cpu_count()} cores)")
    started = time.perf_counter()
    namespace = solution_namespace(max(TASKS, key=lambda t: int(t[1:])))
    print(f"solution cells up to t6 ran in {time.perf_counter() - started:.1f} s")
    for task, kind in TASKS.items():
        print(
            f"first check of {task} ({kind}; the first one starts the checker; each computes its task's "
            f"references): {timed_self_check(namespace, task):.2f} s"
        )
    times = {task: [] for task in TASKS}
    for _ in range(args.runs):
        for task in TASKS:
            times[task].append(timed_self_check(namespace, task))
    print("load average after: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    for task, kind in TASKS.items():
        t = times[task]
        print(
            f"{task} ({kind}): median of {len(t)} checks {statistics.median(t):.2f} s "
            f"(min {min(t):.2f} s, max {max(t):.2f} s)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
