"""The narrow-type paths of :mod:`harness.spikes.spec`'s step 3 and 4 formulas: the same
values as the literal int64 formulas, computed in int32, bytes or uint32 where that is
provably equal, so that a reference at batch 65536 (235 M values) does not make int64
copies of every plane. Each function says why it is equal; ``tests/spikes/test_narrow.py``
holds each to the literal formula."""

from __future__ import annotations

import numpy as np


def encode_planes(v: np.ndarray, t_planes: int, m: int, out: np.ndarray) -> None:
    """``spec.encode``'s planes of an int32 ``v`` in mode ``m`` (0, 1, 2) computed in int32,
    into ``out``: for T <= 31 bit ``p`` of v (and of its T-bit word) is the same in int32
    as in int64, and ``|v|`` is exact but at int32's minimum, which the caller leaves to
    the int64 path. For T <= 8 only bits 0-7 are read, which the low byte holds, so the
    shifts run on bytes. One scratch array, reused plane after plane."""
    if m == 1:
        mag, neg = np.abs(v), v < 0
    elif m == 2:
        mag = v & np.int32((1 << t_planes) - 1)
    else:
        mag = v
    if t_planes <= 8:
        mag = mag.astype(np.uint8)  # int to int wraps: the low byte
    tmp = np.empty_like(mag)
    for t in range(t_planes):
        p = t_planes - 1 - t
        np.right_shift(mag, p, out=tmp)
        np.bitwise_and(tmp, 1, out=tmp)
        if m == 1 or (m == 2 and t == 0):
            np.negative(tmp, out=tmp, where=neg if m == 1 else True)
        out[t] = tmp


def decode_planes(spikes: np.ndarray, o: int) -> np.ndarray:
    """``spec.decode`` of integer planes by Horner's rule in uint32, whose wrapping is
    arithmetic modulo 2^32: the int64 sum and its cast to int32 are that too (2^32 divides
    2^64), so the values are the same, without an int64 copy of every plane."""
    acc = np.zeros(spikes.shape[1:], np.uint32)
    for plane in spikes:
        np.left_shift(acc, 1, out=acc)
        np.add(acc, plane.astype(np.uint32), out=acc)
    np.add(acc, np.uint32(int(o) % 2**32), out=acc)
    return acc.view(np.int32)
