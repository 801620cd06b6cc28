"""The instructor's view of a class, one self-contained HTML page. A submission the harness failed to run has
no score: it is counted apart, left out of the scores and pass rates it would pull down with points never lost."""

from __future__ import annotations

import statistics
from collections import Counter

from autograder.grading import HARNESS_ERRORS, TABLE_STYLE, GradeResult, escape, page_html, shown_points

STYLE = (
    TABLE_STYLE
    + """
.bar{background:#4a78c2;height:.8rem;display:inline-block} svg text{font-size:11px}
td.num{text-align:right} .note{color:#555}
"""
)
SLOWEST = 10


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
        rects.append(
            f"<rect x='{x}' y='{150 - h:.1f}' width='{bar}' height='{h:.1f}' fill='#4a78c2'>"
            f"<title>{count} students</title></rect>"
            f"<text x='{x + bar / 2}' y='{145 - h:.1f}' text-anchor='middle'>{count}</text>"
            f"<text x='{x + bar / 2}' y='165' text-anchor='middle'>{shown_points(low)}–</text>"
        )
    return f"<svg width='{width}' height='{height}' role='img' aria-label='score histogram'>{''.join(rects)}</svg>"


def _pass_rate(passed: int, total: int) -> str:
    rate = passed / total if total else 0.0
    return (
        f"<td>{passed}/{total}</td>"
        f"<td><span class='bar' style='width:{100 * rate:.0f}px'></span> {100 * rate:.0f}%</td>"
    )


def _task_rows(results: list[GradeResult], task_ids: list[str]) -> str:
    rows = []
    for task_id in task_ids:
        tasks = [t for r in results for t in r.tasks if t.task == task_id]
        failures = Counter((c.title, c.message) for t in tasks for c in t.checks if not c.passed)
        common = ""
        if failures:
            (title, message), count = failures.most_common(1)[0]
            common = f"{escape(title)}: {escape(message[:300])} <small>({count}×)</small>"
        rate = _pass_rate(sum(t.passed for t in tasks), len(tasks))
        rows.append(f"<tr><td>{escape(task_id)}</td>{rate}<td>{common}</td></tr>")
    return "".join(rows)


def _check_rows(results: list[GradeResult], task_ids: list[str]) -> str:
    """One row per check, in the lab's order: pass rate and the most common failure message."""
    checks: dict[tuple[str, str], list] = {}
    for result in results:
        for task in result.tasks:
            for check in task.checks:
                checks.setdefault((task.task, check.name), []).append(check)
    order = {t: i for i, t in enumerate(task_ids)}
    rows = []
    for (task_id, _), found in sorted(checks.items(), key=lambda kv: order.get(kv[0][0], len(order))):
        messages = Counter(c.message for c in found if not c.passed)
        common = ""
        if messages:
            message, count = messages.most_common(1)[0]
            common = f"{escape(message[:300])} <small>({count}×)</small>"
        first = found[0]
        hidden = " <small>(hidden)</small>" if first.hidden else ""
        rows.append(
            f"<tr><td>{escape(task_id)}</td><td>{escape(first.title)}{hidden}</td>"
            f"<td class='num'>{shown_points(first.points)}</td>{_pass_rate(sum(c.passed for c in found), len(found))}"
            f"<td>{common}</td></tr>"
        )
    return "".join(rows)


def _quantiles(scores: list[float]) -> str:
    if not scores:
        return "<p class='note'>No scores yet.</p>"
    q1, median, q3 = statistics.quantiles(scores, n=4, method="inclusive") if len(scores) > 1 else scores * 3
    low, high = min(scores), max(scores)
    cells = "".join(
        f"<td class='num' id='q-{name}'>{value:.1f}</td>"
        for name, value in (("min", low), ("q1", q1), ("median", median), ("q3", q3), ("max", high))
    )
    return f"<table><tr><th>min</th><th>25%</th><th>median</th><th>75%</th><th>max</th></tr><tr>{cells}</tr></table>"


def _override_section(results: dict[str, GradeResult]) -> str:
    rows = [
        (student, task, override) for student, result in sorted(results.items()) for task, override in result.overrides
    ]
    students = len({student for student, _, _ in rows})
    if not rows:
        return "<h2>Overrides</h2><p id='overrides'>0 overrides.</p>"
    body = "".join(
        f"<tr><td>{escape(s)}</td><td>{escape(t.task)}</td><td class='num'>{shown_points(t.auto_score)}</td>"
        f"<td class='num'>{shown_points(t.score)}</td><td>{escape(override.grader)}</td>"
        f"<td>{escape(override.comment)}</td></tr>"
        for s, t, override in rows
    )
    return (
        f"<h2>Overrides</h2><p id='overrides'>{len(rows)} overrides for {students} students.</p>"
        f"<table><tr><th>student</th><th>task</th><th>automatic</th><th>set to</th><th>grader</th>"
        f"<th>comment</th></tr>{body}</table>"
    )


def _late_section(results: dict[str, GradeResult]) -> str:
    judged = {s: (r, r.late) for s, r in results.items() if r.late is not None}
    if not judged:
        return "<h2>Late submissions</h2><p id='late' class='note'>No late policy.</p>"
    late = {s: (r, penalty) for s, (r, penalty) in judged.items() if penalty.is_late}
    penalised = [penalty for _, penalty in late.values() if penalty.points > 0]
    deducted = sum(penalty.points for penalty in penalised)
    body = "".join(
        f"<tr><td>{escape(s)}</td><td class='num'>{shown_points(r.raw_score)}</td>"
        f"<td class='num'>−{shown_points(penalty.points)}</td><td class='num'>{shown_points(r.score)}</td>"
        f"<td>{escape(penalty.reason)}</td></tr>"
        for s, (r, penalty) in sorted(late.items())
    )
    table = f"<table><tr><th>student</th><th>raw</th><th>penalty</th><th>final</th><th>why</th></tr>{body}</table>"
    unknown = sum(penalty.submitted_at is None for _, penalty in judged.values())  # e.g. an LMS's download
    untimed = f" {unknown} with no submission time, so no penalty (the late column says why)." if unknown else ""
    return (
        f"<h2>Late submissions</h2><p id='late'>{len(late)} late, {len(penalised)} penalised "
        f"({shown_points(deducted)} points in all); {len(judged) - len(late) - unknown} on time.{untimed}</p>"
        f"{table if late else ''}"
    )


def _harness_error_section(failed: dict[str, GradeResult]) -> str:
    if not failed:
        return "<h2>Harness errors</h2><p id='harness-errors'>0 submissions the harness failed to run.</p>"
    body = "".join(f"<tr><td>{escape(s)}</td><td>{escape(r.reason or '')}</td></tr>" for s, r in sorted(failed.items()))
    return (
        f"<h2>Harness errors</h2><p id='harness-errors'>{len(failed)} submissions the harness failed to run: "
        "not the students' fault and not scored (left out of the scores above); the next run of the batch "
        f"grades them again.</p><table><tr><th>student</th><th>why</th></tr>{body}</table>"
    )


def class_summary_html(results: dict[str, GradeResult], lab: str, task_ids: list[str]) -> str:
    failed = {s: r for s, r in results.items() if r.status in HARNESS_ERRORS}
    graded = [r for s, r in results.items() if s not in failed]
    scores = [r.score for r in graded]
    max_score = max((r.max_score for r in graded), default=100.0) or 100.0
    statuses = Counter(r.status for r in results.values())
    mean = sum(scores) / len(scores) if scores else 0.0
    times = sorted(((r.seconds, s) for s, r in results.items()), reverse=True)
    time_rows = "".join(
        f"<tr><td>{escape(s)}</td><td>{t:.1f} s</td>"
        f"<td><span class='bar' style='width:{min(400, 4 * t):.0f}px'></span></td></tr>"
        for t, s in times[:SLOWEST]
    )
    median_time = statistics.median(t for t, _ in times) if times else 0.0
    status_rows = "".join(f"<tr><td>{escape(k)}</td><td>{v}</td></tr>" for k, v in statuses.most_common())
    title = f"{escape(lab)} — class report"
    body = (
        f"<h1>{title}</h1>"
        f"<p>{len(graded)} submissions scored{f' (and {len(failed)} harness errors)' if failed else ''}; "
        f"mean score <span id='mean'>{mean:.1f}</span> / {shown_points(max_score)}. "
        f"<a id='similarity' href='similarity.html'>Similar answers</a></p>"
        f"<h2>Scores</h2>{_histogram_svg(scores, max_score)}{_quantiles(scores)}"
        f"<h2>Tasks</h2><table><tr><th>task</th><th>passed</th><th>pass rate</th>"
        f"<th>most common failure</th></tr>{_task_rows(graded, task_ids)}</table>"
        f"<h2>Checks</h2><table id='checks'><tr><th>task</th><th>check</th><th>points</th><th>passed</th>"
        f"<th>pass rate</th><th>most common message</th></tr>{_check_rows(graded, task_ids)}</table>"
        f"<h2>Statuses</h2><table>{status_rows}</table>{_harness_error_section(failed)}"
        f"{_override_section(results)}{_late_section(results)}"
        f"<h2>Slowest submissions</h2><p class='note'>Median grading time {median_time:.1f} s; "
        f"the {min(SLOWEST, len(times))} slowest:</p><table>{time_rows}</table>"
    )
    return page_html(title, STYLE, body, width="70rem")
