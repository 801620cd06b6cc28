"""Does grading fit Gradescope's container? Peak memory, wall time and score per lab and container size.

For each lab: the Gradescope zip is built, unpacked into a scratch root laid out as Gradescope's, and
its setup.sh installs it (reusing this interpreter's packages: ``AUTOGRADER_GRADESCOPE_OFFLINE=1``) and
warms the image's reference cache, as the image build does. Then, for each size, run_autograder grades
the lab's solution notebook in a new cgroup of that memory (no swap) and CPU share, without bubblewrap
on PATH (the uid level, as on Gradescope) and with a fresh HOME. Printed per run: the peak memory of
the whole process tree (grader, kernel, checker; the cgroup's own count), the wall time, the score,
and whether the out-of-memory killer struck; and, sampled every 0.1 s from /proc, the peak memory (PSS)
of the kernel and of the grader's own processes (run_autograder, the grader, its checker: everything in
the tree but the kernel, summed), so that a large peak says whose it is. Each lab's notebook also runs
alone (stock nbclient, no grader, the graded kernel's environment and malloc settings) in the same
cgroup: what the notebook itself needs (``--no-bare`` skips it).

Needs root and a writable cgroup file system (v1 or v2). Sizes are MEMORY_MB:CPUS.

    sudo python bench/container_fit.py [--lab lab2_three_ways] [--size 768:0.5 --size 1536:1] [--no-bare]
                                       [--python /usr/bin/python3.11]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from autograder.course.gradescope_zip import build_autograder_zip
from autograder.lab import lab_ids, load_lab
from autograder.run.kernels.devices import kernel_environment
from autograder.run.kernels.malloc import KERNEL_MALLOC_ENV

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))
from cgroup_box import box_problem, run_in_box  # noqa: E402  (the tests' support: a cgroup of given limits)

DEFAULT_SIZES = ("768:0.5",)
BARE_RUN = """
import sys, nbformat
from nbclient import NotebookClient
notebook = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(notebook, timeout=600, allow_errors=True, kernel_name="python3").execute()
"""
# Runs argv[2:] and writes to argv[1] the peak memory of its kernel (an ipykernel process) and of the rest
# of its process tree (summed at each sample), sampled every 0.1 s: proportional set sizes, so that the
# libraries both map (jaxlib's) are shared between them, not counted twice.
SAMPLED_RUN = """
import json, os, subprocess, sys, time
def children():
    found = {}
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            found.setdefault(int(open(f'/proc/{pid}/stat').read().rsplit(')', 1)[1].split()[1]), []).append(int(pid))
        except (OSError, IndexError, ValueError):
            pass
    return found
def rss_and_kernel(pid):
    try:
        kernel = b'ipykernel' in open(f'/proc/{pid}/cmdline', 'rb').read()
        rss = next(int(l.split()[1]) for l in open(f'/proc/{pid}/smaps_rollup') if l.startswith('Pss:')) * 1024
        return rss, kernel
    except (OSError, StopIteration):
        return 0, False
child = subprocess.Popen(sys.argv[2:])
peaks = {'kernel': 0, 'grader': 0}
while child.poll() is None:
    found, todo, now = children(), [child.pid], {'kernel': 0, 'grader': 0}
    while todo:
        pid = todo.pop()
        todo += found.get(pid, [])
        rss, kernel = rss_and_kernel(pid)
        now['kernel' if kernel else 'grader'] += rss
    peaks = {k: max(peaks[k], now[k]) for k in peaks}
    time.sleep(0.1)
json.dump(peaks, open(sys.argv[1], 'w'))
sys.exit(child.returncode)
"""


def unpack(archive: Path, root: Path) -> Path:
    with zipfile.ZipFile(archive) as opened:
        opened.extractall(root / "source")
        for info in opened.infolist():
            os.chmod(root / "source" / info.filename, info.external_attr >> 16 & 0o777)
    return root / "source"


def clean_environment() -> dict[str, str]:
    drop = ("PYTHONPATH", "AUTOGRADER_ROOT", "VIRTUAL_ENV", "AUTOGRADER_CACHE_DIR")
    return {k: v for k, v in os.environ.items() if k not in drop}


def path_without_bwrap(directory: Path) -> str:
    directory.mkdir()
    for folder in os.environ["PATH"].split(os.pathsep):
        if os.path.isdir(folder):
            for entry in os.scandir(folder):
                target = directory / entry.name
                if entry.name != "bwrap" and not target.exists() and os.access(entry.path, os.X_OK):
                    target.symlink_to(entry.path)
    return str(directory)


def python_searchable_by_all() -> None:
    """The uid level's kernel runs as another user: it must reach this Python (Gradescope's is in /usr)."""
    for directory in Path(sys.base_prefix).resolve().parents:
        mode = stat.S_IMODE(os.stat(directory).st_mode)
        if not mode & stat.S_IXOTH:
            os.chmod(directory, mode | stat.S_IXOTH)


def install(lab_id: str, scratch: Path, python: str | None) -> tuple[Path, float]:
    """The zip's setup.sh run into a venv under ``scratch``: the bin folder, and setup.sh's seconds.
    With ``python``, setup.sh installs the pinned packages for it with pip, as on Gradescope;
    without, it reuses this interpreter's packages."""
    archive = build_autograder_zip(lab_id, scratch / "autograder.zip")
    source = unpack(archive, scratch / "setup")
    how = (
        {"AUTOGRADER_GRADESCOPE_PYTHON": python, "AUTOGRADER_GRADESCOPE_NO_APT": "1"}
        if python
        else {"AUTOGRADER_GRADESCOPE_OFFLINE": "1", "AUTOGRADER_GRADESCOPE_PYTHON": sys.executable}
    )
    env = {
        **clean_environment(),
        **how,
        "AUTOGRADER_GRADESCOPE_VENV": str(scratch / "venv"),
        "AUTOGRADER_GRADESCOPE_BIN": str(scratch / "bin"),
        "AUTOGRADER_GRADESCOPE_CACHE": str(scratch / "cache"),
    }
    started = time.monotonic()
    done = subprocess.run(["bash", str(source / "setup.sh")], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"setup.sh failed: {done.stderr}")
    return scratch / "bin", time.monotonic() - started


def grade_in_box(lab_id: str, scratch: Path, name: str, bin_dir: Path, path: str, memory_mb: int, cpus: float):
    lab = load_lab(lab_id)
    root = scratch / name
    source = unpack(scratch / "autograder.zip", root)
    for folder in ("submission", "results", "home"):
        (root / folder).mkdir()
    os.chmod(root, 0o755)
    shutil.copy(lab.solution_path, root / "submission" / f"{lab_id}.ipynb")
    env = {
        **clean_environment(),
        "PATH": f"{bin_dir}:{path}",
        "AUTOGRADER_GRADESCOPE_ROOT": str(root),
        "HOME": str(root / "home"),
    }
    peaks_file = scratch / f"{name}-peaks.json"
    run = run_in_box(
        [sys.executable, "-c", SAMPLED_RUN, str(peaks_file), str(source / "run_autograder")],
        memory_mb * 2**20,
        cpus,
        env=env,
        cwd=root,
    )
    results = json.loads((root / "results" / "results.json").read_text())
    peaks = json.loads(peaks_file.read_text()) if peaks_file.exists() else {}
    return run, results, lab.max_score, peaks


def bare_in_box(lab_id: str, scratch: Path, memory_mb: int, cpus: float):
    """The solution notebook alone, run by stock nbclient in the harness's kernel environment."""
    folder = scratch / f"bare-{memory_mb}"
    folder.mkdir()
    shutil.copy(load_lab(lab_id).solution_path, folder / "lab.ipynb")
    env = {
        **kernel_environment(clean_environment()),
        "HOME": str(folder),
        **KERNEL_MALLOC_ENV,
    }
    return run_in_box(
        [sys.executable, "-c", BARE_RUN, str(folder / "lab.ipynb")], memory_mb * 2**20, cpus, env=env, cwd=folder
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lab", action="append", choices=lab_ids(), help="a lab (default: every lab)")
    parser.add_argument("--size", action="append", help="MEMORY_MB:CPUS (default: 768:0.5, Gradescope's default)")
    parser.add_argument("--no-bare", action="store_true", help="do not run each notebook alone, without the grader")
    parser.add_argument(
        "--python",
        help="install with pip for this interpreter, as on Gradescope (e.g. "
        "/usr/bin/python3.11; PIP_CACHE_DIR lets pip reuse its downloads); default: reuse this one's",
    )
    args = parser.parse_args()
    problem = box_problem()
    if problem:
        raise SystemExit(f"cannot measure: {problem}")
    python_searchable_by_all()
    sizes = [(int(m), float(c)) for m, c in (s.split(":") for s in (args.size or DEFAULT_SIZES))]
    print(
        f"{'lab':<26}{'memory':>8}{'CPUs':>6}{'what':>7}{'peak MB':>9}{'kernel':>8}{'grader':>8}{'wall s':>8}"
        f"{'score':>10}  out of memory"
    )
    for lab_id in args.lab or lab_ids():
        scratch = Path(tempfile.mkdtemp(prefix="container-fit-"))
        os.chmod(scratch, 0o755)
        try:
            bin_dir, seconds = install(lab_id, scratch, args.python)
            print(f"{lab_id:<26}setup.sh took {seconds:.0f} s", flush=True)
            path = path_without_bwrap(scratch / "no-bwrap")
            for memory_mb, cpus in sizes:
                run, results, max_score, peaks = grade_in_box(
                    lab_id, scratch, f"run-{memory_mb}-{cpus:g}", bin_dir, path, memory_mb, cpus
                )
                peak = f"{run.peak_bytes / 2**20:,.0f}" if run.peak_bytes else "?"
                kernel, grader = (f"{peaks[k] / 2**20:,.0f}" if k in peaks else "?" for k in ("kernel", "grader"))
                print(
                    f"{lab_id:<26}{memory_mb:>8}{cpus:>6g}{'grade':>7}{peak:>9}{kernel:>8}{grader:>8}{run.seconds:>8.0f}"
                    f"{results['score']:>6g}/{max_score:<3g}  {'yes' if run.oom_kills else 'no'}",
                    flush=True,
                )
                if not args.no_bare:
                    bare = bare_in_box(lab_id, scratch, memory_mb, cpus)
                    peak = f"{bare.peak_bytes / 2**20:,.0f}" if bare.peak_bytes else "?"
                    print(
                        f"{lab_id:<26}{memory_mb:>8}{cpus:>6g}{'bare':>7}{peak:>9}{'-':>8}{'-':>8}{bare.seconds:>8.0f}{'-':>10}"
                        f"  {'yes' if bare.oom_kills else 'no'}",
                        flush=True,
                    )
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
