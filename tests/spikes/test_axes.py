"""The shared axis declarations: every stage and pipeline that has a batch, a mode or a
step-1 k declares the same one, so chained stages agree on defaults and bounds."""

from __future__ import annotations

from harness.contract import registry
from harness.spikes import axes, spec


def test_chained_stages_declare_the_shared_axes() -> None:
    reg = registry.discover()
    decls = [*reg.stages.values(), *reg.pipelines.values()]
    batch = [d.axis("batch") for d in decls if "batch" in {a.name for a in d.axes}]
    assert len(batch) >= 10 and all(a == axes.BATCH for a in batch)
    modes = [d.axis("mode") for d in decls if "mode" in {a.name for a in d.axes}]
    assert modes and all(a.choices == spec.MODES and a.default == "unidirectional"
                         for a in modes)
    assert reg.get("dynamic_spikes").axis("k") == axes.K
    assert reg.get("find_min_max").axis("k") == axes.K_INPUT
    assert axes.mode("set by the variant").help == "set by the variant"
