"""The students' wheel (``autograder student-wheel``), unpacked and read: no hidden check, no reference
that is not marked shareable, no line of any solution's answer; what it does carry still checks (the
notebooks run from it in ``test_student_install.py``)."""

from __future__ import annotations

import ast
import importlib
import re
import zipfile
from pathlib import Path

import nbformat
import numpy as np
import pytest

from autograder.authoring.markers import has_solution, strip_solution
from autograder.authoring.requirement_table import TABLE_FILE
from autograder.authoring.setup_cell import WHEEL
from autograder.caches import is_shareable
from autograder.cli import main
from autograder.course import StudentPackageError, build_student_wheel
from autograder.course.student_package import AUTHORS_ONLY, students_reference
from autograder.lab import lab_ids, load_lab
from autograder.mutation.report import EQUIVALENTS_MODULE
from autograder.paths import BUNDLED_LABS as LABS_PACKAGE

SHORTEST_ANSWER = 16  # characters: a shorter answer line (`return out`, `)`) says nothing of the answer
# Answer lines that are any Python's idioms, which the harness's own code writes too: they give nothing away.
IDIOMS = {"devices = jax.devices()", "start = time.perf_counter()"}


@pytest.fixture(scope="module")
def student_wheel(tmp_path_factory) -> Path:
    return build_student_wheel(None, tmp_path_factory.mktemp("student-wheel"))


@pytest.fixture(scope="module")
def unpacked(student_wheel) -> dict[str, str]:
    """Each file of the students' wheel of every lab: its path in the wheel -> its text (or, for a
    binary file, its bytes read as latin-1)."""
    with zipfile.ZipFile(student_wheel) as archive:
        return {
            name: archive.read(name).decode("utf-8" if not name.endswith(".npz") else "latin-1")
            for name in archive.namelist()
        }


def _python(unpacked) -> dict[str, ast.Module]:
    return {name: ast.parse(text) for name, text in unpacked.items() if name.endswith(".py")}


def _normalised(line: str) -> str:
    """A line without its comment, with one space between words and one kind of quote."""
    line = re.sub(r"\s+#.*$|^\s*#.*$", "", line)
    return re.sub(r"\s+", " ", line.replace("'", '"')).strip()


def _grader_files(lab_id: str) -> list[str]:
    """The names of the lab's graders' files: test_<lab>.py and each test_<lab>_<part>.py."""
    return [f"test_{lab_id}.py"] + sorted(p.name for p in (LABS_PACKAGE / lab_id).glob(f"test_{lab_id}_*.py"))


def _hidden_checks(lab_id: str) -> list[ast.FunctionDef]:
    return [
        n
        for file in _grader_files(lab_id)
        for n in ast.parse((LABS_PACKAGE / lab_id / file).read_text()).body
        if isinstance(n, ast.FunctionDef)
        and any(ast.unparse(d) in ("hidden", "pytest.mark.hidden") for d in n.decorator_list)
    ]


def _withheld_references(lab_id: str) -> list[ast.FunctionDef]:
    """The functions of the lab's reference.py not marked @shareable."""
    module = importlib.import_module(f"autograder.labs.{lab_id}.reference")
    tree = ast.parse((LABS_PACKAGE / lab_id / "reference.py").read_text())
    return [n for n in tree.body if isinstance(n, ast.FunctionDef) and not is_shareable(getattr(module, n.name))]


def _answer_lines(lab_id: str) -> set[str]:
    """The normalised lines of the answers in the lab's solution, but for those its student notebook
    already shows elsewhere (``start = time.perf_counter()`` of a given timing cell)."""
    lab = load_lab(lab_id)
    solution = nbformat.read(lab.solution_path, as_version=4)
    shown = {_normalised(line) for cell in lab.template.cells for line in cell.source.splitlines()}
    lines = set()
    for cell in solution.cells:
        if cell.cell_type == "code" and has_solution(cell.source):
            given = {_normalised(line) for line in strip_solution(cell.source).splitlines()}
            lines |= {_normalised(line) for line in cell.source.splitlines()} - given
    return {line for line in lines - shown - IDIOMS if len(line) >= SHORTEST_ANSWER}


def test_the_wheel_is_the_students_distribution_the_setup_cell_installs(student_wheel, unpacked):
    assert student_wheel.name == WHEEL
    assert any(name.startswith("jax_labs_autograder_student-") and name.endswith("/METADATA") for name in unpacked)
    for lab_id in lab_ids():
        for file in _grader_files(lab_id):
            assert f"autograder/labs/{lab_id}/{file}" in unpacked
        assert f"autograder/labs/{lab_id}/captures.py" in unpacked  # what the students' self-checks read
    left_out = ("autograder/course/", "autograder/authoring/", "autograder/mutation/", "autograder/cli")
    assert not any(name.startswith(left_out) for name in unpacked)
    (metadata,) = [text for name, text in unpacked.items() if name.endswith(".dist-info/METADATA")]
    required = re.findall(r"^Requires-Dist: ([A-Za-z0-9_.-]+)", metadata, re.M)
    assert {"jax", "flax", "pytest", "nbformat"} <= set(required) and "otter-grader" not in required, required


@pytest.mark.parametrize("lab_id", lab_ids())
def test_no_hidden_check_nor_its_name(unpacked, lab_id):
    for name, tree in _python(unpacked).items():
        hidden = [
            n.name
            for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef) and any("hidden" in ast.unparse(d) for d in n.decorator_list)
        ]
        assert hidden == [], f"{name} holds the hidden checks {hidden}"
    names = [n.name for n in _hidden_checks(lab_id)]
    assert names, f"{lab_id} has no hidden check: this test would prove nothing"
    # A check's name is its lab's: another lab may name a public check of its own alike.
    others = tuple(f"autograder/labs/{other}/" for other in lab_ids() if other != lab_id)
    for name, text in unpacked.items():
        if not name.startswith(others):
            assert not [n for n in names if n in text], f"{name} names a hidden check of {lab_id}"
    public = []
    for file in _grader_files(lab_id):
        graders = ast.parse(unpacked[f"autograder/labs/{lab_id}/{file}"])
        public += [n.name for n in graders.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test_")]
        bound = {
            n.id
            for node in graders.body
            if isinstance(node, ast.Assign)
            for t in node.targets
            for n in ast.walk(t)
            if isinstance(n, ast.Name)
        }
        read = {
            n.id
            for node in graders.body
            if isinstance(node, ast.FunctionDef)
            for n in ast.walk(node)
            if isinstance(n, ast.Name)
        }
        assert bound <= read, f"constants no public check reads (a hidden check's tolerance?): {sorted(bound - read)}"
        original = ast.parse((LABS_PACKAGE / lab_id / file).read_text())
        assert len([n for n in original.body if isinstance(n, ast.Assign)]) >= len(
            [n for n in graders.body if isinstance(n, ast.Assign)]
        )
    assert public, f"the students' {lab_id} has no public check left"


@pytest.mark.parametrize("lab_id", lab_ids())
def test_no_reference_that_is_not_marked_shareable(unpacked, lab_id):
    withheld = _withheld_references(lab_id)
    assert withheld, f"every reference of {lab_id} is shareable: this test would prove nothing"
    students = ast.parse(unpacked[f"autograder/labs/{lab_id}/reference.py"])
    defined = {n.name for n in ast.walk(students) if isinstance(n, ast.FunctionDef)}
    assert not defined & {n.name for n in withheld}, f"{lab_id}'s withheld references are in the wheel"
    bodies = {
        _normalised(line)
        for function in withheld
        for statement in function.body
        if not (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant))
        for line in ast.unparse(statement).splitlines()
    }
    bodies = {line for line in bodies if len(line) >= SHORTEST_ANSWER}
    for name, text in unpacked.items():
        if name.endswith(".py"):
            found = bodies & {_normalised(line) for line in ast.unparse(ast.parse(text)).splitlines()}
            assert not found, f"{name} holds lines of {lab_id}'s withheld references: {sorted(found)[:3]}"


@pytest.mark.parametrize("lab_id", lab_ids())
def test_no_line_of_a_solution(unpacked, lab_id):
    answers = _answer_lines(lab_id)
    assert answers, f"no answer line found in {lab_id}'s solution: this test would prove nothing"
    for name, text in unpacked.items():
        found = answers & {_normalised(line) for line in text.splitlines()}
        assert not found, f"{name} holds lines of {lab_id}'s solution: {sorted(found)[:3]}"


@pytest.mark.parametrize("lab_id", lab_ids())
def test_stored_results_are_read_without_pickle(unpacked, lab_id, tmp_path):
    path = tmp_path / "results.npz"
    path.write_bytes(unpacked[f"autograder/labs/{lab_id}/reference_results.npz"].encode("latin-1"))
    with np.load(path, allow_pickle=False) as stored:
        assert all(stored[name].dtype != object for name in stored.files)


def test_the_command_writes_one_labs_wheel_and_names_an_unknown_lab(tmp_path, capsys):
    assert main(["student-wheel", "lab9", "--out", str(tmp_path)]) == 2
    assert "unknown lab lab9" in capsys.readouterr().err and not list(tmp_path.iterdir())
    assert main(["student-wheel", "lab4_collectives", "--out", str(tmp_path)]) == 0
    (wheel,) = tmp_path.glob("*.whl")
    assert wheel.name == WHEEL and str(wheel) in capsys.readouterr().out
    with zipfile.ZipFile(wheel) as archive:
        labs = {name.split("/")[2] for name in archive.namelist() if name.startswith("autograder/labs/")}
    assert labs == {"__init__.py", "lab4_collectives"}


def test_gradescope_writes_the_students_wheel_beside_the_zip(tmp_path, capsys):
    assert main(["gradescope", "lab4_collectives", "--out", str(tmp_path / "autograder.zip")]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["autograder.zip", WHEEL])
    assert "give it to the students" in capsys.readouterr().out


SHARED_USES_WITHHELD = """
def answer(x):
    return x + 1

@shareable
def check(x):
    return answer(x)
"""


def test_a_shareable_reference_that_uses_a_withheld_one_is_refused():
    with pytest.raises(StudentPackageError, match="check uses answer"):
        students_reference(SHARED_USES_WITHHELD, {"check"}, set(), "doc", set())


def test_a_labs_files_for_its_authors_stay_out(unpacked):
    """The mutants a lab records as equivalent and its requirement table name its hidden checks."""
    assert set(AUTHORS_ONLY) == {f"{EQUIVALENTS_MODULE}.py", TABLE_FILE}
    shipped = [name for name in unpacked if name.rpartition("/")[2] in AUTHORS_ONLY]
    assert shipped == []
    assert any(name.endswith("/captures.py") for name in unpacked)  # the lab folders are there
