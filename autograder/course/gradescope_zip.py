"""Gradescope's autograder zip, built (the same bytes each time) and tried here before it is uploaded.

The zip holds ``setup.sh`` (this harness from the wheel it carries, installed on the image's Python with
the packages that change grades pinned to this machine's versions, and bubblewrap), ``run_autograder``
(``autograder gradescope-run``: gradescope_run.py), ``config.json``, the lab's student notebook and the wheel.

``autograder gradescope LAB --try SUBMISSION`` runs its ``setup.sh`` and ``run_autograder`` in a scratch
folder laid out as Gradescope's container, apt left alone and this Python's packages reused, so nothing
is downloaded; ``AUTOGRADER_KEEP_RUNS=1`` keeps the folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from importlib import metadata
from pathlib import Path

from autograder.course.gradescope_run import CONFIG_FILE, LAB_DIR, GradescopeConfig, GradescopeError
from autograder.course.student_package import WheelBuildError, build_wheel_of, installed_project, stage_package
from autograder.paths import COURSE_FILE

ZIP_TIME = (1980, 1, 1, 0, 0, 0)
GRADER_PACKAGE_DATA = {"autograder.authoring": ["templates/**/*.j2"], "autograder.labs": ["*/requirements.toml"]}


SETUP_SH = """\
#!/usr/bin/env bash
# Installs the grading harness in Gradescope's image (run once, as root, with network access), on the
# image's own Python 3.11 or newer: requirements.txt pins exactly what changes grades (jax, jaxlib,
# numpy, flax) and the wheel is this harness; pip resolves every other package for that interpreter.
# AUTOGRADER_GRADESCOPE_OFFLINE=1 reuses the Python packages of $AUTOGRADER_GRADESCOPE_PYTHON instead of
# installing the pinned ones (for testing the zip on a machine that has them). pip's cache is used only
# when PIP_CACHE_DIR is set (the image stays small); AUTOGRADER_GRADESCOPE_NO_APT=1 leaves apt alone.
# The lab's references are computed once here, into $AUTOGRADER_GRADESCOPE_CACHE, which every
# submission's grading reads (a fresh container from the image starts with it).
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
VENV="${{AUTOGRADER_GRADESCOPE_VENV:-/opt/autograder-venv}}"
BIN="${{AUTOGRADER_GRADESCOPE_BIN:-/usr/local/bin}}"
OFFLINE="${{AUTOGRADER_GRADESCOPE_OFFLINE:-}}"
PYTHON="${{AUTOGRADER_GRADESCOPE_PYTHON:-}}"
CACHE="${{AUTOGRADER_GRADESCOPE_CACHE:-/opt/autograder-cache}}"
LOG="$(mktemp -t autograder-setup.XXXXXX)"  # in $TMPDIR, else /tmp; kept only when setup fails
fail() {{ echo "setup.sh: $1" >&2; exit 1; }}
recent_enough() {{ "$1" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; }}
find_python() {{
  for candidate in python{python} python3 python3.13 python3.12 python3.11; do
    if command -v "$candidate" >/dev/null 2>&1 && recent_enough "$candidate"; then
      command -v "$candidate"; return 0
    fi
  done
  return 1
}}
APT=""
if [ -z "$OFFLINE" ] && [ -z "${{AUTOGRADER_GRADESCOPE_NO_APT:-}}" ] && [ "$(id -u)" = 0 ] \
    && command -v apt-get >/dev/null 2>&1; then
  APT=1
  apt-get update -qq >>"$LOG" 2>&1 || true
  # bubblewrap sandboxes the kernels where user namespaces work; setpriv and prlimit (util-linux) run
  # them as an unprivileged uid where they do not (Docker's defaults).
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq bubblewrap util-linux >>"$LOG" 2>&1 \\
    || echo "setup.sh: could not install bubblewrap; kernels will run at the uid level" >&2
fi
if [ -z "$PYTHON" ]; then
  PYTHON="$(find_python)" || {{
    [ -n "$APT" ] && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3.11 python3.11-venv >>"$LOG" 2>&1
    PYTHON="$(find_python)"
  }} || fail "no Python 3.11 or newer here, and apt could not install python3.11: choose a base image that has one"
fi
recent_enough "$PYTHON" || fail "$PYTHON is not Python 3.11 or newer (the harness needs 3.11+)"
VERSION="$("$PYTHON" -c 'import platform; print(platform.python_version())')"
if ! "$PYTHON" -m venv "$VENV" >>"$LOG" 2>&1; then
  # Debian's and Ubuntu's Pythons make venvs only with their -venv package.
  [ -n "$APT" ] && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "python${{VERSION%.*}}-venv" >>"$LOG" 2>&1 || true
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV" >>"$LOG" 2>&1 || fail "$PYTHON ($VERSION) cannot make a venv: install python${{VERSION%.*}}-venv ($LOG)"
fi
if [ -n "$OFFLINE" ]; then
  # The new venv sees $PYTHON's own packages (a venv's or a conda env's, not its base interpreter's,
  # which is what --system-site-packages would give).
  "$PYTHON" -c 'import site; print(*site.getsitepackages(), sep=chr(10))' \\
    > "$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/autograder-offline.pth"
  WANTED=(--no-deps --no-index --ignore-installed "$HERE"/wheels/*.whl)
else
  WANTED=(-r "$HERE/requirements.txt" "$HERE"/wheels/*.whl)
fi
if [ -n "${{PIP_CACHE_DIR:-}}" ]; then CACHING=(); else CACHING=(--no-cache-dir); fi
if ! "$VENV/bin/python" -m pip install -q --disable-pip-version-check "${{CACHING[@]}}" "${{WANTED[@]}}" >>"$LOG" 2>&1; then
  cause="$(grep -E '^ERROR' "$LOG" | tail -n 1 || true)"
  fail "pip could not install the harness on Python $VERSION ($PYTHON): ${{cause:-see $LOG}} (pip's output: $LOG)"
fi
mkdir -p "$BIN"
# The command every submission runs: the harness, with the reference cache the image was warmed into,
# and two malloc arenas (not one per thread of XLA's devices: freed memory is reused, not held).
printf '#!/bin/sh\nexport AUTOGRADER_CACHE_DIR="${{AUTOGRADER_CACHE_DIR:-%s}}"\nexport MALLOC_ARENA_MAX="${{MALLOC_ARENA_MAX:-2}}"\nexec %s "$@"\n' \
  "$CACHE" "$VENV/bin/autograder" > "$BIN/autograder.partial"
chmod 755 "$BIN/autograder.partial"
mv -f "$BIN/autograder.partial" "$BIN/autograder"
echo "setup.sh: the harness is installed in $VENV on Python $VERSION ($PYTHON)"
LAB="$("$VENV/bin/python" -c 'import json, sys; print(json.load(open(sys.argv[1]))["lab"])' "$HERE/config.json")"
if AUTOGRADER_CACHE_DIR="$CACHE" AUTOGRADER_ROOT="$HERE/lab" AUTOGRADER_COURSE="$HERE/lab" "$BIN/autograder" warm "$LAB" >>"$LOG" 2>&1; then
  # Compiled programs are not kept: the machines that grade may have other CPUs than the one that built.
  rm -rf "$CACHE/xla"
  echo "setup.sh: the reference cache in $CACHE is warm for $LAB"
  rm -f "$LOG"
else
  echo "setup.sh: warming the reference cache failed, so each submission computes the references ($LOG)" >&2
fi
"""

RUN_AUTOGRADER = """\
#!/usr/bin/env bash
# Grades the submission in $ROOT/submission and writes $ROOT/results/results.json.
ROOT="${AUTOGRADER_GRADESCOPE_ROOT:-/autograder}"
cd "$ROOT" || exit 1
if command -v autograder >/dev/null 2>&1; then
  # Two malloc arenas, and blocks of 64 KiB and more mapped on their own: the arrays the grader frees
  # (its timed gradients, its references) go back to the container (lab 1's grader: 337 MB, not 549 MB).
  MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=65536 autograder gradescope-run --root "$ROOT"
  code=$?
else
  echo "run_autograder: the autograder command is not on PATH: setup.sh did not finish" >&2
  code=127
fi
if [ ! -s "$ROOT/results/results.json" ]; then
  mkdir -p "$ROOT/results"
  why="The autograder itself failed (exit code $code)"
  if [ "$code" = 137 ]; then  # SIGKILL: in a container, its out-of-memory killer
    why="The autograder was killed (exit code 137), most likely because the container ran out of memory"
    echo "run_autograder: killed, most likely for memory: raise the memory limit in this assignment's Autograder Settings" >&2
  fi
  printf '{"score": 0, "output": "%s", "stdout_visibility": "hidden", "tests": []}\\n' \\
    "$why, so this submission could not be graded: please tell your instructor." \\
    > "$ROOT/results/results.json"
elif [ "$code" = 137 ]; then  # killed after some checks: results.json keeps their points and says so
  echo "run_autograder: killed, most likely for memory, after some checks (their points are kept): raise the memory limit in this assignment's Autograder Settings" >&2
fi
exit 0
"""


GRADE_DEPENDENCIES = ("jax", "jaxlib", "numpy", "flax")  # their versions change the references and checks


def pinned_requirements() -> str:
    """requirements.txt: only what changes grades pinned to this machine's versions (another pin may not
    exist for the image's Python)."""
    lines = []
    for name in GRADE_DEPENDENCIES:
        try:
            lines.append(f"{name}=={metadata.version(name)}\n")
        except metadata.PackageNotFoundError:
            raise GradescopeError(
                f"{name} (needed by the harness) is not installed here; install the "
                "harness's dependencies before building the zip"
            ) from None
    return "".join(lines)


def _write_zip(out: Path, files: dict[str, tuple[bytes, int]]) -> None:
    """A zip whose bytes depend only on ``files``: sorted names, fixed times, fixed modes."""
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    with zipfile.ZipFile(partial, "w") as archive:
        for name in sorted(files):
            data, mode = files[name]
            info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
            info.create_system = 3  # unix, so that the modes below are kept
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data, compresslevel=9)
    partial.replace(out)


COURSE_MARKER = """\
# The lab's course, as the zip carries it: the student notebook every submission is aligned with and, for
# a course's own lab, its graders (for a bundled lab, the harness's wheel carries them).
[course]
labs = "labs"
"""


def course_files(lab) -> dict[str, tuple[bytes, int]]:
    """The zip's ``lab/``: a course marker, the student notebook and a course's own lab (the wheel has the rest)."""
    files = {
        f"{LAB_DIR}/{COURSE_FILE}": (COURSE_MARKER.encode(), 0o644),
        f"{LAB_DIR}/assignments/{lab.id}/{lab.id}.ipynb": (lab.assignment_path.read_bytes(), 0o644),
    }
    if not lab.is_bundled:
        for path in sorted(lab.package_dir.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                name = f"{LAB_DIR}/labs/{lab.id}/{path.relative_to(lab.package_dir).as_posix()}"
                files[name] = (path.read_bytes(), 0o644)
    return files


def build_autograder_zip(lab_id: str, out: Path, config: GradescopeConfig | None = None) -> Path:
    """Write Gradescope's autograder zip for ``lab_id`` to ``out``."""
    from autograder.lab import load_lab

    config = config or GradescopeConfig(lab_id)
    lab = load_lab(lab_id)
    if not lab.assignment_path.is_file():
        raise GradescopeError(f"{lab.assignment_path} is missing: run `autograder assign` first")
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "source"
        try:
            stage_package(source, installed_project(), {"autograder": "autograder.cli:program"}, GRADER_PACKAGE_DATA)
            wheel = build_wheel_of(source, Path(tmp) / "dist")
        except WheelBuildError as failure:
            raise GradescopeError(f"building the harness's wheel failed: {failure}") from failure
        files = {
            **course_files(lab),
            "setup.sh": (SETUP_SH.format(python=python).encode(), 0o755),
            "run_autograder": (RUN_AUTOGRADER.encode(), 0o755),
            CONFIG_FILE: ((json.dumps(config.to_json(), indent=2, sort_keys=True) + "\n").encode(), 0o644),
            "requirements.txt": (pinned_requirements().encode(), 0o644),
            f"wheels/{wheel.name}": (wheel.read_bytes(), 0o644),
        }
        _write_zip(out, files)
    return out


# What would point the zip's Python at this checkout or at this machine's caches instead of its own.
NOT_PASSED_ON = ("PYTHONPATH", "AUTOGRADER_ROOT", "AUTOGRADER_COURSE", "VIRTUAL_ENV", "AUTOGRADER_CACHE_DIR")


def _environment(**settings: str) -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if k not in NOT_PASSED_ON}, **settings}


def _unpack(archive_path: Path, source: Path) -> None:
    """The zip's files in ``source``, with the modes the zip gives them (zipfile does not restore them)."""
    with zipfile.ZipFile(archive_path) as archive:
        archive.extractall(source)
        for info in archive.infolist():
            os.chmod(source / info.filename, info.external_attr >> 16 & 0o777)


def try_zip(archive_path: Path, submission: Path) -> str:
    """Grade ``submission`` (a notebook, or a folder as uploaded) with the zip as Gradescope would; what the try
    shows: the score, each test's points, the output a student reads. ``GradescopeError`` when setup.sh fails."""
    scratch = Path(tempfile.mkdtemp(prefix="autograder-gradescope-try-"))
    os.chmod(scratch, 0o755)  # searchable by the kernels' uids, as /autograder is (the venv's Python is here)
    keep = bool(os.environ.get("AUTOGRADER_KEEP_RUNS"))  # as a kernel's run is kept (run/kernels/lifecycle.py)
    try:
        root = scratch / "autograder"
        source = root / "source"
        _unpack(archive_path, source)
        for folder in ("submission", "results", "home"):
            (root / folder).mkdir(parents=True)
        os.chmod(root, 0o755)
        if submission.is_dir():
            shutil.copytree(submission, root / "submission", dirs_exist_ok=True)
        else:
            shutil.copy(submission, root / "submission" / submission.name)
        setup = _environment(
            AUTOGRADER_GRADESCOPE_OFFLINE="1",
            AUTOGRADER_GRADESCOPE_NO_APT="1",
            AUTOGRADER_GRADESCOPE_PYTHON=sys.executable,
            AUTOGRADER_GRADESCOPE_VENV=str(scratch / "venv"),
            AUTOGRADER_GRADESCOPE_BIN=str(scratch / "bin"),
            AUTOGRADER_GRADESCOPE_CACHE=str(scratch / "cache"),
            TMPDIR=str(scratch),
        )
        done = subprocess.run(["bash", str(source / "setup.sh")], env=setup, capture_output=True, text=True)
        if done.returncode != 0:
            raise GradescopeError(f"the zip's setup.sh failed: {(done.stdout + done.stderr).strip()[-2000:]}")
        grading = _environment(
            PATH=f"{scratch / 'bin'}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}",
            AUTOGRADER_GRADESCOPE_ROOT=str(root),
            HOME=str(root / "home"),
        )
        subprocess.run([str(source / "run_autograder")], env=grading, cwd=root, capture_output=True)
        results = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
    finally:
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)
    extra = results.get("extra_data", {})
    lines = [f"score: {results.get('score', 0):g} / {extra.get('max_score', 0):g} (sandbox: {extra.get('sandbox')})"]
    for test in results.get("tests", []):
        lines.append(
            f"  {test.get('name', '?')}: {test.get('score', 0):g} / {test.get('max_score', 0):g}"
            f" ({test.get('visibility', 'visible')})"
        )
    lines.append(results.get("output", ""))
    if keep:
        lines.append(f"kept {scratch} (results.json in autograder/results/)")
    return "\n".join(lines)
