"""Deliberately wrong kernels (tests/fixtures/bad_kernels/) must be rejected by the
validator, each with a message that says what is wrong.

The kernels compile on the CPU (nvcc); the rejection needs the GPU (marked ``gpu``).
"""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import pytest

from harness.contract import kernel as compiler
from harness.engine import validate

BAD = Path(__file__).parents[1] / "fixtures" / "bad_kernels"
#: What the second run under another poison finds in a kernel that leaves elements
#: unwritten or whose answer changes from run to run (it is checked before any comparison).
UNSETTLED = "element(s) differ between two runs under different poisons"
#: Fixture -> (families to run, text the failure must contain).
EXPECT = {
    "unwritten": (("normal",), f"output q: 37 {UNSETTLED}"),  # every 97th of 3584
    "skips_tail": (("normal",), f"output q: 35 {UNSETTLED}"),  # 7 rows of 5: all of q
    "ties_away": (("edge",), "q: FAILED"),
    "mutates_input": (("normal",), "input x was modified"),
    "writes_out_of_bounds": (("normal",), "wrote past the end of q"),
    "race": (("normal", "llm"), UNSETTLED),
    "stale": (("normal",), UNSETTLED),  # the replayed answer differs from the new one
    "seed_family_only": (("ramp", "normal"), "FAILED"),
}


def bad_stage(reg, name: str):  # type: ignore[no-untyped-def]
    """dynamic_spikes with its kernel file swapped for the fixture ``<name>.cu``."""
    return dataclasses.replace(reg.get("dynamic_spikes"), name=name, kernel_dir=BAD)


def test_every_fixture_is_listed() -> None:
    assert {p.stem for p in BAD.glob("*.cu")} == set(EXPECT)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
@pytest.mark.parametrize("name", sorted(EXPECT))
def test_bad_kernels_compile(reg, name: str) -> None:  # type: ignore[no-untyped-def]
    st = bad_stage(reg, name)
    assert [r.function for r in compiler.nvcc_report(st, st.variants[0])] == ["dynamic_spikes"]


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(EXPECT))
def test_validator_rejects_bad_kernel(reg, gpu_runner, name: str) -> None:  # type: ignore[no-untyped-def]
    families, text = EXPECT[name]
    st = bad_stage(reg, name)
    cases = list(validate.validate(st, st.variants[0], gpu_runner, families, seeds=2))
    failed = [c for c in cases if not c.ok]
    assert failed, f"{name}: every case passed"
    assert any(text in c.describe() for c in failed), failed[0].describe()
    if name == "seed_family_only":  # right on the seed program's tensors (ramp) alone
        assert all(c.ok for c in cases if c.family == "ramp")
