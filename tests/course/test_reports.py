"""Feedback pages, the class report, the gradebook and collecting submissions — without kernels."""

import csv
import io
import zipfile

import pytest
from headless_chromium import chromium, render

from autograder.checks import Layout, MeshSpec, render_layout
from autograder.course.class_summary import class_summary_html
from autograder.course.collect import CollectError, collect_submissions
from autograder.course.gradebook import gradebook_csv, load_results, write_student
from autograder.grading.feedback import feedback_html
from autograder.grading.pytest_plugin import CheckResult
from autograder.grading.results import GradeResult, TaskResult

MESH = MeshSpec((2, 4), ("x", "y"))


def _result(score_t1=True, hidden_failed=True):
    expected = render_layout(Layout.of_spec(MESH, ("x", "y"), (4, 16)))
    found = render_layout(Layout.of_spec(MESH, ("y", "x"), (4, 16)))
    t1 = TaskResult(
        "t1",
        8,
        (
            CheckResult("t1", "test_t1_values", "`A_sharded` holds the values of A", 3, True, "", False),
            CheckResult(
                "t1",
                "test_t1_layout",
                "`A_sharded` is laid out as P('x', 'y')",
                5,
                score_t1,
                "" if score_t1 else "`A_sharded`: expected rows split into 2 blocks <b>, found ...",
                False,
                expected_picture=None if score_t1 else expected,
                found_picture=None if score_t1 else found,
            ),
        ),
    )
    t2 = TaskResult(
        "t2",
        8,
        (CheckResult("t2", "test_t2_secret", "fresh inputs", 8, not hidden_failed, "secret reference 42.0", True),),
    )
    return GradeResult("lab2_three_ways", "s.ipynb", "graded", None, 16, (t1, t2), seconds=12.5)


def test_feedback_shows_points_pictures_and_hides_hidden_messages():
    page = feedback_html(_result(score_t1=False), "ada")
    assert "<span id='score'>3</span>" in page and "<span id='max-score'>16</span>" in page
    assert "CPU 0" in page and "expected<pre>" in page and "found<pre>" in page
    assert "&lt;b&gt;" in page and "<b>," not in page  # messages are escaped
    assert "A hidden check of task t2 failed (0/8 points)." in page and "secret reference" not in page


def test_a_failed_hidden_check_names_its_task_and_points_in_every_view():
    from rich.console import Console

    from autograder.grading.terminal_table import print_grade

    result = _result(score_t1=False)
    (hidden,) = [t for t in result.to_gradescope()["tests"] if t["visibility"] == "after_published"]
    assert hidden["output"] == "A hidden check of task t2 failed (0/8 points)."
    console = Console(record=True, width=200)
    print_grade(result, console)
    text = console.export_text()
    assert "A hidden check of task t2 failed (0/8 points)." in text and "secret reference" not in text
    assert "found ..." in text  # a visible check's message is shown


@pytest.mark.skipif(chromium() is None, reason="chromium is not installed")
def test_feedback_renders_in_a_headless_browser(tmp_path):
    page = tmp_path / "feedback.html"
    page.write_text(feedback_html(_result(score_t1=False), "ada"))
    shot = tmp_path / "feedback.png"
    dom = render(page, shot, "1000,900")
    assert '<span id="score">3</span>' in dom and '<span id="max-score">16</span>' in dom
    assert "Task t1" in dom and "CPU 0,1,2,3" in dom or "CPU 0" in dom
    assert shot.stat().st_size > 10_000  # a real picture, not an empty page


def test_gradebook_has_one_row_per_student_and_survives_reloading(tmp_path):
    write_student(tmp_path, "ada", _result(), "<html></html>")
    write_student(tmp_path, "bo", _result(score_t1=False), "<html></html>")
    write_student(tmp_path, "bo", _result(score_t1=False), "<html></html>")  # saved twice: still one row
    results = load_results(tmp_path)
    rows = list(csv.DictReader(io.StringIO(gradebook_csv(results, ["t1", "t2"]))))
    assert [(r["student"], r["score"], r["t1"], r["t2"]) for r in rows] == [
        ("ada", "8", "8", "0"),
        ("bo", "3", "3", "0"),
    ]
    assert (tmp_path / "ada" / "results.json").is_file() and (tmp_path / "ada" / "feedback.html").is_file()


def test_class_report_summarises_the_class():
    results = {"ada": _result(), "bo": _result(score_t1=False), "cy": _result(hidden_failed=False)}
    page = class_summary_html(results, "lab2_three_ways", ["t1", "t2"])
    assert "3 submissions" in page and "score histogram" in page
    assert "<td>t1</td><td>2/3</td>" in page and "`A_sharded` is laid out" in page
    assert "12.5 s" in page


def test_collect_folders_files_and_gradescope_names(tmp_path):
    (tmp_path / "ada.ipynb").write_text("{}")
    (tmp_path / "bo").mkdir()
    (tmp_path / "bo" / "lab2.ipynb").write_text("{}")
    (tmp_path / "cy").mkdir()
    (tmp_path / "notes.pdf").write_text("pdf")
    found = {s.student: s for s in collect_submissions(tmp_path, "lab2")}
    assert sorted(found) == ["ada", "bo", "cy", "notes"]
    assert found["bo"].path.name == "lab2.ipynb" and "holds no notebook" in found["cy"].problem
    assert found["notes"].path.suffix == ".pdf"


def test_a_zip_that_escapes_its_folder_is_refused(tmp_path):
    archive = tmp_path / "evil.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("../../escaped.ipynb", "{}")
    with pytest.raises(CollectError, match="outside the archive"):
        collect_submissions(archive, "lab2", tmp_path / "x")


def _term_class():
    """Five students of lab 2: one overridden, one late, one that timed out."""
    from dataclasses import replace

    from synthetic_results import TASK_POINTS, lab2_result

    from autograder.course.adjustments import Override, apply_overrides
    from autograder.course.late import apply_late, build_policy

    policy = build_policy("2026-12-01T23:59+00:00", "10%/day", "50%")
    results = {f"s{i}": lab2_result({f"t{j}" for j in range(1, i + 2)}, seconds=10.0 + 5 * i) for i in range(5)}
    results["s1"] = apply_overrides(
        results["s1"], {"t5": Override("s1", "t5", 7, "half right <b>", "ta1")}, TASK_POINTS
    )
    results["s2"] = apply_late(
        replace(
            results["s2"],
            submitted_at="2026-12-02T10:00:00+00:00",
            submitted_time_source="the file's modification time",
        ),
        policy,
    )
    results["s3"] = replace(results["s3"], status="timeout", reason="the notebook took longer than 600 s")
    return results


def test_class_report_counts_checks_quantiles_overrides_and_late_penalties():
    results = _term_class()
    page = class_summary_html(results, "lab2_three_ways", ["t1", "t2", "t3", "t4", "t5", "t6", "t7", "t8"])
    # per check: t3's values check passed by s2, s3, s4 (3 of 5), with its most common message
    assert "<td>t3</td><td>t3: the values</td><td class='num'>3</td><td>3/5</td>" in page
    assert "t3: expected the reference values, found zeros <small>(2×)</small>" in page
    assert "t4: the layout <small>(hidden)</small>" in page
    scores = sorted(r.score for r in results.values())
    assert f"<td class='num' id='q-min'>{scores[0]:.1f}</td>" in page
    assert f"<td class='num' id='q-median'>{scores[2]:.1f}</td>" in page
    assert "1 overrides for 1 students" in page and "half right &lt;b&gt;" in page
    assert "1 late, 1 penalised" in page and "4 on time" not in page  # only s2 was judged by the policy
    assert "<td>timeout</td><td>1</td>" in page
    assert page.index("s4</td><td>30.0 s") < page.index("s0</td><td>10.0 s")  # slowest first
    assert "href='similarity.html'" in page


@pytest.mark.skipif(chromium() is None, reason="chromium is not installed")
def test_class_report_and_adjusted_feedback_render_in_a_headless_browser(tmp_path):
    results = _term_class()
    pages = {
        "report.html": class_summary_html(results, "lab2_three_ways", [f"t{j}" for j in range(1, 9)]),
        "s1.html": feedback_html(results["s1"], "s1"),
        "s2.html": feedback_html(results["s2"], "s2"),
    }
    dom = {}
    for name, text in pages.items():
        (tmp_path / name).write_text(text)
        shot = tmp_path / f"{name}.png"
        dom[name] = render(tmp_path / name, shot, "1100,1400")
        assert shot.stat().st_size > 10_000, name
    assert 'id="checks"' in dom["report.html"] and 'id="similarity" href="similarity.html"' in dom["report.html"]
    assert "1 overrides for 1 students" in dom["report.html"]
    assert "Points set by a grader: 7 (the checks gave 0). half right &lt;b&gt;" in dom["s1.html"]
    assert '<span id="score">23</span>' in dom["s1.html"]
    assert 'id="late"' in dom["s2.html"] and "Score before the penalty: 28" in dom["s2.html"]
    assert '<span id="score">25.2</span>' in dom["s2.html"]
