"""Discovery: good, duplicate, malformed and broken plugins; entry points."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from harness.contract import registry
from harness.errors import BadInput, PluginError

TOY = '''
import numpy as np
from harness.contract.stage import Axis, Stage
from harness.contract.tolerance import Exact

STAGE = Stage(
    name="{name}", kernel="{kernel}", entry_points=("toy",),
    axes=(Axis("batch", 4),), make_inputs=lambda rng, fam, p: {{"x": np.zeros(p["batch"])}},
    outputs=lambda p: {{"y": ((p["batch"],), np.dtype(np.float32))}},
    reference=lambda i, p, v, g: {{"y": i["x"]}}, launch=lambda run, b, p, v: None,
    bytes_moved=lambda p: 8 * p["batch"], flops=lambda p: 0,
    tolerances={{"y": Exact("toy")}}, cases=({{"batch": 1}},),
)
'''


def write_plugin(folder: Path, stem: str, name: str | None = None, kernel: str | None = None,
                 body: str | None = None) -> None:
    text = body if body is not None else TOY.format(name=name or stem,
                                                     kernel=kernel or f"{stem}.cu")
    (folder / f"{stem}.py").write_text(textwrap.dedent(text))


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    p, k = tmp_path / "plugins", tmp_path / "kernels"
    p.mkdir()
    k.mkdir()
    return p, k


def test_builtin_stages_are_found() -> None:
    reg = registry.discover(entry_points=False)
    assert "dynamic_spikes" in reg.stages
    assert not reg.problems


def test_good_plugin_loads_with_kernel_dir(dirs: tuple[Path, Path]) -> None:
    p, k = dirs
    write_plugin(p, "toy")
    (k / "toy.cu").write_text("// toy")
    reg = registry.discover([p], k, entry_points=False)
    assert list(reg.stages) == ["toy"]
    assert reg.stages["toy"].kernel_dir == k


def test_missing_kernel_is_a_problem_naming_the_plugin(dirs: tuple[Path, Path]) -> None:
    p, k = dirs
    write_plugin(p, "toy")
    reg = registry.discover([p], k, entry_points=False)
    assert not reg.stages
    assert reg.problems[0].plugin == "toy" and "not found" in reg.problems[0].message


def test_broken_plugins_do_not_stop_the_others(dirs: tuple[Path, Path]) -> None:
    p, k = dirs
    for stem in ("good", "syntax", "nostage", "wrongtype", "badname"):
        (k / f"{stem}.cu").write_text("//")
    write_plugin(p, "good")
    write_plugin(p, "syntax", body="def (:\n")
    write_plugin(p, "nostage", body="X = 1\n")
    write_plugin(p, "wrongtype", body="STAGE = {'name': 'wrongtype'}\n")
    write_plugin(p, "badname", name="other", kernel="badname.cu")
    reg = registry.discover([p], k, entry_points=False)
    assert list(reg.stages) == ["good"]
    msgs = {pr.plugin: pr.message for pr in reg.problems}
    assert set(msgs) == {"syntax", "nostage", "wrongtype", "badname"}
    assert "SyntaxError" in msgs["syntax"]
    assert "no STAGE" in msgs["nostage"]
    assert "not a harness.contract.stage.Stage" in msgs["wrongtype"]
    assert "differs from the file stem" in msgs["badname"]
    with pytest.raises(PluginError, match="syntax"):
        reg.get("syntax")


def test_missing_fields_are_reported(dirs: tuple[Path, Path]) -> None:
    p, k = dirs
    (k / "half.cu").write_text("//")
    write_plugin(p, "half", body="from harness.contract.stage import Stage\n"
                                 "STAGE = Stage(name='half', kernel='half.cu')\n")
    reg = registry.discover([p], k, entry_points=False)
    assert not reg.stages
    assert "TypeError" in reg.problems[0].message and "missing" in reg.problems[0].message


def test_duplicate_names_keep_the_first_and_report_the_second(tmp_path: Path) -> None:
    a, b, k = tmp_path / "a", tmp_path / "b", tmp_path / "k"
    for d in (a, b, k):
        d.mkdir()
    (k / "toy.cu").write_text("//")
    write_plugin(a, "toy")
    write_plugin(b, "toy")
    reg = registry.discover([a, b], k, entry_points=False)
    assert reg.sources["toy"].startswith(str(a))
    assert len(reg.problems) == 1 and "duplicate" in reg.problems[0].message


def test_unknown_stage_is_bad_input_listing_known(dirs: tuple[Path, Path]) -> None:
    p, k = dirs
    write_plugin(p, "toy")
    (k / "toy.cu").write_text("//")
    reg = registry.discover([p], k, entry_points=False)
    with pytest.raises(BadInput, match="unknown stage 'nope' \\(known: toy\\)"):
        reg.select(["nope"])


def test_entry_point_plugins_are_discovered(tmp_path: Path, monkeypatch) -> None:
    """A package declaring a ``harness.stages`` entry point is found without any list."""
    site = tmp_path / "site"
    pkg = site / "extstage"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "ext.cu").write_text("//")
    body = TOY.format(name="ext", kernel="ext.cu") + (
        "\nimport dataclasses, pathlib\n"
        "STAGE = dataclasses.replace(STAGE, kernel_dir=pathlib.Path(__file__).parent)\n")
    (pkg / "stage.py").write_text(body)
    dist = site / "extstage-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: extstage\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[harness.stages]\next = extstage.stage:STAGE\n")
    monkeypatch.syspath_prepend(str(site))
    empty = tmp_path / "none"
    empty.mkdir()
    reg = registry.discover([empty], empty, entry_points=True)
    assert "ext" in reg.stages, reg.problems
    assert reg.sources["ext"] == "entry point extstage.stage:STAGE"
    sys.modules.pop("extstage.stage", None)
    sys.modules.pop("extstage", None)


def test_workspace_that_reuses_an_output_name_is_a_problem(dirs: tuple[Path, Path]) -> None:
    p, k = dirs
    (k / "scratchy.cu").write_text("//")
    body = TOY.format(name="scratchy", kernel="scratchy.cu").replace(
        "cases=({\"batch\": 1},),",
        "cases=({\"batch\": 1},), workspace=lambda p: {\"y\": ((1,), np.dtype(np.int8))},")
    write_plugin(p, "scratchy", body=body)
    reg = registry.discover([p], k, entry_points=False)
    assert not reg.stages
    assert "workspace reuses output name(s) y" in reg.problems[0].message
