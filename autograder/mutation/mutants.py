"""A lab's mutants: its solution's answer cells, each changed once, and the submission each makes.

A mutant's id hashes its cell and its new source, so it stays the same as long as that cell does
(``equivalent_mutants.py`` records mutants by id). Its submission leaves the tasks after its own blank,
so grading stops after its task.
"""

from __future__ import annotations

import copy
import difflib
import hashlib
from dataclasses import dataclass

import libcst
import nbformat

from autograder.authoring import has_solution, parse_questions, read_solution, task_texts, text_literals
from autograder.lab import Lab
from autograder.mutation.operators import OPERATORS
from autograder.mutation.source_mutants import VARIANTS, answer_lines, mutate, right_variants
from autograder.mutation.text_mutants import OPERATORS as TEXT_OPERATORS
from autograder.mutation.text_mutants import text_mutants


@dataclass(frozen=True)
class Mutant:
    """A changed answer cell: a mutant, which the graders should kill, or a right variant
    (``is_variant``), which must keep its task's full marks."""

    id: str
    task: str
    cell_id: str
    operator: str
    description: str
    line: int  # in the cell
    source: str  # the cell's new source
    diff: str  # against the solution's cell
    parses: bool  # False: the change leaves code Python cannot compile (never graded)

    @property
    def is_variant(self) -> bool:
        return self.operator in VARIANTS


@dataclass(frozen=True)
class LabMutants:
    lab: str
    mutants: tuple[Mutant, ...]
    unparsed_cells: tuple[str, ...]  # answer cells libcst could not read (e.g. IPython magics), in words


def _compiles(source: str) -> bool:
    try:
        compile(source, "<mutant>", "exec")
    except (SyntaxError, ValueError):
        return False
    return True


def mutant_id(task: str, operator: str, cell_id: str, source: str) -> str:
    digest = hashlib.sha256(f"{cell_id}\0{source}".encode()).hexdigest()[:8]
    return f"{task}-{operator}-{digest}"


def lab_mutants(lab: Lab, tasks: tuple[str, ...] = (), operators: tuple[str, ...] = ()) -> LabMutants:
    """Every mutant of the lab's solution (of ``tasks``, by ``operators``, if given), in cell order."""
    solution = read_solution(lab.solution_path)
    texts = task_texts(lab.solution_path)
    code_operators = tuple(o for o in operators or OPERATORS if o in OPERATORS)
    from_text = tuple(o for o in operators or TEXT_OPERATORS if o in TEXT_OPERATORS)
    variants = tuple(o for o in operators or VARIANTS if o in VARIANTS)
    mutants, unparsed = [], []
    for question in parse_questions(solution):
        if tasks and question.task not in tasks:
            continue
        for index in range(question.first_cell, question.last_cell + 1):
            cell = solution.cells[index]
            if cell.cell_type != "code" or not has_solution(cell.source):
                continue
            try:
                lines = answer_lines(cell.source)
                changed = mutate(cell.source, lines, code_operators) if code_operators else []
                literals = text_literals(texts.get(question.task, ""))
                changed += text_mutants(cell.source, lines, literals, from_text) if from_text else []
                changed += right_variants(cell.source, lines, variants) if variants else []
                sources = {change.source for change in changed if change.operator in OPERATORS}
                changed = [  # a text mutant another operator made already is made once, by that operator
                    c for c in changed if c.operator in OPERATORS or c.operator in VARIANTS or c.source not in sources
                ]
            except libcst.ParserSyntaxError as exc:
                unparsed.append(
                    f"{question.task}, cell {cell.get('id', index)}: not Python libcst reads "
                    f"({str(exc).splitlines()[0]}): no mutants"
                )
                continue
            for change in changed:
                diff = "".join(
                    difflib.unified_diff(
                        cell.source.splitlines(keepends=True),
                        change.source.splitlines(keepends=True),
                        "solution",
                        "mutant",
                        n=1,
                    )
                )
                mutants.append(
                    Mutant(
                        mutant_id(question.task, change.operator, cell.id, change.source),
                        question.task,
                        cell.id,
                        change.operator,
                        change.description,
                        change.line,
                        change.source,
                        diff if diff.endswith("\n") else diff + "\n",
                        _compiles(change.source),
                    )
                )
    return LabMutants(lab.id, tuple(mutants), tuple(unparsed))


def submission(lab: Lab, task: str, replaced: dict[str, str] | None = None) -> nbformat.NotebookNode:
    """The student notebook answered with the solution up to ``task``, ``replaced`` (cell id -> source)
    in place of the solution's cells."""
    solution = {cell.get("id"): cell.source for cell in read_solution(lab.solution_path).cells}
    order = [t.id for t in lab.tasks]
    nb = copy.deepcopy(lab.template)
    for cell in nb.cells:
        meta = cell.metadata.get("autograder", {})
        if meta.get("answer") and order.index(meta["task"]) <= order.index(task):
            cell.source = (replaced or {}).get(cell.id, solution[cell.id])
    return nb
