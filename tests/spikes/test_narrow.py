"""The narrow-type paths of step 3 and 4 (:mod:`harness.spikes.narrow`), through the
``spec`` functions that take them, against the literal int64 formulas."""

from __future__ import annotations

import numpy as np
import pytest

from harness.spikes import spec


@pytest.mark.parametrize("seed", range(6))
def test_the_int32_paths_give_the_int64_formulas_values(seed: int) -> None:
    """``encode`` and ``transform`` run in int32 where they can: on random int32 tensors
    (full range, small, with int32's extremes planted, empty) the planes of every mode and
    T, and v and amax of offsets in and out of range, equal the literal int64 formulas."""
    rng = np.random.default_rng(seed)
    extremes = np.array([-(2**31), -(2**31) + 1, -1, 0, 1, 2**31 - 1, 2**30], np.int32)
    for trial in range(40):
        n = int(rng.integers(0, 40))
        v = (rng.integers(-70, 70, (3, n)) if trial % 2 else
             rng.integers(-(2**31), 2**31, (3, n))).astype(np.int32)
        if n and trial % 3 == 0:
            v.flat[rng.integers(0, v.size)] = extremes[rng.integers(0, len(extremes))]
        for mode in spec.MODES:
            for t_planes in (1, 6, 8, 17, 31):
                assert np.array_equal(spec.encode(v, t_planes, mode),
                                      spec.encode64(v, t_planes, mode)), (mode, t_planes, v)
        for o in (0, -7, int(v.min()) if n else 3, 2**31 - 1, -(2**31), 2**32, -(2**31) - 5):
            got, amax = spec.transform(v, o)
            want = (v.astype(np.int64) - o).astype(np.int32)
            assert got.dtype == np.int32 and np.array_equal(got, want), o
            assert amax == (int(np.abs(want.astype(np.int64)).max()) if n else 0), o


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint8])
def test_decode_by_horner_in_uint32_is_the_int64_sum(dtype: type) -> None:
    """``decode`` wraps modulo 2^32 as the int64 sum's cast to int32 does: the same values
    for valid planes, for out-of-range ones, and for offsets past int32."""
    rng = np.random.default_rng(3)
    for t_planes in (1, 6, 31, 40):
        info = np.iinfo(dtype)
        spikes = rng.integers(max(info.min, -3), min(info.max, 3) + 1, (t_planes, 4, 9))
        spikes = spikes.astype(dtype)
        spikes.flat[0] = info.max
        for o in (0, -5, 2**31 - 1, -(2**31), 2**40 + 3):
            weights = 1 << np.arange(t_planes - 1, -1, -1, dtype=np.int64)
            want = (np.tensordot(weights, spikes.astype(np.int64), axes=1) + o).astype(np.int32)
            got = spec.decode(spikes, o)
            assert got.dtype == np.int32 and np.array_equal(got, want), (t_planes, o)


def test_a_numpy_scalar_offset_gives_what_a_python_int_does() -> None:
    """``o`` as np.int32 (as a caller may pass it): the same v, amax and decode as with a
    Python int, where the narrow paths' bounds would otherwise wrap."""
    q = np.array([[2**31 - 1, -(2**31) + 20]], np.int32)
    got, amax = spec.transform(q, np.int32(10))
    want, want_amax = spec.transform(q, 10)
    assert np.array_equal(got, want) and amax == want_amax and type(amax) is int
    planes = np.ones((3, 2, 2), np.int8)
    assert np.array_equal(spec.decode(planes, np.int32(-5)), spec.decode(planes, -5))
    with pytest.raises(TypeError, match="integer words, not float64"):
        spec.unpack(np.zeros((1, 1, 1)), 1, "unidirectional", 4)
