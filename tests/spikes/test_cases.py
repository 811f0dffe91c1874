"""The shared first validation cases: each side's stages list them first, in order (a
case's number draws its inputs), and every case is a point of the stage that lists it."""

from __future__ import annotations

import pytest

from harness.contract import registry
from harness.spikes import cases, spec

ACTIVATION = ("dynamic_spikes", "dynamic_spikes_reverse", "find_min_max")
WEIGHT = ("compute_scales", "weight_quantize", "weight_quant_fused")


@pytest.fixture(scope="module")
def reg() -> registry.Registry:
    return registry.discover(entry_points=False)


def test_activation_stages_start_with_the_shared_cases(reg: registry.Registry) -> None:
    n = len(cases.ACTIVATION)
    for name in ACTIVATION:
        assert reg.get(name).cases[:n] == cases.ACTIVATION, name
    assert reg.get("activation_fused").cases[:4] == cases.ACTIVATION[:4]
    per_mode = reg.get("transform_absmax").cases
    for i, m in enumerate(spec.MODES):
        block = per_mode[i * len(per_mode) // 3:(i + 1) * len(per_mode) // 3]
        assert [{k: v for k, v in c.items() if k != "mode"} for c in block][:n] == \
            list(cases.ACTIVATION)
        assert all(c["mode"] == m for c in block)


def test_weight_stages_start_with_the_shared_cases(reg: registry.Registry) -> None:
    for name in WEIGHT:
        assert reg.get(name).cases[:len(cases.WEIGHT)] == cases.WEIGHT, name


def test_per_mode_repeats_the_cases_mode_by_mode() -> None:
    got = cases.per_mode(({"batch": 1}, {"batch": 2}))
    assert got == tuple({"batch": b, "mode": m} for m in spec.MODES for b in (1, 2))


def test_every_case_is_a_point_of_its_stage(reg: registry.Registry) -> None:
    for st in [*reg.stages.values(), *reg.pipelines.values()]:
        for case in st.cases:
            for v in st.variants:
                pinned = dict(v.pins)
                if any(case.get(k, val) != val for k, val in pinned.items()):
                    continue
                p = st.point(v, **case)  # KeyError on an axis the stage does not have
                for a in st.axes:
                    a.parse(str(p[a.name]))  # ValueError when out of range
