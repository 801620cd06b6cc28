"""Lab 1's graded submissions (graded once per session by the ``lab_grades`` fixture), beyond the
scores every lab is tested for in test_lab_grades.py."""

from grading_session import assert_layout_failure_explained


def test_picture_failure_names_the_picture_not_the_spec(lab_grades):
    result = lab_grades("lab1_distributed_arrays")[1]["replicated_instead_of_sharded"]
    (check,) = [c for t in result.tasks if t.task == "t2" for c in t.checks if not c.passed]
    assert "picture C" in check.message and "P(" not in check.message
    assert_layout_failure_explained(result, check.name)
