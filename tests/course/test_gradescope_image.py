"""The zip's setup.sh builds Gradescope's image on the distribution's own Python (not the one that built
the zip): only what changes grades is pinned; pip resolves the rest for that interpreter. A setup that
cannot work fails with one line naming its cause."""

import json
import subprocess

import pytest
from system_python_image import SHARES_THE_BUILD, SYSTEM_PYTHON, remove_build, run_setup, start_build

from autograder.course.gradescope_zip import GRADE_DEPENDENCIES

pytestmark = SHARES_THE_BUILD


@pytest.fixture(scope="module")
def image_build():
    """The session's build of the image on the system Python (system_python_image.py): the unpacked zip's
    source, its scratch folder and setup.sh's run; started here unless an earlier module started it."""
    try:
        yield start_build().result()
    finally:
        remove_build()


@pytest.fixture(scope="module")
def zip_source(image_build):
    source, scratch, _ = image_build
    return source, scratch


def test_only_what_changes_grades_is_pinned(zip_source):
    source, _ = zip_source
    pinned = [line.split("==")[0] for line in (source / "requirements.txt").read_text().splitlines()]
    assert pinned == list(GRADE_DEPENDENCIES)


@pytest.mark.skipif(not SYSTEM_PYTHON.is_file(), reason=f"{SYSTEM_PYTHON} is not installed here")
def test_setup_builds_the_image_on_the_system_python(image_build):
    source, scratch, done = image_build
    assert done.returncode == 0, done.stderr
    python = scratch / "venv" / "bin" / "python"
    report = subprocess.run(
        [
            str(python),
            "-c",
            "import json, platform, sys; from importlib import metadata; "
            "print(json.dumps({'base': sys.base_prefix, 'python': platform.python_version(), "
            f"'versions': {{n: metadata.version(n) for n in {GRADE_DEPENDENCIES!r}}}}}))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    installed = json.loads(report.stdout)
    pins = dict(line.split("==") for line in (source / "requirements.txt").read_text().splitlines())
    assert installed["versions"] == pins
    assert installed["base"] == "/usr" and installed["python"].startswith("3.11")
    assert subprocess.run([str(scratch / "bin" / "autograder"), "--help"], capture_output=True).returncode == 0


def test_a_python_too_old_fails_with_one_line_naming_it(zip_source, tmp_path):
    source, _ = zip_source
    old = tmp_path / "python-old"
    old.write_text("#!/bin/sh\nexit 1\n")  # answers every question about its version with "too old"
    old.chmod(0o755)
    done = run_setup(source, tmp_path, AUTOGRADER_GRADESCOPE_PYTHON=str(old))
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [
        f"setup.sh: {old} is not Python 3.11 or newer (the harness needs 3.11+)"
    ]


@pytest.mark.skipif(not SYSTEM_PYTHON.is_file(), reason=f"{SYSTEM_PYTHON} is not installed here")
def test_a_pin_pip_cannot_meet_fails_with_one_line_naming_it(zip_source, tmp_path):
    source, _ = zip_source
    broken = tmp_path / "source"
    subprocess.run(["cp", "-r", str(source), str(broken)], check=True)
    (broken / "requirements.txt").write_text("numpy==0.0.1\n")
    done = run_setup(broken, tmp_path, AUTOGRADER_GRADESCOPE_PYTHON=str(SYSTEM_PYTHON))
    assert done.returncode != 0
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("setup.sh: pip could not install the harness on Python 3.11"), lines
    assert "numpy==0.0.1" in lines[0]
    assert f"(pip's output: {tmp_path}/autograder-setup." in lines[0]  # kept, in $TMPDIR
