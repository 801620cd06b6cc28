"""Is a grade stable? Regrade lab 2's solution N times under load and count the verdicts that change.

Each run is a fresh ``python -m autograder grade NOTEBOOK --json out.json`` subprocess (the same CLI
as ``autograder grade``), so the grader redoes its own timing measurement every time, while another
process burns one core for the whole benchmark (started before the first run, stopped after the last,
and bounded in time whatever happens). The solution should score full marks every time; a check whose
verdict changes between runs is a tolerance that load can break (the t8 timing checks are the suspects).

Each run then grades a wrong answer: the solution with its two times swapped (the larger reported as
``t_unsharded``), so that its own times say sharding is faster and ``cpu_faster`` is True. That
grading records the grader's measured single ÷ sharded interval; wherever the interval lies below 1,
t8's verdict must fail (its other checks may pass: each swapped time is close to one of the grader's).

It reports, it never asserts: the exit status is always 0. The last lines are
``swapped times passed the verdict with the grader's interval below 1: J of R runs`` and
``verdicts that differed: K of M checks`` (the solution's).

    python bench/grade_stability.py --runs 10
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = REPO / "solutions" / "lab2_three_ways" / "lab2_three_ways.ipynb"
RUN_TIMEOUT = 900.0  # seconds per grading subprocess: the grader's own 600 s limit plus its grading time
SWAP = (
    "t_unsharded, t_sharded = max(t_unsharded, t_sharded), min(t_unsharded, t_sharded)"
    "  # swapped: sharding looks faster\n"
)
VERDICT = "cpu_faster"  # t8's verdict: the check whose Gradescope name quotes it


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


def swapped_notebook(solution: Path, path: Path) -> Path:
    """The solution with its t8 times swapped before its speedup and verdict are computed from them."""
    nb = nbformat.read(solution, as_version=4)
    cells = [c for c in nb.cells if c.cell_type == "code" and "speedup = t_unsharded / t_sharded" in c.source]
    if len(cells) != 1:
        raise SystemExit(
            f"{solution}: expected one cell computing `speedup = t_unsharded / t_sharded`, found {len(cells)}"
        )
    cells[0].source = cells[0].source.replace(
        "speedup = t_unsharded / t_sharded", SWAP + "speedup = t_unsharded / t_sharded"
    )
    nbformat.write(nb, path)
    return path


def grade_recording_ratio(notebook: str, out: str, ratio_out: str) -> int:
    """``autograder grade NOTEBOOK --json OUT`` in this process, writing to RATIO_OUT the grader's own
    measured single ÷ sharded ratio and interval, as t8's checks got it."""
    from autograder.cli import main as autograder_main
    from autograder.labs.lab2_three_ways import reference

    measure = reference.grad_loss_times

    def recorded():
        times = measure()
        Path(ratio_out).write_text(json.dumps(dataclasses.asdict(times.ratio)), encoding="utf-8")
        return times

    reference.grad_loss_times = recorded
    return autograder_main(["grade", notebook, "--json", out])


def grade_once(notebook: Path, log_dir: Path, index: int, record_ratio: bool = False) -> dict:
    """One grading subprocess: score, per-check verdicts, wall time and the failure lines it printed (and,
    with ``record_ratio``, the grader's measured ratio)."""
    stem = f"run{index:02d}" + ("-swapped" if record_ratio else "")
    out, ratio_out = log_dir / f"{stem}.json", log_dir / f"{stem}-ratio.json"
    env = dict(os.environ, COLUMNS="400")  # rich wraps the report less: one failure message per line
    command = (
        [sys.executable, __file__, "--grade-recording-ratio", str(notebook), str(out), str(ratio_out)]
        if record_ratio
        else [sys.executable, "-m", "autograder", "grade", str(notebook), "--json", str(out)]
    )
    started = time.monotonic()
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=RUN_TIMEOUT, env=env, cwd=log_dir)
        stdout, code = proc.stdout + proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as exc:
        stdout, code = f"timed out after {RUN_TIMEOUT:g} s: {exc}", None
    wall = time.monotonic() - started
    (log_dir / f"{stem}.txt").write_text(stdout, encoding="utf-8")
    run = {
        "wall": wall,
        "exit": code,
        "score": None,
        "max": None,
        "status": "no json",
        "exec": None,
        "seed": None,
        "verdicts": {},
        "failures": [line.replace("│", "").strip() for line in stdout.splitlines() if "•" in line],
        "ratio": json.loads(ratio_out.read_text(encoding="utf-8")) if ratio_out.is_file() else None,
    }
    if out.is_file():
        data = json.loads(out.read_text(encoding="utf-8"))
        run.update(
            score=data["score"],
            max=data["extra_data"]["max_score"],
            status=data["extra_data"]["status"],
            exec=data["execution_time"],
            seed=data["extra_data"]["seed"],
        )
        run["verdicts"] = {name: t["status"] for name, t in zip(_check_names(data["tests"]), data["tests"])}
    return run


def report(runs: list[dict]) -> None:
    names = list(dict.fromkeys(name for run in runs for name in run["verdicts"]))
    t8 = [name for name in names if name.startswith("t8:")]
    print(
        "\nrun  score  status   wall s  exec s  seed        t8 verdicts ("
        + ", ".join(f"{i + 1}={n.split('`')[1] if '`' in n else n}" for i, n in enumerate(t8))
        + ")"
    )
    for i, run in enumerate(runs, 1):
        score = "-" if run["score"] is None else f"{run['score']:g}"
        exec_s = "-" if run["exec"] is None else f"{run['exec']:.1f}"
        verdicts = " ".join(
            "P" if run["verdicts"].get(n) == "passed" else ("F" if run["verdicts"].get(n) == "failed" else "?")
            for n in t8
        )
        print(
            f"{i:>3}  {score:>5}  {run['status']:<7}  {run['wall']:>6.1f}  {exec_s:>6}  "
            f"{str(run['seed']):<10}  {verdicts}"
        )
    walls = [run["wall"] for run in runs if run["verdicts"]] or [run["wall"] for run in runs]
    not_full = [i for i, run in enumerate(runs, 1) if run["score"] is None or run["score"] != run["max"]]
    print(
        f"\nruns: {len(runs)}; wall s per graded run: median {statistics.median(walls):.1f}, "
        f"min {min(walls):.1f}, max {max(walls):.1f}"
    )
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


def report_swapped(runs: list[dict]) -> None:
    """Per run: the grader's interval and the swapped submission's t8 verdict; then the runs where the
    verdict passed although the interval lay below 1 (there should be none)."""
    print("\nswapped times: run  single ÷ sharded (90 % interval, rounds)  verdict  t8 points")
    below, wrongly_passed = [], []
    for i, run in enumerate(runs, 1):
        ratio = run["ratio"]
        verdict = next((v for name, v in run["verdicts"].items() if name.startswith("t8:") and VERDICT in name), None)
        t8 = [name for name in run["verdicts"] if name.startswith("t8:")]
        if ratio is None or verdict is None:
            print(f"{i:>21}  no measurement or no verdict (exit {run['exit']}, status {run['status']})")
            continue
        print(
            f"{i:>21}  {ratio['median']:.3f} ({ratio['low']:.3f}–{ratio['high']:.3f}, {ratio['rounds']})"
            f"{'':>14}{'P' if verdict == 'passed' else 'F'}        "
            + " ".join("P" if run["verdicts"][n] == "passed" else "F" for n in t8)
        )
        if ratio["high"] < 1:
            below.append(i)
            if verdict == "passed":
                wrongly_passed.append(i)
    print(
        f"swapped times passed the verdict with the grader's interval below 1: {len(wrongly_passed)} of"
        f" {len(below)} runs" + (f" (runs {wrongly_passed})" if wrongly_passed else "")
    )


def main(argv: list[str] | None = None) -> int:
    if argv is None and sys.argv[1:2] == ["--grade-recording-ratio"]:
        return grade_recording_ratio(*sys.argv[2:5])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="gradings (default 10)")
    parser.add_argument("--notebook", type=Path, default=NOTEBOOK, help="the notebook to grade (lab 2's solution)")
    parser.add_argument("--no-burn", action="store_true", help="do not burn a core (a baseline)")
    parser.add_argument("--no-swapped", action="store_true", help="grade only the solution, not its swapped times")
    parser.add_argument(
        "--log-dir", type=Path, help="where each run's results.json and output go (default: a temp dir)"
    )
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
    swapped = None if args.no_swapped else swapped_notebook(args.notebook, log_dir / "swapped_times.ipynb")
    runs, swapped_runs = [], []
    try:
        for i in range(1, args.runs + 1):
            runs.append(grade_once(args.notebook, log_dir, i))
            run = runs[-1]
            print(
                f"run {i}: score {run['score']} status {run['status']} wall {run['wall']:.1f} s; load {_load()}",
                flush=True,
            )
            if swapped is not None:
                swapped_runs.append(grade_once(swapped, log_dir, i, record_ratio=True))
                run = swapped_runs[-1]
                print(
                    f"run {i} swapped: score {run['score']} status {run['status']} ratio {run['ratio']};"
                    f" load {_load()}",
                    flush=True,
                )
    finally:
        if burner is not None:
            stop.set()
            burner.join(10)
            if burner.is_alive():
                burner.terminate()
                burner.join()
    print(f"load average after: {_load()}")
    if swapped_runs:
        report_swapped(swapped_runs)
    if runs:
        report(runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
