"""Lab 3's graded submissions (graded once per session by the ``lab_grades`` fixture), beyond the
scores every lab is tested for in test_lab_grades.py."""

from grading_session import assert_layout_failure_explained


def _lab3(lab_grades):
    return lab_grades("lab3_fsdp_tp")[1]


def test_wrong_layout_says_expected_and_found_with_pictures(lab_grades):
    assert_layout_failure_explained(_lab3(lab_grades)["tp_psum_replicated_result"], "test_t2_fresh_layout")


def test_crashing_cell_is_reported_and_grading_goes_on(lab_grades):
    result = _lab3(lab_grades)["crashing_cell"]
    assert any("NameError" in error and "fsdp_block" in error for error in result.cell_errors)
    assert {t.task: t.score for t in result.tasks}["t2"] == 16  # graded with other cases: t1 and t2 are its own
