"""How the CLI shows what the library returns: rich tables and plain lines.

Every function here turns data into something printable and prints nothing itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from harness.contract.kernel import kernel_path
from harness.contract.registry import Registry
from harness.engine.kernels import Compiled
from harness.engine.validate import ValidationSummary, worst_errors
from harness.results import compare
from harness.tools.sanitize import Outcome


def progress(console: Console) -> Progress:
    """The progress bar of long runs (on stderr, so stdout keeps only the results)."""
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=console)


def _axes(st: Any) -> str:
    return ", ".join(f"{a.name}={a.default}" for a in st.axes)


def catalog(reg: Registry) -> Table:
    """``harness list``: every stage and pipeline, its variants, axes and kernel or steps."""
    t = Table("name", "kind", "variants", "axes (defaults)", "kernel / steps")
    for name, st in sorted(reg.stages.items()):
        t.add_row(name, "stage", ", ".join(v.name for v in st.variants), _axes(st),
                  kernel_path(st).name)
    for name, pipe in sorted(reg.pipelines.items()):
        t.add_row(name, "pipeline", ", ".join(v.name for v in pipe.variants), _axes(pipe),
                  " -> ".join(pipe.steps))
    return t


def resources(compiled: Sequence[Compiled]) -> Table:
    """``harness check``: each kernel's registers, shared memory, stack and spills."""
    t = Table("stage", "variant", "function", "regs", "smem B", "stack B", "spill st/ld B")
    for c in compiled:
        for r in c.resources:
            t.add_row(c.stage, c.variant, r.function, str(r.registers), str(r.smem_bytes),
                      str(r.stack_bytes), f"{r.spill_stores}/{r.spill_loads}")
    return t


def validation(summaries: Sequence[ValidationSummary]) -> Table:
    """``harness validate``: cases and passes per target variant, with the worst errors."""
    t = Table("stage", "variant", "kernel hash", "cases", "passed", "worst error")
    for s in summaries:
        t.add_row(s.name, s.variant, s.kernel_hash, str(len(s.cases)), str(s.passed),
                  escape(worst_errors(s.cases)))
    return t


def where(row: dict[str, Any]) -> str:
    """A row's target and size, for the progress bar: ``dynamic_spikes batch=4``."""
    size = " ".join(f"{a}={row[a]}" for a in ("batch", "out_f") if row.get(a, "") != "")
    return f"{row['stage']} {size}"


def stage_rows(rows: Sequence[dict[str, Any]]) -> Table:
    """``harness bench``: the stage rows, time, noise, bandwidth and speedup."""
    t = Table("stage", "backend", "variant", "batch", "in_f", "out_f", "median µs", "± noise",
              "GB/s", "% peak", "vs best peer", "status")
    for r in rows:
        ok = r["status"] == "ok"
        t.add_row(str(r["stage"]), str(r["backend"]), str(r["variant"]), str(r["batch"]),
                  str(r["in_f"]), str(r["out_f"]), f"{r['median_us']:.2f}" if ok else "-",
                  f"{r['noise_pct']:.2f}%" if ok else "-",
                  f"{r['gbps']:.0f}" if ok else "-",
                  f"{r['pct_peak']:.1f}" if ok and r["pct_peak"] != "" else "-",
                  f"{r['speedup_vs_best_peer']:.2f}x" if r.get("speedup_vs_best_peer")
                  else "-",
                  r["status"] if ok else escape(f"{r['status']}: {str(r['reason'])[:60]}"))
    return t


def pipeline_rows(rows: Sequence[dict[str, Any]]) -> Table:
    """``harness bench``: the pipeline rows, total and the seed's intervals and shares."""
    t = Table("pipeline", "batch", "out_f", "T", "total µs", "dyn µs", "enc kern µs",
              "enc total µs", "wq µs", "enc %", "wq %", "status")

    def f(r: dict[str, Any], k: str) -> str:
        v = r.get(k, "")
        return f"{v:.1f}" if isinstance(v, float) else "-"

    for r in rows:
        t.add_row(str(r["stage"]), str(r["batch"]), str(r["out_f"]), str(r.get("planes", "")),
                  f"{f(r, 'total_us')} ±{f(r, 'total_noise_pct')}%", f(r, "dynamic_spikes_us"),
                  f(r, "encoding_kernels_us"), f(r, "encoding_total_us"),
                  f(r, "weight_quant_us"), f(r, "encoding_share_pct"),
                  f(r, "weight_quant_share_pct"),
                  r["status"] if r["status"] == "ok" else escape(f"{r['status']}: "
                                                                 f"{str(r['reason'])[:50]}"))
    return t


def profile(rows: Sequence[dict[str, Any]]) -> Table:
    """``harness profile``: the profiled kernels' main metrics."""
    t = Table("kernel", "duration µs", "DRAM % of peak", "achieved occupancy %",
              "registers/thread", "L2 hit %")
    for r in rows:
        t.add_row(escape(str(r["kernel"])), *(str(r[c]) for c in (
            "duration", "dram_pct_of_peak", "achieved_occupancy_pct", "registers_per_thread",
            "l2_hit_rate_pct")))
    return t


def sanitizer(outcomes: Sequence[Outcome]) -> Table:
    """``harness sanitize``: errors and warnings per stage variant and tool."""
    t = Table("stage", "variant", "tool", "points", "errors", "warnings", "status")
    for o in outcomes:
        t.add_row(o.stage, o.variant, o.tool, str(o.points), str(o.errors), str(o.warnings),
                  "ok" if o.ok else "FAILED")
    return t


def verdicts(rep: compare.CompareReport, explain: bool = False) -> Table:
    """``harness compare``: each row's times, change, noise and verdict (and why)."""
    t = Table("stage", "backend", "variant", "point", "launch", "old µs", "new µs", "change",
              "noise", "verdict", *(("reason",) if explain else ()))

    def f(v: float | None, fmt: str, unit: str = "") -> str:
        return "-" if v is None else format(v, fmt) + unit

    for v in rep.rows:
        k = v.point
        t.add_row(k["stage"], k["backend"], k["variant"], v.label(), k.get("launch", ""),
                  f(v.old_us, ".2f"), f(v.new_us, ".2f"), f(v.change_pct, "+.1f", "%"),
                  f(v.noise_pct, ".1f", "%"), v.verdict, *((escape(v.reason),) if explain else ()))
    return t


def counts(rep: compare.CompareReport) -> str:
    """``3 faster, 10 same, 0 slower, 1 ambiguous, 0 new, 0 gone, 0 failed``."""
    return ", ".join(f"{n} {k}" for k, n in rep.counts().items())
