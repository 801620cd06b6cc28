"""A grade's files, each replaced at once (never half written), and the one writer of Gradescope's
``results.json``, whoever grades: ``autograder grade --json``, a batch's student folder, Gradescope's container
(which writes it again after every check, so that points earned survive a grader killed later)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

RESULTS_FILE = "results.json"  # Gradescope's format


def write_atomically(path: Path, text: str) -> None:
    """``text`` at ``path``: written beside it, then moved over it, so a reader sees the old file or the new."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_results_json(path: Path, data: dict[str, Any]) -> None:
    """Gradescope's ``results.json`` (``GradeResult.to_gradescope()``, with what the caller adds) at ``path``."""
    write_atomically(path, json.dumps(data, indent=2) + "\n")
