"""Every result says what graded it: the harness's, JAX's, jaxlib's, NumPy's and Python's versions, in
results.json and in the feedback page's footer, kept through a saved result."""

import platform
from importlib import metadata

from autograder.grading import GradeResult
from autograder.grading.feedback import feedback_html
from autograder.grading.versions import grader_versions, versions_line


def test_the_versions_are_those_installed_and_named_in_results_and_feedback():
    versions = grader_versions()
    assert versions == {
        "autograder": metadata.version("jax-labs-autograder"),
        "jax": metadata.version("jax"),
        "jaxlib": metadata.version("jaxlib"),
        "numpy": metadata.version("numpy"),
        "python": platform.python_version(),
    }
    result = GradeResult("lab2_three_ways", "sub.ipynb", "graded", None, 100.0, graded_by=versions)
    assert result.to_gradescope()["extra_data"]["graded_by"] == versions
    assert GradeResult.from_dict(result.to_dict()).graded_by == versions
    line = versions_line(versions)
    assert line == (
        f"Graded by autograder {versions['autograder']} with JAX {versions['jax']} (jaxlib "
        f"{versions['jaxlib']}), NumPy {versions['numpy']}, Python {versions['python']}."
    )
    assert f"<footer id='graded-by'>{line}</footer>" in feedback_html(result, "ada")
    older = GradeResult.from_dict({k: v for k, v in result.to_dict().items() if k != "graded_by"})
    assert older.graded_by == {} and "graded-by" not in feedback_html(older, "ada")  # a result saved before
