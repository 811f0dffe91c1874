"""What a command acts on: targets by name, option values, families, variants, overrides."""

from __future__ import annotations

import dataclasses

import pytest

from harness.engine import targets
from harness.errors import BadInput


def test_resolve_splits_stages_and_pipelines(reg) -> None:  # type: ignore[no-untyped-def]
    tg = targets.resolve(reg, ["dynamic_spikes", "spike_quant_gemm"], with_pipelines=False)
    assert [s.name for s in tg.stages] == ["dynamic_spikes"]
    assert [p.name for p in tg.pipelines] == ["spike_quant_gemm"]
    assert [t.name for t in tg.all] == ["dynamic_spikes", "spike_quant_gemm"]
    assert targets.resolve(reg, None, with_pipelines=False).pipelines == []
    assert len(targets.resolve(reg, None, with_pipelines=True).pipelines) == len(reg.pipelines)
    # The names a command takes are stages and pipelines: the line lists both.
    with pytest.raises(BadInput, match=r"unknown stage or pipeline 'nope' \(stages: .*"
                                       r"dynamic_spikes.*; pipelines: .*spike_quant_gemm"):
        targets.resolve(reg, ["nope"], False)


def test_options_keep_only_given_values() -> None:
    assert targets.options(mode=None, k=2.5, group_size=None) == {"k": "2.5"}


def test_families_are_checked_against_the_targets_own(reg) -> None:  # type: ignore[no-untyped-def]
    ds = reg.get("dynamic_spikes")
    narrow = dataclasses.replace(reg.get("find_min_max"), families=("normal",))
    targets.check_families([ds, narrow], ["normal"])
    targets.check_families([], ["anything"])  # no target: nothing to draw
    with pytest.raises(BadInput, match=r"^unknown input family 'zipf' \(known: "
                                       + ", ".join(ds.families) + r"\)$"):
        targets.check_families([ds, narrow], ["normal", "zipf"])
    with pytest.raises(BadInput, match=r"^find_min_max has no input family 'llm' "
                                       r"\(its families: normal\)$"):
        targets.check_families([ds, narrow], ["llm"])


def test_select_variants(reg) -> None:  # type: ignore[no-untyped-def]
    enc = reg.get("spike_encode")
    assert [v.name for v in targets.select_variants(enc, None, {})] == [enc.variants[0].name]
    assert [v.name for v in targets.select_variants(enc, None, {"mode": "bidirectional"})] \
        == ["bidirectional"]
    assert len(targets.select_variants(enc, ["all"], {})) == len(enc.variants)
    with pytest.raises(BadInput, match="unknown mode 'ternary'"):
        targets.select_variants(enc, None, {"mode": "ternary"})


def test_parsed_options_are_the_axes_a_variant_leaves_free(reg) -> None:  # type: ignore[no-untyped-def]
    enc = reg.get("spike_encode")
    v = enc.variant("bidirectional")
    opts = {"mode": "bidirectional", "k": "2.5", "group_size": "7"}
    assert targets.parsed_options(enc.axes, opts, v) == {"k": 2.5}  # mode pinned, no group_size
    with pytest.raises(BadInput, match="k must be"):
        targets.parsed_options(enc.axes, {"k": "-1"}, v)


def test_an_option_for_an_axis_no_target_has_is_bad_input(reg) -> None:  # type: ignore[no-untyped-def]
    ds, cs = reg.get("dynamic_spikes"), reg.get("compute_scales")
    targets.check_options([ds], {"k": "2"})
    targets.check_options([ds, cs], {"k": "2", "group_size": "64"})  # each where it applies
    targets.check_options([], {"k": "2"})
    with pytest.raises(BadInput, match=r"^--group-size: dynamic_spikes has no axis "
                                       r"'group_size' \(axes: batch, in_f, k, vth_min, "
                                       r"vth_max\)$"):
        targets.check_options([ds], {"group_size": "64"})
    with pytest.raises(BadInput, match=r"^--mode: no selected stage has an axis 'mode'$"):
        targets.check_options([ds, cs], {"mode": "bidirectional"})


def test_a_name_given_twice_is_bad_input(reg) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(BadInput, match=r"^stage dynamic_spikes named twice$"):
        targets.resolve(reg, ["dynamic_spikes", "find_min_max", "dynamic_spikes"], False)
    enc = reg.get("spike_encode")
    with pytest.raises(BadInput, match=r"^spike_encode: variant bidirectional named twice$"):
        targets.select_variants(enc, ["bidirectional", "bidirectional"], {})
    with pytest.raises(BadInput, match=r"^family normal named twice$"):
        targets.check_families([enc], ["normal", "normal"])
