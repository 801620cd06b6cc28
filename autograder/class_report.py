"""The instructor's view of a class: score histogram, pass rate and commonest failure per task,
statuses, and grading time per submission — one self-contained HTML page."""

from __future__ import annotations

from collections import Counter
from html import escape

from autograder.results import GradeResult

STYLE = """
body{font-family:system-ui,sans-serif;max-width:70rem;margin:2rem auto;padding:0 1rem;color:#222}
table{border-collapse:collapse;margin:.5rem 0} td,th{border-bottom:1px solid #ddd;padding:.25rem .6rem;text-align:left}
.bar{background:#4a78c2;height:.8rem;display:inline-block} svg text{font-size:11px}
"""


def _histogram_svg(scores: list[float], max_score: float, bins: int = 10) -> str:
    counts = [0] * bins
    for score in scores:
        index = min(bins - 1, int(bins * score / max_score)) if max_score else 0
        counts[index] += 1
    tallest = max(counts) or 1
    width, height, bar = 40 * bins + 40, 180, 36
    rects = []
    for i, count in enumerate(counts):
        h = 140 * count / tallest
        x = 30 + 40 * i
        low = max_score * i / bins
        rects.append(f"<rect x='{x}' y='{150 - h:.1f}' width='{bar}' height='{h:.1f}' fill='#4a78c2'>"
                     f"<title>{count} students</title></rect>"
                     f"<text x='{x + bar / 2}' y='{145 - h:.1f}' text-anchor='middle'>{count}</text>"
                     f"<text x='{x + bar / 2}' y='165' text-anchor='middle'>{low:g}–</text>")
    return f"<svg width='{width}' height='{height}' role='img' aria-label='score histogram'>{''.join(rects)}</svg>"


def _task_rows(results: list[GradeResult], task_ids: list[str]) -> str:
    rows = []
    for task_id in task_ids:
        tasks = [t for r in results for t in r.tasks if t.task == task_id]
        passed = sum(t.passed for t in tasks)
        rate = passed / len(tasks) if tasks else 0.0
        failures = Counter((c.title, c.message) for t in tasks for c in t.checks if not c.passed)
        common = ""
        if failures:
            (title, message), count = failures.most_common(1)[0]
            common = f"{escape(title)}: {escape(message[:300])} <small>({count}×)</small>"
        rows.append(f"<tr><td>{escape(task_id)}</td><td>{passed}/{len(tasks)}</td>"
                    f"<td><span class='bar' style='width:{100 * rate:.0f}px'></span> {100 * rate:.0f}%</td>"
                    f"<td>{common}</td></tr>")
    return "".join(rows)


def class_report_html(results: dict[str, GradeResult], lab: str, task_ids: list[str]) -> str:
    graded = list(results.values())
    scores = [r.score for r in graded]
    max_score = max((r.max_score for r in graded), default=100.0) or 100.0
    statuses = Counter(r.status for r in graded)
    mean = sum(scores) / len(scores) if scores else 0.0
    times = sorted(((r.seconds, s) for s, r in results.items()), reverse=True)
    time_rows = "".join(f"<tr><td>{escape(s)}</td><td>{t:.1f} s</td>"
                        f"<td><span class='bar' style='width:{min(400, 4 * t):.0f}px'></span></td></tr>"
                        for t, s in times)
    status_rows = "".join(f"<tr><td>{escape(k)}</td><td>{v}</td></tr>" for k, v in statuses.most_common())
    return (f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{escape(lab)} — class report</title>"
            f"<style>{STYLE}</style></head><body><h1>{escape(lab)} — class report</h1>"
            f"<p>{len(graded)} submissions; mean score <span id='mean'>{mean:.1f}</span> / {max_score:g}</p>"
            f"<h2>Scores</h2>{_histogram_svg(scores, max_score)}"
            f"<h2>Tasks</h2><table><tr><th>task</th><th>passed</th><th>pass rate</th>"
            f"<th>most common failure</th></tr>{_task_rows(graded, task_ids)}</table>"
            f"<h2>Statuses</h2><table>{status_rows}</table>"
            f"<h2>Grading time per submission</h2><table>{time_rows}</table></body></html>\n")
