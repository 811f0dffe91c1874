"""The stage declaration: the kernel file from the name, the block a build and a launch get,
and the reference called with ``given`` only when it takes it."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import numpy as np
import pytest

from harness.contract.stage import Axis, Stage, Variant, positional_arity


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
