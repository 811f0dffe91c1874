"""Plots and the results table from the committed H200 CSVs."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness import report
from harness.errors import HarnessError

pytest.importorskip("matplotlib", reason="harness report needs matplotlib")
H200 = Path(__file__).parents[1] / "statistics" / "h200"


def test_plots_and_table(tmp_path: Path) -> None:
    for p in H200.glob("*.csv"):
        shutil.copy(p, tmp_path)
    written = report.plots(tmp_path)
    names = {p.name for p in written}
    assert {"dynamic_spikes.png", "spike_quant_gemm.png"} <= names
    assert all(p.stat().st_size > 10_000 for p in written)
    table = report.table(tmp_path)
    assert table.startswith("| stage | backend |")
    assert "| dynamic_spikes | pycuda | default | batch=16384 in_f=3584 |" in table


def test_readme_block_is_replaced(tmp_path: Path) -> None:
    r = tmp_path / "README.md"
    r.write_text(f"head\n{report.BEGIN}\nold\n{report.END}\ntail\n")
    report.update_readme(r, "new")
    assert r.read_text() == f"head\n{report.BEGIN}\nnew\n{report.END}\ntail\n"
    r.write_text("no markers")
    with pytest.raises(HarnessError, match="no <!-- results:begin -->"):
        report.update_readme(r, "x")


def test_missing_folder(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match="no such folder"):
        report.plots(tmp_path / "none")
