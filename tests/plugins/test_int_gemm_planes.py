"""The plane-by-plane GEMM's plugin on the CPU: both sides' planes give back step 1's q and
step B's w_q, the kernel's two Horner chains of popcounts (emulated here as the kernel runs
them) give every group sum exactly, the bad-input rules and the launch."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from harness.contract.launcher import RecordingLauncher
from harness.spikes import inputs, spec


@pytest.fixture(scope="module")
def st(reg):  # type: ignore[no-untyped-def]
    return reg.get("int_gemm_planes")


def _mod():  # type: ignore[no-untyped-def]
    return sys.modules["harness_plugin_int_gemm_planes"]


def _point(st, **kw):  # type: ignore[no-untyped-def]
    return st.point(st.variant("default"), **kw)


def test_both_sides_planes_give_back_q_and_w_q(st) -> None:  # type: ignore[no-untyped-def]
    """make_inputs packs v = q - o as the fused stage does and w_q as 8 two's complement
    planes; each decodes to the very q and w_q of the chains, and w_sum is w_q's group sums
    (the last group shorter)."""
    p = _point(st, batch=5, out_f=9, in_f=300, group_size=256)
    ins = st.make_inputs(np.random.default_rng(7), "normal", p)
    rng = np.random.default_rng(7)
    _, _, q = inputs.activation_chain(rng, "normal", 5, 300, p["k"])
    _, _, w_q = inputs.weight_chain(rng, "normal", 9, 300, 256)
    assert np.array_equal(_mod().q_of(ins, p), q)
    assert np.array_equal(_mod().w_q_of(ins, p), w_q)
    assert ins["w_bits"].shape == (8, 9, 10) and ins["w_bits"][0].any()  # some sign bits
    want = np.stack([w_q[:, :256].astype(int).sum(1), w_q[:, 256:].astype(int).sum(1)], 1)
    assert np.array_equal(ins["w_sum"], want)
    for name, (shape, dtype) in st.inputs(p).items():
        assert ins[name].shape == shape and ins[name].dtype == dtype, name


def _popcounts(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``popcount(a[m] AND b[n])`` summed over the words: the binary MMA, [M, N]."""
    both = a[:, None, :] & b[None, :, :]
    return np.unpackbits(both.astype("<u4").view(np.uint8), axis=-1).sum(-1).astype(np.int64)


def _kernel_group_sums(planes: np.ndarray, t: int, o: int, w_bits: np.ndarray,
                       w_sum: np.ndarray, g: int) -> np.ndarray:
    """S [M, N, groups] as int_gemm_planes.cu forms it: for each 128-value chunk the
    positive chain (Horner over e = s + r: double, then every pair of that exponent), the
    sign plane's chain (Horner over s), x - 128 y; the offset through w_sum per group."""
    m, n, words = planes.shape[1], w_bits.shape[1], planes.shape[2]
    ng = w_sum.shape[1]
    out = np.zeros((m, n, ng), dtype=np.int64)
    for grp in range(ng):
        for w0 in range(grp * g // 32, min((grp + 1) * g // 32, words), 4):
            sl = slice(w0, w0 + 4)
            a = [planes[t - 1 - s, :, sl] for s in range(t)]  # by significance s
            x = np.zeros((m, n), dtype=np.int64)
            for e in range(t - 1 + 6, -1, -1):
                x = x + x
                for r in range(7):
                    if 0 <= e - r < t:
                        x += _popcounts(a[e - r], w_bits[7 - r, :, sl])
            y = np.zeros((m, n), dtype=np.int64)
            for s in range(t - 1, -1, -1):
                y = y + y + _popcounts(a[s], w_bits[0, :, sl])
            out[:, :, grp] += x - 128 * y
        out[:, :, grp] += o * w_sum[None, :, grp].astype(np.int64)
    return out


@pytest.mark.parametrize(("k", "in_f", "g"), [(3.0, 300, 128), (0.25, 256, 256),
                                                (16.0, 200, 128), (8.0, 97, 128)])
def test_the_kernels_chains_give_every_group_sum(st, k, in_f, g) -> None:  # type: ignore[no-untyped-def]
    """The popcount chains, emulated in the kernel's order, equal sum q w_q over each group
    exactly, at small and large T (k 0.25 to 16: T = 8 and o < 0) and with padding bits."""
    p = _point(st, batch=6, out_f=5, in_f=in_f, group_size=g, k=k)
    ins = st.make_inputs(np.random.default_rng(3), "normal", p)
    t, o = int(ins["stats"][3]), int(ins["stats"][2])
    assert 1 <= t <= 8
    q, w_q = _mod().q_of(ins, p).astype(np.int64), _mod().w_q_of(ins, p).astype(np.int64)
    ng = spec.n_groups(in_f, g)
    want = np.stack([q[:, j * g:(j + 1) * g] @ w_q[:, j * g:(j + 1) * g].T
                     for j in range(ng)], axis=-1)
    got = _kernel_group_sums(ins["planes"], t, o, ins["w_bits"], ins["w_sum"], g)
    assert np.array_equal(got, want)
    if k == 16.0:
        assert t == 8 and o < 0


def test_what_the_kernel_cannot_hold_is_bad_input(st) -> None:  # type: ignore[no-untyped-def]
    """T past 8 planes or under 1, T past the buffer, a group not whole binary MMAs, a
    group sum that could leave int32 (a small range far from 0: T small, o large)."""
    p = _point(st, batch=2, out_f=8, in_f=256)
    planes = np.zeros((10, 2, 8), np.uint32)
    for stats, bad in (([0, 9, 0, 4], None), ([0, 500, 0, 9], "1 to 8 planes"),
                       ([0, 0, 0, 0], "1 to 8 planes"),
                       ([-140000, -139990, -140000, 4], "leave int32"),
                       ([-120000, -119990, -120000, 4], None)):
        why = st.check_inputs({"planes": planes, "stats": np.array(stats, np.int32)}, p)
        assert (why is None) if bad is None else (bad in why), (stats, why)
    why = st.check_inputs({"planes": planes[:3], "stats": np.array([0, 20, 0, 5], np.int32)},
                          p)
    assert why is not None and "holds 3" in why
    p64 = _point(st, batch=2, out_f=8, in_f=256, group_size=64)
    why = st.check_inputs({"planes": planes, "stats": np.array([0, 9, 0, 4], np.int32)}, p64)
    assert why is not None and "not a multiple of 128" in why


def test_the_launch_covers_out_in_64_by_32_tiles(st) -> None:  # type: ignore[no-untyped-def]
    """A CTA of 128 threads a 64 x 32 tile, the shape after the buffers."""
    p = _point(st, batch=65, out_f=33, in_f=300)
    bufs = {b: b for b in ("planes", "stats", "w_bits", "w_sum", "scale", "vth", "bias",
                           "out")}
    launch = RecordingLauncher(128)
    st.enqueue(launch, bufs, p, st.variant("default"))
    ((name, grid, block, args, shared),) = launch.calls
    assert (name, grid, block, shared) == ("int_gemm_planes", (2, 2, 1), (128, 1, 1), 0)
    assert args[:7] == ("planes", "stats", "w_bits", "w_sum", "scale", "vth", "bias")
    assert [int(a) for a in args[7:11]] == [65, 33, 300, 128] and args[11] == "out"


def test_the_reference_is_int_gemm_packeds_on_the_same_q(st, reg) -> None:  # type: ignore[no-untyped-def]
    """On the same planes, stats and weights, the reference is int_gemm_packed's."""
    p = _point(st, batch=4, out_f=6, in_f=256)
    ins = st.make_inputs(np.random.default_rng(2), "ramp", p)
    packed = reg.get("int_gemm_packed")
    v = packed.variant("default")
    pp = packed.point(v, batch=4, out_f=6, in_f=256)
    pins = {**ins, "w_q": _mod().w_q_of(ins, p)}
    assert np.array_equal(st.reference(ins, p, None)["out"],
                          packed.reference(pins, pp, v)["out"])
