"""Gradescope's zip tried here before uploading it (``autograder gradescope LAB --try SUBMISSION``): its
``setup.sh`` and ``run_autograder`` run in a scratch folder laid out as Gradescope's container, apt left
alone and this Python's packages reused, so nothing is downloaded; ``AUTOGRADER_KEEP_RUNS=1`` keeps it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from autograder.course.gradescope_config import GradescopeError

KEEP_VARIABLE = "AUTOGRADER_KEEP_RUNS"
# What would point the zip's Python at this checkout or at this machine's caches instead of its own.
NOT_PASSED_ON = ("PYTHONPATH", "AUTOGRADER_ROOT", "AUTOGRADER_COURSE", "VIRTUAL_ENV", "AUTOGRADER_CACHE_DIR")


@dataclass(frozen=True)
class TriedZip:
    """results.json as Gradescope would read it, run_autograder's output, and the scratch folder if kept."""

    results: dict
    output: str
    kept: Path | None


def _environment(**settings: str) -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if k not in NOT_PASSED_ON}, **settings}


def _unpack(archive_path: Path, source: Path) -> None:
    """The zip's files in ``source``, with the modes the zip gives them (zipfile does not restore them)."""
    with zipfile.ZipFile(archive_path) as archive:
        archive.extractall(source)
        for info in archive.infolist():
            os.chmod(source / info.filename, info.external_attr >> 16 & 0o777)


def try_zip(archive_path: Path, submission: Path) -> TriedZip:
    """Grade ``submission`` (a notebook, or a folder as uploaded) with the zip as Gradescope would; raises
    ``GradescopeError`` when setup.sh fails."""
    scratch = Path(tempfile.mkdtemp(prefix="autograder-gradescope-try-"))
    os.chmod(scratch, 0o755)  # searchable by the kernels' uids, as /autograder is (the venv's Python is here)
    keep = bool(os.environ.get(KEEP_VARIABLE))  # as a kernel's run is kept (run/kernels/lifecycle.py)
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
        run = subprocess.run([str(source / "run_autograder")], env=grading, cwd=root, capture_output=True, text=True)
        results = json.loads((root / "results" / "results.json").read_text(encoding="utf-8"))
        return TriedZip(results, done.stdout + run.stdout + run.stderr, scratch if keep else None)
    finally:
        if not keep:
            shutil.rmtree(scratch, ignore_errors=True)


def tried_summary(tried: TriedZip) -> str:
    """What the try shows: the score, each test's points, and the output a student reads."""
    results = tried.results
    extra = results.get("extra_data", {})
    lines = [f"score: {results.get('score', 0):g} / {extra.get('max_score', 0):g} (sandbox: {extra.get('sandbox')})"]
    for test in results.get("tests", []):
        lines.append(
            f"  {test.get('name', '?')}: {test.get('score', 0):g} / {test.get('max_score', 0):g}"
            f" ({test.get('visibility', 'visible')})"
        )
    lines.append(results.get("output", ""))
    if tried.kept is not None:
        lines.append(f"kept {tried.kept} (results.json in autograder/results/)")
    return "\n".join(lines)
