"""Where a GPU's results live: ``statistics/<gpu>/``, the folder ``harness bench`` writes by
default, named as the bench names it. ``harness where`` prints it, so that a script on a
GPU machine (``scripts/gpu-check.sh``) reads and packs the folder the harness chose rather
than a name it spells out itself.
"""

from __future__ import annotations

from pathlib import Path

from harness import paths


def gpu_dir(device: int = 0) -> Path:
    """``statistics/<gpu>/`` of GPU ``device`` (``statistics/h200`` for an H200), from the
    name the device gives itself; GpuUnavailable (one line) when there is no such GPU."""
    from harness.backends.pycuda.context import Device

    dev = Device(device)
    try:
        return paths.statistics_dir() / dev.info.slug
    finally:
        dev.close()
