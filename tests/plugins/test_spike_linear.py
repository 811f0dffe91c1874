"""The spike linear layer's plugin on the CPU: the launches of each q path, what each path's
check judges, and the exact path's bound on its inputs."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from harness.spikes import spec


@pytest.fixture(scope="module")
def pipe(reg):  # type: ignore[no-untyped-def]
    return reg.pipelines["spike_linear"]


class _Steps:
    """A pipeline context that records the steps it is asked for (nothing runs)."""

    def __init__(self) -> None:
        self.steps: list[tuple[str, str, dict[str, Any], dict[str, Any], bool]] = []
        self.order: list[str] = []  # steps and marks as enqueued
        self.allocs = 0

    def alloc(self, shape: tuple[int, ...], dtype: Any) -> str:
        self.allocs += 1
        return f"buf{self.allocs}:{np.dtype(dtype).name}{list(shape)}"

    def step(self, stage: str, variant: str, stream: int, bufs: Any, early: bool = False,
             **values: Any) -> None:
        self.steps.append((stage, variant, dict(bufs), values, early))
        self.order.append(f"{stage}{' (early)' if early else ''}")

    def mark(self, name: str, stream: int) -> None:
        self.order.append(name)


def _run(pipe, variant: str) -> list[tuple[str, str, dict[str, Any], dict[str, Any], bool]]:  # type: ignore[no-untyped-def]
    ctx = _Steps()
    p = pipe.point(pipe.variant(variant), batch=4, in_f=256, out_f=128)
    pipe.run(ctx, {"x": "x", "w_q": "w_q", "scale": "scale", "bias": "bias"}, p)
    return ctx.steps


def test_the_int8_path_is_two_steps_without_q_wide(pipe) -> None:  # type: ignore[no-untyped-def]
    steps = _run(pipe, "default")
    assert [(s[0], s[1]) for s in steps] == [("activation_fused", "unidirectional"),
                                             ("int_gemm", "int8")]
    assert "q_wide" not in steps[0][2] and "stats" not in steps[1][2]
    assert steps[1][2]["q"] == steps[0][2]["q8"]


def test_the_any_path_adds_the_guarded_wide_gemm_on_q_wide(pipe) -> None:  # type: ignore[no-untyped-def]
    """The fused stage writes q_wide (int32); the wide GEMM reads it, guarded by the same
    stats, writing the same out as the int8 GEMM before it, at the same shape."""
    act, int8, wide = _run(pipe, "any")
    assert (act[0], int8[:2], wide[:2]) == ("activation_fused", ("int_gemm", "int8"),
                                            ("int_gemm", "wide"))
    assert act[2]["q_wide"].endswith("int32[4, 256]")
    assert wide[2]["q"] == act[2]["q_wide"] and wide[2]["stats"] == act[2]["stats"]
    assert int8[2]["q"] == act[2]["q8"] and "stats" not in int8[2]
    assert wide[2]["out"] == int8[2]["out"] and wide[3] == int8[3]


def test_the_early_handoff_launches_the_gemm_under_the_stage_with_no_event_between(pipe) -> None:  # type: ignore[no-untyped-def]
    """operand_early: the GEMM step asks for the dependent launch, and no mark comes
    between the two steps (an event there would hold the GEMM back), so only the total is
    an interval; operand_adjacent leaves the mark out too but launches in order; operand
    marks act_end and asks for no such launch."""
    runs = {}
    for variant in ("operand", "operand_adjacent", "operand_early"):
        ctx = _Steps()
        p = pipe.point(pipe.variant(variant), batch=4, in_f=256, out_f=128)
        trace = pipe.run(ctx, {"x": "x", "w_q": "w_q", "scale": "scale", "bias": "bias"}, p)
        runs[variant] = (ctx, trace, p)
    ctx, trace, p = runs["operand"]
    assert p["handoff"] == "after" and p["q_path"] == "operand"
    assert ctx.order == ["start", "activation_fused", "act_end", "int_gemm", "end"]
    assert set(trace.intervals) == {"activation", "gemm", "total"}
    ctx, trace, p = runs["operand_adjacent"]  # nothing between, an ordinary launch
    assert p["handoff"] == "adjacent" and p["q_path"] == "operand"
    assert ctx.order == ["start", "activation_fused", "int_gemm", "end"]
    assert trace.intervals == {"total": (("start", "end"),)}
    ctx, trace, p = runs["operand_early"]
    assert p["handoff"] == "early" and p["q_path"] == "operand"
    assert ctx.order == ["start", "activation_fused", "int_gemm (early)", "end"]
    assert trace.intervals == {"total": (("start", "end"),)}
    # The same steps otherwise: the activation stage's operand layout, the int8 GEMM on q8.
    assert [s[:2] for s in ctx.steps] == [s[:2] for s in runs["operand"][0].steps]


def _perfect(pipe, variant: str, x: np.ndarray, k: float):  # type: ignore[no-untyped-def]
    """A run that returned exactly the references, at batch 3 x 64 -> 32."""
    rng = np.random.default_rng(1)
    p = pipe.point(pipe.variant(variant), batch=3, in_f=64, out_f=32, k=k)
    ins = {**pipe.make_inputs(rng, "normal", p), "x": x}
    ref = pipe.reference(ins, p)
    planes = {"packed": ("packed",), "operand": ()}.get(variant, ("spikes",))
    got = {n: ref[n] for n in ("q8", *planes)} | {
        "vth": ref["vth32"], "out": ref["out"],
        "stats": np.array([*ref["mm"], ref["o"], ref["planes"]], np.int32)}
    return {c.output: c.ok for c in pipe.check(ins, p, got, {})}


def test_only_the_int8_path_requires_q_to_fit_int8(pipe) -> None:  # type: ignore[no-untyped-def]
    x = np.random.default_rng(2).standard_normal((3, 64), dtype=np.float32)
    x[1, 5] = 500.0  # |q| far past 127 at k = 64
    default, anyq = _perfect(pipe, "default", x, 64.0), _perfect(pipe, "any", x, 64.0)
    assert default["q fits int8"] is False
    assert "q fits int8" not in anyq and all(anyq.values())
    assert all(_perfect(pipe, "default", np.random.default_rng(3).standard_normal(
        (3, 64), dtype=np.float32), 3.0).values())


def test_the_any_path_refuses_k_times_in_f_past_its_bound(pipe) -> None:  # type: ignore[no-untyped-def]
    mod = __import__("sys").modules["harness_plugin_spike_linear"]
    for variant, k, refused in (("any", 64.0, False), ("any", mod.ANY_KF / 3584, True),
                                ("default", mod.ANY_KF / 3584, False)):
        p = pipe.point(pipe.variant(variant), batch=1, in_f=3584, out_f=64, k=k)
        why = pipe.check_inputs({"x": np.ones((1, 3584), np.float32)}, p)
        assert (why is not None) == refused, (variant, k)
        if refused:
            assert why.startswith("bad input: k * in_f")


def test_the_packed_path_feeds_the_fused_stages_planes_to_the_packed_gemm(pipe) -> None:  # type: ignore[no-untyped-def]
    """The fused stage runs its packed layout (no int8 planes), and int_gemm_packed reads
    those planes and the same stats, writing out at the layer's shape."""
    act, gemm = _run(pipe, "packed")
    assert (act[0], act[1], gemm[0], gemm[1]) == ("activation_fused", "packed_unidirectional",
                                                  "int_gemm_packed", "default")
    cap = spec.plane_bound(3.0, 256, "unidirectional")  # the most T a row of 256 can need
    assert "spikes" not in act[2] and act[2]["packed"].endswith(f"uint32[{cap}, 4, 8]")
    assert gemm[2]["planes"] == act[2]["packed"] and gemm[2]["stats"] == act[2]["stats"]
    assert "q" not in gemm[2]
    assert gemm[3] == {"batch": 4, "in_f": 256, "out_f": 128, "group_size": 128, "k": 3.0}


def test_the_packed_path_judges_the_packed_words(pipe) -> None:  # type: ignore[no-untyped-def]
    """The packed path's check compares the bit-packed planes (and q's fit), and fails when
    one bit of them is wrong."""
    x = np.random.default_rng(5).standard_normal((3, 64), dtype=np.float32)
    ok = _perfect(pipe, "packed", x, 3.0)
    assert ok["packed"] and ok["q fits int8"] and all(ok.values())
    p = pipe.point(pipe.variant("packed"), batch=3, in_f=64, out_f=32, k=3.0)
    ins = {**pipe.make_inputs(np.random.default_rng(1), "normal", p), "x": x}
    ref = pipe.reference(ins, p)
    bad = ref["packed"].copy()
    bad[0, 1, 0] ^= np.uint32(1 << 7)
    got = {"q8": ref["q8"], "packed": bad, "vth": ref["vth32"], "out": ref["out"],
           "stats": np.array([*ref["mm"], ref["o"], ref["planes"]], np.int32)}
    judged = {c.output: c.ok for c in pipe.check(ins, p, got, {})}
    assert judged["packed"] is False and judged["out"] is True


def test_the_operand_path_writes_no_planes(pipe) -> None:  # type: ignore[no-untyped-def]
    """The fused stage runs its operand layout (vth, stats, q8, no planes buffer), the int8
    GEMM reads q8 as on the default path, and the run's outputs hold no planes."""
    act, gemm = _run(pipe, "operand")
    assert (act[0], act[1], gemm[0], gemm[1]) == ("activation_fused", "operand_unidirectional",
                                                  "int_gemm", "int8")
    assert set(act[2]) == {"x", "vth", "stats", "q8"}
    assert gemm[2]["q"] == act[2]["q8"] and gemm[2]["vth"] == act[2]["vth"]


def test_the_operand_path_judges_q8_and_its_fit_but_no_planes(pipe) -> None:  # type: ignore[no-untyped-def]
    """Its check has no planes to compare; q8, the stats, vth and out are judged as on the
    default path, and a q past int8 fails its fit."""
    x = np.random.default_rng(6).standard_normal((3, 64), dtype=np.float32)
    ok = _perfect(pipe, "operand", x, 3.0)
    assert all(ok.values()) and {"q8", "out", "q fits int8"} <= set(ok)
    assert "spikes" not in ok and "packed" not in ok
    x[1, 5] = 500.0
    assert _perfect(pipe, "operand", x, 64.0)["q fits int8"] is False
    mod = __import__("sys").modules["harness_plugin_spike_linear"]
    p = pipe.point(pipe.variant("operand"), batch=2, in_f=64, out_f=32)
    assert mod.bytes_moved(p) == (
        mod.bytes_moved(pipe.point(pipe.variant("default"), batch=2, in_f=64, out_f=32))
        - (spec.TYPICAL_T - 1) * 2 * 64)


def test_the_early_handoff_is_refused_off_the_operand_path(pipe) -> None:  # type: ignore[no-untyped-def]
    """Only act_stats (the operand layout's kernel) lets a dependent start: elsewhere an
    early GEMM would launch as an adjacent one, so the point is refused in one line."""
    rng = np.random.default_rng(0)
    for variant, refused in (("default", True), ("packed", True), ("operand_early", False)):
        p = pipe.point(pipe.variant(variant), batch=3, in_f=64, out_f=32, handoff="early")
        assert p["handoff"] == "early"
        why = pipe.check_inputs(pipe.make_inputs(rng, "normal", p), p)
        assert (why is not None and why.startswith("bad input: handoff early")) == refused
