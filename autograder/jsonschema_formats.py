"""jsonschema without its IRI format checker: a second off the start of every process of the harness.

jsonschema imports rfc3987-syntax, where installed, to check the ``iri`` format, and it builds some 35 Earley
parsers as it is imported (1.1 s on a 2-core machine). nbformat's schemas name no format at all, so
``install`` makes jsonschema's own import of it fail as if it were not installed; any other import finds it.
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
    """Answers jsonschema's import of ``SKIPPED`` with the ModuleNotFoundError it expects of an optional package."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        frame: FrameType | None = sys._getframe(1) if fullname == SKIPPED else None
        while frame is not None:  # the import under way was started by jsonschema's code
            if frame.f_globals.get("__name__") == IMPORTER:
                raise ModuleNotFoundError(f"{SKIPPED} is left out of {IMPORTER} ({__name__})", name=SKIPPED)
            frame = frame.f_back
        return None


def install() -> None:
    """Put the finder first on ``sys.meta_path``, once."""
    if not any(isinstance(finder, _SkippedForJsonschema) for finder in sys.meta_path):
        sys.meta_path.insert(0, _SkippedForJsonschema())
