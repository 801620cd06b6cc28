"""Nearly identical answers: per task, the pairs of students whose code, normalised (names, literals,
comments, layout) and cut into runs of ``SHINGLE`` tokens, shares most runs outside the lab's own code and
what most of the class shares (docs/instructors.md, "Similar answers"). Renaming and reformatting a copy
changes none of its runs; independent answers rarely share 70% of them. A flag is a reason to look.
``similarity.html``, beside the class report, shows each flagged pair's answers side by side, shared lines marked.
"""

from __future__ import annotations

import builtins
import io
import keyword
import re
import tokenize
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import nbformat
import numpy as np

from autograder.grading import TABLE_STYLE, escape, page_html, read_submission
from autograder.run import RunCell, build_plan, has_code

SHINGLE = 5  # tokens per shingle
MIN_SHINGLES = 20  # fewer (after exclusions): the answer is too short to compare
JACCARD_THRESHOLD = 0.7
CONTAINMENT_THRESHOLD = 0.9
COMMON_FRACTION = 0.25
COMMON_MIN_ANSWERS = 20
MAX_CELL_CHARS = 50_000  # of each answer cell compared: a huge cell cannot stall the report

_KEEP = set(keyword.kwlist) | set(keyword.softkwlist) | set(dir(builtins))
_MAGIC = re.compile(r"^\s*[%!?]")
_CLOSING = {")", "]", "}"}
_ASSIGNMENTS = {"=", "+=", "-=", "*=", "/=", "//=", "%=", "@=", "**=", "|=", "&=", "^=", ">>=", "<<=", ":="}
_STRINGS = {tokenize.STRING} | {number for number, name in tokenize.tok_name.items() if name.startswith("FSTRING")}
_DROPPED = {tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER, tokenize.ENCODING}


@dataclass(frozen=True)
class Answer:
    """One student's code for one task, and its shingles with the lines (1-based) each one covers."""

    source: str
    shingles: dict[int, tuple[int, int]]  # shingle (its hash) -> first and last line


@dataclass(frozen=True)
class SimilarPair:
    task: str
    first: str
    second: str
    jaccard: float
    containment: float
    first_answer: Answer
    second_answer: Answer
    shared: frozenset[int]  # the shingles both hold (after exclusions)


@dataclass(frozen=True)
class TaskSimilarity:
    task: str
    answered: int  # students with code of their own for the task (more than the lab's starter code)
    compared: int  # students whose answer was long enough to compare
    pairs: tuple[SimilarPair, ...]  # flagged, most similar first


@dataclass(frozen=True)
class SimilarityReport:
    tasks: tuple[TaskSimilarity, ...]
    students: int
    unreadable: tuple[str, ...]  # students whose submission could not be read as a notebook

    @property
    def flagged(self) -> int:
        return sum(len(t.pairs) for t in self.tasks)


def _names_in(tokens: list[tokenize.TokenInfo]) -> tuple[set[str], set[str]]:
    """The names imported without an alias (``jax``) and the attributes assigned (``self.w1 = ...``)."""
    imported, attributes = set(), set()
    group: list[str] | None = None  # the dotted name being read after ``import``
    alias = False
    for index, token in enumerate(tokens):
        text = token.string
        if token.type == tokenize.NAME and text == "import":
            group, alias = [], False
        elif group is not None:
            if text in (",", ")") or token.type == tokenize.NEWLINE or text == ";":
                if group and not alias and group[0] != "*":
                    imported.add(group[0])
                group, alias = ([], False) if text in (",", ")") else (None, False)
            elif text == "as":
                alias = True
            elif text not in ("(", ".") and not alias:
                group.append(text)
        elif (
            token.type == tokenize.NAME
            and index
            and tokens[index - 1].string == "."
            and index + 1 < len(tokens)
            and tokens[index + 1].string in _ASSIGNMENTS
        ):
            attributes.add(text)
    if group and not alias:
        imported.add(group[0])
    return imported, attributes


def _raw_tokens(source: str) -> list[tokenize.TokenInfo]:
    """Python tokens of ``source`` but magics, comments and layout; line by line when broken code does not tokenize."""
    source = "\n".join("" if _MAGIC.match(line) else line for line in source.splitlines())
    try:
        return [t for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type not in _DROPPED]
    except (tokenize.TokenError, IndentationError, SyntaxError):
        tokens = []
        for number, line in enumerate(source.splitlines(), 1):
            try:
                for token in tokenize.generate_tokens(io.StringIO(line.strip() + "\n").readline):
                    if token.type not in _DROPPED:
                        tokens.append(token._replace(start=(number, 0), end=(number, 0)))
            except (tokenize.TokenError, IndentationError, SyntaxError):
                continue
        return tokens


def normalise(source: str, library: frozenset[str] = frozenset()) -> list[tuple[str, int]]:
    """``source`` as normalised tokens, each with its line; ``library``: more names kept as they are."""
    tokens = _raw_tokens(source)
    imported, attributes = _names_in(tokens)
    keep = _KEEP | library | imported
    out: list[tuple[str, int]] = []
    previous, depth = "", 0
    for index, token in enumerate(tokens):
        kind, text, line = token.type, token.string, token.start[0]
        following = tokens[index + 1].string if index + 1 < len(tokens) else ""
        if kind == tokenize.OP and text in "([{":
            depth += 1
        elif kind == tokenize.OP and text in _CLOSING:
            depth = max(0, depth - 1)
        if kind == tokenize.NEWLINE or (kind == tokenize.OP and text == ";"):
            text = ";"
            if previous in (";", ""):
                continue
        elif kind == tokenize.NAME:
            if previous == ".":
                text = "V" if text in attributes else text
            elif depth and following == "=" and previous in ("(", ","):
                pass  # a keyword argument: the callee's name for it
            elif text not in keep:
                text = "V"
        elif kind == tokenize.NUMBER:
            text = "0"
        elif kind in _STRINGS:
            text = "S"
            if previous == "S":  # adjacent strings, and the parts of an f-string, are one literal
                continue
        elif kind == tokenize.OP and text in _CLOSING and previous == ",":
            out.pop()  # a trailing comma
        elif kind == tokenize.ERRORTOKEN and not text.strip():
            continue
        out.append((text, line))
        previous = text
    while out and out[-1][0] == ";":
        out.pop()
    return out


def shingles(cells: list[str], library: frozenset[str] = frozenset()) -> dict[int, tuple[int, int]]:
    """Each run of ``SHINGLE`` tokens (its hash) -> its first and last line in the cells joined by a blank line."""
    tokens, offset = [], 0
    for cell in cells:
        tokens += [(text, line + offset) for text, line in normalise(cell, library)]
        if tokens and tokens[-1][0] != ";":
            tokens.append((";", tokens[-1][1]))
        offset += len(cell.splitlines()) + 1
    while tokens and tokens[-1][0] == ";":
        tokens.pop()
    texts = [t for t, _ in tokens]
    found: dict[int, tuple[int, int]] = {}
    for i in range(max(1, len(tokens) - SHINGLE + 1) if tokens else 0):
        last = tokens[min(i + SHINGLE, len(tokens)) - 1]
        found.setdefault(hash(tuple(texts[i : i + SHINGLE])), (tokens[i][1], last[1]))
    return found


def read_answers(
    template: nbformat.NotebookNode, paths: dict[str, Path]
) -> tuple[dict[str, dict[str, list[str]]], list[str]]:
    """student -> task -> their code cells for it, as the plan runs them (answer cells and cells they added),
    and the students whose file is not a notebook."""
    answers, unreadable = {}, []
    for student, path in sorted(paths.items()):
        cells: dict[str, list[str]] = {}
        try:
            for step in build_plan(template, read_submission(path)).steps:
                if isinstance(step, RunCell) and step.origin == "student" and step.task and has_code(step.source):
                    cells.setdefault(step.task, []).append(step.source[:MAX_CELL_CHARS].strip("\n"))
        except Exception:  # NotANotebook, or a malformed notebook the plan cannot align: not compared
            unreadable.append(student)
        else:
            answers[student] = cells
    return answers, unreadable


def compare_task(
    task: str, sources: dict[str, list[str]], excluded: set[int], library: frozenset[str] = frozenset()
) -> TaskSimilarity:
    """The flagged pairs among the answers to one task (student -> their code cells for it)."""
    from scipy import sparse

    answers = {s: Answer("\n\n".join(cells), shingles(cells, library)) for s, cells in sources.items()}
    kept = {s: set(a.shingles) - excluded for s, a in answers.items()}
    kept = {s: held for s, held in kept.items() if held}  # untouched starter code is no answer
    answered = len(kept)
    if len(kept) >= COMMON_MIN_ANSWERS:
        counts = Counter(shingle for held in kept.values() for shingle in held)
        common = {s for s, n in counts.items() if n > COMMON_FRACTION * len(kept)}
        kept = {s: held - common for s, held in kept.items()}
    students = sorted(s for s, held in kept.items() if len(held) >= MIN_SHINGLES)
    if len(students) < 2:
        return TaskSimilarity(task, answered, len(students), ())
    columns: dict[int, int] = {}
    rows, cols = [], []
    for row, student in enumerate(students):
        for shingle in kept[student]:
            rows.append(row)
            cols.append(columns.setdefault(shingle, len(columns)))
    matrix = sparse.csr_matrix((np.ones(len(rows), dtype=np.int32), (rows, cols)), shape=(len(students), len(columns)))
    shared = (matrix @ matrix.T).toarray()
    sizes = np.diag(shared).astype(float)
    union = sizes[:, None] + sizes[None, :] - shared
    jaccard = shared / union
    containment = shared / np.minimum(sizes[:, None], sizes[None, :])
    flagged = np.triu((jaccard >= JACCARD_THRESHOLD) | (containment >= CONTAINMENT_THRESHOLD), k=1)
    pairs = []
    for i, j in zip(*np.nonzero(flagged)):
        a, b = students[i], students[j]
        scores = float(jaccard[i, j]), float(containment[i, j])
        pairs.append(SimilarPair(task, a, b, *scores, answers[a], answers[b], frozenset(kept[a] & kept[b])))
    pairs.sort(key=lambda p: (-p.jaccard, -p.containment, p.first, p.second))
    return TaskSimilarity(task, answered, len(students), tuple(pairs))


def find_similar(template: nbformat.NotebookNode, paths: dict[str, Path]) -> SimilarityReport:
    """The similarity report of a class: ``paths`` maps each student to their submitted file."""
    answers, unreadable = read_answers(template, paths)
    code = [cell.source for cell in template.cells if cell.cell_type == "code"]  # starter code included
    # The names the lab's code imports without an alias are kept as they are in every answer.
    library = frozenset().union(*(_names_in(_raw_tokens(source))[0] for source in code))
    excluded = set().union(*(shingles([source], library) for source in code))
    task_ids = [t["id"] for t in template.metadata.get("autograder", {}).get("tasks", [])]
    tasks = []
    for task in task_ids:
        sources = {student: by_task[task] for student, by_task in answers.items() if by_task.get(task)}
        tasks.append(compare_task(task, sources, excluded, library))
    return SimilarityReport(tuple(tasks), len(paths), tuple(unreadable))


SIMILARITY_FILE = "similarity.html"
MAX_PAIRS_SHOWN = 100  # per task, the most similar first

STYLE = (
    TABLE_STYLE
    + """
.pair{border:1px solid #ccc;border-radius:6px;margin:1rem 0;padding:.5rem 1rem}
.pair h3{font-size:1rem;margin:.3rem 0}
.sides{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:1rem}
.sides pre{background:#f6f6f6;padding:.5rem;font-size:.8rem;overflow-x:auto;margin:.2rem 0}
.shared{background:#ffe9a8;display:inline-block;width:100%}
.note{color:#555}
"""
)


def _highlighted(answer: Answer, shared: frozenset[int]) -> str:
    """The answer's source with the lines covered by shared shingles marked."""
    lines: set[int] = set()
    for shingle in shared:
        first, last = answer.shingles[shingle]
        lines.update(range(first, last + 1))
    out = []
    for number, line in enumerate(answer.source.splitlines(), 1):
        text = escape(line) or " "
        out.append(f"<span class='shared'>{text}</span>" if number in lines else text)
    return "\n".join(out)


def _pair_html(pair: SimilarPair) -> str:
    return (
        f"<div class='pair' data-task='{escape(pair.task)}'><h3><span class='students'>{escape(pair.first)} "
        f"&amp; {escape(pair.second)}</span> — Jaccard {pair.jaccard:.2f}, containment {pair.containment:.2f}"
        f"</h3><div class='sides'>"
        f"<div><b>{escape(pair.first)}</b><pre>{_highlighted(pair.first_answer, pair.shared)}</pre></div>"
        f"<div><b>{escape(pair.second)}</b><pre>{_highlighted(pair.second_answer, pair.shared)}</pre></div>"
        f"</div></div>"
    )


def similarity_html(report: SimilarityReport, lab: str) -> str:
    """The page: per task, the flagged pairs with both answers side by side, shared lines marked."""
    rows = "".join(
        f"<tr><td><a href='#{escape(t.task)}'>{escape(t.task)}</a></td><td>{t.answered}</td>"
        f"<td>{t.compared}</td><td>{len(t.pairs)}</td></tr>"
        for t in report.tasks
    )
    sections = []
    for task in report.tasks:
        shown = task.pairs[:MAX_PAIRS_SHOWN]
        left_out = len(task.pairs) - len(shown)
        more = f"<p class='note'>… and {left_out} more pairs, less similar.</p>" if left_out else ""
        body = "".join(_pair_html(p) for p in shown) or "<p class='note'>No pair is flagged.</p>"
        sections.append(f"<section id='{escape(task.task)}'><h2>Task {escape(task.task)}</h2>{body}{more}</section>")
    unreadable = (
        f"<p class='note'>Not notebooks, not compared: {escape(', '.join(report.unreadable))}</p>"
        if report.unreadable
        else ""
    )
    title = f"{escape(lab)} — similar answers"
    body = (
        f"<h1>{title}</h1>"
        f"<p>{report.students} submissions; <span id='flagged'>{report.flagged}</span> pairs flagged.</p>"
        f"<p class='note'>Answers are compared task by task after normalising names, literals, comments and "
        f"layout, without the lab's own code and the code most of the class shares: a pair is flagged at a "
        f"Jaccard similarity of {JACCARD_THRESHOLD:g} or more of their {SHINGLE}-token runs, or when "
        f"{CONTAINMENT_THRESHOLD:.0%} of the shorter answer is in the other. Answers shorter than "
        f"{MIN_SHINGLES} runs are not compared. Shared lines are marked. A flag is a reason to look, "
        f"not a verdict.</p>{unreadable}"
        f"<table><tr><th>task</th><th>answered</th><th>compared</th><th>pairs flagged</th></tr>{rows}</table>"
        f"{''.join(sections)}"
    )
    return page_html(title, STYLE, body, width="90rem")
