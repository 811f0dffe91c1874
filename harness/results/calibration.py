"""A GPU's stored copy bandwidth (``statistics/<gpu>/calibration.json``, written whole by
``harness calibrate``): where it lives, writing it and reading it back; and the records of
other sizes and kinds, each in a file of its own beside it (``beside``).

Every record read back is checked (:func:`_check`) before anything uses it: its rate feeds
each row's ``peak_gbps`` and ``pct_peak``, and its sizes the report's words for it.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from harness import paths
from harness.errors import HarnessError
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
    """The stored calibration, or None when the GPU was never calibrated; HarnessError (one
    line naming the file) where the file is no calibration record: not JSON, or its rate
    or another of its numbers not one (:func:`_check`). A run would otherwise set its rows
    against a NaN or negative peak, or stop on a traceback."""
    p = path_for(slug, root)
    if not p.is_file():
        return None
    try:
        return _read(p, ("gbps",))  # a run reads the rate alone
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise HarnessError(f"{p}: not a calibration record ({_why(exc)}); run `harness "
                           "calibrate` to measure it again") from None


def _read(p: Path, required: tuple[str, ...]) -> dict[str, Any]:
    """The record in ``p``, checked (:func:`_check`, with ``required`` keys); OSError,
    ValueError (a JSONDecodeError too), KeyError or TypeError saying why it is none."""
    rec = json.loads(p.read_text(encoding="utf-8"))
    _check(rec, required)
    return rec


def _why(exc: Exception) -> str:
    """What made a file no calibration record, in a few words."""
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON: {exc.msg} at line {exc.lineno}"
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc.args[0]) if exc.args else type(exc).__name__


def records(folder: Path) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
    """Every calibration record in a GPU's folder, the peak first, then the others by
    name; and the files that could not be read as one (named, with why)."""
    found, bad = [], []
    for p in sorted(folder.glob("calibration*.json"), key=lambda p: (p.name != FILE, p.name)):
        try:
            rec = _read(p, ("gbps", "median_us"))  # the table shows both
        except (OSError, ValueError, KeyError, TypeError) as exc:
            bad.append(f"{p.name}: not a calibration record ({_why(exc)})")
            continue
        found.append((p.name, rec))
    return found, bad


#: The numbers of a record that are read (the rate, the time, its noise, the sizes and
#: the planes), each with what it must be: ``positive`` (a finite number above 0; the
#: noise may be 0) and ``whole`` (a count: sizes and planes).
_NUMBERS: dict[str, tuple[bool, bool]] = {
    "gbps": (True, False), "median_us": (True, False), "noise_pct": (False, False),
    "bytes_each_way": (True, True), "bytes_written": (True, True), "bytes_read": (True, True),
    "reads": (True, True), "writes": (True, True)}


def _check(rec: Any, required: tuple[str, ...] = ("gbps", "median_us")) -> None:
    """KeyError (a ``required`` key missing), TypeError or ValueError unless ``rec`` is an
    object whose numbers (:data:`_NUMBERS`, where given) are what they must be: a number
    (null, text, a list or true is none), finite, above 0 (the noise >= 0), a size or a
    count of planes whole. A NaN or negative rate would flow into every row's % of the
    peak, a negative size into the report's words ("copy of -0.0 MB")."""
    if not isinstance(rec, dict):
        raise TypeError("not a JSON object")
    for key, (positive, whole) in _NUMBERS.items():
        if key not in rec:
            if key in required:
                raise KeyError(f"no {key}")
            continue
        value = rec[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise TypeError(f"{key} is {json.dumps(value)}, not a number")
        try:
            x = float(value)
        except OverflowError:  # a JSON integer past float's range: no size of anything
            x = math.inf
        if not math.isfinite(x) or x < 0 or (positive and x == 0) \
                or (whole and not x.is_integer()):
            what = "a whole number" if whole else "a finite number"
            raise ValueError(f"{key} is {json.dumps(value)}; it must be {what} "
                             f"{'above 0' if positive else '>= 0'}")


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
