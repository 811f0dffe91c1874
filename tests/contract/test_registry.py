"""Discovery: good, duplicate, malformed and broken plugins (anything raised at import,
SystemExit included); entry points; the checks made when a plugin loads (names, its kernel's
entry functions, families, block, reference); external plugins switched off."""

from __future__ import annotations

import dataclasses
import os
import sys
import textwrap
from pathlib import Path

import pytest

from harness.contract import registry
from harness.errors import BadInput, PluginError

TOY = '''
import numpy as np
from harness.api import Axis, Exact, Stage

STAGE = Stage(
    name="{name}", entry_points=("toy",), families=("flat",),
    axes=(Axis("batch", 4),), make_inputs=lambda rng, fam, p: {{"x": np.zeros(p["batch"])}},
    outputs=lambda p: {{"y": ((p["batch"],), np.dtype(np.float32))}},
    reference=lambda i, p, v: {{"y": i["x"]}}, enqueue=lambda launch, b, p, v: None,
    bytes_moved=lambda p: 8 * p["batch"], flops=lambda p: 0,
    tolerances={{"y": Exact("toy")}}, cases=({{"batch": 1}},),
)
'''
#: A kernel file that defines the toy's entry point.
TOY_CU = 'extern "C" __global__ void toy(float* y) {}\n'


def write_plugin(folder: Path, stem: str, name: str | None = None,
                 body: str | None = None) -> None:
    text = body if body is not None else TOY.format(name=name or stem)
    (folder / f"{stem}.py").write_text(textwrap.dedent(text))


def toy_with(old: str, new: str, name: str = "toy") -> str:
    """The toy plugin's source with one declaration changed."""
    text = TOY.format(name=name)
    assert old in text
    return text.replace(old, new)


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
    (k / "toy.cu").write_text(TOY_CU)
    reg = registry.discover([p], k, entry_points=False)
    assert list(reg.stages) == ["toy"]
    assert reg.stages["toy"].kernel_dir == k
    assert reg.stages["toy"].kernel_file == "toy.cu"  # from the name: nothing to declare


def test_missing_kernel_is_a_problem_naming_the_plugin(dirs: tuple[Path, Path]) -> None:
    p, k = dirs
    write_plugin(p, "toy")
    (k / "other.cu").write_text(TOY_CU)
    reg = registry.discover([p], k, entry_points=False)
    assert not reg.stages
    assert reg.problems[0].plugin == "toy" and "toy.cu not found" in reg.problems[0].message


def test_broken_plugins_do_not_stop_the_others(dirs: tuple[Path, Path]) -> None:
    p, k = dirs
    for stem in ("good", "syntax", "nostage", "wrongtype", "badname"):
        (k / f"{stem}.cu").write_text(TOY_CU)
    write_plugin(p, "good")
    write_plugin(p, "syntax", body="def (:\n")
    write_plugin(p, "nostage", body="X = 1\n")
    write_plugin(p, "wrongtype", body="STAGE = {'name': 'wrongtype'}\n")
    write_plugin(p, "badname", name="other")
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
    (k / "half.cu").write_text(TOY_CU)
    write_plugin(p, "half", body="from harness.api import Stage\nSTAGE = Stage(name='half')\n")
    reg = registry.discover([p], k, entry_points=False)
    assert not reg.stages
    assert "TypeError" in reg.problems[0].message and "missing" in reg.problems[0].message


def test_duplicate_names_keep_the_first_and_report_the_second(tmp_path: Path) -> None:
    a, b, k = tmp_path / "a", tmp_path / "b", tmp_path / "k"
    for d in (a, b, k):
        d.mkdir()
    (k / "toy.cu").write_text(TOY_CU)
    write_plugin(a, "toy")
    write_plugin(b, "toy")
    reg = registry.discover([a, b], k, entry_points=False)
    assert reg.sources["toy"].startswith(str(a))
    assert len(reg.problems) == 1 and "duplicate" in reg.problems[0].message


def test_unknown_stage_is_bad_input_listing_known(dirs: tuple[Path, Path]) -> None:
    p, k = dirs
    write_plugin(p, "toy")
    (k / "toy.cu").write_text(TOY_CU)
    reg = registry.discover([p], k, entry_points=False)
    with pytest.raises(BadInput, match="unknown stage 'nope' \\(known: toy\\)"):
        reg.select(["nope"])


def test_entry_point_plugins_are_discovered(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A package declaring a ``harness.stages`` entry point is found without any list."""
    site = tmp_path / "site"
    pkg = site / "extstage"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "ext.cu").write_text(TOY_CU)
    body = TOY.format(name="ext") + (
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
    (k / "scratchy.cu").write_text(TOY_CU)
    write_plugin(p, "scratchy", body=toy_with(
        "cases=({\"batch\": 1},),",
        "cases=({\"batch\": 1},), workspace=lambda p: {\"y\": ((1,), np.dtype(np.int8))},",
        name="scratchy"))
    reg = registry.discover([p], k, entry_points=False)
    assert not reg.stages
    assert "workspace reuses output name(s) y" in reg.problems[0].message


@pytest.mark.parametrize(("kernel", "found"), [
    (TOY_CU, True),
    ('extern "C" __global__ void __launch_bounds__(256, 4)\ntoy(float* y) {}\n', True),
    ('extern "C" __global__ void __cluster_dims__(8, 1, 1) __launch_bounds__(1024)\n'
     'toy(float* y) {}\n', True),  # a cluster's shape is not the kernel's name
    ('#include "toy.cuh"\n', True),  # defined in a header the kernel includes
    ('extern "C" {\n__global__ void toy(float* y) { if (y) { *y = 0; } }\n}\n', True),
    ('__global__ void toy(float* y) {}\n', False),  # C++ linkage: the name is mangled
    ('// extern "C" __global__ void toy(float* y) {}\n', False),  # commented out
    ('/* extern "C" __global__ void toy(float* y) {} */\n', False),
    ('extern "C" __global__ void toys(float* y) {}\n', False),
    ('extern "C" {\n}\n__global__ void toy(float* y) {}\n', False),  # after the block
])
def test_entry_points_must_be_extern_c_kernels_of_the_source(
        dirs: tuple[Path, Path], kernel: str, found: bool) -> None:
    p, k = dirs
    write_plugin(p, "toy")
    (k / "toy.cu").write_text(kernel)
    (k / "toy.cuh").write_text(TOY_CU)
    reg = registry.discover([p], k, entry_points=False)
    assert ("toy" in reg.stages) is found, reg.problems
    if not found:
        assert ('entry point(s) toy not defined as extern "C" kernels in toy.cu'
                in reg.problems[0].message)


@pytest.mark.parametrize(("old", "new", "problem"), [
    ('families=("flat",)', "families=()", "no input families declared"),
    ('entry_points=("toy",)', "entry_points=()", "no entry_points declared"),
    ("reference=lambda i, p, v:", "reference=lambda i, p:",
     "reference must take (inputs, point, variant) and, optionally, given"),
    ("enqueue=lambda launch, b, p, v: None", "enqueue=None", "field enqueue is not callable"),
    ("flops=lambda p: 0,", "flops=lambda p: 0, block=0,", "block 0 is not a thread count"),
    ("flops=lambda p: 0,", "flops=lambda p: 0, block=2048,", "block 2048 is not a thread"),
    ("flops=lambda p: 0,", "flops=lambda p: 0, block='256',", "block '256' is not a thread"),
    ("flops=lambda p: 0,", "flops=lambda p: 0, sanitize_shapes=({'bacth': 9},),",
     "sanitize_shapes names ['bacth'], not axes of the stage"),
])
def test_declaration_problems_are_reported(dirs: tuple[Path, Path], old: str, new: str,
                                           problem: str) -> None:
    p, k = dirs
    (k / "toy.cu").write_text(TOY_CU)
    write_plugin(p, "toy", body=toy_with(old, new))
    reg = registry.discover([p], k, entry_points=False)
    assert not reg.stages and problem in reg.problems[0].message, reg.problems


def test_describe_shows_descriptions_and_help_texts(dirs: tuple[Path, Path]) -> None:
    p, k = dirs
    (k / "toy.cu").write_text(TOY_CU)
    body = toy_with('Axis("batch", 4)', 'Axis("batch", 4, int, "rows")').replace(
        "flops=lambda p: 0,", 'flops=lambda p: 0, description="copies x", block=128,')
    write_plugin(p, "toy", body=body)
    text = registry.discover([p], k, entry_points=False).describe()
    assert text.splitlines() == [
        "toy: copies x", "  kernel toy.cu (toy), block 128", "  variant default",
        "  axis batch = 4: rows", "  families: flat"]


def test_every_builtin_description_and_help_is_shown() -> None:
    """What ``harness list --verbose`` prints: each stage's description, each variant's and
    axis's help, so a text a plugin declares is never one that nothing shows."""
    reg = registry.discover(entry_points=False)
    text = reg.describe()
    for item in [*reg.stages.values(), *reg.pipelines.values()]:
        assert item.description and f"{item.name}: {item.description}" in text
        for v in item.variants:
            assert (f"variant {v.name}: {v.help}" if v.help else f"variant {v.name}") in text
        for a in item.axes:
            assert f"axis {a.name} = {a.default}: {a.help}" in text


@pytest.mark.parametrize(("body", "why"), [
    ("import sys\nsys.exit(0)\n", "exited while being imported (SystemExit: 0)"),
    ("raise SystemExit('bye')\n", "exited while being imported (SystemExit: 'bye')"),
    ("class Odd(BaseException):\n    pass\nraise Odd('no')\n", "Odd: no"),
    ("raise GeneratorExit\n", "GeneratorExit"),
    ("import os\nos.environ['X'] = '1'\nraise RuntimeError('two\\nlines')\n",
     "RuntimeError: two lines"),
])
def test_anything_a_plugin_raises_at_import_is_a_problem(dirs: tuple[Path, Path], body: str,
                                                         why: str) -> None:
    p, k = dirs
    for stem in ("good", "bad"):
        (k / f"{stem}.cu").write_text(TOY_CU)
    write_plugin(p, "good")
    write_plugin(p, "bad", body=body)
    reg = registry.discover([p], k, entry_points=False)
    assert list(reg.stages) == ["good"]
    assert [(pr.plugin, pr.message) for pr in reg.problems] == [("bad", why)]
    assert "harness_plugin_bad" not in sys.modules


def test_a_plugin_that_exits_while_being_checked_is_a_problem(dirs: tuple[Path, Path]) -> None:
    p, k = dirs
    (k / "toy.cu").write_text(TOY_CU)
    write_plugin(p, "toy", body=toy_with(
        "cases=({\"batch\": 1},),",
        "cases=({\"batch\": 1},), workspace=lambda p: __import__('sys').exit(3),"))
    reg = registry.discover([p], k, entry_points=False)
    assert not reg.stages
    assert reg.problems[0].message == "exited while being imported (SystemExit: 3)"


def test_the_users_interrupt_goes_through(dirs: tuple[Path, Path]) -> None:
    p, k = dirs
    write_plugin(p, "toy", body="raise KeyboardInterrupt\n")
    with pytest.raises(KeyboardInterrupt):
        registry.discover([p], k, entry_points=False)


@pytest.mark.parametrize(("old", "new", "problem"), [
    ('name="{name}"', 'name="Toy"', "stage name 'Toy' is not [a-z][a-z0-9_]*"),
    ("cases=(", 'variants=(Variant("=1+1"),), cases=(',
     "variant name '=1+1' is not [a-z][a-z0-9_]*"),
    ('families=("flat",)', 'families=("flat", "@x")', "family name '@x' is not"),
    ('Axis("batch", 4)', 'Axis("Batch", 4)', "axis name 'Batch' is not"),
])
def test_names_are_checked_at_load(dirs: tuple[Path, Path], old: str, new: str,
                                   problem: str) -> None:
    p, k = dirs
    stem = "Toy" if "Toy" in new else "toy"
    (k / f"{stem}.cu").write_text(TOY_CU)
    body = TOY.replace(old, new).format(name=stem).replace(
        "import Axis, Exact, Stage", "import Axis, Exact, Stage, Variant")
    write_plugin(p, stem, body=body)
    reg = registry.discover([p], k, entry_points=False)
    assert not reg.stages and problem in reg.problems[0].message, reg.problems


@pytest.fixture
def external(tmp_path: Path, monkeypatch) -> Path:  # type: ignore[no-untyped-def]
    """A $HARNESS_PLUGIN_PATH folder holding the toy, its kernel beside it."""
    d = tmp_path / "extra"
    d.mkdir()
    write_plugin(d, "toy")
    (d / "toy.cu").write_text(TOY_CU)
    monkeypatch.setenv(registry.PATH_ENV, str(d))
    monkeypatch.delenv(registry.NO_EXTERNAL_ENV, raising=False)
    return d


def test_external_plugins_can_be_switched_off(external: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    reg = registry.discover(entry_points=False)
    assert "toy" in reg.stages and "dynamic_spikes" in reg.stages and reg.external
    reg = registry.discover(external=False)
    assert "toy" not in reg.stages and "dynamic_spikes" in reg.stages and not reg.external
    for value in ("1", "true", "YES", "on"):
        monkeypatch.setenv(registry.NO_EXTERNAL_ENV, value)
        assert "toy" not in registry.discover().stages
    for value in ("0", "", "no"):
        monkeypatch.setenv(registry.NO_EXTERNAL_ENV, value)
        assert "toy" in registry.discover(entry_points=False).stages
    monkeypatch.setenv(registry.NO_EXTERNAL_ENV, "maybe")
    with pytest.raises(BadInput, match="HARNESS_NO_EXTERNAL_PLUGINS='maybe': expected 1"):
        registry.discover()


def test_entry_points_are_off_with_the_external_plugins(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    looked: list[str] = []

    def entry_points(group: str) -> list[object]:
        looked.append(group)
        return []

    monkeypatch.setattr(registry.metadata, "entry_points", entry_points)
    registry.discover(external=False)
    assert looked == []
    registry.discover(external=True)
    assert looked == [registry.ENTRY_POINT_GROUP]


def test_a_plugin_path_that_points_nowhere_is_bad_input(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv(registry.NO_EXTERNAL_ENV, raising=False)
    monkeypatch.setenv(registry.PATH_ENV, str(tmp_path / "nowhere"))
    with pytest.raises(BadInput, match=f"HARNESS_PLUGIN_PATH names {tmp_path}/nowhere, "
                                       "which is not a folder"):
        registry.discover()
    assert "dynamic_spikes" in registry.discover(external=False).stages  # not looked at


#: A pipeline plugin composing the toy stage (``{steps}``: its steps).
PIPE = '''
from harness.api import Axis, Pipeline

STAGE = Pipeline(
    name="{name}", steps={steps}, axes=(Axis("batch", 4),), families=("flat",),
    make_inputs=lambda rng, fam, p: {{}}, run=lambda ctx, b, p: None,
    check=lambda i, p, o, h: [], reference=lambda i, p: {{}},
    bytes_moved=lambda p: 0, flops=lambda p: 0, cases=({{"batch": 1}},),
)
'''


def test_a_pipeline_loads_only_when_every_step_is_a_loaded_stage(
        dirs: tuple[Path, Path]) -> None:
    """Pipelines are admitted last, once the stages are known: one whose step did not load
    is a problem naming the missing steps; none is left pending."""
    p, k = dirs
    write_plugin(p, "toy")
    (k / "toy.cu").write_text(TOY_CU)
    write_plugin(p, "chain", body=PIPE.format(name="chain", steps=("toy",)))
    write_plugin(p, "broken", body=PIPE.format(name="broken", steps=("toy", "nope", "gone")))
    reg = registry.discover([p], k, entry_points=False)
    assert list(reg.pipelines) == ["chain"] and list(reg.stages) == ["toy"]
    assert [(pr.plugin, pr.message) for pr in reg.problems] == [
        ("broken", "steps not available: nope, gone")]
    assert reg.pending == []


def test_a_pipeline_name_is_neither_a_stage_nor_unknown(dirs: tuple[Path, Path]) -> None:
    """``get`` of a pipeline's name says it is a pipeline; ``pipeline`` of an unknown name
    lists the known pipelines (or none)."""
    p, k = dirs
    write_plugin(p, "toy")
    (k / "toy.cu").write_text(TOY_CU)
    write_plugin(p, "chain", body=PIPE.format(name="chain", steps=("toy",)))
    reg = registry.discover([p], k, entry_points=False)
    assert reg.pipeline("chain") is reg.pipelines["chain"]
    with pytest.raises(BadInput, match="chain is a pipeline: use `harness run chain`"):
        reg.get("chain")
    with pytest.raises(BadInput, match=r"unknown pipeline 'toy' \(known: chain\)"):
        reg.pipeline("toy")
    with pytest.raises(BadInput, match=r"unknown pipeline 'x' \(known: none\)"):
        registry.Registry().pipeline("x")


def test_a_pipeline_may_not_take_a_stage_name(dirs: tuple[Path, Path]) -> None:
    """A stage and a pipeline share one namespace: the second of a name, whichever kind it
    is, is a duplicate reported with the source of the first."""
    p, k = dirs
    write_plugin(p, "toy")
    (k / "toy.cu").write_text(TOY_CU)
    write_plugin(p, "chain", body=PIPE.format(name="chain", steps=("toy",)))
    reg = registry.discover([p], k, entry_points=False)
    toy, chain = reg.stages["toy"], reg.pipelines["chain"]
    reg._add(dataclasses.replace(chain, name="toy"), "elsewhere")
    reg._add(dataclasses.replace(toy, name="chain"), "other")
    assert reg.stages == {"toy": toy} and reg.pipelines == {"chain": chain}
    assert reg.problems == [
        registry.PluginProblem("toy", "elsewhere",
                               f"duplicate stage name: already provided by {p / 'toy.py'}"),
        registry.PluginProblem("chain", "other",
                               f"duplicate stage name: already provided by {p / 'chain.py'}")]


def test_select_without_names_gives_every_stage_sorted() -> None:
    """No names (None or empty) select every stage, in name order whatever the order they
    were found in."""
    a, b = object(), object()
    reg = registry.Registry(stages={"zeta": b, "alpha": a})  # type: ignore[dict-item]
    assert reg.select(None) == [a, b] and reg.select([]) == [a, b]
    assert reg.select(["zeta", "alpha"]) == [b, a]


def test_plugins_of_a_folder_load_in_name_order(dirs: tuple[Path, Path]) -> None:
    """A folder's plugins are imported sorted by file name, so the stages and problems come
    in the same order on every file system."""
    p, k = dirs
    stems = ["m", "c", "x", "a", "q", "f", "z", "b", "k", "t"]
    for stem in stems:
        write_plugin(p, stem)
        (k / f"{stem}.cu").write_text(TOY_CU)
        write_plugin(p, f"{stem}_bad", body="X = 1\n")
    reg = registry.discover([p], k, entry_points=False)
    assert list(reg.stages) == sorted(stems)
    assert [pr.plugin for pr in reg.problems] == sorted(f"{s}_bad" for s in stems)


def test_every_declaration_problem_is_reported_on_one_line(dirs: tuple[Path, Path]) -> None:
    """A plugin with several problems has them all in its one problem, joined by '; '."""
    p, k = dirs
    (k / "toy.cu").write_text(TOY_CU)
    write_plugin(p, "toy", body=toy_with('entry_points=("toy",), families=("flat",)',
                                         "entry_points=(), families=()"))
    reg = registry.discover([p], k, entry_points=False)
    assert reg.problems[0].message == "no entry_points declared; no input families declared"


def test_a_plugin_module_is_importable_by_name_while_it_loads(dirs: tuple[Path, Path]) -> None:
    """The plugin's module is in ``sys.modules`` under its private name while it runs (a
    dataclass of a module with postponed annotations looks its module up there)."""
    p, k = dirs
    (k / "toy.cu").write_text(TOY_CU)
    body = ("from __future__ import annotations\nimport dataclasses\n"
            "@dataclasses.dataclass\nclass Cfg:\n    x: int = 1\n" + TOY.format(name="toy"))
    write_plugin(p, "toy", body=body)
    try:
        reg = registry.discover([p], k, entry_points=False)
        assert list(reg.stages) == ["toy"], reg.problems
        assert sys.modules["harness_plugin_toy"].Cfg().x == 1
    finally:
        sys.modules.pop("harness_plugin_toy", None)


class _EntryPoint:
    """A stand-in for an installed ``harness.stages`` entry point."""

    def __init__(self, name: str, stage: object) -> None:
        self.name, self.value, self._stage = name, f"pkg.{name}:STAGE", stage

    def load(self) -> object:
        return self._stage


def test_an_entry_point_stage_must_set_kernel_dir(dirs: tuple[Path, Path],
                                                  monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """An installed stage has no built-in kernel folder to fall back on: without its own
    ``kernel_dir`` it is a problem, not a stage whose kernel is looked for in ``kernels/``."""
    p, k = dirs
    write_plugin(p, "toy")
    (k / "toy.cu").write_text(TOY_CU)
    toy = registry.discover([p], k, entry_points=False).stages["toy"]
    bare = dataclasses.replace(toy, name="ext", kernel_dir=None)
    monkeypatch.setattr(registry.metadata, "entry_points",
                        lambda group: [_EntryPoint("ext", bare)])
    empty = p / "none"
    empty.mkdir()
    reg = registry.discover([empty], k, entry_points=True, external=True)
    assert "ext" not in reg.stages
    assert [(pr.plugin, pr.source, pr.message) for pr in reg.problems] == [
        ("ext", "entry point pkg.ext:STAGE", "entry-point plugins must set kernel_dir")]


@pytest.mark.parametrize(("value", "allowed"), [
    ("off", True), ("OFF", True), (" 1 ", False), ("\ttrue\n", False), (" no", True),
])
def test_the_no_external_switch_takes_every_spelling(monkeypatch, value: str,  # type: ignore[no-untyped-def]
                                                     allowed: bool) -> None:
    """``$HARNESS_NO_EXTERNAL_PLUGINS`` is read case- and blank-insensitively, and each of
    its documented words (``off`` too) is taken; ``external`` given wins over it."""
    monkeypatch.setenv(registry.NO_EXTERNAL_ENV, value)
    assert registry.external_allowed() is allowed
    assert registry.external_allowed(not allowed) is (not allowed)


def test_empty_entries_of_the_plugin_path_are_skipped(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """An empty entry of ``$HARNESS_PLUGIN_PATH`` (a leading, trailing or doubled
    separator) names no folder: it is not the current one."""
    monkeypatch.setenv(registry.PATH_ENV, f"{os.pathsep}{tmp_path}{os.pathsep}{os.pathsep}")
    assert registry.plugin_path() == [tmp_path]
