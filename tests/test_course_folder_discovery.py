"""How a command finds its course (autograder/paths.py, autograder/lab.py): as git finds its repository,
walking up from the current folder to `autograder-course.toml`, unless $AUTOGRADER_COURSE names one; the
bundled labs are always there, and a course's lab named like a bundled one takes its place."""

from __future__ import annotations

import sys

import pytest

import autograder.labs
from autograder.lab import LabError, bundled_lab_ids, lab_ids, load_lab
from autograder.paths import BUNDLED_LABS, COURSE_ENVIRONMENT, COURSE_FILE, find_course


@pytest.fixture
def course(tmp_path, monkeypatch):
    """An empty course at tmp_path/course, no course named by the environment, no course lab imported."""
    monkeypatch.delenv(COURSE_ENVIRONMENT, raising=False)
    monkeypatch.setattr(autograder.labs, "__path__", list(autograder.labs.__path__))
    for name in [m for m in sys.modules if m.startswith("autograder.labs.")]:
        monkeypatch.delitem(sys.modules, name)
    root = tmp_path / "course"
    (root / "labs").mkdir(parents=True)
    (root / COURSE_FILE).write_text('[course]\nlabs = "labs"\nharness = ">=0.2,<0.3"\n')
    yield root
    for name in [m for m in sys.modules if m.startswith("autograder.labs.")]:  # the course's, imported here
        del sys.modules[name]  # (monkeypatch then puts back those imported before)


def _lab(course, lab_id: str, captures: str = "CAPTURES = ()\n", init: str = '"""A lab of the course."""\n'):
    (course / "labs" / lab_id).mkdir()
    (course / "labs" / lab_id / "__init__.py").write_text(init)
    (course / "labs" / lab_id / "captures.py").write_text(captures)


def test_the_course_is_found_from_any_folder_below_it_and_not_from_beside_it(course, tmp_path, monkeypatch):
    below = course / "solutions" / "deep"
    below.mkdir(parents=True)
    assert find_course(below) == course.resolve()
    assert find_course(tmp_path) is None
    _lab(course, "lab8_own")
    monkeypatch.chdir(below)
    assert lab_ids() == [*bundled_lab_ids(), "lab8_own"]
    assert load_lab("lab8_own").root == course.resolve()
    monkeypatch.chdir(tmp_path)
    assert "lab8_own" not in lab_ids()
    with pytest.raises(LabError, match="unknown lab 'lab8_own'"):
        load_lab("lab8_own")


def test_the_environment_names_a_course_and_must_name_one(course, tmp_path, monkeypatch):
    _lab(course, "lab8_own")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv(COURSE_ENVIRONMENT, str(course))
    assert "lab8_own" in lab_ids()
    monkeypatch.setenv(COURSE_ENVIRONMENT, str(tmp_path))
    with pytest.raises(LabError, match=f"has no {COURSE_FILE}"):
        lab_ids()


def test_a_course_lab_named_like_a_bundled_one_takes_its_place(course, monkeypatch):
    _lab(course, "lab4_collectives", init="MINE = True\n")
    monkeypatch.chdir(course)
    assert lab_ids().count("lab4_collectives") == 1
    lab = load_lab("lab4_collectives")
    assert lab.package_dir.parent == (course / "labs").resolve() and lab.root == course.resolve()
    assert lab.package.MINE is True and lab.captures == {}
    monkeypatch.chdir(course.parent)
    assert load_lab("lab4_collectives").package_dir.parent == BUNDLED_LABS


def test_a_course_lab_written_before_captures_had_their_own_module_keeps_them_in_its_init(course, monkeypatch):
    """An older ``new-lab`` wrote a lab's captures into its package's ``__init__``, which imports the
    reference: the lab reads them there, and its reference loads as before."""
    (course / "labs" / "lab8_old").mkdir()
    (course / "labs" / "lab8_old" / "reference.py").write_text("NAMES = ('x',)\n")
    (course / "labs" / "lab8_old" / "__init__.py").write_text(
        "from autograder.facts import TaskCapture\nfrom autograder.labs.lab8_old.reference import NAMES\n\n"
        "CAPTURES = (TaskCapture('t1', names=NAMES),)\n"
    )
    monkeypatch.chdir(course)
    lab = load_lab("lab8_old")
    assert lab.captures_in_init
    assert lab.captures["t1"].names == ("x",) and lab.reference.NAMES == ("x",)


def test_a_course_lab_s_captures_are_its_captures_module(course, monkeypatch):
    _lab(course, "lab8_own", "from autograder.facts import TaskCapture\n\nCAPTURES = (TaskCapture('t1', ('y',)),)\n")
    monkeypatch.chdir(course)
    lab = load_lab("lab8_own")
    assert not lab.captures_in_init and lab.captures["t1"].names == ("y",)
    assert not hasattr(lab.package, "CAPTURES")


def test_an_unreadable_marker_is_a_clear_error(course, monkeypatch):
    (course / COURSE_FILE).write_text("[course\nlabs = ")
    monkeypatch.chdir(course)
    with pytest.raises(LabError, match=f"{COURSE_FILE} cannot be read"):
        lab_ids()


def test_a_command_names_its_course_to_the_processes_it_starts_and_then_forgets_it(course, monkeypatch, capsys):
    import os

    from autograder.cli import _course_environment, build_parser, main

    monkeypatch.chdir(course / "labs")
    assert _course_environment(build_parser().parse_args(["labs"])) == {COURSE_ENVIRONMENT: str(course.resolve())}
    assert main(["labs"]) == 0 and f"course: {course.resolve()}" in capsys.readouterr().out
    assert COURSE_ENVIRONMENT not in os.environ  # one command's course does not stay for the next


def test_a_course_s_own_pytest_configuration_does_not_reach_its_gradings(course, monkeypatch):
    """A course's repository may hold a pytest.ini or pyproject.toml for its own tests: a grading is the
    same session in a course, a checkout and an installed harness, whatever configuration is around."""
    from autograder.grading import run_graders
    from autograder.run import Execution, RunStatus

    (course / "pytest.ini").write_text("[pytest]\naddopts = --an-option-no-plugin-knows -x\n")
    _lab(course, "lab8_own", "from autograder.facts import TaskCapture\nCAPTURES = (TaskCapture('t1', ()),)\n")
    (course / "labs" / "lab8_own" / "test_lab8_own.py").write_text(
        "import pytest\n\n\n@pytest.mark.task('t1')\n@pytest.mark.points(2)\ndef test_t1_nothing(submission):\n"
        '    """nothing to check"""\n\n\n@pytest.mark.task(\'t1\')\n@pytest.mark.points(1)\n'
        'def test_t1_fails(submission):\n    """fails"""\n    assert False\n'
    )
    monkeypatch.chdir(course)
    execution = Execution(RunStatus.COMPLETED, None, None, {}, {}, (), 0.0)
    checks = run_graders(load_lab("lab8_own"), execution, seed=1)
    assert [(c.name, c.passed) for c in checks] == [("test_t1_nothing", True), ("test_t1_fails", False)]


def _check(name: str, passes: bool) -> str:
    body = "pass" if passes else "assert False"
    return (
        f"\n\n@pytest.mark.task('t1')\n@pytest.mark.points(1)\ndef {name}(submission):\n    '''{name}'''\n    {body}\n"
    )


def test_a_labs_graders_may_be_several_files_run_in_the_order_of_their_names(course, monkeypatch):
    """test_<lab>.py first, then each test_<lab>_<part>.py by name; two files may not name a check alike
    (its name is its id in every grade)."""
    from autograder.grading import GraderError, run_graders
    from autograder.run import Execution, RunStatus

    _lab(course, "lab9_parts", "from autograder.facts import TaskCapture\nCAPTURES = (TaskCapture('t1', ()),)\n")
    folder = course / "labs" / "lab9_parts"
    (folder / "test_lab9_parts.py").write_text("import pytest" + _check("test_t1_first", True))
    (folder / "test_lab9_parts_z.py").write_text("import pytest" + _check("test_t1_last", True))
    (folder / "test_lab9_parts_b.py").write_text("import pytest" + _check("test_t1_second", False))
    monkeypatch.chdir(course)
    lab = load_lab("lab9_parts")
    assert [p.name for p in lab.grader_paths] == ["test_lab9_parts.py", "test_lab9_parts_b.py", "test_lab9_parts_z.py"]
    execution = Execution(RunStatus.COMPLETED, None, None, {}, {}, (), 0.0)
    checks = run_graders(lab, execution, seed=1)
    assert [(c.name, c.passed) for c in checks] == [
        ("test_t1_first", True),
        ("test_t1_second", False),
        ("test_t1_last", True),
    ]
    (folder / "test_lab9_parts_c.py").write_text("import pytest" + _check("test_t1_first", True))
    with pytest.raises(GraderError, match="checks named alike in two files of the graders: test_t1_first"):
        run_graders(lab, execution, seed=1)
