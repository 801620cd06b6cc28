"""The students' package: ``ag.check`` and each lab's public checks, with no solution and no hidden check
(the grader's wheel carries both). The same ``autograder`` import name, so ``import autograder.self_check as
ag`` works unchanged, under another distribution name, so that ``pip show`` says which a venv holds;
docs/trust-boundary.md says what is kept.
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
    """Each lab's stored references, written beside it: run in a process with the grader's devices."""
    from autograder.caches import write_results
    from autograder.lab import load_lab

    for lab_id, names in requests.items():
        reference = load_lab(lab_id).reference
        write_results(out / lab_id, {name: getattr(reference, name)() for name in names})


def stage(lab_ids: list[str], staging: Path) -> Path:
    """The students' package's source tree for ``lab_ids``, in ``staging``."""
    from autograder.lab import load_lab
    from autograder.run import kernel_environment

    source = staging / "source"
    package = stage_package(source, LEFT_OUT)
    for lab_dir in (package / "labs").iterdir():
        if lab_dir.is_dir() and lab_dir.name not in lab_ids:
            shutil.rmtree(lab_dir)
    requests = {}
    for lab in map(load_lab, lab_ids):
        target = package / "labs" / lab.id
        if not target.is_dir():  # a course's lab joins the bundled ones in the package's labs folder
            shutil.copytree(lab.package_dir, target, ignore=shutil.ignore_patterns("__pycache__"))
        for name in AUTHORS_ONLY:
            (target / name).unlink(missing_ok=True)
        shared, stored = reference_parts(lab.reference)
        captures = lab.package_dir / ("__init__.py" if lab.captures_in_init else "captures.py")
        captures_uses = reference_uses(ast.parse(captures.read_text()))
        reference = (lab.package_dir / "reference.py").read_text()
        available = shared | stored | constant_names(reference)
        uses = set()
        for path in lab.grader_paths:  # each file of the graders, reduced to its public checks
            docstring = f"The public checks of {lab.id}, as the students' package carries them."
            graders, file_uses = public_graders(path.read_text(), available, docstring)
            (target / path.name).write_text(graders)
            uses |= file_uses
        needed = stored & (uses | captures_uses)
        docstring = f"What {lab.id}'s public checks need of its reference: shareable code and stored results."
        (target / "reference.py").write_text(
            students_reference(reference, shared, needed, docstring, uses | captures_uses)
        )
        requests[lab.id] = sorted(needed)
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
    """The grader's project, renamed, without its command and the grader's own dependencies."""
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
