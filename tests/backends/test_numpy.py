"""The ``numpy`` backend: a Backend whose run is the reference cast to the declared types,
whose samples are wall-clock times of the reference, and which runs no pipelines."""

from __future__ import annotations

import numpy as np
import pytest

from harness.backends.numpy import NumpyRunner
from harness.contract.timing import TimingConfig
from harness.errors import HarnessError
from tests.backends.conformance import assert_is_backend


def test_the_numpy_runner_is_a_backend() -> None:
    assert_is_backend(NumpyRunner(), "numpy")


def test_a_run_is_the_reference_in_the_declared_types(reg) -> None:  # type: ignore[no-untyped-def]
    st = reg.get("dynamic_spikes")
    p = st.point(batch=3, in_f=64)
    x = st.make_inputs(np.random.default_rng(0), "normal", p)
    res = NumpyRunner().run(st, st.variants[0], x, p)
    want = st.expected(x, p, st.variants[0])
    specs = st.outputs(p)
    assert set(res.outputs) == set(specs)
    for k, (shape, dtype) in specs.items():
        assert res.outputs[k].dtype == dtype and res.outputs[k].shape == tuple(shape)
        assert np.array_equal(res.outputs[k], np.asarray(want[k]).astype(dtype))
    assert res.inputs_after["x"] is x["x"] and res.guard_damage == {}


def test_timing_samples_the_reference(reg) -> None:  # type: ignore[no-untyped-def]
    st = reg.get("dynamic_spikes")
    p = st.point(batch=2, in_f=32)
    x = st.make_inputs(np.random.default_rng(1), "normal", p)
    cfg = TimingConfig(warmup=1, min_samples=5, max_samples=5)
    res, t = NumpyRunner().time(st, st.variants[0], x, p, cfg)
    assert t.samples == 5 and t.median_us > 0 and t.launch == "stream"
    assert set(res.outputs) == set(st.outputs(p))


def test_out_of_memory_and_pipelines(reg) -> None:  # type: ignore[no-untyped-def]
    runner = NumpyRunner()
    assert runner.is_oom(MemoryError()) and not runner.is_oom(ValueError("out of memory"))
    with pytest.raises(HarnessError, match=r"only the pycuda backend runs it, not numpy$"):
        runner.pipeline(reg.pipelines["spike_quant_gemm"], reg.stages, {}, {}, 1, True)


@pytest.mark.parametrize(("ref", "why"), [
    (lambda r: {**r, "q": r["q"].astype(np.float64)},
     "reference output q is float64[2, 9], declared int32[2, 9]"),
    (lambda r: {**r, "q": r["q"][:, :4]},
     "reference output q is int32[2, 4], declared int32[2, 9]"),
    (lambda r: {**r, "vth": np.full(2, np.nan)}, "reference output vth has 2 NaN value(s)"),
    (lambda r: {"vth": r["vth"]}, "reference gave no output q"),
])
def test_a_reference_that_lies_is_no_result(reg, ref, why: str) -> None:  # type: ignore[no-untyped-def]
    """Its result is the reference: one of the wrong dtype or shape, or with a NaN, is an
    error naming the plugin, never outputs cast into shape."""
    import dataclasses
    import re

    from harness.errors import PluginError

    st = reg.get("dynamic_spikes")
    liar = dataclasses.replace(st, reference=lambda i, p, v: ref(st.reference(i, p, v)))
    p = liar.point(batch=2, in_f=9)
    x = liar.make_inputs(np.random.default_rng(0), "normal", p)
    with pytest.raises(PluginError, match=f"^plugin dynamic_spikes: {re.escape(why)}"):
        NumpyRunner().run(liar, liar.variants[0], x, p)
