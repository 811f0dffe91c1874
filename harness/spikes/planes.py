"""What the stages that take T spike planes as an axis share (spike_encode, spike_decode,
spike_decode_packed): their axes, one compiled variant per mode, the streaming kernels' grid
and their validation shapes.
"""

from __future__ import annotations

from typing import Any

from harness.api import Axis, Launcher, Variant
from harness.spikes import geometry, spec
from harness.spikes.axes import BATCH, IN_F, K_INPUT, mode


def axes(mode_help: str) -> tuple[Axis, ...]:
    """batch, in_f, planes (T), the k of the step-1 input they are made from, and mode."""
    return (
        BATCH,
        IN_F,
        Axis("planes", 6, int, "T, the number of planes", minimum=1,
             maximum=spec.MAX_PLANES),
        K_INPUT,
        mode(mode_help),
    )


def stream_grid(launch: Launcher, n: int, v: Variant) -> tuple[int, int, int]:
    """The grid of a plane stage's streaming kernel over ``n`` values, by the variant's
    UNITS, BPS and WARP_STEPS (``geometry.chunk_grid``): with WARP_STEPS n > 0 (the stages'
    default, 1) blocks enough that no warp takes more than n chunks; with 0 one wave at
    most, the warps looping over the rest."""
    d = dict(v.defines)
    return geometry.chunk_grid(n, launch.block, launch.sm_count, int(d["UNITS"]),
                               int(d["BPS"]), int(d["WARP_STEPS"]))


def mode_variants(*defines: tuple[str, str]) -> tuple[Variant, ...]:
    """One variant per mode: ``-DMODE=<index in spec.MODES>`` then ``defines``; each pins
    the mode axis."""
    return tuple(Variant(m, (("MODE", str(i)), *defines), f"{m} coding", pins=(("mode", m),))
                 for i, m in enumerate(spec.MODES))


#: Validation shapes: T = 1 and the most planes, in_f 1 and 5 (the scalar paths), a row
#: wider than a block's register cache.
CASES: tuple[dict[str, Any], ...] = (
    {"batch": 1, "in_f": 3584}, {"batch": 6, "in_f": 3584, "planes": 1},
    {"batch": 7, "in_f": 5, "planes": 3}, {"batch": 3, "in_f": 1, "planes": 2},
    {"batch": 13, "in_f": 130, "planes": 8}, {"batch": 33, "in_f": 4100, "planes": 12},
    {"batch": 2, "in_f": 999, "planes": spec.MAX_PLANES},
)
