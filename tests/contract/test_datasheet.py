"""The datasheet table: figures by the driver's GPU name and a declared rate, none guessed."""

from __future__ import annotations

from harness.contract import datasheet


def test_the_h200_and_h100_sxm_figures() -> None:
    for gpu in ("NVIDIA H200", "NVIDIA H100 80GB HBM3"):
        assert datasheet.peak_tops(gpu, "int8_dense") == 1979.0
        assert datasheet.peak_tops(gpu, "bf16_dense") == 989.0
        assert datasheet.peak_tops(gpu, "fp32") == 67.0


def test_an_unknown_gpu_or_rate_has_no_figure() -> None:
    assert datasheet.peak_tops("NVIDIA H200 NVL", "int8_dense") is None  # another board
    assert datasheet.peak_tops("NVIDIA H200", None) is None
    assert datasheet.peak_tops("NVIDIA H200", "fp64") is None


def test_every_listed_figure_is_of_a_declared_rate() -> None:
    for figures in datasheet.PEAKS.values():
        assert set(figures) <= set(datasheet.RATES)
        assert all(v > 0 for v in figures.values())
