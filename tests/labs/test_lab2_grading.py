"""Lab 2's graded submissions (graded once per session by the ``lab_grades`` fixture), beyond the
scores every lab is tested for in test_lab_grades.py: messages, pictures, statuses, Gradescope output."""

from grading_session import assert_layout_failure_explained


def _lab2(lab_grades):
    return lab_grades("lab2_three_ways")[1]


def test_a_failed_layout_check_says_expected_and_found_with_pictures(lab_grades):
    assert_layout_failure_explained(_lab2(lab_grades)["wrong_axis_order"], "test_t1_layout")


def test_kernel_death_names_the_cell(lab_grades):
    result = _lab2(lab_grades)["kernel_dies"]
    assert result.ended_at and result.ended_at.startswith("cell")
    assert "died" in result.reason


def test_timed_out_cell_is_reported_and_grading_goes_on(lab_grades):
    result = _lab2(lab_grades)["infinite_loop"]
    assert any("CellTimeoutError" in error for error in result.cell_errors)
    assert result.score == 8


def test_grades_are_gradescope_results(lab_grades):
    result = _lab2(lab_grades)["wrong_axis_order"]  # graded with other cases: its own task is t1
    data = result.to_gradescope()
    assert data["score"] == result.score and data["extra_data"]["max_score"] == 100
    assert sum(t["score"] for t in data["tests"] if t["name"].startswith("t1: ")) == 3
    statuses = {t["status"] for t in data["tests"]}
    assert statuses == {"passed", "failed"}
    assert all({"name", "score", "max_score", "status", "output", "visibility"} <= set(t) for t in data["tests"])
    hidden = [t for t in data["tests"] if t["visibility"] == "after_published" and t["status"] == "failed"]
    assert hidden and all(
        t["output"].startswith("A hidden check of task ") and "points)" in t["output"] for t in hidden
    )
