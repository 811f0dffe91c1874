"""The stage declaration: the kernel file from the name, the block a build and a launch get,
and the reference called with ``given`` only when it takes it."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import numpy as np
import pytest

from harness.contract.stage import (
    Axis,
    Peer,
    Pipeline,
    Rows,
    Stage,
    Variant,
    positional_arity,
)


def toy(reference: Any) -> Stage:
    return Stage(name="toy", entry_points=("toy",), axes=(), families=("flat",),
                 make_inputs=lambda rng, fam, p: {}, outputs=lambda p: {},
                 reference=reference, enqueue=lambda launch, bufs, p, v: None,
                 bytes_moved=lambda p: 0, flops=lambda p: 0, tolerances={}, cases=({},))


def test_a_reference_without_given_is_called_without_it() -> None:
    seen: list[tuple[Any, ...]] = []

    def three(inputs, point, variant):  # type: ignore[no-untyped-def]
        seen.append((inputs, point, variant))
        return {"y": np.zeros(1)}

    st, v = toy(three), Variant("default")
    st.expected({"x": 1}, {}, v, given={"y": np.ones(1)})
    st.expected({"x": 2}, {}, v)
    assert [s[0]["x"] for s in seen] == [1, 2]


def test_a_reference_that_takes_given_gets_it() -> None:
    got: list[Any] = []

    def four(inputs, point, variant, given=None):  # type: ignore[no-untyped-def]
        got.append(given)
        return {}

    st, v = toy(four), Variant("default")
    st.expected({}, {}, v, {"vth": 1})
    st.expected({}, {}, v)
    assert got == [{"vth": 1}, None]
    star = toy(lambda *args: got.append(len(args)) or {})
    star.expected({}, {}, v, {"vth": 1})
    assert got[-1] == 4


def test_positional_arity() -> None:
    assert positional_arity(lambda a, b, c: 0) == 3
    assert positional_arity(lambda a, b, c, given=None: 0) == 4
    assert positional_arity(lambda a, b, c, *, given=None: 0) == 3  # keyword-only: not given
    assert positional_arity(lambda *args: 0) >= 4


def test_the_kernel_file_and_block() -> None:
    st = toy(lambda i, p, v: {})
    assert st.kernel_file == "toy.cu" and st.block == 256
    assert st.block_for(Variant("default")) == 256
    assert st.block_for(Variant("tuned", (("BLOCK", "64"),))) == 64
    assert dataclasses.replace(st, block=128).block_for(Variant("default")) == 128
    with pytest.raises(TypeError):
        Stage(kernel="toy.cu")  # type: ignore[call-arg]  # no such field: the name decides


def test_a_tuned_variant_is_named_after_every_value_set_over_the_declared_one() -> None:
    from harness.contract.stage import Variant

    v = Variant("fp8[e4m3]", defines=(("MODE", "1"), ("UNROLL", "2")))
    once = v.tuned({"UNROLL": "4"})
    assert (once.name, once.declared, once.tuning) == ("fp8[e4m3][UNROLL=4]", "fp8[e4m3]",
                                                       (("UNROLL", "4"),))
    assert dict(once.defines) == {"MODE": "1", "UNROLL": "4"}
    twice = once.tuned({"BLOCK": "64", "UNROLL": "8"})
    assert twice.name == "fp8[e4m3][UNROLL=8,BLOCK=64]" and twice.declared == "fp8[e4m3]"
    assert dict(twice.defines) == {"MODE": "1", "UNROLL": "8", "BLOCK": "64"}
    # What the child rebuilds from the declared name and the values is the same build.
    assert v.tuned(dict(twice.tuning)) == twice
    assert v.tuned({}) is v and v.declared == "fp8[e4m3]"


def test_an_axis_value_of_another_kind_or_not_finite_is_refused() -> None:
    """A value that is not of the axis' kind says so in the axis' words (not Python's
    int() message); a float axis takes no NaN, and infinity only where its default is
    infinite (a clamp's 'none')."""
    batch = Axis("batch", 1, int, minimum=1)
    for text in ("abc", "4..", "1.5"):
        with pytest.raises(ValueError, match=f"batch takes int values, got '{re.escape(text)}'"):
            batch.parse(text)
    k = Axis("k", 3.0, float, minimum=1e-30)
    clamp = Axis("vth_max", float("inf"), float)
    for axis, text in ((k, "inf"), (k, "nan"), (clamp, "nan"), (clamp, "-inf")):
        with pytest.raises(ValueError, match=f"{axis.name} must be a finite number"):
            axis.parse(text)
    assert clamp.parse("inf") == float("inf") and k.parse("2.5") == 2.5


def pipe(**over: Any) -> Pipeline:
    """A pipeline of two steps over a ``batch`` axis, with ``over``'s fields changed."""
    fields: dict[str, Any] = dict(
        name="chain", steps=("a", "b"), axes=(Axis("batch", 4),), families=("flat",),
        make_inputs=lambda rng, fam, p: {}, run=lambda ctx, b, p: None,
        check=lambda i, p, o, h: [], reference=lambda i, p: {}, bytes_moved=lambda p: 0,
        flops=lambda p: 0, cases=({},))
    return Pipeline(**{**fields, **over})


def test_an_axis_bound_is_inclusive() -> None:
    """``minimum`` and ``maximum`` are allowed values themselves; one past is refused."""
    planes = Axis("planes", 4, int, minimum=1, maximum=31)
    assert planes.parse("1") == 1 and planes.parse("31") == 31
    with pytest.raises(ValueError, match="planes must be <= 31, got 32"):
        planes.parse("32")
    with pytest.raises(ValueError, match="planes must be >= 1, got 0"):
        planes.parse("0")


def test_a_point_takes_defaults_then_values_then_the_variants_pins() -> None:
    """A variant's pinned axes win over the values asked for; a value of no axis is a
    KeyError naming it; an unknown axis or variant is a KeyError, not a fallback."""
    st = dataclasses.replace(toy(lambda i, p, v: {}),
                             axes=(Axis("batch", 4), Axis("mode", "a", str)))
    pinned = Variant("b_only", pins=(("mode", "b"),))
    assert st.point(batch=8) == {"batch": 8, "mode": "a"}
    assert st.point(pinned, batch=8, mode="a") == {"batch": 8, "mode": "b"}
    with pytest.raises(KeyError, match="bacth, x"):
        st.point(bacth=8, x=1)
    assert st.axis("mode").default == "a"
    with pytest.raises(KeyError):
        st.axis("nope")
    with pytest.raises(KeyError):
        dataclasses.replace(st, variants=(Variant("default"), pinned)).variant("nope")


def test_the_variant_of_a_pipeline_point_is_the_one_whose_pins_it_has() -> None:
    """A point with a variant's pinned values is that variant's; any other point is the
    first variant without pins, wherever it is declared."""
    staged = Variant("staged", pins=(("path", "staged"),))
    fused = Variant("fused", pins=(("path", "fused"),))
    plain = Variant("plain")
    pl = pipe(axes=(Axis("batch", 4), Axis("path", "staged", str)),
              variants=(staged, fused, plain))
    assert pl.variant_of({"batch": 1, "path": "fused"}) is fused
    assert pl.variant_of({"batch": 1, "path": "staged"}) is staged
    assert pl.variant_of({"batch": 1, "path": "other"}) is plain
    unpinned_first = pipe(axes=pl.axes, variants=(plain, fused))
    assert unpinned_first.variant_of({"batch": 1, "path": "fused"}) is fused
    first = pipe(variants=(plain, Variant("second")))
    assert first.variant_of({"batch": 1}) is plain
    assert pipe(variants=(staged,)).variant_of({"batch": 1}) is staged


def test_an_inplace_source_may_be_overwritten() -> None:
    """The input an output is written into may change, like a declared ``mutates`` one;
    an output's name is not an input's."""
    st = dataclasses.replace(toy(lambda i, p, v: {}), mutates=("scratch",),
                             inplace={"y": "x"})
    assert st.may_mutate("x") and st.may_mutate("scratch")
    assert not st.may_mutate("y") and not st.may_mutate("z")


@pytest.mark.parametrize(("rows", "why"), [
    (Rows("batch", {"x": 0}, {}), "rows: no output named"),
    ({"axis": "batch"}, "rows is a dict, not a Rows"),
    (Rows("n", {}, {"y": 0}), "rows: axis 'n' is not an axis of the target"),
])
def test_a_bad_rows_declaration_is_refused(rows: Any, why: str) -> None:
    """``rows`` is checked as the stage is made: no output named, or not a Rows at all."""
    with pytest.raises(ValueError, match=f"stage toy: {re.escape(why)}"):
        dataclasses.replace(toy(lambda i, p, v: {}), axes=(Axis("batch", 4),), rows=rows)


def test_a_pipelines_declarations_are_checked_too() -> None:
    """A pipeline's ``rows`` is checked as a stage's is; every problem is named, in one
    line."""
    with pytest.raises(ValueError, match=re.escape(
            "pipeline chain: rows: axis 'n' is not an axis of the target; "
            "rows: no output named")):
        pipe(rows=Rows("n", {}, {}))


def test_describe_shows_the_peers_rows_and_compute_peak() -> None:
    """``harness list --verbose`` says which peers are judged (and why not), the rows a
    large point is sampled along and the datasheet rate; a stage without a description says
    so."""
    fn = lambda torch, t, p, v: {}  # noqa: E731
    st = dataclasses.replace(
        toy(lambda i, p, v: {}), axes=(Axis("batch", 4),),
        peers={"cublas": Peer(fn), "fp16": Peer(fn, judged=False, note="other precision")},
        rows=Rows("batch", {}, {"y": 0}), compute_peak="fp32")
    assert st.describe().splitlines()[:5] == [
        "toy: (no description)", "  kernel toy.cu (toy), block 256", "  peer cublas",
        "  peer fp16 (not judged): other precision",
        "  rows along batch (a large point is checked on a sample of them)"]
    assert "  compute peak: the datasheet's fp32" in st.describe().splitlines()
    pl = pipe(peers={"eager": Peer(fn, judged=False, note="no intermediates")})
    assert pl.describe().splitlines()[1:3] == [
        "  steps a -> b", "  peer eager (not judged): no intermediates"]


def test_a_callable_without_a_signature_may_take_given() -> None:
    """Where no signature can be read (a builtin), the arity is taken as large: the
    reference is then passed ``given`` rather than refused as taking too few."""
    class NoSignature:
        __signature__ = "not a signature"

        def __call__(self, *args: Any) -> dict[str, Any]:
            return {"n": len(args)}

    assert positional_arity(NoSignature()) >= 4
    assert toy(NoSignature()).expected({}, {}, Variant("default"), {"y": 1}) == {"n": 4}
