"""The declarations the planes-taking stages share (harness/spikes/planes.py)."""

from __future__ import annotations

from harness.spikes import planes as plane_stages
from harness.spikes import spec


def test_each_mode_variant_compiles_the_mode_it_pins() -> None:
    """The kernels read -DMODE as the index in spec.MODES; the variant pins that mode."""
    vs = plane_stages.mode_variants(("LAYOUT", "1"))
    assert [v.name for v in vs] == list(spec.MODES)
    for v in vs:
        d = dict(v.defines)
        assert int(d["MODE"]) == spec.check_mode(dict(v.pins)["mode"]) and d["LAYOUT"] == "1"
        assert v.defines[0][0] == "MODE"  # the option order, hence the kernel hash, is fixed
    assert all(v.defines == (("MODE", str(i)),)
               for i, v in enumerate(plane_stages.mode_variants()))


def test_axes_and_cases_stay_in_range() -> None:
    axes = {a.name: a for a in plane_stages.axes("m")}
    assert axes["planes"].maximum == spec.MAX_PLANES
    for case in plane_stages.CASES:
        for name, value in case.items():
            axes[name].parse(str(value))  # raises when out of range
    assert max(c.get("planes", axes["planes"].default) for c in plane_stages.CASES) == \
        spec.MAX_PLANES
