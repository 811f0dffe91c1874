"""The NumPy twins of SPEC's steps against SPEC's properties (hypothesis where it fits)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst
from hypothesis.extra import numpy as hnp

from harness.spikes import spec

ints = hnp.arrays(np.int32, hnp.array_shapes(min_dims=2, max_dims=2, max_side=30),
                  elements=hst.integers(-5000, 5000))


@pytest.mark.parametrize("mode", spec.MODES)
@settings(max_examples=80, deadline=None)
@given(q=ints)
def test_round_trip_is_exact_with_minimal_planes(mode: str, q: np.ndarray) -> None:
    mm = spec.min_max(q)
    o = spec.offset(int(mm[0]), int(mm[1]), mode)
    v, amax = spec.transform(q, o)
    t = spec.planes(amax, mode)
    planes = spec.encode(v, t, mode)
    assert planes.dtype == np.int8 and planes.shape == (t, *q.shape)
    assert np.array_equal(spec.decode(planes, o), q)
    assert spec.representable(v, t, mode)
    if t > 1:  # minimal: one plane fewer cannot hold every value of magnitude amax
        extremes = np.array([amax] if mode == "unidirectional" else [-amax, amax])
        assert not spec.representable(extremes, t - 1, mode)
    allowed = {0: {0, 1}, 1: {-1, 0, 1}, 2: {-1, 0, 1}}[spec.MODES.index(mode)]
    assert set(np.unique(planes).tolist()) <= allowed


def test_plane_values_on_hand_made_cases() -> None:
    v = np.array([5, -5, -1, 0], dtype=np.int32)
    assert spec.encode(v[:1], 3, "unidirectional")[:, 0].tolist() == [1, 0, 1]
    assert spec.encode(v[:2], 3, "bidirectional")[:, 1].tolist() == [-1, 0, -1]
    # -5 in 4-bit two's complement is 1011: the sign plane carries -1 (-8 + 2 + 1).
    assert spec.encode(v[1:2], 4, "twos_complement")[:, 0].tolist() == [-1, 0, 1, 1]
    assert spec.encode(v[2:3], 1, "twos_complement")[:, 0].tolist() == [-1]


@pytest.mark.parametrize("qmin, qmax, mode, o", [
    (-3, 7, "unidirectional", -3),  # negatives: offset by the minimum
    (0, 7, "unidirectional", 0),
    (2, 7, "bidirectional", 4),  # all non-negative: half-up, ceil(7 / 2)
    (0, 8, "twos_complement", 4),
    (0, 0, "bidirectional", 0),
    (-1, 7, "bidirectional", 0),  # mixed signs: no transform
    (-1, 7, "twos_complement", 0),
])
def test_transform_decisions(qmin: int, qmax: int, mode: str, o: int) -> None:
    assert spec.offset(qmin, qmax, mode) == o


def test_half_up_saves_a_plane() -> None:
    q = np.array([[0, 15]], dtype=np.int32)
    o = spec.offset(0, 15, "bidirectional")
    v, amax = spec.transform(q, o)
    assert (o, v.tolist(), amax) == (8, [[-8, 7]], 8)
    assert spec.planes(15, "bidirectional") == 4 and spec.planes(amax, "twos_complement") == 5


def test_planes_by_bit_length() -> None:
    assert [spec.planes(a, "unidirectional") for a in (0, 1, 2, 3, 4, 2**30)] == \
        [1, 1, 2, 2, 3, 31]
    assert [spec.planes(a, "twos_complement") for a in (0, 1, 7, 8)] == [1, 2, 4, 5]


def test_unknown_mode() -> None:
    with pytest.raises(ValueError, match="unknown mode 'ternary'"):
        spec.check_mode("ternary")


@settings(max_examples=60, deadline=None)
@given(w=hnp.arrays(np.float32, hnp.array_shapes(min_dims=2, max_dims=2, max_side=70),
                    elements=hst.floats(-100, 100, width=32)),
       g=hst.integers(1, 80))
def test_scale_and_quantize_bounds(w: np.ndarray, g: int) -> None:
    """Any F and G (F % G != 0 included): |w - w_q * scale| <= scale / 2, |w_q| <= 127."""
    s = spec.scales(w, g)
    assert s.shape == (w.shape[0], -(-w.shape[1] // g))
    wq = spec.weight_quantize(w, s, g)
    assert wq.dtype == np.int8 and np.abs(wq.astype(int)).max(initial=0) <= 127
    se = np.repeat(s, g, axis=1)[:, : w.shape[1]].astype(np.float64)
    err = np.abs(w - wq * se)
    assert (err <= se / 2 * (1 + 1e-6) + 1e-30).all()
    assert (wq[se == 0] == 0).all()


def test_scale_of_a_short_last_group() -> None:
    w = np.array([[1, -2, 3, 127, -254]], dtype=np.float32)
    assert spec.scales(w, 2).tolist() == [[np.float32(2) / np.float32(127), 1.0, 2.0]]


def test_weight_ties_round_half_to_even() -> None:
    w = np.array([[0.5, 1.5, 2.5, -0.5, 127.0]], dtype=np.float32)
    s = spec.scales(w, 5)  # scale exactly 1
    assert spec.weight_quantize(w, s, 5).tolist() == [[0, 2, 2, 0, 127]]


def test_reverse_and_gemm64() -> None:
    q = np.array([[1, -2]], dtype=np.int32)
    vth = np.array([0.5], dtype=np.float32)
    assert spec.reverse(q, vth).tolist() == [[0.5, -1.0]]
    out = spec.gemm64(np.array([[1.0, 2.0]], np.float32), np.array([[2, -1]], np.int8),
                      np.array([[0.5]], np.float32), np.array([0.25], np.float32), 2)
    assert out.tolist() == [[0.25]]  # (1*2 + 2*-1) * 0.5 + 0.25


@pytest.mark.parametrize("mode", spec.MODES)
@settings(max_examples=60, deadline=None)
@given(data=hst.data())
def test_packed_layout_round_trips(mode: str, data: hst.DataObject) -> None:
    """pack -> unpack gives v back for any T and width (partial last words included), and
    the words are T bits a value (T + 1 in bidirectional)."""
    t = data.draw(hst.integers(1, 31), label="T")
    m = spec.check_mode(mode)
    hi = (1 << (t - 1)) - 1 if m == 2 else (1 << t) - 1
    lo = 0 if m == 0 else (-(1 << (t - 1)) if m == 2 else -hi)
    b, f = data.draw(hst.integers(1, 4)), data.draw(hst.integers(1, 70))
    v = np.array(data.draw(hst.lists(hst.integers(lo, hi), min_size=b * f, max_size=b * f)),
                 dtype=np.int32).reshape(b, f)
    packed = spec.pack(v, t, mode)
    assert packed.dtype == np.uint32
    assert packed.shape == (spec.packed_planes(t, mode), b, -(-f // 32))
    assert np.array_equal(spec.unpack(packed, t, mode, f), v)
    # the same values as the int8 planes, bit for bit
    planes = spec.encode(v, t, mode)
    bit = (packed[:t, :, 0] & 1).astype(np.int64)  # value 0 of each row
    assert np.array_equal(np.abs(planes[:, :, 0]), bit)


def test_plane_bound_covers_the_widest_row() -> None:
    """A row with one non-zero value reaches |q| = k*F; the bound must hold it."""
    for f, k, mode in ((3584, 3.0, "unidirectional"), (5, 0.5, "twos_complement"),
                       (1, 3.0, "bidirectional")):
        x = np.zeros((1, f), np.float32)
        x[0, 0] = -1.0
        _, q = spec.dynamic_spikes(x, k)
        mm = spec.min_max(q)
        o = spec.offset(int(mm[0]), int(mm[1]), mode)
        _, amax = spec.transform(q, o)
        assert spec.planes(amax, mode) <= spec.plane_bound(k, f, mode)
    # Two rows, one at +kF and one at -kF: the offset of the one moves the other to 2 kF,
    # the widest v of any finite input (unidirectional k = 4, F = 256: T = 12 exactly).
    x = np.zeros((2, 256), np.float32)
    x[0, 0], x[1, 0] = 1.0, -1.0
    for mode in spec.MODES:
        _, q = spec.dynamic_spikes(x, 4.0)
        assert q.min() == -1024 and q.max() == 1024
        mm = spec.min_max(q)
        _, amax = spec.transform(q, spec.offset(int(mm[0]), int(mm[1]), mode))
        need = spec.planes(amax, mode)
        assert need <= spec.plane_bound(4.0, 256, mode), mode
    assert spec.planes(2048, "unidirectional") == 12 == \
        spec.plane_bound(4.0, 256, "unidirectional")  # the bound is tight there


def test_step_one_past_float32_is_bad_input() -> None:
    """Finite x on which step 1 in float32 is not well defined is said, not computed: a
    row sum past float32's largest value, a subnormal vth (float32 keeps a few bits there,
    so q passes its bound k * F: a kernel would write planes past its buffer), and |q|
    reaching 2^31 by the float32 quotient where the float64 one stays under it."""
    ok = np.ones((2, 8), dtype=np.float32)
    assert spec.threshold_problem(ok, 3.0) is None
    assert spec.threshold_problem(np.zeros((3, 4), np.float32), 3.0) is None  # vth 0: q 0
    big = np.array([[3e38, -3e38, 1.0]], dtype=np.float32)
    assert "overflows float32" in (spec.threshold_problem(big, 3.0) or "")
    # a vth_max below the row's vth decides it (the kernel's inf is clamped to it too): well
    # defined, until |x| / vth_max passes 2^31
    assert spec.threshold_problem(big, 3.0, vth_max=1e30) is None
    assert "beyond int32" in (spec.threshold_problem(big, 3.0, vth_max=1e29) or "")
    # mean |x| fine, vth = mean / k past float32's largest
    assert "overflows" in (spec.threshold_problem(np.full((1, 4), 1e38, np.float32), 0.1)
                           or "")
    tiny = np.zeros((1, 700), dtype=np.float32)
    tiny[0, 0] = np.float32(1040 * 2.0**-149)  # a subnormal, alone in a wide row
    why = spec.threshold_problem(tiny, 0.7)
    assert why is not None and why.startswith("bad input: 1 row(s) with a subnormal")
    # the float32 literal gives more planes than the bound: what the check keeps out
    vth32 = np.float32(np.float32(tiny.sum(dtype=np.float32) / np.float32(700)) /
                       np.float32(0.7))
    assert spec.planes(int(spec.quantise(tiny, np.array([vth32]))[0].max()),
                       "unidirectional") > spec.plane_bound(0.7, 700, "unidirectional")
    # lifted by a clamp, the subnormal vth is not used
    assert spec.threshold_problem(tiny, 0.7, vth_min=1e-30) is None
    # the float64 quotient 2147483611 is under 2^31 - 1; float32 rounds it to 2^31
    x = np.array([[1503238528.0]], dtype=np.float32)
    why = spec.threshold_problem(x, 3.0, vth_max=0.7)
    assert why is not None and "beyond int32 (vth clamped to [0.0, 0.7])" in why
    unclamped = spec.threshold_problem(np.array([[1.0, 2.0]], np.float32), 1e-12)
    assert unclamped is None
    # each limit on its own: a subnormal mean in a wide row (vth normal only at k < 1e-2);
    # a normal mean whose vth (mean / k) is subnormal; a clamp that sends |q| past int32
    wide = np.zeros((1, 3584), np.float32)
    wide[0, 0] = np.float32(1e-36)
    assert "subnormal" in (spec.threshold_problem(wide, 1e-3) or "")  # vth normal, mean not
    assert "subnormal" in (spec.threshold_problem(np.full((1, 4), 2e-38, np.float32), 3.0)
                           or "")
    assert spec.threshold_problem(np.full((1, 4), 2e-38, np.float32), 0.1) is None
    why = spec.threshold_problem(np.array([[1.0]], np.float32), 2.0, vth_max=1e-10)
    assert why is not None and "|q| would reach 1e+10, beyond int32" in why


def test_quantise_saturates_as_the_kernels_do() -> None:
    """A quotient past int32 saturates (the kernels' float-to-int conversion), not wraps."""
    q = spec.quantise(np.array([[3e9, -3e9, 1.0]], np.float32), np.array([1.0], np.float32))
    assert q.tolist() == [[2**31 - 1, -(2**31), 1]]


def test_quantise_of_a_nan_vth_is_zero_without_a_warning() -> None:
    """A judged kernel's NaN vth gives q 0 on its row (cvt.rni.s32's answer), not an
    undefined cast; the other rows are untouched."""
    x = np.array([[2.0, -3.0], [5.0, 1.0]], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for away in (False, True):
            q = spec.quantise(x, np.array([np.nan, 1.0], np.float32), away)
            assert q.tolist() == [[0, 0], [5, 1]]


def test_fits_int8_is_the_whole_int8_range() -> None:
    """int8 holds [-128, 127], both ends included: the int8 GEMM paths are exact there and
    only there."""
    assert spec.fits_int8(-128, 127)
    assert not spec.fits_int8(-129, 0)
    assert not spec.fits_int8(0, 128)


@pytest.mark.parametrize("t", [1, 3, 6])
def test_bidirectional_holds_both_ends_of_t_planes(t: int) -> None:
    """Bidirectional T planes hold |v| <= 2^T - 1 on either side of zero, the ends
    included, and nothing past them."""
    top = (1 << t) - 1
    for v, fits in ((-top, True), (top, True), (-top - 1, False), (top + 1, False)):
        got = spec.representable(np.array([[v, 0]], np.int32), t, "bidirectional")
        assert got is fits, (t, v)


@pytest.mark.parametrize("chunk", [1, 3, 4096])
def test_threshold64_by_chunks_is_the_whole_sum_bit_for_bit(monkeypatch, chunk: int) -> None:  # type: ignore[no-untyped-def]
    """The float64 threshold summed a few rows at a time gives the bits of the whole array
    summed at once (step 1's reference rounds it to the kernel's float32 vth, so one bit
    would move q), rows past a chunk's end and a row longer than NumPy's 8192-value buffer
    included; the clamp still applies."""
    rng = np.random.default_rng(7)
    monkeypatch.setattr(spec, "_CHUNK_ROWS", chunk)
    for shape in [(7, 3584), (5, 20001), (1, 1)]:
        # row scales log-uniform over 12 decades: vth well under 1 and well over it
        scales = 10 ** rng.uniform(-6, 6, (shape[0], 1))
        x = (rng.standard_normal(shape) * scales).astype(np.float32)
        whole = np.abs(x.astype(np.float64)).sum(axis=1) / x.shape[1] / 3.0
        assert spec.threshold64(x, 3.0).tobytes() == whole.tobytes()
    x = np.array([[1.0, -1.0], [100.0, 0.0], [0.0, 0.0]], np.float32)
    assert spec.threshold64(x, 1.0, 0.75, 10.0).tolist() == [1.0, 10.0, 0.75]


def test_step_one_has_no_clamp_by_default() -> None:
    """SPEC: vth = mean |x| / k, clamped only where vth_min / vth_max are given (the seed
    program's 1e-5 floor is not SPEC's default): tiny and huge rows keep their own vth, and
    so their own q."""
    lo, hi = np.float32(1e-5), np.float32(1e5)
    assert spec.threshold64(np.full((1, 4), lo), 3.0)[0] == float(lo) / 3.0
    assert spec.threshold64(np.full((1, 4), hi), 3.0)[0] == float(hi) / 3.0
    vth, q = spec.dynamic_spikes(np.full((1, 8), lo), 3.0)
    assert q.tolist() == [[3] * 8] and vth[0] == np.float32(np.float32(lo) / np.float32(3.0))


def test_quantise_divides_in_float32() -> None:
    """q = round(x / vth) with the quotient rounded to float32 first (SPEC: true float32
    division): 46.807583 / 1.3185235 is 35.4999982 in float64 but exactly 35.5 in float32,
    which rounds half to even to 36 (a float64 quotient would give 35); against the literal
    rule on inputs a hair from the halves, too."""
    x, v = np.array([[46.807583]], np.float32), np.array([1.3185235], np.float32)
    assert np.float32(x[0, 0]) / np.float32(v[0]) == np.float32(35.5)
    assert spec.quantise(x, v)[0, 0] == 36
    assert spec.quantise(-x, v)[0, 0] == -36
    assert spec.quantise(x, v, away=True)[0, 0] == 36
    from tests.spikes.test_quantise_rule import _exact, _near_halves

    rng = np.random.default_rng(11)
    xs, vs = _near_halves(rng, 20_000, 300)
    ok = np.isfinite(xs) & (vs > 0) & np.isfinite(vs)
    xs, vs = xs[ok], vs[ok]
    with np.errstate(all="ignore"):
        want = _exact(xs, vs)
    fine = np.abs(want) < 2.0**31
    got = spec.quantise(xs[fine][:, None], vs[fine])[:, 0]
    assert np.array_equal(got, want[fine].astype(np.int32))


def _pack64(v: np.ndarray, t_planes: int, mode: str) -> np.ndarray:
    """The packed layout literally: each bit times its weight 2^j, summed in uint64."""
    b, f = v.shape
    w = -(-f // 32)
    padded = np.zeros((b, w * 32), dtype=np.int32)
    padded[:, :f] = v
    bits = np.abs(spec.encode(padded, t_planes, mode)).astype(np.uint64)  # held in test_narrow
    if spec.check_mode(mode) == 1:
        bits = np.concatenate([bits, (padded < 0)[None].astype(np.uint64)])
    weights = np.left_shift(np.uint64(1), np.arange(32, dtype=np.uint64))
    return (bits.reshape(bits.shape[0], b, w, 32) * weights).sum(axis=3).astype(np.uint32)


@pytest.mark.parametrize("seed", range(4))
def test_pack_by_packbits_is_the_weighted_sum(seed: int) -> None:
    """``pack``'s words (bytes packed little-endian, read as one word) equal the sum of
    each bit times 2^j, for every mode, widths across a word's end and T up to 31."""
    rng = np.random.default_rng(seed)
    for f in (1, 31, 32, 33, 70):
        v = rng.integers(-(2**20), 2**20, (3, f)).astype(np.int32)
        for mode in spec.MODES:
            for t_planes in (1, 6, 22, 31):
                got = spec.pack(v, t_planes, mode)
                assert got.dtype == np.uint32
                assert np.array_equal(got, _pack64(v, t_planes, mode)), (f, mode, t_planes)


@pytest.mark.parametrize("mode", spec.MODES)
def test_unpack_by_unpackbits_is_the_shifted_bits(mode: str) -> None:
    """``unpack`` reads each word's bits low first, as the literal shift-and-mask does."""
    rng = np.random.default_rng(4)
    for f in (1, 32, 45):
        planes = spec.packed_planes(7, mode)
        packed = rng.integers(0, 2**32, (planes, 3, -(-f // 32)), dtype=np.uint64)
        packed = packed.astype(np.uint32)
        bits = ((packed[..., None] >> np.arange(32, dtype=np.uint32)) & 1).astype(np.int64)
        bits = bits.reshape(planes, 3, -1)[:, :, :f]
        want = bits[:7].copy()
        if mode == "bidirectional":
            want = np.where(bits[7] == 1, -want, want)
        elif mode == "twos_complement":
            want[0] = -want[0]
        assert np.array_equal(spec.unpack(packed, 7, mode, f), spec.decode(want, 0)), f


def test_x_problem_is_step_ones_check_on_the_inputs_x_at_the_points_k() -> None:
    """The pipelines' ``check_inputs``: the input called x, at the point's k (a row that
    overflows at one k and not at a larger one tells the k taken apart)."""
    x = np.array([[1e38, 0.0, 0.0, 0.0]], np.float32)  # mean 2.5e37: vth 5e38 at k 0.05
    assert "overflows" in (spec.x_problem({"x": x, "w": np.zeros(1)}, {"k": 0.05}) or "")
    assert spec.x_problem({"x": x}, {"k": 3.0}) is None
    assert spec.x_problem({"x": np.ones((2, 8), np.float32)}, {"k": 0.1}) is None


def test_group_sums_fit_int32_exactly_below_its_bound() -> None:
    """|q| * 127 * min(G, F) must stay below 2^31: at the bound it does not; a short row
    (F < G) counts F values a group."""
    big = (2**31 - 1) // (127 * 128)  # 132104
    assert spec.group_sums_fit(big, 128, 3584)
    assert not spec.group_sums_fit(big + 1, 128, 3584)
    assert spec.group_sums_fit(big + 1, 128, 127)


def test_q_reach_problem_names_the_bound_q_passes() -> None:
    assert spec.q_reach_problem(127, 128, 3584, byte_planes=False) is None
    assert "leave int32" in spec.q_reach_problem(2**18, 128, 3584, byte_planes=False)
    # Group sums of one column fit int32 up to 2^31 / 127, past the byte planes' 2^23.
    assert spec.q_reach_problem(2**23, 1, 3584, byte_planes=False) is None
    assert "three byte planes" in spec.q_reach_problem(2**23, 1, 3584, byte_planes=True)
    assert spec.q_reach_problem(2**23 - 1, 1, 3584, byte_planes=True) is None
