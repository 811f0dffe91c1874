"""How the CLI shows what the library returns: rich tables and plain lines.

Every function here turns data into something printable and prints nothing itself.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from harness.contract.kernel import kernel_path
from harness.contract.registry import Registry
from harness.engine import sass as sass_report
from harness.engine.kernels import Compiled
from harness.engine.validate import ValidationSummary, worst_errors
from harness.results.readback import own_intervals
from harness.results.rows import caveats
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


#: The narrowest a wrapped cell (a failed row's reason, a stage name) is let go.
_MIN_WRAP = 12


def _fits(table: Table, width: int, wrapping: Sequence[int]) -> bool:
    """Whether ``table`` shows every cell whole in ``width`` columns: each column as wide as
    its widest cell, except the ``wrapping`` ones, which may wrap down to ``_MIN_WRAP``."""
    need = 1 + 3 * len(table.columns)  # the borders and each cell's padding
    for i, col in enumerate(table.columns):
        cells = [str(col.header), *(str(c) for c in col.cells)]
        widest = max(max((len(ln) for ln in c.splitlines()), default=0) for c in cells)
        need += min(widest, _MIN_WRAP) if i in wrapping else widest
    return need <= width


def _stage_values(r: dict[str, Any]) -> dict[str, str]:
    """A stage row's cells as text ("-" where a value is missing)."""
    ok = r["status"] == "ok"
    return {
        "median": f"{r['median_us']:.2f}" if ok else "-",
        "noise": f"{r['noise_pct']:.2f}%" if ok else "-",
        "gbps": f"{r['gbps']:.0f}" if ok else "-",
        "peak": f"{r['pct_peak']:.1f}" if ok and r["pct_peak"] != "" else "-",
        "peer": f"{r['speedup_vs_best_peer']:.2f}x" if r.get("speedup_vs_best_peer") else "-",
    }


def _status(r: dict[str, Any], cut: int) -> str:
    """The status, a failed row's reason cut to ``cut``, and what the reason says of the
    row's numbers that no column shows (host time can be inside), which the cut or an ok
    row's hidden reason would lose."""
    said = "".join(f" ({c})" for c in caveats(str(r.get("reason") or "")))
    return escape(r["status"] + said) if r["status"] == "ok" else \
        escape(f"{r['status']}: {str(r['reason'])[:cut]}{said}")


def stage_rows(rows: Sequence[dict[str, Any]], width: int | None = None) -> Table:
    """``harness bench``: the stage rows, time, noise, bandwidth and speedup.

    One column per value when they fit in ``width`` terminal columns (or no width is given);
    else a narrower layout of six columns whose cells hold two or three lines each (stage
    over backend and variant, the point's sizes one a line, the time over its noise,
    bandwidth over % of peak), so that no number is cut at 80 columns."""
    t = Table("stage", "backend", "variant", "batch", "in_f", "out_f", "median µs", "± noise",
              "GB/s", "% peak", "vs best peer", "status")
    for r in rows:
        v = _stage_values(r)
        t.add_row(str(r["stage"]), str(r["backend"]), str(r["variant"]), str(r["batch"]),
                  str(r["in_f"]), str(r["out_f"]), v["median"], v["noise"], v["gbps"],
                  v["peak"], v["peer"], _status(r, 60))
    if width is None or _fits(t, width, wrapping=(11,)):
        return t
    return _narrow_stage_rows(rows, width)


def _widest(cells: Sequence[str]) -> int:
    return max((len(ln) for c in cells for ln in c.splitlines()), default=1)


def _narrow(heads: Sequence[str], cells: Sequence[Sequence[str]], width: int,
            right: Sequence[int]) -> Table:
    """A table for a narrow terminal: a line between rows, each column as wide as its widest
    line, the first (a name, folded past 22 and down to ``_MIN_WRAP`` when short of room)
    and the last (the status, wrapped) sharing what the others leave; numbers are never
    cut. ``right``: the columns of numbers, right-aligned."""
    widths = [_widest([h, *(c[i] for c in cells)]) for i, h in enumerate(heads)]
    widths[0] = min(widths[0], 22)
    frame = 3 * len(heads) - 1  # separators and padding, no outer edges
    last = min(widths[-1], _MIN_WRAP)

    def rest() -> int:
        return width - frame - sum(widths[:-1])

    widths[0] = max(_MIN_WRAP, widths[0] - max(0, last - rest()))
    widths[-1] = max(last, min(widths[-1], rest()))
    t = Table(show_lines=True, show_edge=False)
    for i, h in enumerate(heads):
        t.add_column(h, width=widths[i], overflow="fold",
                     justify="right" if i in right else "left")
    for c in cells:
        t.add_row(escape(c[0]), *c[1:])
    return t


def _narrow_stage_rows(rows: Sequence[dict[str, Any]], width: int) -> Table:
    """The stage rows in six columns of two or three lines (five when no peer was timed)."""
    heads = ["stage\nbackend variant", "point", "median µs\n± noise", "GB/s\n% peak",
             "vs\npeer", "status"]
    cells = []
    for r in rows:
        v = _stage_values(r)
        cells.append([
            f"{r['stage']}\n{r['backend']} {r['variant']}",
            "\n".join(f"{a} {r[a]}" for a in ("batch", "in_f", "out_f") if r.get(a, "") != ""),
            f"{v['median']}\n±{v['noise']}" if v["median"] != "-" else "-",
            f"{v['gbps']}\n{v['peak']}%" if v["peak"] != "-" else v["gbps"],
            v["peer"], _status(r, 60)])
    if all(c[4] == "-" for c in cells):  # no peer was timed: no column for it
        heads.pop(4)
        cells = [c[:4] + c[5:] for c in cells]
    return _narrow(heads, cells, width, right=(2, 3, 4) if len(heads) == 6 else (2, 3))


def _f1(r: dict[str, Any], k: str) -> str:
    v = r.get(k, "")
    return f"{v:.1f}" if isinstance(v, float) else "-"


def _pipeline_name(r: dict[str, Any]) -> str:
    """The pipeline's name, and the peer's where a peer measured the row."""
    backend = str(r.get("backend") or "pycuda")
    return str(r["stage"]) + ("" if backend == "pycuda" else f" ({backend})")


def pipeline_rows(rows: Sequence[dict[str, Any]], width: int | None = None) -> Table:
    """``harness bench``: the pipeline rows, total and the seed's intervals and shares.

    One column per value when they fit in ``width`` terminal columns (or no width is given);
    else five columns of several lines (the point's sizes, the total over its noise, each
    interval with its share), so that no number is cut at 80 columns."""
    others = [own_intervals(r) for r in rows]
    heads = ["pipeline", "batch", "out_f", "T", "total µs", "dyn µs", "enc kern µs",
             "enc total µs", "wq µs", "enc %", "wq %"]
    if any(others):  # a pipeline's intervals of its own names (spike_linear's activation)
        heads.append("other µs")
    t = Table(*heads, "status")
    for r, other in zip(rows, others, strict=True):
        t.add_row(_pipeline_name(r), str(r["batch"]), str(r["out_f"]), str(r.get("planes", "")),
                  f"{_f1(r, 'total_us')} ±{_f1(r, 'total_noise_pct')}%",
                  _f1(r, "dynamic_spikes_us"), _f1(r, "encoding_kernels_us"),
                  _f1(r, "encoding_total_us"), _f1(r, "weight_quant_us"),
                  _f1(r, "encoding_share_pct"), _f1(r, "weight_quant_share_pct"),
                  *([", ".join(other) or "-"] if len(heads) > 11 else []), _status(r, 50))
    if width is None or _fits(t, width, wrapping=(len(heads),)):
        return t
    cells = []
    for r in rows:
        parts = []
        for label, key, share in (("dyn", "dynamic_spikes_us", ""),
                                  ("enc kern", "encoding_kernels_us", ""),
                                  ("enc total", "encoding_total_us", "encoding_share_pct"),
                                  ("wq", "weight_quant_us", "weight_quant_share_pct")):
            if _f1(r, key) != "-":
                pct = _f1(r, share) if share else "-"
                parts.append(f"{label} {_f1(r, key)}" + (f", {pct}%" if pct != "-" else ""))
        parts += own_intervals(r)
        cells.append([
            _pipeline_name(r),
            "\n".join(f"{a} {r[k]}" for a, k in (("batch", "batch"), ("out_f", "out_f"),
                                                 ("T", "planes")) if r.get(k, "") != ""),
            f"{_f1(r, 'total_us')}\n±{_f1(r, 'total_noise_pct')}%"
            if _f1(r, "total_us") != "-" else "-",
            "\n".join(parts) or "-", _status(r, 50)])
    return _narrow(["pipeline", "point", "total µs\n± noise", "intervals µs, share",
                    "status"], cells, width, right=(2,))


def profile(rows: Sequence[dict[str, Any]]) -> Table:
    """``harness profile``: the profiled kernels' main metrics."""
    extra = sorted({m for r in rows for m in json.loads(r.get("metrics") or "{}")})
    t = Table("kernel", "duration µs", "DRAM % of peak", "L2 % of peak", "tensor pipe %",
              "achieved occupancy %", "registers/thread", "L2 hit %", *extra)
    for r in rows:
        more = json.loads(r.get("metrics") or "{}")
        t.add_row(escape(str(r["kernel"])), *(_num(r.get(c)) for c in (
            "duration", "dram_pct_of_peak", "l2_pct_of_peak", "tensor_pct_of_peak",
            "achieved_occupancy_pct", "registers_per_thread", "l2_hit_rate_pct")),
            *(_num(more.get(m)) for m in extra))
    return t


def sass(report: sass_report.SassReport, most: int = 10) -> Table:
    """``harness sass``: each entry point's instructions, its MMAs, the instructions of the
    innermost loop that holds one (a GEMM's main loop), its commonest opcodes."""
    t = Table("kernel", "instructions", "MMA", "MMA loop", f"commonest opcodes ({report.arch})")
    for f in report.functions:
        common = ", ".join(f"{op} {n}" for op, n in f.opcodes.most_common(most))
        t.add_row(escape(f.name), str(f.instructions), str(f.mma),
                  "-" if f.mma_loop is None else str(f.mma_loop), escape(common))
    return t


def _num(v: Any) -> str:
    """A metric as printed: a number to 4 significant digits, '-' when none was measured."""
    if v in ("", None):
        return "-"
    try:
        return f"{float(v):.4g}"
    except (TypeError, ValueError):
        return str(v)


def sanitizer(outcomes: Sequence[Outcome]) -> Table:
    """``harness sanitize``: errors and warnings per stage variant and tool."""
    t = Table("stage", "variant", "tool", "points", "errors", "warnings", "status")
    for o in outcomes:
        t.add_row(o.stage, o.variant, o.tool, str(o.points), str(o.errors), str(o.warnings),
                  "ok" if o.ok else "FAILED")
    return t
