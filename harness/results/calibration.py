"""A GPU's stored copy bandwidth (``statistics/<gpu>/calibration.json``, written whole by
``harness calibrate``): where it lives, writing it and reading it back; and the records of
other sizes and kinds, each in a file of its own beside it (``beside``)."""

from __future__ import annotations

import json
import math
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


def records(folder: Path) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
    """Every calibration record in a GPU's folder, the peak first, then the others by
    name; and the files that could not be read as one (named, with why)."""
    found, bad = [], []
    for p in sorted(folder.glob("calibration*.json"), key=lambda p: (p.name != FILE, p.name)):
        try:
            rec = json.loads(p.read_text(encoding="utf-8"))
            _check(rec)
        except (OSError, ValueError, KeyError, TypeError) as exc:
            bad.append(f"{p.name}: not a calibration record ({exc.__class__.__name__})")
            continue
        found.append((p.name, rec))
    return found, bad


def _check(rec: Any) -> None:
    """TypeError, KeyError or ValueError unless ``rec`` holds what the table reads: numbers
    where numbers go (a value of null, text or a list is not one)."""
    if not isinstance(rec, dict):
        raise TypeError("not an object")
    for key, required in (("gbps", True), ("median_us", True), ("noise_pct", False),
                          ("bytes_each_way", False), ("bytes_written", False),
                          ("bytes_read", False), ("reads", False), ("writes", False)):
        if key not in rec and not required:
            continue
        value = rec[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{key} is {value!r}")
        if not math.isfinite(value):
            raise ValueError(f"{key} is {value!r}")


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def describe(rec: dict[str, Any]) -> str:
    """What a record timed, in words: the copy (each way), the fill, the mix (read, as
    planes, and each unit written), the read."""
    kind = rec.get("kind", "copy" if "bytes_each_way" in rec else "")
    if kind == "copy" and "bytes_each_way" in rec:
        return f"copy of {_mb(int(rec['bytes_each_way']))}"
    if kind == "write" and "bytes_written" in rec:
        return f"fill of {_mb(int(rec['bytes_written']))}"
    if kind in ("mix", "read") and "bytes_read" in rec:
        n, r = int(rec["bytes_read"]), int(rec.get("reads", 1))
        if kind == "read":
            return f"read of {_mb(n)}, {r} plane(s) a thread"
        return f"{_mb(n)} read as {r} plane(s), each unit written {rec.get('writes', '?')} times"
    return kind or "?"


def table(found: list[tuple[str, dict[str, Any]]]) -> str:
    """A folder's calibration records (:func:`records`) as a Markdown table: the peak a
    row's ``% of peak`` refers to, and the ceilings of other traffic beside it (each also
    as % of the peak)."""
    if not found:
        return ""
    peak = next((float(r["gbps"]) for n, r in found if n == FILE), None)
    lines = ["| record | what it timed | median µs | ± noise | GB/s | % of the copy peak | "
             "git_sha |", "|---|---|---|---|---|---|---|"]
    for name, rec in found:
        what = describe(rec)
        pct = f"{100 * float(rec['gbps']) / peak:.1f}" if peak else "-"
        lines.append(f"| {name} | {what} | {float(rec['median_us']):.2f} | "
                     f"{float(rec.get('noise_pct', 0.0)):.2f}% | {float(rec['gbps']):.0f} | "
                     f"{pct} | {rec.get('git_sha', '')} |")
    return "\n".join(lines)
