"""The PyTorch twins of SPEC's steps (harness/torchmath.py) against the NumPy ones."""

from __future__ import annotations

import numpy as np
import pytest

from harness.spikes import families, spec, torchmath

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("mode", spec.MODES)
def test_twins_match_spec_step_by_step(mode: str) -> None:
    x = families.activations(np.random.default_rng(7), "edge", 12, 37, 3.0)
    vth, q = torchmath.quantise(torch, torch.from_numpy(x), 3.0)
    assert np.array_equal(q.numpy(), spec.quantise(x, vth.numpy()))  # on its own vth
    mm = spec.min_max(q.numpy())
    o = torchmath.offset(torch, q.min(), q.max(), mode)
    assert int(o) == spec.offset(int(mm[0]), int(mm[1]), mode)
    v, amax = spec.transform(q.numpy(), int(o))
    t = spec.planes(amax, mode)
    got = torchmath.encode(torch, torch.from_numpy(v), t, mode).to(torch.int8).numpy()
    assert np.array_equal(got, spec.encode(v, t, mode))


def test_clamp_and_away() -> None:
    x = np.array([[2.5, -2.5, 0.0, 0.0]], np.float32)  # mean |x| = 1.25: vth 1.25 / k
    vth, q = torchmath.quantise(torch, torch.from_numpy(x), 1.25, (1.0, 1.0), away=True)
    assert float(vth[0]) == 1.0 and q.tolist() == [[3, -3, 0, 0]]  # 2.5 -> 3 away from zero
    _, q_even = torchmath.quantise(torch, torch.from_numpy(x), 1.25, (1.0, 1.0))
    assert q_even.tolist() == [[2, -2, 0, 0]]  # half to even


def test_unpack_bits_is_spec_unpacks_bits() -> None:
    """The words' bits, value 32 w + j at bit j of word w, cut to f values (padding dropped):
    the bits spec.unpack decodes, plane by plane."""
    v = np.random.default_rng(3).integers(0, 64, size=(5, 70)).astype(np.int32)
    words = spec.pack(v, 6, "unidirectional")  # [6, 5, 3]
    bits = torchmath.unpack_bits(torch, torch.from_numpy(words.astype(np.int64)), 70).numpy()
    assert bits.shape == (6, 5, 70)
    assert np.array_equal(bits, spec.encode(v, 6, "unidirectional"))


def test_packed_q_is_inputs_packed_q() -> None:
    """q from the packed planes and stats in torch, as the NumPy twin gives it, with the
    buffer's unwritten planes past T ignored and o added back."""
    from harness.spikes import inputs
    act = inputs.packed_activations(np.random.default_rng(5), "normal",
                                    {"batch": 3, "in_f": 70, "k": 3.0}, "unidirectional")
    want = inputs.packed_q(act["planes"], act["stats"], "unidirectional", 70)
    got = torchmath.packed_q(torch, torch.from_numpy(act["planes"].astype(np.int64)),
                             torch.from_numpy(act["stats"]), 70).numpy()
    assert int(act["stats"][2]) != 0 and act["planes"].shape[0] > int(act["stats"][3])
    assert np.array_equal(got, want)
