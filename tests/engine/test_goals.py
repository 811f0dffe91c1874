"""``report_goals``: the goals judged into a table, written into a README block, with bad
input said before any kernel is hashed."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.contract import registry
from harness.engine import goals, kernels
from harness.errors import HarnessError
from tests.results import stage_csv


def _setup(tmp_path: Path) -> Path:
    stage_csv.write(tmp_path / "s.csv", [stage_csv.stage_row("v", 3.0)])
    p = tmp_path / "goals.toml"
    p.write_text('[[goal]]\nname = "g"\nfile = "s.csv"\nvariant = "v"\nat_most_us = 5\n'
                 "point = { batch = 8 }\n")
    return p


def test_the_table_goes_into_the_block(tmp_path: Path) -> None:
    p = _setup(tmp_path)
    readme = tmp_path / "README.md"
    readme.write_text("a\n<!-- goals:begin -->\nold\n<!-- goals:end -->\nb\n")
    text = goals.report_goals(registry.discover(), tmp_path, p, readme)
    assert "| g | v batch=8 | 3 µs ±0.10 % | ≤ 5 µs | met |" in text
    after = readme.read_text()
    assert text in after and "old" not in after
    assert after.startswith("a\n<!-- goals:begin -->\n")
    assert after.endswith("<!-- goals:end -->\nb\n")


def test_bad_input_before_the_kernels_are_hashed(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    def hashed(reg: object) -> dict[tuple[str, str], str]:
        raise AssertionError("hashed the kernels")

    monkeypatch.setattr(goals, "current_hashes", hashed)
    p = _setup(tmp_path)
    readme = tmp_path / "README.md"
    readme.write_text("no block\n")
    reg = registry.discover()
    with pytest.raises(HarnessError, match="no <!-- goals:begin -->"):
        goals.report_goals(reg, tmp_path, p, readme)
    with pytest.raises(HarnessError, match="no such results folder"):
        goals.report_goals(reg, tmp_path / "none", p)
    with pytest.raises(HarnessError, match="no such goals file"):
        goals.report_goals(reg, tmp_path, tmp_path / "none.toml")
    assert kernels.current_hashes is not hashed  # only the engine's name was replaced
