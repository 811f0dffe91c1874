"""The bytes and flops each stage declares: the roofline's inputs. Each is set against a count
written here from the stage's own words (its docstring, kernels/NOTES.md's byte floors): every
input read once and every output written once, at one small point, with the dtypes spelled
out (int32 and float32 are 4 bytes, int8 is 1)."""

from __future__ import annotations

from typing import Any

import pytest

from harness.contract import registry
from harness.contract.backend import RunResult
from harness.contract.timing import Timing
from harness.engine import measure as m
from harness.engine.jobs import plan
from tests.engine.test_measure import FAST, META, FakeGpu

B, F = 4, 64  # the activation stages' point: rows, columns
M, N, K, G = 2, 3, 300, 128  # the GEMM's point: K % G != 0, so 3 groups, the last short
GROUPS = 3


@pytest.mark.parametrize(("name", "variant", "point", "want"), [
    # q int32 read, mm = [min, max] int32 written
    ("find_min_max", "default", {"batch": B, "in_f": F}, 4 * B * F + 2 * 4),
    # q int32 read and v written over it; mm read; o and amax (int32 each) written
    ("transform_absmax", "default", {"batch": B, "in_f": F}, 4 * B * F + 4 * B * F + 8 + 4 + 4),
    # v int32 read, T = 3 int8 planes written
    ("spike_encode", "unidirectional", {"batch": B, "in_f": F, "planes": 3},
     4 * B * F + 3 * B * F),
    # x float32 read, q int32 and vth float32 (one a row) written
    ("dynamic_spikes", "default", {"batch": B, "in_f": F}, 4 * B * F + 4 * B * F + 4 * B),
    # q int8, w_q int8, scale float32 (one a group), vth, bias read; out float32 written
    ("int_gemm", "int8", {"batch": M, "out_f": N, "in_f": K, "group_size": G},
     M * K + N * K + 4 * N * GROUPS + 4 * M + 4 * N + 4 * M * N),
    # the same with q as int32
    ("int_gemm", "wide", {"batch": M, "out_f": N, "in_f": K, "group_size": G},
     4 * M * K + N * K + 4 * N * GROUPS + 4 * M + 4 * N + 4 * M * N),
    # x float32 read; T int8 planes (T = 6 when no run says) and vth written
    ("activation_fused", "unidirectional", {"batch": B, "in_f": F},
     4 * B * F + 6 * B * F + 4 * B),
    # packed bidirectional: T bit planes and the sign plane, F / 32 uint32 words a row
    ("activation_fused", "packed_bidirectional", {"batch": B, "in_f": F},
     4 * B * F + (6 + 1) * B * (F // 32) * 4 + 4 * B),
    # w float32 and scale float32 (one a group) read, w_q int8 written
    ("weight_quantize", "default", {"out_f": N, "in_f": K, "group_size": G},
     4 * N * K + 4 * N * GROUPS + N * K),
])
def test_declared_bytes_are_the_floor(reg: registry.Registry, name: str, variant: str,
                                      point: dict[str, Any], want: int) -> None:
    """A stage's ``bytes_moved`` at a point is its inputs read once and outputs written
    once: a wrong factor there misplaces every row's % of peak."""
    st = reg.get(name)
    assert st.bytes_moved(st.point(st.variant(variant), **point)) == want


def test_spike_linear_bytes_are_the_layers_floor(reg: registry.Registry) -> None:
    """The spike_linear pipeline's floor (its docstring): x read, T = 6 planes and vth
    written, the int8 weights, their scales and the bias read, out float32 written; q8's
    round trip is not counted."""
    pipe = reg.pipelines["spike_linear"]
    p = pipe.point(pipe.variant("default"), batch=M, in_f=K, out_f=N, group_size=G)
    x, planes, vth = 4 * M * K, 6 * M * K, 4 * M
    w_q, scale, bias, out = N * K, 4 * N * GROUPS, 4 * N, 4 * M * N
    assert pipe.bytes_moved(p) == x + planes + vth + w_q + scale + bias + out


def test_weight_quantize_does_one_division_a_weight(reg: registry.Registry) -> None:
    """weight_quantize's flops: ``w / scale`` once for each of the O x F weights (the
    rounding and clamp are not arithmetic the roofline counts)."""
    st = reg.get("weight_quantize")
    assert st.flops(st.point(out_f=N, in_f=K, group_size=G)) == N * K


def test_an_activation_fused_row_counts_its_runs_own_t(reg: registry.Registry) -> None:
    """The kernel decides T, so a timed row's bytes are counted from the run's own
    ``stats`` (its T), not from the T = 6 that ``bytes_moved`` assumes: at this point the
    run's T is 5, and the row must say 4 B F + T B F + 4 B."""
    runs: list[RunResult] = []

    class Recording(FakeGpu):
        def time(self, *args: Any) -> tuple[RunResult, Timing]:
            res, t = super().time(*args)
            runs.append(res)
            return res, t

    st = reg.get("activation_fused")
    (job,) = plan([st], [f"batch={B}", f"in_f={F}"])
    row = m.measure(job, Recording(), FAST, META)
    assert row["status"] == "ok" and row["verified"] == "yes"
    t = int(runs[-1].outputs["stats"][3])
    assert t == 5  # not the assumed 6, so the two counts differ
    assert row["bytes"] == 4 * B * F + t * B * F + 4 * B != st.bytes_moved(job.point)
