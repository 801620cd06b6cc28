"""The former name of ``cell_output``, kept while a browser test still imports it from here; import
from ``autograder.notebook.cell_output``."""

from autograder.notebook.cell_output import NO_PUBLIC_CHECKS, NOT_ATTEMPTED

__all__ = ["NO_PUBLIC_CHECKS", "NOT_ATTEMPTED"]
