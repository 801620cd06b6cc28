"""jsonschema without its IRI format checker: a second off the start of every process of the harness.

nbformat imports jsonschema, and jsonschema imports rfc3987-syntax, where it is installed (Jupyter's
``jsonschema[format-nongpl]`` brings it), to check the ``iri`` format. rfc3987-syntax builds some 35 Earley
parsers as it is imported: 1.1 s on a 2-core machine, paid by every command, Dask worker and grading
process, and by a student's ``ag.check`` in a fresh kernel. nbformat's schemas name no format at all, so
nothing the harness validates ever asks for that checker.

``install`` makes jsonschema's own import of rfc3987-syntax fail as if it were not installed: jsonschema then
leaves ``iri`` unchecked, as it does wherever the package is missing. Any other import of rfc3987-syntax
finds it as usual.
"""

from __future__ import annotations

import importlib.abc
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import FrameType, ModuleType

SKIPPED = "rfc3987_syntax"
IMPORTER = "jsonschema._format"


class _SkippedForJsonschema(importlib.abc.MetaPathFinder):
    """A finder that answers jsonschema's import of ``SKIPPED`` with ModuleNotFoundError, which jsonschema
    expects from an optional checker's package; it finds nothing else (the next finders do)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname == SKIPPED and _imported_from(IMPORTER):
            raise ModuleNotFoundError(f"{SKIPPED} is left out of {IMPORTER} ({__name__})", name=SKIPPED)
        return None


def _imported_from(module: str) -> bool:
    """Whether the import under way was started by the code of ``module``."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__") == module:
            return True
        frame = frame.f_back
    return False


def install() -> None:
    """Put the finder first on ``sys.meta_path``, once. It matters only where jsonschema is imported after it."""
    if not any(isinstance(finder, _SkippedForJsonschema) for finder in sys.meta_path):
        sys.meta_path.insert(0, _SkippedForJsonschema())
