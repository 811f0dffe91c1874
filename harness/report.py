"""Plots and tables drawn from result CSVs (matplotlib, imported only here).

Every number shown comes from a CSV row as the harness wrote it on the GPU; the roofline is
the row's own ``peak_gbps`` (the calibrated copy bandwidth of that run).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from harness import pipeline, results
from harness.errors import HarnessError


def _f(v: str) -> float | None:
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _stage_files(folder: Path) -> list[Path]:
    out = []
    for p in sorted(folder.glob("*.csv")):
        with p.open() as f:
            head = f.readline().strip().split(",")
        # Stage CSVs written before a column was added (``launch``) still count.
        if set(results.COLUMNS) - {"launch"} <= set(head):
            out.append(p)
    return out


def _x_axis(rows: Sequence[dict[str, str]]) -> str:
    return "batch" if any(r["batch"] for r in rows) else "out_f"


def plots(folder: Path) -> list[Path]:
    """``<folder>/plots/<stage>.png``: time and GB/s against batch, per backend and variant,
    with the calibrated peak as the roofline; and the pipeline's intervals."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise HarnessError("harness report needs matplotlib: pip install '.[report]'") from exc
    folder = Path(folder)
    if not folder.is_dir():
        raise HarnessError(f"no such folder: {folder}")
    dest = folder / "plots"
    dest.mkdir(exist_ok=True)
    written = []
    for path in _stage_files(folder):
        rows = [r for r in results.read_rows(path) if r["status"] == "ok"]
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
        fig.savefig(out, dpi=110)
        plt.close(fig)
        written.append(out)
    pipe_csv = folder / "spike_quant_gemm.csv"
    if pipe_csv.is_file():
        rows = [r for r in results.read_rows(pipe_csv) if r["status"] == "ok"]
        outs = sorted({r["out_f"] for r in rows}, key=int)
        if rows:
            fig, axes = plt.subplots(1, len(outs), figsize=(6 * len(outs), 4), squeeze=False)
            for ax, of in zip(axes[0], outs, strict=True):
                sel = sorted((r for r in rows if r["out_f"] == of), key=lambda r: int(r["batch"]))
                xs = [int(r["batch"]) for r in sel]
                for k in ("total", "dynamic_spikes", "encoding_total", "encoding_kernels",
                          "weight_quant"):
                    ys = [_f(r.get(f"{k}_us", "")) for r in sel]
                    ax.plot(xs, ys, marker="o", label=pipeline.LABELS[k][:40])
                ax.set_xscale("log", base=2)
                ax.set_yscale("log")
                ax.set_xlabel("batch")
                ax.set_ylabel("median µs")
                ax.set_title(f"spike_quant_gemm, out_f={of}")
                ax.grid(True, alpha=0.3)
                ax.legend(fontsize=7)
            fig.tight_layout()
            out = dest / "spike_quant_gemm.png"
            fig.savefig(out, dpi=110)
            plt.close(fig)
            written.append(out)
    return written


def table(folder: Path, batches: Sequence[int] = (16384,), out_f: int | None = 18944,
          stages: Sequence[str] | None = None) -> str:
    """A Markdown table of the stage CSVs at some batches (weight stages: at ``out_f``, or
    every row when it is None). A failed row keeps its time, marked with its status."""
    lines = ["| stage | backend | variant | point | launch | median µs | noise | GB/s "
             "| % of peak | vs best peer | status |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for path in _stage_files(Path(folder)):
        if stages and path.stem not in stages:
            continue
        rows = [r for r in results.read_rows(path) if r["status"] in ("ok", "failed")
                and _f(r.get("median_us", "")) is not None]
        xa = _x_axis(rows) if rows else "batch"
        wanted = {str(b) for b in batches} if xa == "batch" else \
            ({str(out_f)} if out_f is not None else None)
        for r in rows:
            if wanted is not None and r[xa] not in wanted:
                continue
            pct, gbps, sp = _f(r["pct_peak"]), _f(r["gbps"]), _f(r["speedup_vs_best_peer"])
            lines.append(
                f"| {r['stage']} | {r['backend']} | {r['variant']} | {xa}={r[xa]} "
                f"in_f={r['in_f']} | {r.get('launch') or 'stream'} | "
                f"{float(r['median_us']):.2f} | {float(r['noise_pct']):.2f} % | "
                f"{'-' if gbps is None else f'{gbps:.0f}'} | "
                f"{'-' if pct is None else f'{pct:.1f}'} | "
                f"{'-' if sp is None else f'{sp:.2f}x'} | {r['status']} |")
    return "\n".join(lines)


def update_readme(readme: Path, text: str, block: str = "results") -> None:
    """Replace the block between ``<!-- BLOCK:begin -->`` and ``<!-- BLOCK:end -->`` of the
    README with ``text``."""
    begin, end = f"<!-- {block}:begin -->", f"<!-- {block}:end -->"
    s = readme.read_text()
    if begin not in s or end not in s:
        raise HarnessError(f"{readme} has no {begin} ... {end} block")
    head, rest = s.split(begin, 1)
    _, tail = rest.split(end, 1)
    readme.write_text(f"{head}{begin}\n{text}\n{end}{tail}")
