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


def test_normal_and_llm_families_are_dense_draws_at_their_scale() -> None:
    """normal is N(0, 1), its weights std 0.02; llm weights are the llm draw times 0.02."""
    x = families.activations(np.random.default_rng(0), "normal", 64, 1024)
    assert 0.97 < x.std() < 1.03 and abs(x.mean()) < 0.02
    assert ((x > 0).any(axis=1) & (x < 0).any(axis=1)).all()
    w = families.weights(np.random.default_rng(1), "normal", 64, 1024)
    assert 0.0194 < w.std() < 0.0206 and abs(w.mean()) < 0.0005
    for seed in range(3):
        wl = families.weights(np.random.default_rng(seed), "llm", 64, 1024)
        xl = families.activations(np.random.default_rng(seed), "llm", 64, 1024)
        assert wl.dtype == np.float32
        assert np.array_equal(wl, xl * np.float32(0.02))


@pytest.mark.parametrize("cols", [100, 1020, 1024, 2048])
def test_llm_family_has_one_outlier_channel_per_256_columns(cols: int) -> None:
    """llm activations have max(1, cols // 256) channels over 8x the median channel."""
    for seed in range(3):
        x = families.activations(np.random.default_rng(seed), "llm", 64, cols)
        col = np.abs(x).mean(0)
        assert int((col > 8 * np.median(col)).sum()) == max(1, cols // 256)


@pytest.mark.parametrize("cols", [13, 50, 3585])
def test_edge_ties_row_has_mean_k_at_odd_and_even_widths(cols: int) -> None:
    """The default-k ties row: |x| in {2.5, 3.5}, one 3 at odd widths, mean |x| exactly 3."""
    found = 0
    for seed in range(20):
        x = families.activations(np.random.default_rng(seed), "edge", 6, cols)
        if (x < 0).all():
            continue
        row = np.abs(edge_kinds(x)["ties"]).astype(np.float64)
        assert set(np.unique(row).tolist()) <= {2.5, 3.0, 3.5}
        assert int((row == 3.0).sum()) == cols % 2
        assert row.sum() == 3.0 * cols
        found += 1
    assert found


def test_edge_weight_ties_rows_have_unit_scales() -> None:
    """The weights' ties row: groups of 64 and 128 have scale 1, other values .5 ties."""
    from harness.spikes import spec

    found = 0
    for seed in range(20):
        w = families.weights(np.random.default_rng(seed), "edge", 6, 130)
        if (w < 0).all():
            continue
        row = edge_kinds(w)["ties"][None, :]
        for g in (64, 128):
            assert (spec.scales(row, g) == 1.0).all(), g
        a = np.abs(row[0])
        rest = a[a != 127.0]
        assert rest.size == 130 - 3 and (rest < 127).all() and (rest % 1 == 0.5).all()
        found += 1
    assert found


def test_edge_weights_of_six_rows_have_no_scaled_row() -> None:
    """Edge weights of exactly six rows are the cycle alone: no row is scaled to subnormal."""
    for seed in range(8):
        w = families.weights(np.random.default_rng(seed), "edge", 6, 130)
        assert w.shape == (6, 130)
        nz = np.abs(w[w != 0])
        assert (nz >= np.finfo(np.float32).tiny).all()


def test_the_scaled_weight_row_is_scaled_by_exactly_2_to_the_minus_140() -> None:
    """Edge weight row six is its kind's row times 2^-140 (a ties row: max 127 * 2^-140)."""
    seen = 0
    for seed in range(40):  # the draws whose row 0 (the kind row 6 takes) is the ties row
        w = families.weights(np.random.default_rng(seed), "edge", 7, 130)
        if (w[:6] < 0).all() or not np.array_equal(edge_kinds(w[:6])["ties"], w[0]):
            continue
        seen += 1
        up = np.abs(w[6].astype(np.float64)) * 2.0**140
        assert up.max() == 127.0 and (up[up != 127.0] % 1 == 0.5).all()
    assert seen >= 2


def test_all_negative_draws_are_one_in_seven() -> None:
    """One edge draw in seven is negative in every row (28000 draws: 4000 within 4 sigma)."""
    rng = np.random.default_rng(0)
    n = sum(bool((families.activations(rng, "edge", 6, 1) < 0).all()) for _ in range(28000))
    assert 3770 < n < 4230


def test_negative_rows_stay_a_margin_below_zero() -> None:
    """Negative edge rows are -|x| - 1e-3: every value at most -1e-3, even near x = 0."""
    neg = 0
    for seed in range(20):
        x = families.activations(np.random.default_rng(seed), "edge", 6, 3584)
        rows = x if (x < 0).all() else edge_kinds(x)["negative"][None, :]
        assert rows.max() <= np.float32(-1e-3)
        neg += rows.shape[0]
    assert neg > 20


def test_single_and_constant_rows_spread_over_their_range() -> None:
    """Single and constant values span (-10, 10), (-4, 4) in activations, (-1, 1) weights."""
    for make, single, const in [(families.activations, 10.0, 4.0), (families.weights, 1.0, 1.0)]:
        singles, consts = [], []
        for seed in range(40):
            a = make(np.random.default_rng(seed), "edge", 6, 50)
            if (a < 0).all():
                continue
            kinds = edge_kinds(a)
            singles.append(float(kinds["single"][kinds["single"] != 0][0]))
            consts.append(float(kinds["constant"][0]))
        for v, lim in [(np.array(singles), single), (np.array(consts), const)]:
            assert (np.abs(v) <= lim).all() and v.min() < -lim / 2 and v.max() > lim / 2


def test_ramp_activations_round_each_index_once_past_2_to_the_24() -> None:
    """Ramp activations are float(i + 1) rounded once, not a float32 count, past 2^24."""
    n = (1 << 24) + 4
    x = families.activations(np.random.default_rng(0), "ramp", 1, n).ravel()
    tail = np.arange(n - 8, n, dtype=np.float64) + 1
    assert x[-8:].tolist() == tail.astype(np.float32).tolist()
    assert x[(1 << 24) + 1] == np.float32(16777218)
