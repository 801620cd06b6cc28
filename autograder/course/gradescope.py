"""The former home of ``gradescope_zip`` and ``gradescope_run``, kept while a benchmark still imports
``build_autograder_zip`` from here; import from ``autograder.course.gradescope_zip``."""

from autograder.course.gradescope_zip import build_autograder_zip

__all__ = ["build_autograder_zip"]
