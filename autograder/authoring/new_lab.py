"""``autograder new-lab LAB``: a lab that runs, to be edited into a real one (docs/writing-a-lab.md).

It writes into the course folder it runs in, making the current folder a course when it is in none, never
into the installed harness; every file's text is a Jinja2 template of ``templates/new_lab/``. The lab is
worth 100 points: an equal share per task, split among its checks in its example's proportions.
"""

from __future__ import annotations

import keyword
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import jinja2
import nbformat

from autograder.authoring.setup_cell import CELL_ID as SETUP_CELL_ID
from autograder.authoring.setup_cell import new_setup_cell
from autograder.grading import DISTRIBUTION
from autograder.lab import course_in_view, lab_ids
from autograder.paths import COURSE_FILE, Course


class NewLabError(ValueError):
    """The lab cannot be made: a bad or taken name, or a bad number of tasks."""


LAB_POINTS = 100
MAX_TASKS = 25  # so that every check of a task keeps at least a point

TEMPLATES = jinja2.Environment(
    loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates" / "new_lab"),
    keep_trailing_newline=True,
    trim_blocks=True,
    lstrip_blocks=True,
    undefined=jinja2.StrictUndefined,  # a field a template names and is not given fails the rendering
    autoescape=False,  # Python, Markdown and notebook text, not HTML
)
TEMPLATES.filters["repr"] = repr  # a Python literal of a value: `{{ task.id | repr }}` is 't1'


@dataclass(frozen=True)
class Example:
    """A kind of example task, from ``templates/new_lab/tasks/<name>/``: its checks, each with its weight."""

    name: str
    checks: Mapping[str, int]
    uses: tuple[str, ...]  # what its graders import from autograder.checks
    timed: bool = False  # the reference sets its timed call up ahead (SET_UP_AHEAD)
    numpy: bool = False  # its graders use numpy
    calls: bool = False  # its capture calls a student's function on the reference's inputs


EXAMPLES = (
    Example(
        "placement",
        {"values": 4, "layout": 3, "type": 3},
        ("Layout", "assert_allclose", "assert_layout", "assert_type"),
    ),
    Example(
        "shard_map",
        {"fresh_values": 5, "reduces_with_psum": 5, "jitted": 2},
        ("assert_allclose", "assert_jitted", "assert_shard_map_collectives"),
        numpy=True,
        calls=True,
    ),
    Example("timing", {"time": 8, "warm": 2}, ("assert_time_consistent", "assert_warm", "claimed_times"), timed=True),
)
FILLER = Example("filler", {"answer": 10}, ("assert_allclose",))  # every task after the examples


@dataclass(frozen=True)
class Task:
    """A task of the new lab, as the templates read it."""

    id: str
    example: Example
    points: Mapping[str, int]

    @property
    def total(self) -> int:
        return sum(self.points.values())

    @property
    def templates(self) -> str:
        return f"tasks/{self.example.name}"


def _render(template: str, **fields) -> str:
    return TEMPLATES.get_template(template).render(**fields)


def _cell(template: str, **fields) -> str:
    """A cell's source: its template's text without the final newline."""
    return _render(template, **fields).removesuffix("\n")


def _validate_lab_name(lab: str, course: Course | None) -> None:
    if not lab.isidentifier() or keyword.iskeyword(lab):
        raise NewLabError(f"{lab!r} is not a Python identifier: a lab is a package, e.g. lab4_collectives")
    if lab in lab_ids():
        raise NewLabError(f"lab {lab!r} exists already (`autograder labs` lists the labs)")
    if course is not None and (course.labs_dir / lab).exists():
        raise NewLabError(f"lab {lab!r} exists already ({course.labs_dir / lab})")


def harness_range() -> str:
    """The harness versions a new course's graders are written for: this minor release's."""
    try:
        major, minor = metadata.version(DISTRIBUTION).split(".")[:2]
    except metadata.PackageNotFoundError:
        return ""
    return f">={major}.{minor},<{major}.{int(minor) + 1}"


COURSE_TEXT = """\
# A course of the JAX labs' autograder: every `autograder` command run in this folder, or below it, works
# on its labs. Their notebooks are in solutions/ and assignments/, their captures, references and graders
# in a folder each under `labs`, their known-grade submissions in tests/labs/ (docs/writing-a-lab.md).
[course]
labs = "labs"
# The harness versions the labs' graders are written for (`autograder test` says when the installed one
# is outside them).
harness = "{harness}"
"""


def lab_tasks(n_tasks: int) -> list[Task]:
    """The examples, then filler tasks, ``n_tasks`` in all, with their points."""
    if not 1 <= n_tasks <= MAX_TASKS:
        raise NewLabError(f"a lab has 1 to {MAX_TASKS} tasks, not {n_tasks}")
    examples = EXAMPLES[:n_tasks] + (FILLER,) * (n_tasks - len(EXAMPLES))
    shares = split_points(LAB_POINTS, [1] * n_tasks)
    return [
        Task(f"t{i}", example, dict(zip(example.checks, split_points(share, list(example.checks.values())))))
        for i, (example, share) in enumerate(zip(examples, shares), start=1)
    ]


def split_points(total: int, weights: list[int]) -> list[int]:
    """``total`` split in proportion to ``weights``, in whole points (largest remainders first)."""
    exact = [total * w / sum(weights) for w in weights]
    points = [int(e) for e in exact]
    by_remainder = sorted(range(len(weights)), key=lambda i: (points[i] - exact[i], i))
    for i in by_remainder[: total - sum(points)]:
        points[i] += 1
    return points


def solution_notebook(lab: str, tasks: list[Task]) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["autograder"] = {"lab": lab}  # so `autograder grade` knows the lab without --lab
    cells = [
        nbformat.v4.new_markdown_cell(_cell("notebook/title.md.j2", lab=lab)),
        new_setup_cell(),
        nbformat.v4.new_code_cell(_cell("notebook/data.py.j2")),
    ]
    for task in tasks:
        cells += [
            nbformat.v4.new_raw_cell(_cell("notebook/begin_question.raw.j2", task=task)),
            nbformat.v4.new_markdown_cell(_cell("notebook/statement.md.j2", task=task)),
            nbformat.v4.new_code_cell(_cell(f"{task.templates}/solution.py.j2", task=task)),
            nbformat.v4.new_raw_cell(_cell("notebook/end_question.raw.j2")),
        ]
    for index, cell in enumerate(cells):
        if cell.get("id") != SETUP_CELL_ID:  # the setup cell keeps the id every lab's tests find it by
            cell["id"] = f"{lab[:20]}-{index:03d}".replace("_", "-")
    nb.cells = cells
    return nb


def lab_fields(lab: str, tasks: list[Task]) -> dict:
    """The fields the lab's files are rendered from; the graders import only what they use (classes first,
    as isort orders them), so that the lab passes the project's linter as written."""
    names = {name for task in tasks for name in task.example.uses}
    return {
        "lab": lab,
        "tasks": tasks,
        "timed": any(task.example.timed for task in tasks),
        "calls": any(task.example.calls for task in tasks),
        "checks": sorted(names, key=lambda name: (not name[:1].isupper(), name)),
        "modules": ["numpy"] if any(task.example.numpy for task in tasks) else [],
    }


def scaffold_lab(lab: str, n_tasks: int = 3) -> list[Path]:
    """Write the lab's files into the course folder; the paths written (the course's marker first when
    this made the folder a course)."""
    course = course_in_view()
    _validate_lab_name(lab, course)
    tasks = lab_tasks(n_tasks)
    fields = lab_fields(lab, tasks)
    root = course.root if course else Path.cwd()
    package = (course.labs_dir if course else root / "labs") / lab  # a new course's labs folder: COURSE_TEXT's
    files = {
        root / "solutions" / lab / f"{lab}.ipynb": nbformat.writes(solution_notebook(lab, tasks)) + "\n",
        package / "__init__.py": _render("__init__.py.j2", **fields),
        package / "captures.py": _render("captures.py.j2", **fields),
        package / "reference.py": _render("reference.py.j2", **fields),
        package / f"test_{lab}.py": _render("test_lab.py.j2", **fields),
        package / "requirements.toml": _render("requirements.toml.j2", **fields),
        root / "tests" / "labs" / f"{lab}_submissions.py": _render("lab_submissions.py.j2", **fields),
    }
    if course is None:  # the folder becomes a course: its marker is written first
        files = {root / COURSE_FILE: COURSE_TEXT.format(harness=harness_range())} | files
    taken = [path for path in files if path.exists()]
    if taken:
        raise NewLabError(f"would overwrite {', '.join(map(str, taken))}")
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return list(files)
