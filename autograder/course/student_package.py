"""Wheels of the harness, staged as it runs here, checkout or installed alike (an instructor who only
installed it builds them too), without isolation (this interpreter has setuptools) and with fixed timestamps,
so that the same source gives the same wheel: the whole harness for Gradescope's zip, and the students' package.

The students' package: ``ag.check`` and each lab's public checks, with no solution and no hidden check
(the grader's wheel carries both). The same ``autograder`` import name, so ``import autograder.self_check as
ag`` works unchanged, under another distribution name, so that ``pip show`` says which a venv holds;
docs/trust-boundary.md says what is kept.

A lab's graders and reference are reduced by their syntax trees: ``test_<lab>.py`` keeps its public checks
whose references the students get, and the helpers only those use; ``reference.py`` keeps its constants,
its ``@shareable`` functions, and, for the other references a public check calls without arguments, their
stored results. What is withheld never reaches the text.
"""

from __future__ import annotations

import ast
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from autograder.authoring import STUDENT_DISTRIBUTION
from autograder.grading import DISTRIBUTION
from autograder.paths import BUNDLED_COPY, PACKAGE_DIR

SOURCE_DATE_EPOCH = "315532800"  # 1980-01-01: the wheel's timestamps, for identical builds


class WheelBuildError(RuntimeError):
    """The build failed or made other than one wheel, or the harness is not installed as a distribution."""


def build_wheel_of(source: Path, out: Path) -> Path:
    """The one wheel ``python -m build`` makes of ``source``, written into ``out``."""
    build = [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--skip-dependency-check", "--outdir"]
    environment = {**os.environ, "SOURCE_DATE_EPOCH": SOURCE_DATE_EPOCH}
    done = subprocess.run([*build, str(out), str(source)], capture_output=True, text=True, env=environment)
    wheels = sorted(out.glob("*.whl")) if out.is_dir() else []
    if done.returncode != 0 or len(wheels) != 1:
        raise WheelBuildError(done.stderr.strip()[-2000:])
    return wheels[0]


def installed_project() -> dict:
    """The installed harness's name, version, Python range and dependencies (extras left out)."""
    try:
        found = metadata.metadata(DISTRIBUTION)
        requires = metadata.requires(DISTRIBUTION) or []
    except metadata.PackageNotFoundError as exc:
        raise WheelBuildError(
            f"the harness is not installed as {DISTRIBUTION} (pip install it, or `pip install -e .` in a checkout)"
        ) from exc
    return {
        "name": found["Name"],
        "version": found["Version"],
        "requires-python": found.json.get("requires_python") or ">=3.11",
        "dependencies": [r for r in requires if not re.search(r";.*\bextra\s*==", r)],
    }


def stage_package(
    source: Path, project: dict, scripts: dict[str, str], package_data: dict[str, list[str]], left_out: tuple = ()
) -> Path:
    """``source/autograder``: this package without caches, ``left_out`` or the bundled course's notebooks; and
    ``source/pyproject.toml`` building it as ``project`` (as ``installed_project`` gives it)."""
    package = source / "autograder"
    shutil.copytree(PACKAGE_DIR, package, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in (*left_out, BUNDLED_COPY):
        path = package / name
        shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    dependencies = "".join(f"    {json.dumps(d)},\n" for d in project["dependencies"])
    lines = [
        "[build-system]",
        'requires = ["setuptools>=68"]',
        'build-backend = "setuptools.build_meta"',
        "",
        "[project]",
        f"name = {json.dumps(project['name'])}",
        f"version = {json.dumps(project['version'])}",
        f"description = {json.dumps(project.get('description', 'Grading harness for JAX parallelism labs.'))}",
        f"requires-python = {json.dumps(project['requires-python'])}",
        f"dependencies = [\n{dependencies}]",
        "",
    ]
    if scripts:
        lines += ["[project.scripts]", *(f"{name} = {json.dumps(target)}" for name, target in scripts.items()), ""]
    lines += ["[tool.setuptools.packages.find]", 'include = ["autograder*"]', "", "[tool.setuptools.package-data]"]
    lines += [f"{json.dumps(name)} = {json.dumps(globs)}" for name, globs in package_data.items()]
    (source / "pyproject.toml").write_text("\n".join([*lines, ""]))
    return package


REFERENCE_ALIAS = "ref"


class StudentPackageError(RuntimeError):
    """The students' package cannot be built as asked."""


def _is_hidden(node: ast.FunctionDef) -> bool:
    return any(ast.unparse(d) in ("hidden", "pytest.mark.hidden") for d in node.decorator_list)


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def reference_uses(node: ast.AST) -> set[str]:
    """The reference's names ``node`` reads: as ``ref.NAME``, or imported from a ``reference`` module."""
    return {
        n.attr
        for n in ast.walk(node)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id == REFERENCE_ALIAS
    } | {
        alias.name
        for n in ast.walk(node)
        if isinstance(n, ast.ImportFrom) and (n.module or "").endswith(".reference")
        for alias in n.names
    }


def _defined(node: ast.stmt) -> set[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {node.name}
    return {
        n.id
        for t in getattr(node, "targets", [getattr(node, "target", None)])
        if t is not None
        for n in ast.walk(t)
        if isinstance(n, ast.Name)
    }


def _without_unused_bindings(body: list[ast.stmt], used: set[str]) -> list[ast.stmt]:
    """``body`` without the assignments and classes nothing in it or ``used`` reads (a hidden check's tolerance)."""
    bindings = (ast.Assign, ast.AnnAssign, ast.ClassDef)
    while True:
        read = set(used)
        for node in body:
            read |= _names(node) - _defined(node) if isinstance(node, bindings) else _names(node)
        kept = [
            _unused_left_out(n, read)
            for n in body
            if not isinstance(n, bindings) or not _defined(n) or _defined(n) & read
        ]
        if [ast.dump(n) for n in kept] == [ast.dump(n) for n in body]:
            return kept
        body = kept


def _unused_left_out(node: ast.stmt, read: set[str]) -> ast.stmt:
    """``a, b, c = x, y, z`` without the pairs whose name is not ``read``; any other statement as it is."""
    if not (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Tuple)
        and isinstance(node.value, ast.Tuple)
        and len(node.targets[0].elts) == len(node.value.elts)
        and all(isinstance(t, ast.Name) for t in node.targets[0].elts)
    ):
        return node
    pairs = [(t, v) for t, v in zip(node.targets[0].elts, node.value.elts) if isinstance(t, ast.Name) and t.id in read]
    if len(pairs) == len(node.value.elts) or not pairs:
        return node
    targets, values = zip(*pairs)
    return ast.Assign([ast.Tuple(list(targets), ast.Store())], ast.Tuple(list(values), ast.Load()), lineno=node.lineno)


def _statements(source: str) -> list[ast.stmt]:
    """The module's top-level statements, less its string expressions (docstrings)."""
    return [
        n
        for n in ast.parse(source).body
        if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str))
    ]


def public_graders(source: str, available: set[str], docstring: str) -> tuple[str, set[str]]:
    """A lab's graders with only the public checks whose references are ``available``; the names they use."""
    body = _statements(source)
    functions = {n.name: n for n in body if isinstance(n, ast.FunctionDef)}
    dropped = {name for name, n in functions.items() if _is_hidden(n) or reference_uses(n) - available}
    while True:  # a check that calls a dropped helper goes; a helper that no kept code calls goes
        kept = [n for n in body if not (isinstance(n, ast.FunctionDef) and n.name in dropped)]
        more = {
            name
            for name, n in functions.items()
            if name not in dropped
            and (
                _names(n) & dropped or (name.startswith("_") and not any(name in _names(k) for k in kept if k is not n))
            )
        }
        if not more:
            break
        dropped |= more
    kept = _without_unused_bindings(kept, set())
    module = ast.Module([ast.Expr(ast.Constant(docstring)), *kept], type_ignores=[])
    return ast.unparse(module) + "\n", set().union(*(reference_uses(n) for n in kept))


def reference_parts(module) -> tuple[set[str], set[str]]:
    """A reference module's (shareable functions, functions without arguments whose results may be stored)."""
    from autograder.caches import CachedReference, is_shareable

    shared, stored = set(), set()
    for name, value in vars(module).items():
        if getattr(value, "__module__", None) != module.__name__ or not callable(value) or isinstance(value, type):
            continue
        if is_shareable(value):
            shared.add(name)
        elif isinstance(value, CachedReference) and not inspect.signature(value.function).parameters:
            stored.add(name)
    return shared, stored


def students_reference(source: str, shared: set[str], stored: set[str], docstring: str, used: set[str]) -> str:
    """``reference.py`` without what uses a withheld function, ``stored`` ones as their stored results, and
    only the constants and classes the names ``used`` need."""
    body = _statements(source)
    functions = {n.name for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    withheld = functions - shared
    out: list[ast.stmt] = []
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if node.name in shared:
                if _names(node) & withheld:
                    raise StudentPackageError(
                        f"the @shareable reference {node.name} uses "
                        f"{', '.join(sorted(_names(node) & withheld))}, which are not shareable"
                    )
                out.append(node)
            elif node.name in stored:
                out.append(ast.parse(f"{node.name} = StoredResult(__file__, {node.name!r})").body[0])
        elif isinstance(node, (ast.Import, ast.ImportFrom)) or not (_names(node) & withheld):
            out.append(node)
        else:
            withheld |= _defined(node)
    if stored:  # after the __future__ imports
        future = sum(isinstance(n, ast.ImportFrom) and n.module == "__future__" for n in out)
        out.insert(future, ast.parse("from autograder.caches import StoredResult").body[0])
    out = _without_unused_bindings(out, used)
    return ast.unparse(ast.Module([ast.Expr(ast.Constant(docstring)), *out], type_ignores=[])) + "\n"


def constant_names(source: str) -> set[str]:
    """Names a module binds other than by ``def``: its constants and classes."""
    return set().union(
        *(
            _defined(n)
            for n in ast.parse(source).body
            if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Import, ast.ImportFrom))
        )
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

    project = installed_project()  # the grader's, renamed, without its command and the grader's own dependencies
    kept = [
        d for d in project["dependencies"] if canonicalize_name(Requirement(d).name) not in GRADER_ONLY_DEPENDENCIES
    ]
    description = "The students' side of the lab harness: ag.check and each lab's public checks."
    students = {**project, "name": STUDENT_DISTRIBUTION, "dependencies": kept, "description": description}
    source = staging / "source"
    package = stage_package(source, students, {}, {"*": ["reference_results.npz"]}, LEFT_OUT)
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
    return source


def _with_course(environment: dict[str, str]) -> dict[str, str]:
    """``environment`` naming the course in view, whose labs a process started elsewhere must find too."""
    from autograder.lab import course_in_view
    from autograder.paths import COURSE_ENVIRONMENT

    course = course_in_view()
    return {**environment, COURSE_ENVIRONMENT: str(course.root)} if course else environment


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
