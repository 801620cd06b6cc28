"""Building a wheel of a staged source folder: the grader's wheel (carried in the Gradescope zip) and the
students' wheel are built the same way, ``python -m build`` without isolation (the harness's own
interpreter has setuptools), with fixed timestamps so that the same source gives the same wheel."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SOURCE_DATE_EPOCH = "315532800"  # 1980-01-01: the wheel's timestamps, for identical builds


class WheelBuildError(RuntimeError):
    """The build failed, or made other than one wheel; the message is the end of its error output."""


def build_wheel_of(source: Path, out: Path) -> Path:
    """The one wheel ``python -m build`` makes of ``source``, written into ``out``."""
    command = [
        sys.executable,
        "-m",
        "build",
        "--wheel",
        "--no-isolation",
        "--skip-dependency-check",
        "--outdir",
        str(out),
        str(source),
    ]
    done = subprocess.run(
        command, capture_output=True, text=True, env={**os.environ, "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH}
    )
    wheels = sorted(out.glob("*.whl")) if out.is_dir() else []
    if done.returncode != 0 or len(wheels) != 1:
        raise WheelBuildError(done.stderr.strip()[-2000:])
    return wheels[0]
