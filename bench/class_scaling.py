"""How a batch's cost grows with the class: seconds per notebook for classes of 8, 32 and 128 copies.

For each class size (``--sizes``, default 8 32 128) and each number of workers (``--workers``, default 1
and 2), a class of that many students' copies of the lab's solution (``--lab``, default lab 4, the
cheapest notebook), in a temporary folder outside ``solutions/``, is graded by one ``autograder batch``
(the lab's references warmed first, as on any machine after its first batch). Printed per run: the wall
seconds, **seconds per notebook**, whether every row has full marks, and the batch's longest wait for
another submission's timed turn (``batch-timing.json``'s ``longest_wait``). The line to read is the
spread of seconds per notebook across sizes at the same workers: flat means the class's cost grows with
its size alone (no per-batch work that grows faster, no turns that serialise more with more copies).

    python bench/class_scaling.py                              # 8, 32, 128 copies at 1 and 2 workers
    python bench/class_scaling.py --sizes 8 32 --workers 2     # a quicker look
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parent)]

from batch_cost import batch, make_class, rows_below_full_marks  # noqa: E402
from grading_overhead import AUTOGRADER, load_line  # noqa: E402

from autograder.course.batch import TIMING_FILE  # noqa: E402
from autograder.lab import lab_ids  # noqa: E402


def longest_wait(out: Path) -> str:
    wait = json.loads((out / TIMING_FILE).read_text()).get("longest_wait") or {}
    if not wait:
        return "no wait for a turn"
    behind = ", ".join(wait.get("behind", ())) or "turns not named"
    return f"longest wait {wait['seconds']:.1f} s ({Path(wait['notebook']).name}, behind {behind})"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--lab", choices=lab_ids(), default="lab4_collectives")
    parser.add_argument("--sizes", type=int, nargs="+", default=[8, 32, 128])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    args = parser.parse_args()
    print(f"{args.lab}: classes of {args.sizes} copies at {args.workers} workers")
    print(load_line("before"), flush=True)
    subprocess.run([str(AUTOGRADER), "warm", args.lab], check=True, stdout=subprocess.DEVNULL)
    per_notebook: dict[int, list[float]] = {workers: [] for workers in args.workers}
    with tempfile.TemporaryDirectory(prefix="class-scaling-") as tmp:
        for size in args.sizes:
            paths = make_class(args.lab, Path(tmp) / f"class{size}", size)
            for workers in args.workers:
                out = Path(tmp) / f"out{size}-{workers}"
                wall = batch(args.lab, paths[0].parent, out, workers)
                below = rows_below_full_marks(out, size)
                per_notebook[workers].append(wall / size)
                marks = "every row full marks" if not below else f"BELOW FULL MARKS: {below}"
                print(
                    f"{size:4d} copies, {workers} worker(s): {wall:7.1f} s, {wall / size:5.2f} s a notebook; "
                    f"{marks}; {longest_wait(out)}",
                    flush=True,
                )
    for workers, values in per_notebook.items():
        spread = max(values) / min(values)
        seconds = " ".join(f"{v:.2f}" for v in values)
        print(f"{workers} worker(s): seconds a notebook {seconds} (largest ÷ smallest {spread:.2f})")
    print(load_line("after"))


if __name__ == "__main__":
    main()
