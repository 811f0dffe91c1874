"""PyTorch twins of SPEC's steps, written as a PyTorch user writes them: the stages'
``torch_impl`` (the torch and torch_compile peers) compose these, as their NumPy references
compose ``harness.spikes.spec``. ``torch`` is passed in, so nothing here imports it.
"""

from __future__ import annotations

from typing import Any

from harness.spikes import spec


def quantise(torch: Any, x: Any, k: float, clamp: tuple[float, float] | None = None,
             away: bool = False) -> tuple[Any, Any]:
    """Step 1: ``(vth, q)``, ``vth = mean |x| / k`` (clamped to ``clamp`` when given),
    ``q = round(x / vth)`` as int32, 0 on rows where ``vth == 0``."""
    vth = x.abs().sum(dim=1) / x.shape[1] / k
    if clamp is not None:
        vth = vth.clamp(*clamp)
    r = x / vth[:, None]
    if away:
        tr = torch.trunc(r)
        r = tr + torch.sign(r) * ((r - tr).abs() >= 0.5)
    else:
        r = torch.round(r)
    return vth, torch.where(vth[:, None] == 0, torch.zeros_like(r), r).to(torch.int32)


def offset(torch: Any, qmin: Any, qmax: Any, mode: str) -> Any:
    """Step 2b with tensor ops (no host sync): the transform decision ``o``."""
    zero = torch.zeros_like(qmin)
    if spec.check_mode(mode) == 0:
        return torch.where(qmin < 0, qmin, zero)
    return torch.where(qmin >= 0, torch.div(qmax + 1, 2, rounding_mode="floor"), zero)


def encode(torch: Any, v: Any, t_planes: int, mode: str) -> Any:
    """Step 3: ``T`` planes of ``v`` by shifts and masks, stacked, most significant first
    (not yet cast to int8)."""
    m = spec.check_mode(mode)
    shifts = torch.arange(t_planes - 1, -1, -1, device=v.device,
                          dtype=torch.int32).view(-1, 1, 1)
    if m == 1:
        return torch.sign(v) * ((v.abs() >> shifts) & 1)
    planes = (v >> shifts) & 1
    if m == 2:
        planes[0] = -planes[0]
    return planes


def unpack_bits(torch: Any, words: Any, f: int) -> Any:
    """Bit-packed planes ``[..., W]`` (bit j of word w is value 32 w + j) as their bits
    ``[..., f]`` int64, by shifts and masks."""
    shifts = torch.arange(32, dtype=torch.int64, device=words.device)
    return ((words.to(torch.int64)[..., None] >> shifts) & 1).flatten(-2)[..., :f]


def packed_q(torch: Any, planes: Any, stats: Any, f: int) -> Any:
    """q (int64) from the unidirectional bit-packed planes ``[P, R, W]`` and their stats
    [qmin, qmax, o, T] (T read on the host): the T planes' bits weighted 2^(T - 1 - t),
    summed, plus o (:func:`harness.spikes.inputs.packed_q` in NumPy)."""
    n_planes = int(stats[3].item())
    bits = unpack_bits(torch, planes[:n_planes], f)
    sig = torch.bitwise_left_shift(
        torch.ones(n_planes, dtype=torch.int64, device=planes.device),
        torch.arange(n_planes - 1, -1, -1, dtype=torch.int64, device=planes.device))
    return (bits * sig[:, None, None]).sum(dim=0) + stats[2].to(torch.int64)


def dequantised(torch: Any, w_q: Any, scale: Any, group_size: int) -> Any:
    """Step B undone: the weights ``w_q * scale`` of each one's group, in fp32 (what a
    float layer holds for the quantised weights)."""
    s = scale.repeat_interleave(int(group_size), dim=1)[:, : w_q.shape[1]]
    return w_q.to(torch.float32) * s
