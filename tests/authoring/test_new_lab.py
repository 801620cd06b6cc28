"""`autograder new-lab` writes a lab that runs, and `autograder assign` grades what it writes: the
solution at full marks, the blank student notebook at zero, or it refuses, naming the task and the check.
Each test works on a labs folder and project root of its own (scaffolded_labs.py), and on a lab name of
its own: pytest keeps a grader module by its file's name for the process."""

import re
from pathlib import Path

import nbformat
import pytest
from scaffolded_labs import use_tmp_labs

from autograder.cli import main
from autograder.grading import GradeOptions, grade_notebook
from autograder.lab import lab_ids, load_lab
from autograder.run import Limits

TRUSTED = Limits(sandbox=None)


@pytest.fixture
def root(monkeypatch, tmp_path):
    return use_tmp_labs(monkeypatch, tmp_path)


def test_new_lab_refuses_a_taken_name_or_one_that_is_not_an_identifier(root, capsys):
    assert main(["new-lab", "lab9"]) == 0 and lab_ids() == ["lab9"]
    assert main(["new-lab", "lab9"]) == 2 and "exists already" in capsys.readouterr().err
    for bad in ("lab-9", "9lab", "class"):
        assert main(["new-lab", bad]) == 2 and "not a Python identifier" in capsys.readouterr().err
    assert lab_ids() == ["lab9"]


def test_grading_a_lab_not_assigned_yet_says_its_student_notebook_is_missing(root, capsys):
    assert main(["new-lab", "lab7", "--tasks", "1"]) == 0
    result = grade_notebook(root / "solutions" / "lab7" / "lab7.ipynb", GradeOptions("lab7", limits=TRUSTED))
    assert result.status == "grader error"
    assert result.reason == (
        f"the student notebook of lab7 is missing ({root / 'assignments' / 'lab7' / 'lab7.ipynb'}):"
        " `autograder assign lab7` writes it"
    )


@pytest.mark.slow
def test_a_scaffolded_lab_assigns_at_full_marks_and_zero_and_its_known_grade_case_holds(root, capsys):
    import importlib.util

    assert main(["new-lab", "lab8", "--tasks", "4"]) == 0
    assert main(["assign", "lab8"]) == 0
    assert "the solution scores full marks and the student notebook zero" in capsys.readouterr().out
    lab = load_lab("lab8")
    assert [t.id for t in lab.tasks] == ["t1", "t2", "t3", "t4"]
    assert lab.captures["t3"].times_code and not lab.captures_in_init
    assert (lab.package_dir / "__init__.py").read_text().count("\n") == 1  # its captures have a module of their own
    # Every known-grade case of the scaffold (one that breaks each requirement sentence alone), and its
    # requirement table, hold: `autograder test` grades them all, each notebook once.
    assert main(["test", "lab8", "-q"]) == 0
    spec = importlib.util.spec_from_file_location("lab8_submissions", root / "tests" / "labs" / "lab8_submissions.py")
    cases = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(cases)
    names = {case.name for case in cases.CASES}
    assert {"t1_other_values", "t1_not_split", "t2_plain_sum", "t2_not_jitted", "t3_made_up", "t4_off_by_one"} <= names
    # t2's values (11) and jitted (4) checks, of the 25 points each of four tasks is worth (psum: 10)
    assert [c.scores["t2"] for c in cases.CASES if c.name == "t2_plain_sum"] == [15]
    solution = nbformat.read(root / "solutions" / "lab8" / "lab8.ipynb", 4)
    assert solution.cells[1].id == "setup-devices"  # the id the setup cell's tests find it by


def test_assign_refuses_a_solution_that_loses_points_or_a_blank_task_that_earns_some(root, capsys):
    assert main(["new-lab", "lab9", "--tasks", "2"]) == 0
    lab = load_lab("lab9")
    solution = nbformat.read(lab.solution_path, as_version=4)
    for cell in solution.cells:  # t2 sums without shard_map: right values, no psum
        if "def total_of" in cell.source:
            cell.source = "# BEGIN SOLUTION\ntotal_of = jax.jit(jnp.sum)\n# END SOLUTION\ntotal = total_of(v)"
    nbformat.write(solution, lab.solution_path)
    graders = lab.grader_path.read_text()  # t1's type check gives a point to a check anyone passes
    graders = re.sub(
        r"@points\((\d+)\)\ndef test_t1_type", lambda m: f"@points({int(m[1]) - 1})\ndef test_t1_type", graders
    )
    graders += '\n\n@task("t1")\n@points(1)\ndef test_t1_always(submission):\n    """passes for anyone"""\n'
    lab.grader_path.write_text(graders)

    assert main(["assign", "lab9"]) == 1
    out, err = capsys.readouterr()
    assert "written" not in out  # said once verified, and it was not
    # each of two tasks is worth 50, split 21, 21, 8 among t2's values, psum and jitted checks
    assert "the solution, task t2, check test_t2_reduces_with_psum: loses 21 points" in err
    assert "found no shard_map" in err
    assert "the student notebook, task t1, check test_t1_always: a blank task earns 1 point" in err
    assert not lab.assignment_path.exists() and f"{lab.assignment_path} not written (`--no-verify`" in err

    assert main(["assign", "--no-verify", "lab9"]) == 0 and lab.assignment_path.exists()
    assert main(["assign", "--compare", "lab9"]) == 0  # up to date; verifying only when asked
    assert main(["assign", "--compare", "--verify", "lab9"]) == 1
    assert "check test_t2_reduces_with_psum" in capsys.readouterr().err
    assert lab.assignment_path.exists()  # --compare never writes nor removes


@pytest.mark.parametrize("n_tasks", [1, 2, 3, 5, 8, 25])
def test_a_scaffolded_lab_is_worth_100_points_whatever_its_number_of_tasks(root, n_tasks):
    """The solution's task headers, the graders' points and the known grades agree, and add up to 100
    (read from the written files: grading each would add nothing the test above does not show)."""
    lab_id = f"lab_of_{n_tasks}"
    assert main(["new-lab", lab_id, "--tasks", str(n_tasks)]) == 0
    lab = load_lab(lab_id)
    headers = {
        name: int(points)
        for cell in nbformat.read(lab.solution_path, as_version=4).cells
        for name, points in re.findall(r"name: (t\d+)\npoints: (\d+)", cell.source)
    }
    graders = {}
    for task, points in re.findall(r'@task\("(t\d+)"\)\n@points\((\d+)\)', lab.grader_path.read_text()):
        graders[task] = graders.get(task, 0) + int(points)
    known = (root / "tests" / "labs" / f"{lab_id}_submissions.py").read_text()
    all_solved = eval(re.search(r"ALL_POINTS = (\{[^}]*\})", known).group(1))
    assert len(headers) == n_tasks and sum(headers.values()) == 100
    assert headers == graders == all_solved
    assert max(headers.values()) - min(headers.values()) <= 1


def test_new_lab_refuses_a_number_of_tasks_it_cannot_give_points_to(root, capsys):
    for bad in ("0", "26"):
        assert main(["new-lab", "lab7", "--tasks", bad]) == 2
        assert "a lab has 1 to 25 tasks" in capsys.readouterr().err
    assert lab_ids() == []


def test_every_template_renders_from_its_named_fields_and_fails_without_them():
    """The templates of `new-lab` name only the fields it gives (``lab_fields`` and ``task``); each renders
    from them for every example task, and a missing field is an error, not an empty string."""
    import jinja2
    import jinja2.meta

    from autograder.authoring.new_lab import EXAMPLES, FILLER, TEMPLATES, lab_fields, lab_tasks

    tasks = lab_tasks(len(EXAMPLES) + 1)
    given = lab_fields("lab9", tasks)
    assert [task.example.name for task in tasks] == [example.name for example in (*EXAMPLES, FILLER)]
    names = TEMPLATES.list_templates()
    for example in (*EXAMPLES, FILLER):
        for part in ("statement.md.j2", "solution.py.j2", "capture.py.j2", "graders.py.j2", "requirements.toml.j2"):
            assert f"tasks/{example.name}/{part}" in names
    for name in names:
        source = TEMPLATES.loader.get_source(TEMPLATES, name)[0]
        fields = jinja2.meta.find_undeclared_variables(TEMPLATES.parse(source))
        assert fields <= {*given, "task"}, (name, fields)
        users = [t for t in tasks if name.startswith(t.templates + "/")] if name.startswith("tasks/") else tasks
        assert users, name
        for task in users:
            assert TEMPLATES.get_template(name).render(**given, task=task)
        if fields:
            with pytest.raises(jinja2.UndefinedError):
                TEMPLATES.get_template(name).render()


def test_each_check_of_an_example_is_its_grader_worth_the_checks_points():
    """An example's checks are named as its graders, ``test_<task>_<check>``, in their order, each worth
    the check's points: renaming one on one side only fails here, not in a lab's grading."""
    from autograder.authoring.new_lab import EXAMPLES, TEMPLATES, lab_tasks

    for task in lab_tasks(len(EXAMPLES) + 1):
        graders = TEMPLATES.get_template(f"{task.templates}/graders.py.j2").render(task=task)
        found = re.findall(r'@task\("(t\d+)"\)\n@points\((\d+)\)\n(?:@hidden\n)?def test_(t\d+)_(\w+)\(', graders)
        assert [(check, points) for _, points, _, check in found] == [(c, str(p)) for c, p in task.points.items()]
        assert {t for t, _, u, _ in found for t in (t, u)} == {task.id}


@pytest.mark.parametrize("n_tasks", [1, 2, 3, 5, 25])
def test_a_scaffolded_lab_passes_the_projects_lint_and_format_as_written(root, n_tasks):
    """The files new-lab writes pass `ruff check` and `ruff format --check` under the project's settings,
    whatever examples the lab has: a TA's first commit does not fail the course's CI."""
    import shutil
    import subprocess

    ruff = shutil.which("ruff")
    if ruff is None:
        pytest.skip("ruff is not installed (the test extra has it)")
    assert main(["new-lab", "lab9", "--tasks", str(n_tasks)]) == 0
    settings = Path(__file__).resolve().parents[2] / "pyproject.toml"
    written = [str(p) for p in root.rglob("*.py")]
    for command in (["check"], ["format", "--check", "--diff"]):
        done = subprocess.run(
            [ruff, *command, "--config", str(settings), *written], capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stdout + done.stderr
