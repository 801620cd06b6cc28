"""What a cell timeout lasts on a crowded machine: the time other work takes from a kernel is given back
(fairness/others_load.py), and only that.

Two cells, each in a fresh sandboxed kernel, beside 0 to ``--most-busy`` busy-loop processes started for
the measurement (the load average it ran under is printed too):

- a loop that never ends (``while True: pass``) under a ``--timeout`` (default 10 s) cell timeout: one
  thread, which another processor left free loses nothing to; how long it ran ÷ its timeout;
- a JAX cell on the 8 devices, measured first alone, under a timeout of 1.2 × that: whether it still
  ends beside the busy loops, and its seconds ÷ its time alone.

    python bench/timeout_give_back.py                  # about 3 minutes on 2 cores
    python bench/timeout_give_back.py --most-busy 4 --timeout 20
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys

from autograder.facts.capture import TaskCapture
from autograder.run import execute_plan
from autograder.run.execute import RunRequest
from autograder.run.plan import CaptureTask, Plan, RunCell
from autograder.run.sandbox.limits import Limits

LOOP = "while True:\n    pass"
JAX_CELL = """import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
mesh = jax.make_mesh((8,), ('x',))
x = jax.device_put(jnp.ones((4096, 1024)), NamedSharding(mesh, P('x')))
w = jnp.ones((1024, 1024)) / 1024
step = jax.jit(lambda x: jnp.tanh(x @ w) @ w.T)
for _ in range(150):
    x = step(x)
x.block_until_ready()
ended = True"""


def run_cell(source: str, timeout: float):
    """The cell's outcome (status, seconds, error) in a fresh kernel under a ``timeout`` s cell timeout."""
    plan = Plan((RunCell(source, "student", "t1", 1, "cell 1"), CaptureTask("t1")), ())
    limits = Limits(cell_timeout=timeout, total_timeout=timeout * 12 + 60)
    run = execute_plan(RunRequest(plan, {"t1": TaskCapture("t1")}, limits, seed=1))
    if not run.cells:
        raise SystemExit(f"the cell did not run: {run.status} ({run.reason})")
    return run.cells[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--most-busy", type=int, default=3, help="busy-loop processes at most (default 3)")
    parser.add_argument("--timeout", type=float, default=10.0, help="the loop's cell timeout (default 10 s)")
    args = parser.parse_args()
    alone = run_cell(JAX_CELL, 600.0)
    print(f"load average {os.getloadavg()[0]:.1f}; the JAX cell alone: {alone.seconds:.1f} s", flush=True)
    print("busy loops | loop ran ÷ its timeout | JAX cell (timeout 1.2 × alone) | its seconds ÷ alone")
    for busy in range(args.most_busy + 1):
        burners = [subprocess.Popen([sys.executable, "-c", LOOP]) for _ in range(busy)]
        try:
            loop = run_cell(LOOP, args.timeout)
            cell = run_cell(JAX_CELL, 1.2 * alone.seconds)
        finally:
            for burner in burners:
                burner.kill()
                burner.wait()
        loop_ratio, cell_ratio = loop.seconds / args.timeout, cell.seconds / alone.seconds
        print(f"{busy:>10} | {loop_ratio:>22.2f} | {cell.status:>30} | {cell_ratio:.2f}", flush=True)


if __name__ == "__main__":
    main()
