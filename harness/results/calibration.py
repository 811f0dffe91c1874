"""A GPU's stored copy bandwidth (``statistics/<gpu>/calibration.json``, written whole by
``harness calibrate``): where it lives, writing it and reading it back; and the records of
other sizes and kinds, each in a file of its own beside it (``beside``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness import paths
from harness.results import files

#: The record's file name in its GPU's folder.
FILE = "calibration.json"


def path_for(slug: str, root: Path | None = None) -> Path:
    """Where the calibration of the GPU with this slug lives."""
    return (root or paths.statistics_dir()) / slug / FILE


def beside(kind: str, nbytes: int) -> str:
    """The file name of a record that is not the GPU's peak: a kind and a size of its own."""
    return f"calibration-{kind}-{nbytes}.json"


def save(record: dict[str, Any], slug: str, root: Path | None = None, name: str = FILE) -> Path:
    """Write a record as JSON (the calibration, or ``name`` beside it), replacing the file
    whole (never half written)."""
    p = path_for(slug, root).with_name(name)
    return files.replace(p, (json.dumps(record, indent=2, sort_keys=True) + "\n").encode())


def load(slug: str, root: Path | None = None) -> dict[str, Any] | None:
    """The stored calibration, or None when the GPU was never calibrated."""
    p = path_for(slug, root)
    return json.loads(p.read_text()) if p.is_file() else None
