"""Planning a sweep: the jobs of stages and pipelines, variants, tuning defines, options."""

from __future__ import annotations

import pytest

from harness.engine import jobs
from harness.errors import BadInput


def test_plan_variants(reg) -> None:  # type: ignore[no-untyped-def]
    st = reg.get("dynamic_spikes")
    assert {j.variant.name for j in jobs.plan([st], ["batch=1"])} == {"default"}
    assert {j.variant.name for j in jobs.plan([st], ["batch=1"], ["all"])} == {"default",
                                                                              "away"}
    with pytest.raises(BadInput, match="no variant 'fast'"):
        jobs.plan([st], ["batch=1"], ["fast"])


def test_plan_define_tunes_every_chosen_variant(reg) -> None:  # type: ignore[no-untyped-def]
    st = reg.get("dynamic_spikes")
    got = jobs.plan([st], ["batch=1"], ["all"], define_specs=["BLOCK=128,512", "CACHE_VEC=1"])
    seen = {(j.variant.name, dict(j.variant.defines).get("BLOCK"),
             dict(j.variant.defines)["CACHE_VEC"]) for j in got}
    assert seen == {("default[BLOCK=128,CACHE_VEC=1]", "128", "1"),
                    ("default[BLOCK=512,CACHE_VEC=1]", "512", "1"),
                    ("away[BLOCK=128,CACHE_VEC=1]", "128", "1"),
                    ("away[BLOCK=512,CACHE_VEC=1]", "512", "1")}
    away = next(j.variant for j in got if j.variant.name.startswith("away"))
    assert ("ROUNDING_AWAY", "1") in away.defines  # the variant's own defines are kept
    assert jobs.parse_defines(["N=1,1,2"]) == {"N": ["1", "2"]}


def test_a_define_sweep_sets_a_point_s_builds_side_by_side(reg) -> None:  # type: ignore[no-untyped-def]
    """Each declared variant's builds side by side at each point, the points in order and
    the builds' order turned by one from a point to the next; the first build there times
    the peers, and a peer runs the declared variant."""
    st = reg.get("dynamic_spikes")
    got = jobs.plan([st], ["batch=1,4", "in_f=64"], ["all"], define_specs=["BLOCK=64,128"])
    assert [(j.variant.name, j.point["batch"], j.times_peers) for j in got] == [
        ("default[BLOCK=64]", 1, True), ("default[BLOCK=128]", 1, False),
        ("default[BLOCK=128]", 4, True), ("default[BLOCK=64]", 4, False),
        ("away[BLOCK=64]", 1, True), ("away[BLOCK=128]", 1, False),
        ("away[BLOCK=128]", 4, True), ("away[BLOCK=64]", 4, False)]
    three = jobs.plan([st], ["batch=1,2,3,4", "in_f=64"], define_specs=["BLOCK=32,64,128"])
    assert [j.variant.name[-4:-1] for j in three if j.times_peers] == \
        ["=32", "=64", "128", "=32"]  # each build first in turn
    assert [j.as_peers_run_it().variant for j in got[4:6]] == [st.variant("away")] * 2
    assert got[0].peer_key == got[1].peer_key != got[2].peer_key
    plain = jobs.plan([st], ["batch=1,4", "in_f=64"], ["all"])
    assert all(j.times_peers and j.as_peers_run_it() is j for j in plain)
    assert [(j.variant.name, j.point["batch"]) for j in plain] == [
        ("default", 1), ("default", 4), ("away", 1), ("away", 4)]


def test_options_fix_axes_and_pick_pinned_variants(reg) -> None:  # type: ignore[no-untyped-def]
    enc = reg.get("spike_encode")
    got = jobs.plan([enc], ["batch=1,2"], None, {"mode": "bidirectional", "k": "2.5",
                                                 "group_size": "7"})
    assert {j.variant.name for j in got} == {"bidirectional"}
    assert [(j.point["batch"], j.point["k"]) for j in got] == [(1, 2.5), (2, 2.5)]


def test_a_define_the_kernel_never_reads_is_refused(reg) -> None:  # type: ignore[no-untyped-def]
    """A misspelt macro would compile the same kernel under another label; a name the
    sources mention (in the .cu or a header it includes) or a variant declares is taken."""
    st = reg.get("dynamic_spikes")
    with pytest.raises(BadInput, match="--define CACHE_VECS, X: stage dynamic_spikes's "
                                       "kernel never reads them"):
        jobs.plan([st], ["batch=1"], define_specs=["CACHE_VECS=1", "X=1", "BLOCK=64"])
    with pytest.raises(BadInput, match="--define UNITZ: stage find_min_max"):
        jobs.one_variant(reg.get("find_min_max"), None, {}, ["UNITZ=2"])
    assert jobs.one_variant(reg.get("find_min_max"), None, {}, ["UNITS=2"]).name \
        == "default[UNITS=2]"
    # A name that only a comment of its sources mentions changes no build either.
    with pytest.raises(BadInput, match="--define REDUCE_BLOCKS: stage find_min_max"):
        jobs.one_variant(reg.get("find_min_max"), None, {}, ["REDUCE_BLOCKS=64"])


def test_a_sweep_over_a_pinned_axis_chooses_the_variants(reg) -> None:  # type: ignore[no-untyped-def]
    """--sweep mode=a,b over a stage whose variants pin the mode runs the variants pinned
    to a and b (not the default variant, its pin overriding the sweep); a variant named
    that the sweep leaves out, or a value no variant pins, is bad input."""
    enc = reg.get("spike_encode")
    got = jobs.plan([enc], ["batch=4", "mode=bidirectional,twos_complement"])
    assert [(j.variant.name, j.point["mode"]) for j in got] == [
        ("bidirectional", "bidirectional"), ("twos_complement", "twos_complement")]
    got = jobs.plan([enc], ["batch=4", "mode=twos_complement"], ["all"])
    assert [j.variant.name for j in got] == ["twos_complement"]
    with pytest.raises(BadInput, match=r"leaves out the variant\(s\) named \(unidirectional\)"):
        jobs.plan([enc], ["batch=4", "mode=bidirectional"], ["unidirectional"])
    with pytest.raises(BadInput, match="unknown mode 'bogus'"):
        jobs.plan([enc], ["batch=4", "mode=bogus"])
    af = reg.get("activation_fused")  # a variant a layout of a mode: the layout is pinned too
    got = jobs.plan([af], ["batch=4", "mode=bidirectional"])
    assert sorted(j.variant.name for j in got) == ["bidirectional", "packed_bidirectional"]
    with pytest.raises(BadInput, match="unknown layout 'wide'"):
        jobs.plan([af], ["batch=4", "layout=wide"])
    sl = reg.pipelines["spike_linear"]  # its packed and operand variants pin the mode
    got = jobs.plan([sl], ["batch=8", "mode=bidirectional"])
    assert sorted(j.variant.name for j in got) == ["any", "default"]
    assert all(j.point["mode"] == "bidirectional" for j in got)
    with pytest.raises(BadInput, match="spike_linear has no variant with mode=bidirectional"):
        jobs.plan([sl], ["batch=8", "mode=bidirectional"], ["packed"])
    with pytest.raises(BadInput, match=r"--mode and --sweep mode=\.\.\. both set mode"):
        jobs.plan([enc], ["batch=4", "mode=bidirectional"], None, {"mode": "unidirectional"})


def test_stages_first_then_every_pipeline_variant(reg) -> None:  # type: ignore[no-untyped-def]
    ds, ap = reg.get("dynamic_spikes"), reg.pipelines["activation_path"]
    got = jobs.plan([ap, ds], ["batch=1,2"], None, {"mode": "bidirectional"})
    assert [(j.target.name, j.is_pipeline) for j in got][:2] == [("dynamic_spikes", False)] * 2
    pipe_jobs = got[2:]
    assert [(j.variant.name, j.point["batch"]) for j in pipe_jobs] == [
        (v.name, b) for v in ap.variants for b in (1, 2)]
    assert all(j.is_pipeline and j.point["mode"] == "bidirectional" for j in pipe_jobs)
    assert all(ap.variant_of(j.point) == j.variant for j in pipe_jobs)


def test_named_variants_choose_a_pipelines_too(reg) -> None:  # type: ignore[no-untyped-def]
    sl = reg.pipelines["spike_linear"]
    assert len({j.variant.name for j in jobs.plan([sl], ["batch=8"])}) == len(sl.variants) > 1
    got = jobs.plan([sl], ["batch=8"], ["packed"])
    assert [j.variant.name for j in got] == ["packed"]
    with pytest.raises(BadInput, match="pipeline spike_linear has no variant 'int8'"):
        jobs.plan([sl], ["batch=8"], ["int8"])
    # A named variant that pins the mode asked otherwise is refused, as a stage's is.
    with pytest.raises(BadInput, match="pipeline spike_linear has no variant with mode="):
        jobs.plan([sl], ["batch=8"], ["packed"], {"mode": "bidirectional"})


def test_plan_refuses_what_cannot_apply(reg) -> None:  # type: ignore[no-untyped-def]
    ds, ap = reg.get("dynamic_spikes"), reg.pipelines["activation_path"]
    with pytest.raises(BadInput, match="--define tunes a stage's kernel"):
        jobs.plan([ap], [], define_specs=["A=1"])
    with pytest.raises(BadInput, match="no selected stage has an axis 'out_f'"):
        jobs.plan([ds], ["out_f=8"])
    with pytest.raises(BadInput, match="no axis 'group_size'"):
        jobs.plan([ap], ["group_size=8"])  # a pipeline's sweep is not lenient


def test_one_point(reg) -> None:  # type: ignore[no-untyped-def]
    st = reg.get("spike_encode")
    j = jobs.one_point(st, None, {"batch": "8", "mode": "twos_complement"}, ["in_f=32"])
    assert j.variant.name == "twos_complement" and (j.point["batch"], j.point["in_f"]) == (8, 32)
    with pytest.raises(BadInput, match="takes one point; the options give 2"):
        jobs.one_point(st, None, {}, ["in_f=32,64"])
    with pytest.raises(BadInput, match=r"--batch and --sweep batch=\.\.\. both set batch"):
        jobs.one_point(st, None, {"batch": "2"}, ["batch=1"])  # --batch would win in silence


def test_one_point_with_defines_is_that_build(reg) -> None:  # type: ignore[no-untyped-def]
    st = reg.get("dynamic_spikes")
    j = jobs.one_point(st, None, {}, [], ["BLOCK=128"])
    assert j.variant.name == "default[BLOCK=128]" and j.variant.tuning == (("BLOCK", "128"),)
    assert j.variant == jobs.tuned(st.variants[0], {"BLOCK": ["128"]})[0]
    with pytest.raises(BadInput, match="one value here"):
        jobs.one_point(st, None, {}, [], ["BLOCK=128,256"])


def test_restrict_leaves_out_the_builds_that_fail_and_names_them(reg) -> None:  # type: ignore[no-untyped-def]
    """Kernel Tuner's restrictions: the product of the --define values less the builds a
    --restrict condition rules out, over a variant's own -D values too; a restriction
    without a sweep, or one that leaves a stage nothing, is bad input."""
    st = reg.get("dynamic_spikes")
    dropped: list[str] = []
    got = jobs.plan([st], ["batch=1"], None, define_specs=["BLOCK=64,128,512", "CACHE_VEC=1,4"],
                    restrict_specs=["BLOCK * CACHE_VEC <= 512"], dropped=dropped)
    assert {j.variant.name for j in got} == {
        "default[BLOCK=64,CACHE_VEC=1]", "default[BLOCK=64,CACHE_VEC=4]",
        "default[BLOCK=128,CACHE_VEC=1]", "default[BLOCK=128,CACHE_VEC=4]",
        "default[BLOCK=512,CACHE_VEC=1]"}
    assert dropped == ["dynamic_spikes default[BLOCK=512,CACHE_VEC=4]"]
    away = jobs.plan([st], ["batch=1"], ["away"], define_specs=["BLOCK=64,128"],
                     restrict_specs=["ROUNDING_AWAY * BLOCK == 64"])  # its declared value too
    assert {j.variant.name for j in away} == {"away[BLOCK=64]"}
    with pytest.raises(BadInput, match=r"build default\[BLOCK=64\] has no -D value ROUNDING_AWAY"):
        jobs.plan([st], ["batch=1"], ["all"], define_specs=["BLOCK=64"],
                  restrict_specs=["ROUNDING_AWAY == 1"])
    with pytest.raises(BadInput, match="--restrict limits the builds of a --define sweep"):
        jobs.plan([st], ["batch=1"], restrict_specs=["BLOCK < 64"])
    with pytest.raises(BadInput, match="leaves none of dynamic_spikes's 2 build"):
        jobs.plan([st], ["batch=1"], define_specs=["BLOCK=64,128"],
                  restrict_specs=["BLOCK > 1024"])
