"""A lab's requirement table (``labs/LAB/requirements.toml``, docs/writing-a-lab.md): each requirement
sentence of a task's text, with the checks that enforce it and the known-grade wrong submissions that break
it alone, losing exactly those checks' points. A parametrized check is worth its points once per parameter
set, and is named whole or by one instance's pytest id (``"test_t2_layouts[y_ba]"``).
"""

from __future__ import annotations

import ast
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import nbformat

from autograder.authoring.known_grades import Case
from autograder.authoring.markers import parse_questions
from autograder.lab import Lab

TABLE_FILE = "requirements.toml"


@dataclass(frozen=True)
class Requirement:
    task: str
    text: str
    checks: tuple[str, ...] = ()
    wrong: tuple[str, ...] = ()
    no_wrong_case: str = ""


@dataclass(frozen=True)
class Waiver:
    """A literal of a task's text that no requirement quotes, and why nothing checks it."""

    task: str
    literal: str
    why: str


@dataclass(frozen=True)
class Grader:
    """One check of the lab's graders: ``points`` per instance (``instances``: pytest ids, or none)."""

    name: str
    task: str
    points: float
    instances: tuple[str, ...] = ()

    @property
    def total(self) -> float:
        return self.points * max(1, len(self.instances))


def table_path(lab: Lab) -> Path:
    return lab.package_dir / TABLE_FILE


def _rows(path: Path, kind: str) -> list[dict]:
    rows = tomllib.loads(path.read_text(encoding="utf-8")).get(kind, [])
    if not isinstance(rows, list):
        raise ValueError(f"{path}: [[{kind}]] tables expected")
    return rows


def read_table(path: Path) -> list[Requirement]:
    """The requirements of a table file; ValueError naming what is malformed."""
    requirements = []
    for index, row in enumerate(_rows(path, "requirement"), start=1):
        unknown = set(row) - {"task", "text", "checks", "wrong", "no_wrong_case"}
        if unknown or not isinstance(row.get("task"), str) or not isinstance(row.get("text"), str):
            raise ValueError(f"{path}, requirement {index}: task and text are strings; unknown keys {sorted(unknown)}")
        requirements.append(Requirement(**row | {k: tuple(row.get(k, ())) for k in ("checks", "wrong")}))
    return requirements


def read_waivers(path: Path) -> list[Waiver]:
    """The ``[[waived]]`` literals of a table file; ValueError naming what is malformed."""
    waivers = []
    for index, row in enumerate(_rows(path, "waived"), start=1):
        if set(row) != {"task", "literal", "why"} or not all(isinstance(v, str) and v.strip() for v in row.values()):
            raise ValueError(f"{path}, waived {index}: task, literal and why, each a non-empty string")
        waivers.append(Waiver(**row))
    return waivers


def text_literals(text: str) -> list[str]:
    """The literals a task's text names: its code spans, in order, each once."""
    return list(dict.fromkeys(span.strip() for span in re.findall(r"`([^`]+)`", text) if span.strip()))


def literal_problems(requirements: list[Requirement], waivers: list[Waiver], texts: dict[str, str]) -> list[str]:
    """A literal of a task's text neither quoted nor waived; a waiver of a literal not named, or quoted."""
    quoted = {task: " ".join(_words(req.text) for req in requirements if req.task == task) for task in texts}
    waived = {(w.task, _words(w.literal)) for w in waivers}
    problems = []
    for task, text in texts.items():
        for literal in text_literals(text):
            if f"`{literal}`" not in quoted.get(task, "") and (task, literal) not in waived:
                problems.append(
                    f"{task} names `{literal}` in its text: no requirement of {task} quotes it, and no "
                    "[[waived]] entry says why nothing checks it"
                )
    for waiver in waivers:
        literal = _words(waiver.literal)
        if literal not in text_literals(texts.get(waiver.task, "")):
            problems.append(f"waived `{literal}`: {waiver.task}'s text does not name it")
        elif f"`{literal}`" in quoted.get(waiver.task, ""):
            problems.append(f"waived `{literal}`: a requirement of {waiver.task} quotes it, so it is not waived")
    return problems


def _literal(node: ast.expr, module: dict[str, ast.expr]) -> object:
    """The value of a parametrize argument: a literal, a module-level literal's name, or list()/tuple() of one."""
    if isinstance(node, ast.Name) and node.id in module:
        return _literal(module[node.id], module)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("list", "tuple"):
        return list(_literal(node.args[0], module))  # type: ignore[call-overload]
    return ast.literal_eval(node)


def _param_id(argnames: list[str], values: object, index: int) -> str:
    """pytest's default id of one parameter set."""
    row = values if len(argnames) > 1 else (values,)
    parts = [
        str(v) if isinstance(v, (str, int, float, bool)) or v is None else f"{n}{index}"
        for n, v in zip(argnames, row)  # type: ignore[call-overload]
    ]
    return "-".join(parts)


def _instances(decorators: list[ast.expr], module: dict[str, ast.expr]) -> tuple[str, ...]:
    ids: list[str] = []
    for d in decorators:
        if isinstance(d, ast.Call) and isinstance(d.func, ast.Attribute) and d.func.attr == "parametrize":
            names = _literal(d.args[0], module)
            argnames = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)  # type: ignore[call-overload]
            sets = list(_literal(d.args[1], module))  # type: ignore[call-overload]
            own = [_param_id(argnames, v, i) for i, v in enumerate(sets)]
            ids = [f"{o}-{i}" for i in ids for o in own] if ids else own
    return tuple(ids)


def grader_checks(source: str) -> dict[str, Grader]:
    """The lab's checks by name, from their ``@task("tN")`` and ``@points(P)``; each instance also as ``name[id]``."""
    tree = ast.parse(source)
    module = {
        node.targets[0].id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
    }
    found = {}
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or not node.name.startswith("test_"):
            continue
        marks = {
            d.func.id: d.args[0].value
            for d in node.decorator_list
            if isinstance(d, ast.Call)
            and isinstance(d.func, ast.Name)
            and d.args
            and isinstance(d.args[0], ast.Constant)
        }
        if "task" in marks and "points" in marks:
            grader = Grader(
                node.name, str(marks["task"]), float(str(marks["points"])), _instances(node.decorator_list, module)
            )
            found[node.name] = grader
            for instance in grader.instances:
                found[f"{node.name}[{instance}]"] = Grader(f"{node.name}[{instance}]", grader.task, grader.points)
    return found


def _words(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def task_texts(solution: Path) -> dict[str, str]:
    """Each task's text: the markdown cells of its question region in the solution notebook."""
    nb = nbformat.read(solution, as_version=4)
    return {
        q.task: _words(
            " ".join(c.source for c in nb.cells[q.first_cell : q.last_cell + 1] if c.cell_type == "markdown")
        )
        for q in parse_questions(nb)
    }


def table_problems(lab: Lab, cases: list[Case], measured: frozenset[str] = frozenset()) -> list[str]:
    """Why the lab's requirement table does not hold, or []."""
    path = table_path(lab)
    if not path.is_file():
        return [f"{lab.id} has no requirement table: write {path} (docs/writing-a-lab.md, 'The requirement table')"]
    try:
        requirements, waivers = read_table(path), read_waivers(path)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        return [str(exc)]
    graders = {
        name: grader
        for path in lab.grader_paths
        for name, grader in grader_checks(path.read_text(encoding="utf-8")).items()
    }
    texts = task_texts(lab.solution_path)
    by_name = {case.name: case for case in cases}
    checks = {name: grader for name, grader in graders.items() if "[" not in name}
    problems = literal_problems(requirements, waivers, texts)
    for number, req in enumerate(requirements, start=1):
        where = f"requirement {number} ({req.task}: {req.text[:60]!r})"
        if req.task not in texts:
            problems.append(f"{where}: the notebook has no task {req.task}")
            continue
        if _words(req.text) not in texts[req.task]:
            problems.append(f"{where}: {req.task}'s text no longer says this")
        if not req.checks:
            problems.append(f"{where}: no check enforces it")
        wrong_checks = [c for c in req.checks if c not in graders or graders[c].task != req.task]
        if wrong_checks:
            problems.append(f"{where}: {', '.join(wrong_checks)} is not a check of {req.task}")
            continue
        lost = sum(graders[c].total for c in req.checks if c.split("[")[0] not in measured)
        if not req.wrong and not req.no_wrong_case:
            problems.append(f"{where}: no known-grade case breaks it alone (`wrong`)")
        if req.wrong and lost == 0:
            problems.append(f"{where}: its checks are measured verdicts: say why in `no_wrong_case` instead")
        for name in req.wrong:
            case = by_name.get(name)
            if case is None:
                problems.append(f"{where}: no known-grade case {name!r}")
                continue
            fixed = sum(g.total for g in checks.values() if g.task == req.task and g.name not in measured)
            expected = fixed - lost
            if abs(case.scores.get(req.task, 0) - expected) > 1e-9:
                problems.append(
                    f"{where}: case {name!r} should score {expected:g} on {req.task} (its points less "
                    f"{lost:g} of {', '.join(req.checks)}), it states {case.scores.get(req.task, 0):g}"
                )
    named = {c for req in requirements for c in req.checks}
    problems += [
        f"{name} ({grader.task}) enforces no requirement of the table"
        for name, grader in checks.items()
        if name not in named and not (grader.instances and all(f"{name}[{i}]" in named for i in grader.instances))
    ]
    return problems
