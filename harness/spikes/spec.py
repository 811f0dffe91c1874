"""NumPy twins of the steps in the README's Semantics, shared by the plugins' references and
input makers.

Each function is the literal formula of its SPEC step, in the precision SPEC names, written
for clarity rather than speed; the stages' plugins judge their kernels against these, and the
pipeline checks its chained outputs against their composition. Where the literal formula's
wide copies cost seconds of host time at the largest points (235 M values at batch 65536),
a path in the narrower type computes the same values where it provably can
(``transform``, ``encode``, ``threshold64``'s chunks), and a test holds the two equal.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from harness.spikes import narrow
from harness.spikes.refmath import spec_round

MODES = ("unidirectional", "bidirectional", "twos_complement")
#: The most planes the layouts hold: v is int32, and plane shifts by T - 1 < 31 stay defined.
MAX_PLANES = 31
#: int32's range, where the narrow paths below hold.
I32_MIN, I32_MAX = -(2**31), 2**31 - 1


def check_mode(mode: str) -> int:
    """The mode's index (0, 1, 2), as the kernels take it; ValueError for an unknown mode."""
    try:
        return MODES.index(mode)
    except ValueError:
        raise ValueError(f"unknown mode {mode!r} (known: {', '.join(MODES)})") from None


# -- step 1 --------------------------------------------------------------------------------
def threshold64(x: np.ndarray, k: float, vth_min: float = 0.0,
                vth_max: float = float("inf")) -> np.ndarray:
    """``vth`` in float64: ``(sum |x| / F) / k``, clamped to ``[vth_min, vth_max]``. Rows
    are summed ``_CHUNK_ROWS`` at a time: the same bits as the whole array at once (a row's
    sum is its own), without two float64 copies of a large x (3.8 GB at 65536 x 3584)."""
    s = np.empty(x.shape[0], np.float64)
    for r in range(0, x.shape[0], _CHUNK_ROWS):
        s[r:r + _CHUNK_ROWS] = np.abs(x[r:r + _CHUNK_ROWS].astype(np.float64)).sum(axis=1)
    return np.clip(s / x.shape[1] / k, vth_min, vth_max)


def quantise(x: np.ndarray, vth: np.ndarray, away: bool = False) -> np.ndarray:
    """``round(x / vth)`` as int32 in float32 arithmetic; rows with ``vth == 0`` give 0.
    A quotient past int32 saturates, as the kernels' conversion does (such input is bad
    input, which :func:`threshold_problem` says before any reference runs), and a NaN one
    (a kernel's NaN vth, judged) gives 0, as that conversion does."""
    vth = vth.astype(np.float32)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = spec_round(x / vth[:, None], away)
    r[vth == 0] = 0
    r[np.isnan(vth)] = 0  # a judged kernel's NaN vth: 0, as cvt.rni.s32 gives (x is finite)
    if r.size and (r.max() >= 2.0**31 or r.min() < -(2.0**31)):  # rare: no copy otherwise
        np.clip(r, -(2.0**31), 2.0**31, out=r)
        over = r >= 2.0**31  # 2^31 - 1 is no float32: set after the conversion
        q = np.where(over, 0, r).astype(np.int32)
        q[over] = 2**31 - 1
        return q
    return r.astype(np.int32)


#: float32's largest finite value and smallest normal one.
F32_MAX = float(np.finfo(np.float32).max)
F32_TINY = float(np.finfo(np.float32).tiny)
#: How near a limit float32 may land from its float64 value: the validation's rtol on vth.
LIMIT_RTOL = 1e-5
#: Rows :func:`threshold_problem` reads at a time (its temporary: 4096 rows of |x|).
_CHUNK_ROWS = 4096


def threshold_problem(x: np.ndarray, k: float, vth_min: float = 0.0,
                      vth_max: float = float("inf")) -> str | None:
    """Why step 1 in float32 is not well defined on finite ``x`` (bad input), or None.

    - a row whose ``sum |x|``, or ``vth`` before its clamp, overflows float32: ``vth`` would
      be inf, q 0 and x_rec NaN;
    - a row whose mean ``|x|`` or ``vth`` is subnormal in float32 (and not clamped up to
      ``vth_min``): float32 keeps only a few bits there, so ``vth`` cannot be within rtol
      1e-5 of its float64 value, and q can pass the planes' bound ``k F`` (a kernel would
      write planes past its buffer);
    - ``|x| / vth`` reaching 2^31 (possible with a clamp): q beyond int32.

    Each limit counts as reached within :data:`LIMIT_RTOL`, as the kernel's float32 sum may
    land on either side of it."""
    x = np.asarray(x)
    if x.size == 0:
        return None
    s, top = np.empty(x.shape[0]), np.empty(x.shape[0])
    for r in range(0, x.shape[0], _CHUNK_ROWS):  # no float64 copy of a whole large x
        a = np.abs(x[r:r + _CHUNK_ROWS])
        s[r:r + _CHUNK_ROWS] = a.sum(axis=1, dtype=np.float64)
        top[r:r + _CHUNK_ROWS] = a.max(axis=1)
    mean = s / x.shape[1]
    raw = mean / k
    near = 1.0 + LIMIT_RTOL
    # (a vth_max below the row's vth decides it whatever float32's sum gave: inf is
    # clamped to vth_max as the float64 value is)
    if (((s * near >= F32_MAX) | (raw * near >= F32_MAX)) & (vth_max * near >= raw)).any():
        return ("bad input: a row's sum |x| or its vth overflows float32 (vth would be inf; "
                "the largest float32 is 3.4e38)")
    kept = raw >= vth_min / near  # rows the clamp does not lift to vth_min
    tiny = ((mean > 0) & (mean < F32_TINY * near)) | ((raw > 0) & (raw < F32_TINY * near))
    if (tiny & kept).any():
        rows = int((tiny & kept).sum())
        return (f"bad input: {rows} row(s) with a subnormal mean |x| or vth (below "
                f"{F32_TINY:.3g}): float32 cannot hold vth to rtol 1e-5 there, and q "
                "could pass its bound k * in_f")
    vth = np.clip(raw, vth_min, vth_max)
    with np.errstate(divide="ignore", invalid="ignore"):
        worst = np.where(vth > 0, top / vth, 0.0)
    big = float(worst.max(initial=0.0))
    if big * near >= 2.0**31:
        clamp = (f" (vth clamped to [{vth_min}, {vth_max}])"
                 if vth_min > 0 or vth_max < float("inf") else "")
        return f"bad input: |q| would reach {big:.3g}, beyond int32{clamp}"
    return None


def x_problem(ins: Mapping[str, np.ndarray], p: Mapping[str, Any]) -> str | None:
    """A target's ``check_inputs`` where its input ``x`` feeds step 1 at the point's ``k``
    and nothing else of its inputs can be bad: :func:`threshold_problem`."""
    return threshold_problem(ins["x"], p["k"])


def dynamic_spikes(x: np.ndarray, k: float = 3.0) -> tuple[np.ndarray, np.ndarray]:
    """Step 1 in float32 as a kernel computes it: ``(vth float32, q int32)``."""
    vth = threshold64(x, k).astype(np.float32)
    return vth, quantise(x, vth)


# -- step 2 --------------------------------------------------------------------------------
def min_max(q: np.ndarray) -> np.ndarray:
    """Step 2a: ``[qmin, qmax]`` as int32."""
    return np.array([q.min(), q.max()], dtype=np.int32)


def offset(qmin: int, qmax: int, mode: str) -> int:
    """Step 2b: the transform decision ``o``."""
    m = check_mode(mode)
    if m == 0 and qmin < 0:
        return int(qmin)
    if m != 0 and qmin >= 0:
        return (int(qmax) + 1) // 2  # ceil(qmax / 2) for qmax >= 0
    return 0


def transform(q: np.ndarray, o: int) -> tuple[np.ndarray, int]:
    """Step 2c: ``v = q - o`` and ``amax = max |v|`` (``v`` wraps to int32 where ``q - o``
    leaves it). Where no value leaves int32, the subtraction runs in int32 and ``amax``
    comes from v's extremes: the same values, without the int64 copies of a large q."""
    o = int(o)  # a NumPy scalar offset would make the bounds below wrap
    if not q.size:
        return q.astype(np.int32), 0
    lo, hi = int(q.min()) - o, int(q.max()) - o
    if q.dtype == np.int32 and min(lo, o) >= I32_MIN and max(hi, o) <= I32_MAX:
        v = q - np.int32(o)
        return v, max(abs(lo), abs(hi))
    v = (q.astype(np.int64) - o).astype(np.int32)
    return v, int(np.abs(v.astype(np.int64)).max())


def planes(amax: int, mode: str) -> int:
    """Step 2d: ``T`` from the bit length of ``amax`` (integer arithmetic)."""
    bits = int(amax).bit_length()
    return bits + 1 if check_mode(mode) == 2 else max(1, bits)


# -- steps 3 and 4 -------------------------------------------------------------------------
def encode(v: np.ndarray, t_planes: int, mode: str) -> np.ndarray:
    """Step 3: ``spikes [T, *v.shape] int8`` with ``sum_t 2^(T-1-t) spikes[t] == v``."""
    m = check_mode(mode)
    out = np.empty((t_planes, *v.shape), dtype=np.int8)
    # (bidirectional takes |v|, which int32's minimum has not in int32)
    fits = m != 1 or not v.size or v.min() > I32_MIN
    if v.dtype == np.int32 and t_planes <= MAX_PLANES and fits:
        narrow.encode_planes(v, t_planes, m, out)
        return out
    return encode64(v, t_planes, mode, out)


def encode64(v: np.ndarray, t_planes: int, mode: str,
             out: np.ndarray | None = None) -> np.ndarray:
    """Step 3 literally, in int64: the formula :func:`encode`'s narrow path must equal, and
    its path where that one does not hold (into ``out`` where given)."""
    m, wide = check_mode(mode), v.astype(np.int64)
    if out is None:
        out = np.empty((t_planes, *v.shape), dtype=np.int8)
    for t in range(t_planes):
        p = t_planes - 1 - t
        if m == 0:
            out[t] = (wide >> p) & 1
        elif m == 1:
            out[t] = np.sign(wide) * ((np.abs(wide) >> p) & 1)
        else:
            bit = ((wide & ((1 << t_planes) - 1)) >> p) & 1
            out[t] = -bit if t == 0 else bit
    return out


def decode(spikes: np.ndarray, o: int) -> np.ndarray:
    """Step 4: ``q' = sum_t 2^(T-1-t) spikes[t] + o`` as int32."""
    t_planes = spikes.shape[0]
    if spikes.dtype.kind in "iu" and t_planes <= 63:
        return narrow.decode_planes(spikes, o)
    weights = (1 << np.arange(t_planes - 1, -1, -1, dtype=np.int64))
    acc = np.tensordot(weights, spikes.astype(np.int64), axes=1)
    return (acc + o).astype(np.int32)


def packed_planes(t_planes: int, mode: str) -> int:
    """Words per value of the bit-packed layout: T bit planes, plus a sign plane for
    bidirectional (its planes are in {-1, 0, 1})."""
    return t_planes + 1 if check_mode(mode) == 1 else t_planes


def pack(v: np.ndarray, t_planes: int, mode: str) -> np.ndarray:
    """Step 3, bit-packed: ``[P, B, ceil(F/32)] uint32``, bit j of word w is value 32w + j
    (padding bits 0). Unidirectional and twos_complement: plane t holds bit T-1-t of v's
    T-bit word (plane 0 of twos_complement is the sign bit, worth -2^(T-1)). Bidirectional:
    planes 0..T-1 hold the bits of |v|, plane T the sign (1 where v < 0)."""
    b, f = v.shape
    w = -(-f // 32)
    padded = np.zeros((b, w * 32), dtype=np.int32)
    padded[:, :f] = v
    # The bits are step 3's int8 planes without their signs (any nonzero plane value is a set
    # bit); bidirectional keeps its sign in a plane of its own.
    planes = encode(padded, t_planes, mode)
    if check_mode(mode) == 1:
        planes = np.concatenate([planes, (padded < 0)[None].view(np.int8)])
    # Value 32w + j at bit j of word w: each 32 values packed little-endian into four bytes,
    # read as one little-endian word.
    words = np.packbits(planes.view(np.uint8).reshape(planes.shape[0], b, w, 32), axis=-1,
                        bitorder="little")
    return words.view("<u4").reshape(planes.shape[0], b, w).astype(np.uint32, copy=False)


def unpack(packed: np.ndarray, t_planes: int, mode: str, f: int) -> np.ndarray:
    """The inverse of :func:`pack`: ``v [B, F] int32``, by step 4's :func:`decode` of the
    int8 planes the bits stand for."""
    m = check_mode(mode)
    if packed.dtype.kind not in "iu":
        raise TypeError(f"packed planes are integer words, not {packed.dtype}")
    # Bit j of word w is value 32 w + j: each word's four bytes little-endian, unpacked low
    # bit first.
    words = np.ascontiguousarray(packed).astype("<u4", copy=False)
    bits = np.unpackbits(words.view(np.uint8), axis=-1, bitorder="little")[:, :, :f]
    planes = bits[:t_planes].view(np.int8).copy()
    if m == 1:
        planes = np.where(bits[t_planes] == 1, -planes, planes)  # the sign plane
    elif m == 2:
        planes[0] = -planes[0]  # the sign bit carries -1
    return decode(planes, 0)


def plane_bound(k: float, f: int, mode: str) -> int:
    """An upper bound of T for any finite row of width F (no vth clamp): |q| <= k*F, so
    |v| <= 2*ceil(k*F), with 2 to spare for vth's float32 rounding."""
    return planes(2 * int(np.ceil(k * f)) + 2, mode)


def representable(v: np.ndarray, t_planes: int, mode: str) -> bool:
    """Whether every ``v`` fits ``T`` planes of the mode."""
    m = check_mode(mode)
    lo, hi = int(v.min()), int(v.max())
    top = (1 << t_planes) - 1
    if m == 0:
        return lo >= 0 and hi <= top
    if m == 1:
        return -top <= lo and hi <= top
    return -(1 << (t_planes - 1)) <= lo and hi <= (1 << (t_planes - 1)) - 1


# -- step 5 and the weight path ------------------------------------------------------------
def reverse(qd: np.ndarray, vth: np.ndarray) -> np.ndarray:
    """Step 5 in float64: ``x_rec = q' * vth``."""
    return qd.astype(np.float64) * vth.astype(np.float64)[:, None]


def n_groups(f: int, g: int) -> int:
    """Groups per weight row; the last may be shorter (``F % G != 0``)."""
    return -(-f // g)


def scales(w: np.ndarray, g: int) -> np.ndarray:
    """Step A: ``scale[o, g] = max |w| over the group / 127`` in float32 (exact)."""
    o, f = w.shape
    ng = n_groups(f, g)
    pad = np.zeros((o, ng * g), dtype=np.float32)
    pad[:, :f] = np.abs(w)
    return (pad.reshape(o, ng, g).max(axis=2) / np.float32(127)).astype(np.float32)


def weight_quantize(w: np.ndarray, scale: np.ndarray, g: int) -> np.ndarray:
    """Step B: ``round(w / scale[o, f // G])`` as int8 in [-127, 127]; scale 0 gives 0."""
    s = np.repeat(scale, g, axis=1)[:, : w.shape[1]]
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.rint(w / s)
    r[s == 0] = 0
    return np.clip(r, -127, 127).astype(np.int8)


#: T the byte floors assume when only the shape is known (the normal family gives 6 at
#: k = 3 and batch >= 64, in every mode).
TYPICAL_T = 6


def fits_int8(qmin: int, qmax: int) -> bool:
    """Whether q of range [qmin, qmax] fits int8 (where the int8 GEMM paths are exact)."""
    return qmin >= -128 and qmax <= 127


def group_sums_fit(big: int, g: int, f: int) -> bool:
    """Whether every group sum of q (|q| <= ``big``) against int8 weights (|w_q| <= 127)
    over groups of ``g`` of the ``f`` columns stays within int32."""
    return big * 127 * min(int(g), int(f)) < 2**31


#: |q| the wide integer paths take: they split q into three byte planes (u8, u8, s8).
WIDE_Q_BOUND = 2**23


def q_reach_problem(big: int, g: int, f: int, byte_planes: bool) -> str | None:
    """Why q with |q| up to ``big`` cannot be multiplied exactly against int8 weights in
    groups of ``g`` of ``f`` columns (one line, for a stage's check_inputs), or None: a
    group sum past int32, or, where the path splits q into three byte planes
    (``byte_planes``), |q| at or past ``WIDE_Q_BOUND``. (Groups of 128 or more keep every
    |q| a group sum fits below that bound, so only smaller groups reach the second.)"""
    if not group_sums_fit(big, g, f):
        return f"bad input: q reaches {big}: a group sum could leave int32"
    if byte_planes and big >= WIDE_Q_BOUND:
        return (f"bad input: q reaches {big}: the wide path splits q into three byte planes, "
                f"|q| below {WIDE_Q_BOUND}")
    return None


def group_gemm64(q: np.ndarray, w_q: np.ndarray, scale: np.ndarray, vth: np.ndarray,
                 bias: np.ndarray, g: int) -> np.ndarray:
    """Step 6 as the integer GEMM computes it, in float64: ``vth[m] * sum_g scale[n, g] *
    (sum_{f in g} q[m, f] w_q[n, f]) + bias[n]``, each group sum exact (integers far below
    2^53), so a row's result does not depend on which other rows are computed with it."""
    qf, w = q.astype(np.float64), w_q.astype(np.float64)
    acc = np.zeros((qf.shape[0], w.shape[0]))
    for j, f0 in enumerate(range(0, qf.shape[1], g)):
        acc += (qf[:, f0:f0 + g] @ w[:, f0:f0 + g].T) * scale[:, j].astype(np.float64)
    return vth.astype(np.float64)[:, None] * acc + bias[None, :]


def gemm64(x_rec: np.ndarray, w_q: np.ndarray, scale: np.ndarray, bias: np.ndarray,
           g: int) -> np.ndarray:
    """Step 6 in float64: ``x_rec @ (w_q * scale)^T + bias``."""
    s = np.repeat(scale.astype(np.float64), g, axis=1)[:, : w_q.shape[1]]
    return x_rec.astype(np.float64) @ (w_q.astype(np.float64) * s).T + bias.astype(np.float64)


def activation_chain(x: np.ndarray, k: float, mode: str,
                     vth: np.ndarray | None = None) -> dict[str, Any]:
    """Steps 1-2d chained, as every activation-path reference needs them: ``vth64`` (the
    float64 threshold), ``vth32`` (``vth`` when given, the kernel's own float32 threshold on
    which the integers are judged; else ``vth64`` rounded), ``q``, ``mm = [qmin, qmax]``,
    ``o``, ``v``, ``amax`` and ``planes`` (T)."""
    vth64 = threshold64(x, k)
    vth32 = vth64.astype(np.float32) if vth is None else vth
    q = quantise(x, vth32)
    mm = min_max(q)
    o = offset(int(mm[0]), int(mm[1]), mode)
    v, amax = transform(q, o)
    return {"vth64": vth64, "vth32": vth32, "q": q, "mm": mm, "o": o, "v": v, "amax": amax,
            "planes": planes(amax, mode)}
