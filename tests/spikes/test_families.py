"""Input families: shapes, types, and the properties the edge and ramp families promise."""

from __future__ import annotations

import numpy as np
import pytest

from harness.errors import BadInput
from harness.spikes import families
from tests.spikes.edge_rows import edge_kinds, row_kinds


@pytest.mark.parametrize("fam", families.NAMES)
def test_shapes_and_types(fam: str) -> None:
    rng = np.random.default_rng(0)
    x = families.activations(rng, fam, 7, 13)
    w = families.weights(rng, fam, 5, 13)
    b = families.bias(rng, fam, 5)
    assert x.shape == (7, 13) and x.dtype == np.float32 and np.isfinite(x).all()
    assert w.shape == (5, 13) and w.dtype == np.float32 and np.isfinite(w).all()
    assert b.shape == (5,) and b.dtype == np.float32


def test_ramp_family_is_the_seed_programs_tensors() -> None:
    rng = np.random.default_rng(0)
    x = families.activations(rng, "ramp", 2, 3)
    assert x.ravel().tolist() == [1, 2, 3, 4, 5, 6]
    w = families.weights(rng, "ramp", 1, 9)
    # C's 0.1 * (i + 1) is a double product rounded once to float: 0.9 at i = 8, where a
    # float32 product would give 0.90000004
    assert w.ravel().tolist() == [np.float32(0.1 * i) for i in range(1, 10)]
    assert w[0, 8] == np.float32(0.9) != np.float32(0.1) * np.float32(9)
    assert (families.bias(rng, "ramp", 4) == 0.5).all()


def test_the_family_list_is_the_domains_alone() -> None:
    """Every spike-domain stage and pipeline takes the domain's families, and nothing of the
    generic harness names one."""
    from harness.contract import registry

    reg = registry.discover(entry_points=False)
    assert families.NAMES == ("normal", "llm", "ramp", "edge")
    assert all(d.families == families.NAMES
               for d in [*reg.stages.values(), *reg.pipelines.values()])
    with pytest.raises(BadInput, match="unknown input family 'seed' \\(known: normal, llm, "
                                       "ramp, edge\\)"):
        families.check_family("seed")


def test_edge_rows_cover_the_spec_cases() -> None:
    seen = []
    for seed in range(40):
        x = families.activations(np.random.default_rng(seed), "edge", 6, 50)
        if (x < 0).all():  # the seventh draw: the whole tensor below zero
            seen.append("all negative")
            continue
        kinds = edge_kinds(x)
        assert not kinds["zeros"].any()
        assert (kinds["negative"] < 0).all()
        assert np.count_nonzero(kinds["single"]) == 1
        assert np.unique(kinds["constant"]).size == 1
        seen.append(row_kinds(x)[0])
    # batch 1 (row 0) meets every kind over the draws, and some draw is all negative
    assert set(seen) == {*families.EDGE_ROWS, "all negative"}


def test_llm_family_has_outlier_channels() -> None:
    x = families.activations(np.random.default_rng(2), "llm", 64, 1024)
    col = np.abs(x).mean(0)
    assert col.max() > 10 * np.median(col)


def test_unknown_family() -> None:
    with pytest.raises(BadInput, match="unknown input family 'zipf'"):
        families.activations(np.random.default_rng(0), "zipf", 1, 1)


def test_edge_weights_reach_subnormal_and_zero_scales_and_the_clamp() -> None:
    """Past the first six rows, one weight row is scaled by 2^-140: its group scales are
    subnormal (or 0 for non-zero weights), where w / scale can round past 127.5 and the
    quantiser's clamp acts; over a few draws each happens."""
    from harness.spikes import spec

    clamped = zero_scale = subnormal = 0
    for seed in range(8):
        w = families.weights(np.random.default_rng(seed), "edge", 13, 130)
        sc = spec.scales(w, 128)
        row = sc[len(families.EDGE_ROWS)]
        subnormal += int(((row > 0) & (row < np.finfo(np.float32).tiny)).sum())
        group_max = np.array([np.abs(w[6, :128]).max(), np.abs(w[6, 128:]).max()])
        zero_scale += int(((row == 0) & (group_max > 0)).sum())
        s = np.repeat(row, 128)[:130]
        with np.errstate(all="ignore"):
            clamped += int((np.abs(np.rint(w[6] / s))[s > 0] > 127).sum())
    assert subnormal and zero_scale and clamped
