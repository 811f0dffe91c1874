"""The shared axis and sweep declarations: every stage and pipeline that has a batch, a mode,
a step-1 k or a weight shape declares the same one, so chained stages agree on defaults and
bounds, and each side sweeps alike."""

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


def test_weight_side_stages_declare_the_shared_weight_axes() -> None:
    reg = registry.discover()
    for name in ("compute_scales", "weight_quantize", "weight_quant_fused"):
        assert reg.get(name).axes == axes.WEIGHT
    decls = [*reg.stages.values(), *reg.pipelines.values()]
    for axis in (axes.OUT_F, axes.GROUP_SIZE):
        have = [d.axis(axis.name) for d in decls if axis.name in {a.name for a in d.axes}]
        assert len(have) >= 5 and all(a == axis for a in have), axis.name


#: The built-in activation-side stages and pipelines, which sweep the activation side's
#: batches, and the weight stages that sweep only the height (a stage added since is
#: free to take either: it does not fail this test).
ACTIVATION_SIDE = {"activation_fused", "dynamic_spikes", "dynamic_spikes_reverse",
                   "find_min_max", "spike_decode", "spike_decode_packed", "spike_encode",
                   "transform_absmax", "activation_path", "spike_quant_gemm"}
WEIGHT_SIDE = {"compute_scales", "weight_quantize"}


def test_each_side_sweeps_alike() -> None:
    """The built-in activation-side stages and pipelines run the activation side's batches;
    the weight stages that sweep only the height take the weight sweep."""
    assert {"batch": tuple(2**i for i in range(17))} == axes.BATCH_SWEEP
    reg = registry.discover()
    decls = {d.name: d for d in [*reg.stages.values(), *reg.pipelines.values()]}
    assert set(decls) >= ACTIVATION_SIDE | WEIGHT_SIDE
    assert all(decls[n].default_sweep.get("batch") == axes.BATCH_SWEEP["batch"]
               for n in ACTIVATION_SIDE), ACTIVATION_SIDE
    assert all(dict(decls[n].default_sweep) == axes.WEIGHT_SWEEP for n in WEIGHT_SIDE)
