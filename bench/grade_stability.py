"""Is a grade stable? Regrade lab 2's solution N times under load and count the verdicts that change.

Each run is a fresh ``python -m autograder grade NOTEBOOK --json out.json`` subprocess (the same CLI
as ``autograder grade``), so the grader redoes its own timing measurement every time, while another
process burns one core for the whole benchmark (started before the first run, stopped after the last,
and bounded in time whatever happens). The solution should score full marks every time; a check whose
verdict changes between runs is a tolerance that load can break (the t8 timing checks are the suspects).

It reports, it never asserts: the exit status is always 0. The last line is
``verdicts that differed: K of M checks``.

    python bench/grade_stability.py --runs 10
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
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = REPO / "solutions" / "lab2_three_ways" / "lab2_three_ways.ipynb"
RUN_TIMEOUT = 900.0  # seconds per grading subprocess: the grader's own 600 s limit plus its grading time


def burn(seconds: float, stop) -> None:
    """Keep one core busy until told to stop, or for ``seconds`` at most."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not stop.is_set():
        x = 0
        for i in range(200_000):
            x += i * i


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def _check_names(tests: list[dict]) -> list[str]:
    """Gradescope test names, made unique (a parametrized check repeats its title): '#2', '#3', ..."""
    seen: dict[str, int] = {}
    names = []
    for test in tests:
        seen[test["name"]] = seen.get(test["name"], 0) + 1
        names.append(test["name"] + (f" #{seen[test['name']]}" if seen[test["name"]] > 1 else ""))
    return names


def grade_once(notebook: Path, log_dir: Path, index: int) -> dict:
    """One grading subprocess: score, per-check verdicts, wall time and the failure lines it printed."""
    out = log_dir / f"run{index:02d}.json"
    env = dict(os.environ, COLUMNS="400")  # rich wraps the report less: one failure message per line
    started = time.monotonic()
    try:
        proc = subprocess.run([sys.executable, "-m", "autograder", "grade", str(notebook), "--json", str(out)],
                              capture_output=True, text=True, timeout=RUN_TIMEOUT, env=env, cwd=log_dir)
        stdout, code = proc.stdout + proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        stdout, code = f"timed out after {RUN_TIMEOUT:g} s: {exc}", None
    wall = time.monotonic() - started
    (log_dir / f"run{index:02d}.txt").write_text(stdout, encoding="utf-8")
    run = {"wall": wall, "exit": code, "score": None, "max": None, "status": "no json", "exec": None,
           "seed": None, "verdicts": {}, "failures": [line.replace("│", "").strip() for line in stdout.splitlines()
                                                      if "•" in line]}
    if out.is_file():
        data = json.loads(out.read_text(encoding="utf-8"))
        run.update(score=data["score"], max=data["extra_data"]["max_score"], status=data["extra_data"]["status"],
                   exec=data["execution_time"], seed=data["extra_data"]["seed"])
        run["verdicts"] = {name: t["status"] for name, t in zip(_check_names(data["tests"]), data["tests"])}
    return run


def report(runs: list[dict]) -> None:
    names = list(dict.fromkeys(name for run in runs for name in run["verdicts"]))
    t8 = [name for name in names if name.startswith("t8:")]
    print("\nrun  score  status   wall s  exec s  seed        t8 verdicts (" + ", ".join(
        f"{i + 1}={n.split('`')[1] if '`' in n else n}" for i, n in enumerate(t8)) + ")")
    for i, run in enumerate(runs, 1):
        score = "-" if run["score"] is None else f"{run['score']:g}"
        exec_s = "-" if run["exec"] is None else f"{run['exec']:.1f}"
        verdicts = " ".join("P" if run["verdicts"].get(n) == "passed" else
                            ("F" if run["verdicts"].get(n) == "failed" else "?") for n in t8)
        print(f"{i:>3}  {score:>5}  {run['status']:<7}  {run['wall']:>6.1f}  {exec_s:>6}  {str(run['seed']):<10}  {verdicts}")
    walls = [run["wall"] for run in runs if run["verdicts"]] or [run["wall"] for run in runs]
    not_full = [i for i, run in enumerate(runs, 1) if run["score"] is None or run["score"] != run["max"]]
    print(f"\nruns: {len(runs)}; wall s per graded run: median {statistics.median(walls):.1f}, "
          f"min {min(walls):.1f}, max {max(walls):.1f}")
    print(f"runs with a score below full marks: {len(not_full)}" + (f" (runs {not_full})" if not_full else ""))
    crashed = [i for i, run in enumerate(runs, 1) if not run["verdicts"]]
    if crashed:  # no results.json: the grader itself failed; its output is in the log directory
        print(f"runs without results.json (left out of the verdict comparison): {crashed}")
    graded = [(i, run) for i, run in enumerate(runs, 1) if run["verdicts"]]
    flipped = []
    for name in names:
        verdicts = [(i, run["verdicts"].get(name, "missing")) for i, run in graded]
        if len({v for _, v in verdicts}) > 1:
            flipped.append(name)
            failed = [i for i, v in verdicts if v != "passed"]
            print(f"  flipped: {name} — not passed in {len(failed)} of {len(graded)} runs {failed}")
        elif verdicts[0][1] != "passed":
            print(f"  failed every run: {name}")
    for i, run in enumerate(runs, 1):
        for line in run["failures"]:
            print(f"  run {i}: {line[:400]}")
    print(f"verdicts that differed: {len(flipped)} of {len(names)} checks")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="gradings (default 10)")
    parser.add_argument("--notebook", type=Path, default=NOTEBOOK, help="the notebook to grade (lab 2's solution)")
    parser.add_argument("--no-burn", action="store_true", help="do not burn a core (a baseline)")
    parser.add_argument("--log-dir", type=Path, help="where each run's results.json and output go (default: a temp dir)")
    args = parser.parse_args(argv)
    log_dir = args.log_dir or Path(tempfile.mkdtemp(prefix="grade-stability-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    print(f"notebook {args.notebook}; {args.runs} runs; burner {'off' if args.no_burn else 'on'}; logs in {log_dir}")
    print(f"load average before: {_load()} ({os.cpu_count()} cores)")
    stop = multiprocessing.Event()
    burner = None
    if not args.no_burn:
        burner = multiprocessing.Process(target=burn, args=(args.runs * RUN_TIMEOUT + 60, stop), daemon=True)
        burner.start()
    runs = []
    try:
        for i in range(1, args.runs + 1):
            runs.append(grade_once(args.notebook, log_dir, i))
            run = runs[-1]
            print(f"run {i}: score {run['score']} status {run['status']} wall {run['wall']:.1f} s; load {_load()}",
                  flush=True)
    finally:
        if burner is not None:
            stop.set()
            burner.join(10)
            if burner.is_alive():
                burner.terminate()
                burner.join()
    print(f"load average after: {_load()}")
    if runs:
        report(runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
