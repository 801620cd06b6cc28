"""The former name of ``pipeline``, kept while a test helper still imports it from here; import from
``autograder.grading.pipeline``."""

from autograder.grading.pipeline import grade_with_execution

__all__ = ["grade_with_execution"]
