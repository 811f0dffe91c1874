"""Plots and tables drawn from result CSVs (matplotlib, imported only here).

Every number shown comes from a CSV row as the harness wrote it on the GPU; the roofline is
the row's own ``peak_gbps`` (the calibrated copy bandwidth of that run).

Past 300 lines because plots, tables and the README block share one reading of the CSVs
(which rows, which points); splitting the plots into a module of their own is the next step
when it grows again.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.errors import HarnessError
from harness.results import files, pipeline_rows
from harness.results import rows as results

#: The batch of the table's rows when none is asked for.
DEFAULT_BATCHES = (16384,)
#: The out_f of the weight stages' rows when none is asked for.
DEFAULT_OUT_F = 18944


def _f(v: str) -> float | None:
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _csvs_with(folder: Path, columns: set[str]) -> list[Path]:
    """The folder's CSVs whose header has every one of ``columns``; HarnessError naming a
    CSV that is not text."""
    out = []
    for p in sorted(folder.glob("*.csv")):
        try:
            with p.open() as f:
                header = f.readline()
        except (OSError, UnicodeDecodeError) as exc:
            raise HarnessError(f"{p}: not a readable CSV ({type(exc).__name__})") from None
        if columns <= set(header.strip().split(",")):
            out.append(p)
    return out


#: The column an ok row's time is in: a stage row's median, a pipeline row's total.
_TIME = ("median_us", "total_us")


def _read(path: Path) -> list[dict[str, str]]:
    """The rows of a results CSV, each time in it a finite number and an ok row's time a
    positive one; HarnessError naming the file and line otherwise (a NaN, a zero or a
    garbled cell would draw a wrong plot, or none)."""
    try:
        rows = results.read_rows(path)
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise HarnessError(f"{path}: not a readable CSV ({type(exc).__name__})") from None
    for line, r in enumerate(rows, start=2):
        for col, text in r.items():
            if not isinstance(col, str) or not col.endswith("_us") or text in ("", None):
                continue
            v = _f(text)
            positive = not (r.get("status") == "ok" and col in _TIME) or (v or 0) > 0
            if v is None or not math.isfinite(v) or not positive:
                raise HarnessError(f"{path}, line {line}: {col} is {text!r}, not a "
                                   f"{'positive' if col in _TIME else 'finite'} number")
        if r.get("status") == "ok" and not any(r.get(c) for c in _TIME):
            raise HarnessError(f"{path}, line {line}: an ok row without a time")
    return rows


#: Stage columns added after the first results were committed: a CSV written before one
#: of them still counts as a stage CSV (its rows show '-' there).
LATER_COLUMNS = frozenset({
    "launch", "clock_mhz_median", "clock_mhz_min", "clock_mhz_nominal", "throttled_samples",
    "tops", "pct_datasheet_tops", "datasheet_tops"})


def _stage_files(folder: Path) -> list[Path]:
    return _csvs_with(folder, set(results.COLUMNS) - LATER_COLUMNS)


def read_stage_rows(folder: Path, stages: Sequence[str] | None = None) -> list[dict[str, str]]:
    """Every row of the folder's stage CSVs (of ``stages`` only, when given), checked as the
    report reads them."""
    return [r for p in _stage_files(Path(folder)) if not stages or p.stem in stages
            for r in _read(p)]


def _pipeline_files(folder: Path) -> list[Path]:
    """The pipeline CSVs of the folder (their rows carry intervals and a ``total_us``)."""
    return _csvs_with(folder, {"total_us", "kernel_hashes"})  # ``variant`` came later


def _intervals(rows: Sequence[dict[str, str]]) -> list[str]:
    """The intervals (``LABELS`` keys) that some row measured, total first."""
    keys = [k for k in pipeline_rows.LABELS if any(_f(r.get(f"{k}_us", "")) is not None
                                              for r in rows)]
    return sorted(keys, key=lambda k: k != "total")


def _pipeline_plot(plt, path: Path, dest: Path) -> Path | None:  # type: ignore[no-untyped-def]
    """``<stem>.png``: every measured interval against batch, per variant, one panel per
    out_f (the pipelines without a weight path have one)."""
    rows = [r for r in _read(path) if r["status"] == "ok"]
    if not rows:
        return None
    outs = sorted({r.get("out_f", "") for r in rows}, key=lambda v: int(v or 0))
    variants = list(dict.fromkeys(r.get("variant", "") for r in rows))
    fig, axes = plt.subplots(1, len(outs), figsize=(6 * len(outs), 4), squeeze=False)
    for ax, of in zip(axes[0], outs, strict=True):
        for v in variants:
            sel = sorted((r for r in rows if r.get("out_f", "") == of
                          and r.get("variant", "") == v),
                         key=lambda r: int(r["batch"]))
            xs = [int(r["batch"]) for r in sel]
            for k in _intervals(sel):
                label = pipeline_rows.LABELS[k][:40]
                ax.plot(xs, [_f(r.get(f"{k}_us", "")) for r in sel], marker="o",
                        label=label if len(variants) == 1 else f"{v}: {label}")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("batch")
        ax.set_ylabel("median µs (cold L2)")
        ax.set_title(f"{path.stem}" + (f", out_f={of}" if of else ""))
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    out = dest / f"{path.stem}.png"
    _save(fig, out)
    plt.close(fig)
    return out


def pipeline_table(folder: Path, names: Sequence[str], batches: Sequence[int]) -> str:
    """A Markdown table of the named pipelines' rows at some batches: every measured
    interval, the total with its noise, the planes T."""
    lines = ["| pipeline | variant | point | T | total µs | noise | intervals µs | status |",
             "|---|---|---|---|---|---|---|---|"]
    wanted = {str(b) for b in batches}
    for path in _pipeline_files(Path(folder)):
        if path.stem not in names:
            continue
        rows = [r for r in _read(path) if r["batch"] in wanted]
        for r in rows:
            parts = [f"{k} {float(r[f'{k}_us']):.1f}" for k in _intervals([r]) if k != "total"]
            parts += [f"{k} {float(v['median_us']):.1f}"
                      for k, v in sorted(json.loads(r.get("intervals") or "{}").items())]
            total, noise = _f(r.get("total_us", "")), _f(r.get("total_noise_pct", ""))
            lines.append(
                f"| {r['stage']} | {r.get('variant') or '-'} | batch={r['batch']} "
                f"in_f={r['in_f']}"
                f"{' out_f=' + r['out_f'] if r.get('out_f') else ''} | {r.get('planes') or '-'}"
                f" | {'-' if total is None else f'{total:.1f}'} | "
                f"{'-' if noise is None else f'{noise:.2f} %'} | {', '.join(parts) or '-'} | "
                f"{r['status']} |")
    return "\n".join(lines)


def _x_axis(rows: Sequence[dict[str, str]]) -> str:
    return "batch" if any(r["batch"] for r in rows) else "out_f"


def plots(folder: Path, dest: Path | None = None) -> list[Path]:
    """``<dest>/<stage>.png`` (default ``<folder>/plots/``): time and GB/s against batch, per
    backend and variant, with the calibrated peak as the roofline; and the pipeline's
    intervals."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise HarnessError("harness report needs matplotlib: pip install '.[report]'") from exc
    folder = Path(folder)
    if not folder.is_dir():
        raise HarnessError(f"no such folder: {folder}")
    dest = files.folder(folder / "plots") if dest is None else files.folder(dest, "--out")
    written = []
    for path in _stage_files(folder):
        rows = [r for r in _read(path) if r["status"] == "ok"]
        if not rows:
            continue
        xa = _x_axis(rows)
        # One series per backend, variant, width and launch mode; a point measured twice
        # (two commands of one run) shows its last measurement.
        by_x: dict[str, dict[float, tuple[float, float, float]]] = defaultdict(dict)
        for r in rows:
            key = f"{r['backend']} {r['variant']} in_f={r['in_f']}"
            key += " (graph)" if r.get("launch") == "graph" else ""
            x = float(r[xa])
            by_x[key][x] = (x, float(r["median_us"]), float(r["gbps"]))
        series = {k: sorted(v.values()) for k, v in by_x.items()}
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
        for key, pts in sorted(series.items()):
            xs = [p[0] for p in pts]
            a1.plot(xs, [p[1] for p in pts], marker="o", label=key)
            a2.plot(xs, [p[2] for p in pts], marker="o", label=key)
        peak = _f(rows[-1].get("peak_gbps", ""))
        if peak:
            a2.axhline(peak, color="k", linestyle="--", label=f"copy peak {peak:.0f} GB/s")
        for ax, lab in ((a1, "median µs (cold L2)"), (a2, "GB/s (declared bytes / median)")):
            ax.set_xscale("log", base=2)
            ax.set_xlabel(xa)
            ax.set_ylabel(lab)
            ax.grid(True, alpha=0.3)
        a1.set_yscale("log")
        a2.legend(fontsize=7)
        fig.suptitle(f"{path.stem} on {rows[-1]['gpu']} (commit {rows[-1]['git_sha']})")
        fig.tight_layout()
        out = dest / f"{path.stem}.png"
        _save(fig, out)
        plt.close(fig)
        written.append(out)
    for path in _pipeline_files(folder):
        out = _pipeline_plot(plt, path, dest)
        if out is not None:
            written.append(out)
    return written


def _tops(r: dict[str, str]) -> str:
    """A row's TOPS, with its share of the datasheet peak where the row has one."""
    tops, pct = _f(r.get("tops", "")), _f(r.get("pct_datasheet_tops", ""))
    if tops is None:
        return "-"
    shown = f"{tops:.0f}" if tops >= 100 else f"{tops:.3g}"  # a CPU's 0.0112 is not 0
    return shown + ("" if pct is None else f" ({pct:.1f} %)")


def table(folder: Path, batches: Sequence[int] = (16384,), out_f: int | None = 18944,
          stages: Sequence[str] | None = None) -> str:
    """A Markdown table of the stage CSVs at some batches (weight stages: at ``out_f``, or
    every row when it is None). A failed row keeps its time, marked with its status. Where
    a row shown has ``tops`` (a GEMM's), a column gives it, with its % of the datasheet
    peak."""
    chosen: list[dict[str, str]] = []
    for path in _stage_files(Path(folder)):
        if stages and path.stem not in stages:
            continue
        rows = [r for r in _read(path) if r["status"] in ("ok", "failed")
                and _f(r.get("median_us", "")) is not None]
        xa = _x_axis(rows) if rows else "batch"
        wanted = {str(b) for b in batches} if xa == "batch" else \
            ({str(out_f)} if out_f is not None else None)
        chosen += [{**r, "_x": xa} for r in rows if wanted is None or r[xa] in wanted]
    with_tops = any(_f(r.get("tops", "")) is not None for r in chosen)
    tops_head = " TOPS (% of datasheet) |" if with_tops else ""
    lines = ["| stage | backend | variant | point | launch | median µs | noise | GB/s "
             f"| % of peak |{tops_head} vs best peer | status |",
             "|---|---|---|---|---|---|---|---|---|" + ("---|" if with_tops else "")
             + "---|---|"]
    for r in chosen:
        xa = r["_x"]
        pct, gbps, sp = _f(r["pct_peak"]), _f(r["gbps"]), _f(r["speedup_vs_best_peer"])
        lines.append(
            f"| {r['stage']} | {r['backend']} | {r['variant']} | {xa}={r[xa]} "
            f"in_f={r['in_f']}{_also_out_f(r, xa)} | {r.get('launch') or 'stream'} | "
            f"{float(r['median_us']):.2f} | {float(r['noise_pct']):.2f} % | "
            f"{'-' if gbps is None else f'{gbps:.0f}'} | "
            f"{'-' if pct is None else f'{pct:.1f}'} | "
            + (f"{_tops(r)} | " if with_tops else "")
            + f"{'-' if sp is None else f'{sp:.2f}x'} | {r['status']} |")
    return "\n".join(lines)


def _also_out_f(r: dict[str, str], xa: str) -> str:
    """`` out_f=N`` for a row swept by batch that has an out_f too (a GEMM's), so that its
    shapes stay apart in the table."""
    return f" out_f={r['out_f']}" if xa == "batch" and r.get("out_f") else ""


def tables(folder: Path, batches: Sequence[int], out_f: int | None,
           stages: Sequence[str] | None) -> str:
    """The stage table, and the pipelines' table where ``stages`` names pipelines; a table
    with no row is left out when the other has rows."""
    parts = [table(folder, batches, out_f, stages)]
    if stages:
        parts.append(pipeline_table(folder, stages, batches))
    kept = [t for t in parts if len(t.splitlines()) > 2]
    return "\n\n".join(kept or parts[:1])


def update_readme(readme: Path, text: str, block: str = "results") -> None:
    """Replace the block between ``<!-- BLOCK:begin -->`` and ``<!-- BLOCK:end -->`` of the
    README with ``text``."""
    files.edit(readme, lambda s: _with_block(s, text, block, readme))


def _with_block(s: str, text: str, block: str, readme: Path) -> str:
    begin, end = f"<!-- {block}:begin -->", f"<!-- {block}:end -->"
    if begin not in s or end not in s:
        raise HarnessError(f"{readme} has no {begin} ... {end} block")
    head, rest = s.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{text}\n{end}{tail}"


def check_readme(readme: Path, block: str = "results") -> None:
    """One line when the README cannot take the table (missing, unreadable, without the
    block), said before any plot is drawn."""
    try:
        _with_block(Path(readme).read_text(encoding="utf-8"), "", block, readme)
    except FileNotFoundError:
        raise HarnessError(f"no such README: {readme}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise HarnessError(f"cannot read {readme}: {exc}") from None


def _save(fig, out: Path) -> None:  # type: ignore[no-untyped-def]
    """The figure as a PNG, replacing ``out`` whole (the result-file rules)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    files.replace(out, buf.getvalue())


def _values(vals: set[str]) -> str:
    """``1, 4, 16`` or, past six, ``1, 2, 4, ..., 65536 (17 values)``."""
    v = sorted(vals, key=lambda x: int(x) if x.isdigit() else -1)
    return ", ".join(v) if len(v) <= 6 else f"{', '.join(v[:3])}, ..., {v[-1]} " \
        f"({len(v)} values)"


def points(folder: Path, stages: Sequence[str] | None = None) -> list[str]:
    """What the folder's CSVs hold, one line per CSV (``stages``: only those): the sizes
    of its rows with a time (``dynamic_spikes: batch 1, 4, 16 at in_f 3584``)."""
    folder = Path(folder)
    out = []
    for kind, paths in (("stage", _stage_files(folder)), ("pipeline", _pipeline_files(folder))):
        for path in paths:
            if (stages and path.stem not in stages) or (kind == "pipeline" and not stages):
                continue
            rows = [r for r in _read(path) if any(_f(r.get(c, "")) is not None for c in _TIME)]
            if not rows:
                out.append(f"{path.stem}: no row with a time")
                continue
            xa = "batch" if kind == "pipeline" else _x_axis(rows)
            out.append(f"{path.stem}: {xa} {_values({r[xa] for r in rows})} at in_f "
                       f"{_values({r['in_f'] for r in rows})}")
    return out


def why_empty(folder: Path, batches: Sequence[int], out_f: int | None,
              stages: Sequence[str] | None) -> str:
    """Why a table has no row: the folder has no result CSV (of those stages), or none at
    the asked sizes, and then which points it has."""
    have = points(folder, stages)
    named = f" of {', '.join(stages)}" if stages else ""
    if not have:
        return f"the table is empty: {folder} has no stage or pipeline CSV{named}"
    wanted = f"batch {', '.join(str(b) for b in batches)}" + (
        f" (weight stages: out_f {out_f})" if out_f is not None else "")
    return (f"the table is empty: no row at {wanted}; --batch and --out-f pick others. "
            f"The folder has {'; '.join(have)}")


@dataclass(frozen=True)
class Report:
    """What ``harness report`` made: the plots written, the table (and the file it went
    to, with ``--out``), the README updated, and why the table is empty when it is."""

    plots: list[Path]
    text: str
    readme: Path | None
    table_path: Path | None = None
    empty: str | None = None


#: The table's file in a ``--out`` folder.
TABLE_FILE = "results.md"


def build(folder: Path, batches: Sequence[int] | None = None, out_f: int | None = None,
          stages: Sequence[str] | None = None, readme: Path | None = None,
          block: str = "results", out: Path | None = None) -> Report:
    """Draw the folder's plots, make its table and, with ``readme``, write the table into
    that README's block. ``batches`` default to ``DEFAULT_BATCHES``; ``out_f`` None means
    ``DEFAULT_OUT_F`` and 0 every row of the weight stages. ``out``: the folder for the
    plots and the table (``results.md``), instead of ``<folder>/plots/`` and no file."""
    if readme is not None:
        check_readme(readme, block)
    if out is not None:
        files.folder(out, "--out")  # a file or a read-only place: said before any work
    written = plots(folder, out)
    batches, out_f = list(batches or DEFAULT_BATCHES), None if out_f == 0 else \
        out_f or DEFAULT_OUT_F
    text = tables(folder, batches, out_f, stages)
    empty = None if any(len(t.splitlines()) > 2 for t in text.split("\n\n")) else \
        why_empty(folder, batches, out_f, stages)
    table_path = None
    if out is not None:
        table_path = files.replace(Path(out) / TABLE_FILE, (text + "\n").encode("utf-8"))
    if readme is not None:
        update_readme(readme, text, block)
    return Report(written, text, readme, table_path, empty)
