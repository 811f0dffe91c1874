"""The device's measured copy bandwidth, the peak that ``pct_peak`` is a percentage of.

Stored as ``statistics/<gpu>/calibration.json`` by ``harness calibrate`` (on the GPU): a
device-to-device copy, bytes read plus bytes written over the median time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness import paths

FILE = "calibration.json"
#: 2 GiB each way: far beyond the L2, long enough that launch overhead is noise.
COPY_BYTES = 2 << 30


def path_for(slug: str, root: Path | None = None) -> Path:
    """Where the calibration of the GPU with this slug lives."""
    return (root or paths.statistics_dir()) / slug / FILE


def save(record: dict[str, Any], slug: str, root: Path | None = None) -> Path:
    """Write the calibration record as JSON."""
    p = path_for(slug, root)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    return p


def load(slug: str, root: Path | None = None) -> dict[str, Any] | None:
    """The stored calibration, or None when the GPU was never calibrated."""
    p = path_for(slug, root)
    return json.loads(p.read_text()) if p.is_file() else None
