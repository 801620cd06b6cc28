"""Lab 3's graded submissions (graded once per session by the ``lab_grades`` fixture), beyond the
scores every lab is tested for in test_lab_grades.py."""


def _lab3(lab_grades):
    return lab_grades("lab3_fsdp_tp")[1]


def test_wrong_layout_says_expected_and_found_with_pictures(lab_grades):
    result = _lab3(lab_grades)["tp_psum_replicated_result"]
    (layout,) = [c for t in result.tasks for c in t.checks if c.name == "test_t2_fresh_layout"]
    assert "expected" in layout.message and "found" in layout.message
    assert layout.expected_picture and layout.found_picture
    assert layout.expected_picture != layout.found_picture


def test_crashing_cell_is_reported_and_grading_goes_on(lab_grades):
    result = _lab3(lab_grades)["crashing_cell"]
    assert any("NameError" in error and "fsdp_block" in error for error in result.cell_errors)
    assert result.score == 16
