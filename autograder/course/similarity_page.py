"""The similarity report's page (``similarity.html``, beside the class report): per task, the flagged
pairs, most similar first, with both answers side by side and the lines their shared runs cover marked."""

from __future__ import annotations

from autograder.course.similarity import (
    CONTAINMENT_THRESHOLD,
    JACCARD_THRESHOLD,
    MIN_SHINGLES,
    SHINGLE,
    Answer,
    SimilarityReport,
    SimilarPair,
)
from autograder.grading import TABLE_STYLE, escape, page_html

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
        more = (
            f"<p class='note'>… and {len(task.pairs) - len(shown)} more pairs, less similar.</p>"
            if len(task.pairs) > len(shown)
            else ""
        )
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
