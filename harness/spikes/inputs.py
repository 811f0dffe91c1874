"""Input chains: realistic inputs for a stage made by running the upstream references.

A stage in the middle of the pipeline (find_min_max, encode, decode, ...) is fed what the
stages before it would produce from an input family's activations or weights, so every
family reaches every stage with its own distribution.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from harness.spikes import families, spec


def activation_chain(rng: np.random.Generator, family: str, batch: int, in_f: int,
                     k: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(x, vth float32, q int32)`` of step 1 on the family's activations."""
    x = families.activations(rng, family, batch, in_f, k)
    vth, q = spec.dynamic_spikes(x, k)
    return x, vth, q


def encodable(rng: np.random.Generator, family: str, batch: int, in_f: int, k: float,
              t_planes: int, mode: str) -> tuple[np.ndarray, int]:
    """``(v, o)``: the family's transformed spikes, rescaled to fill exactly ``T`` planes.

    Step 2 gives ``v = q - o``; it is scaled so that its largest magnitude is the largest the
    mode's ``T`` planes hold, and one element is set to each end of the range, so every
    plane, the sign plane included, is exercised.
    """
    _, _, q = activation_chain(rng, family, batch, in_f, k)
    mm = spec.min_max(q)
    o = spec.offset(int(mm[0]), int(mm[1]), mode)
    v, amax = spec.transform(q, o)
    m = spec.check_mode(mode)
    hi = (1 << (t_planes - 1)) - 1 if m == 2 else (1 << t_planes) - 1
    lo = 0 if m == 0 else (-(1 << (t_planes - 1)) if m == 2 else -hi)
    scaled = np.rint(v.astype(np.float64) * (hi / amax)) if amax else v.astype(np.float64)
    v = np.clip(scaled, lo, hi).astype(np.int32)
    flat = v.reshape(-1)
    if flat.size >= 2:
        idx = rng.choice(flat.size, size=2, replace=False)
        flat[idx[0]], flat[idx[1]] = lo, hi
    return v, o


def packed_words(in_f: int) -> int:
    """32-value words a row of a bit-packed plane."""
    return -(-int(in_f) // 32)


def packed_activations(rng: np.random.Generator, family: str, p: Any,
                       mode: str) -> dict[str, np.ndarray]:
    """Step 1's activations as the fused stage's packed layout leaves them: ``planes``, the
    packed planes of v = q - o in a buffer of the most planes a row of this width can need
    (``spec.plane_bound``; T of them written, the rest zero), ``stats`` [qmin, qmax, o, T]
    and ``vth``. It draws from ``rng`` as :func:`activation_chain` does."""
    b, f = int(p["batch"]), int(p["in_f"])
    x, vth, _ = activation_chain(rng, family, b, f, p["k"])
    c = spec.activation_chain(x, p["k"], mode, vth)
    t = int(c["planes"])
    planes = np.zeros((max(spec.plane_bound(p["k"], f, mode), t), b, packed_words(f)),
                      dtype=np.uint32)
    planes[:t] = spec.pack(c["v"], t, mode)
    return {"planes": planes, "stats": np.array([*c["mm"], c["o"], t], dtype=np.int32),
            "vth": vth}


def packed_q(planes: np.ndarray, stats: np.ndarray, mode: str, in_f: int) -> np.ndarray:
    """q as the packed planes and stats [qmin, qmax, o, T] give it (SPEC step 4)."""
    t, o = int(stats[3]), int(stats[2])
    return spec.unpack(planes[:t], t, mode, int(in_f)) + o


def weight_chain(rng: np.random.Generator, family: str, out_f: int, in_f: int,
                 group: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(w, scale, w_q)`` of steps A and B on the family's weights."""
    w = families.weights(rng, family, out_f, in_f)
    s = spec.scales(w, group)
    return w, s, spec.weight_quantize(w, s, group)


def layer_specs(p: Any) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """The integer GEMM's operands besides q, as its stages declare them: the quantized
    weights ``w_q [out_f, in_f]`` int8, their scales ``[out_f, ceil(in_f / G)]``, the rows'
    ``vth [batch]`` and ``bias [out_f]`` fp32."""
    b, n, f, g = (int(p[a]) for a in ("batch", "out_f", "in_f", "group_size"))
    return {"w_q": ((n, f), np.dtype(np.int8)),
            "scale": ((n, -(-f // g)), np.dtype(np.float32)),
            "vth": ((b,), np.dtype(np.float32)),
            "bias": ((n,), np.dtype(np.float32))}


def layer_out(p: Any) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """The layer's output as its stages declare it: ``out [batch, out_f]`` fp32."""
    return {"out": ((p["batch"], p["out_f"]), np.dtype(np.float32))}


def layer_flops(p: Any) -> int:
    """The layer's arithmetic: a multiply-add (two operations) for each of ``batch x out_f x
    in_f`` products."""
    return 2 * p["batch"] * p["out_f"] * p["in_f"]
