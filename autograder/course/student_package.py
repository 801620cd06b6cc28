"""The students' package: ``ag.check`` and the public checks of each lab, with no solution and no hidden
check, built from the same checkout as the grader's wheel.

The grader's wheel carries every lab's ``reference.py`` (for several tasks, the answer) and its hidden
checks; a course hands students this package instead, the distribution ``jax-labs-autograder-student``:
the same ``autograder`` import name, so ``import autograder.self_check as ag`` works unchanged, and
another distribution name, so that ``pip show`` says which a venv holds. Each lab's graders
(``test_<lab>.py`` and each ``test_<lab>_<part>.py``) and reference are reduced by student_lab_sources.py
(docs/trust-boundary.md says what is kept); the harness's folders that only the course, authoring and the
CLI use, and a lab's files for its authors, are left out.
"""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from autograder.authoring import STUDENT_DISTRIBUTION
from autograder.course.student_lab_sources import (
    StudentPackageError,
    constant_names,
    public_graders,
    reference_parts,
    reference_uses,
    students_reference,
)
from autograder.course.wheel_build import (
    WheelBuildError,
    build_wheel_of,
    installed_project,
    pyproject_text,
    requirement_name,
    stage_package,
)

LEFT_OUT = ("course", "authoring", "mutation", "cli", "__main__.py")  # a course's and an author's tools
# A lab's files for its authors, which name its hidden checks: the mutants it records as equivalent
# (mutation/report.py) and its requirement table (authoring/requirement_table.py).
AUTHORS_ONLY = ("equivalent_mutants.py", "requirements.toml")
# The grader's dependencies that only its left-out folders use (authoring, the course's batches and zips).
GRADER_ONLY_DEPENDENCIES = ("otter-grader", "dask", "build", "wheel", "scipy", "libcst", "jinja2")


def _compute_results(requests: dict[str, list[str]], out: Path) -> None:
    """Run in a process with the grader's devices: each lab's stored references, written beside it."""
    from autograder.caches import write_results
    from autograder.lab import load_lab

    for lab_id, names in requests.items():
        reference = load_lab(lab_id).reference
        write_results(out / lab_id, {name: getattr(reference, name)() for name in names})


def stage(lab_ids: list[str], staging: Path) -> Path:
    """The students' package's source tree for ``lab_ids``, in ``staging``: the harness as it runs here
    (a checkout or an installed wheel), with each lab's folder, bundled or the course's own."""
    from autograder.lab import load_lab
    from autograder.run import kernel_environment

    source = staging / "source"
    package = stage_package(source, LEFT_OUT)
    for lab_dir in (package / "labs").iterdir():
        if lab_dir.is_dir() and lab_dir.name not in lab_ids:
            shutil.rmtree(lab_dir)
    labs = {lab_id: load_lab(lab_id) for lab_id in lab_ids}
    for lab in labs.values():  # a course's lab joins the bundled ones in the package's labs folder
        if not (package / "labs" / lab.id).is_dir():
            shutil.copytree(lab.package_dir, package / "labs" / lab.id, ignore=shutil.ignore_patterns("__pycache__"))
        for name in AUTHORS_ONLY:
            (package / "labs" / lab.id / name).unlink(missing_ok=True)
    requests = {}
    for lab_id in lab_ids:
        reference = load_lab(lab_id).reference
        shared, stored = reference_parts(reference)
        lab_dir = labs[lab_id].package_dir
        captures = lab_dir / ("__init__.py" if labs[lab_id].captures_in_init else "captures.py")
        captures_uses = reference_uses(ast.parse(captures.read_text()))
        constants = constant_names((lab_dir / "reference.py").read_text())
        uses = set()
        for path in labs[lab_id].grader_paths:  # each file of the graders, reduced to its public checks
            graders, file_uses = public_graders(
                path.read_text(),
                shared | stored | constants,
                f"The public checks of {lab_id}, as the students' package carries them.",
            )
            (package / "labs" / lab_id / path.name).write_text(graders)
            uses |= file_uses
        needed = stored & (uses | captures_uses)
        (package / "labs" / lab_id / "reference.py").write_text(
            students_reference(
                (lab_dir / "reference.py").read_text(),
                shared,
                needed,
                f"What {lab_id}'s public checks need of its reference: shareable code and stored results.",
                uses | captures_uses,
            )
        )
        requests[lab_id] = sorted(needed)
    code = (
        "import json, sys; from pathlib import Path; "
        "from autograder.course.student_package import _compute_results; "
        "_compute_results(json.loads(sys.argv[1]), Path(sys.argv[2]))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, json.dumps(requests), str(package / "labs")],
        capture_output=True,
        text=True,
        env=_with_course(kernel_environment()),
        cwd=staging,
    )
    if done.returncode != 0:
        raise StudentPackageError(f"computing the references' results failed: {done.stderr.strip()[-2000:]}")
    _write_pyproject(source / "pyproject.toml")
    return source


def _with_course(environment: dict[str, str]) -> dict[str, str]:
    """``environment`` naming the course in view, whose labs a process started elsewhere must find too."""
    from autograder.lab import course_in_view
    from autograder.paths import COURSE_ENVIRONMENT

    course = course_in_view()
    return {**environment, COURSE_ENVIRONMENT: str(course.root)} if course else environment


def _write_pyproject(out: Path) -> None:
    """The grader's project, renamed, without its command and the dependencies only the grader uses,
    carrying the stored results."""
    project = installed_project()
    kept = [d for d in project["dependencies"] if requirement_name(d) not in GRADER_ONLY_DEPENDENCIES]
    description = "The students' side of the lab harness: ag.check and each lab's public checks."
    students = {**project, "name": STUDENT_DISTRIBUTION, "dependencies": kept, "description": description}
    out.write_text(pyproject_text(students, {}, {"*": ["reference_results.npz"]}))


def build_student_wheel(lab_ids: list[str] | None, out: Path) -> Path:
    """The students' wheel for ``lab_ids`` (every lab when None), written into ``out``."""
    from autograder.lab import lab_ids as all_labs

    labs = list(lab_ids or all_labs())
    unknown = sorted(set(labs) - set(all_labs()))
    if unknown:
        raise StudentPackageError(f"unknown lab {', '.join(unknown)}; labs: {', '.join(all_labs())}")
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        try:
            wheel = build_wheel_of(stage(labs, Path(tmp)), Path(tmp) / "dist")
        except WheelBuildError as failure:
            raise StudentPackageError(f"building the students' wheel failed: {failure}") from failure
        target = out / wheel.name
        shutil.copy2(wheel, target)
    return target
