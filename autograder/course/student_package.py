"""The students' package: ``ag.check`` and the public checks of each lab, with no solution and no hidden
check, built from the same checkout as the grader's wheel.

The grader's wheel carries every lab's ``reference.py`` (for several tasks, the answer) and its graders
(every ``@hidden`` check, with its inputs and tolerances). A course hands students this package instead,
staged from the checkout and built as the distribution ``jax-labs-autograder-student``: the same ``autograder``
import name, so ``import autograder.self_check as ag`` works unchanged, and another distribution name, so
that ``pip show`` says which of the two a venv holds. Staged, for each lab:

- ``test_<lab>.py`` reduced, by its syntax tree, to its public checks: every ``@hidden`` check is left
  out, with the helpers only they used, and so is a public check that needs a reference the students
  do not get (one whose results depend on its arguments, or a timing); the module's docstring and every
  comment go too;
- ``reference.py`` reduced to its constants, its ``@shareable`` functions, and, for every other
  reference a public check calls without arguments, the result it returned when the package was built
  (``reference_results.npz``, read without pickle);
- the harness's folders the self-check runs on; not ``course``, ``authoring`` or the CLI, nor a
  lab's files for its authors (``AUTHORS_ONLY``: its equivalent mutants, its requirement table).
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
from autograder.course.harness_source import (
    HarnessSourceError,
    installed_project,
    pyproject_text,
    requirement_name,
    stage_package,
)
from autograder.course.wheel_build import WheelBuildError, build_wheel_of

LEFT_OUT = ("course", "authoring", "mutation", "cli", "__main__.py")  # a course's and an author's tools
# A lab's files for its authors, which name its hidden checks: the mutants it records as equivalent
# (mutation/equivalents.py) and its requirement table (authoring/requirement_table.py).
AUTHORS_ONLY = ("equivalent_mutants.py", "requirements.toml")
REFERENCE_ALIAS = "ref"
# The grader's dependencies that only its left-out folders use (authoring, the course's batches and zips).
GRADER_ONLY_DEPENDENCIES = ("otter-grader", "dask", "build", "wheel", "scipy", "libcst", "jinja2")


class StudentPackageError(RuntimeError):
    """The students' package cannot be built as asked."""


def _is_hidden(node: ast.FunctionDef) -> bool:
    return any(ast.unparse(d) in ("hidden", "pytest.mark.hidden") for d in node.decorator_list)


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _reference_uses(node: ast.AST) -> set[str]:
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
    """``body`` without the assignments and classes that nothing else in it, nor ``used``, reads: a
    hidden check's tolerance or the grader's own input size goes with the check."""
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


def public_graders(source: str, available: set[str], docstring: str) -> tuple[str, set[str]]:
    """``source`` (a lab's graders) with only its public checks whose references are ``available``, and
    the reference names those use. Helpers no kept check uses are left out."""
    tree = ast.parse(source)
    body = [
        n
        for n in tree.body
        if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str))
    ]
    functions = {n.name: n for n in body if isinstance(n, ast.FunctionDef)}
    dropped = {name for name, n in functions.items() if _is_hidden(n) or _reference_uses(n) - available}
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
    kept = _without_unused_bindings(
        [n for n in body if not (isinstance(n, ast.FunctionDef) and n.name in dropped)], set()
    )
    module = ast.Module([ast.Expr(ast.Constant(docstring)), *kept], type_ignores=[])
    return ast.unparse(module) + "\n", set().union(*(_reference_uses(n) for n in kept))


def reference_parts(module) -> tuple[set[str], set[str]]:
    """(shareable functions, functions whose results may be stored: deterministic, without arguments)
    of a lab's imported ``reference`` module."""
    from autograder.caches import CachedReference, is_shareable

    shared, stored = set(), set()
    for name, value in vars(module).items():
        if getattr(value, "__module__", None) != module.__name__ or not callable(value) or isinstance(value, type):
            continue
        if is_shareable(value):
            shared.add(name)
        elif isinstance(value, CachedReference) and not _parameters(value.function):
            stored.add(name)
    return shared, stored


def _parameters(function) -> list:
    import inspect

    return list(inspect.signature(function).parameters)


def students_reference(
    source: str, shared: set[str], stored: set[str], docstring: str, used: set[str] | None = None
) -> str:
    """``reference.py`` as the students get it: imports, constants and classes that use no withheld
    function, the ``shared`` functions, and ``stored`` ones as their stored results; with ``used`` (the
    names the public checks and the captures read), only the constants and classes those need."""
    tree = ast.parse(source)
    body = [
        n
        for n in tree.body
        if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str))
    ]
    functions = {n.name for n in body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    withheld = functions - shared
    out: list[ast.stmt] = []
    for node in body:
        if (
            stored
            and not (isinstance(node, ast.ImportFrom) and node.module == "__future__")
            and not any(
                isinstance(n, ast.ImportFrom) and n.module == "autograder.caches" and n.names[0].name == "StoredResult"
                for n in out
            )
        ):
            out.append(ast.parse("from autograder.caches import StoredResult").body[0])
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
    if used is not None:
        out = _without_unused_bindings(out, used)
    return ast.unparse(ast.Module([ast.Expr(ast.Constant(docstring)), *out], type_ignores=[])) + "\n"


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
        captures_uses = _reference_uses(ast.parse(captures.read_text()))
        constants = _constant_names((lab_dir / "reference.py").read_text())
        graders, uses = public_graders(
            (lab_dir / f"test_{lab_id}.py").read_text(),
            shared | stored | constants,
            f"The public checks of {lab_id}, as the students' package carries them.",
        )
        needed = stored & (uses | captures_uses)
        (package / "labs" / lab_id / f"test_{lab_id}.py").write_text(graders)
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


def _constant_names(source: str) -> set[str]:
    """Names a module binds other than by ``def``: its constants and classes."""
    return set().union(
        *(
            _defined(n)
            for n in ast.parse(source).body
            if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Import, ast.ImportFrom))
        )
    )


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
        except (WheelBuildError, HarnessSourceError) as failure:
            raise StudentPackageError(f"building the students' wheel failed: {failure}") from failure
        target = out / wheel.name
        shutil.copy2(wheel, target)
    return target
