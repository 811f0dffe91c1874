"""The plots of a results folder (matplotlib, imported only here): per stage, time and rate
against the batch (or out_f), one line per backend, variant, shape and launch mode, with
the run's own peak as the roofline (the calibrated copy bandwidth, or a GEMM's datasheet
TOPS); per pipeline, every measured interval, a panel per shape.

Every number drawn comes from a CSV row as the harness wrote it on the GPU.
"""

from __future__ import annotations

import io
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path

from harness.errors import HarnessError
from harness.results import files, pipeline_rows
from harness.results.readback import (
    intervals,
    number,
    pipeline_files,
    read_checked,
    results_folder,
    stage_files,
    x_axis,
)


def pipeline_shapes(rows: Sequence[dict[str, str]]) -> list[tuple[str, str]]:
    """The (out_f, in_f) pairs of a pipeline's rows, a panel each (out_f empty for the
    pipelines without a weight path)."""
    pairs = {(r.get("out_f", ""), r.get("in_f", "")) for r in rows}
    return sorted(pairs, key=lambda p: (int(p[0] or 0), int(p[1] or 0)))


def pipeline_series(rows: Sequence[dict[str, str]], out_f: str,
                    in_f: str) -> dict[str, list[tuple[int, float | None]]]:
    """The lines of one panel (a shape): every measured interval of each variant's rows,
    and of each peer's (its total alone), against batch. A line is labelled by its
    interval, and by its variant (a peer's: ``peer (variant)``) where there are several."""
    runs = list(dict.fromkeys((r.get("backend") or "pycuda", r.get("variant", ""))
                              for r in rows))
    out: dict[str, list[tuple[int, float | None]]] = {}
    for backend, v in runs:
        sel = sorted((r for r in rows if r.get("out_f", "") == out_f
                      and r.get("in_f", "") == in_f and r.get("variant", "") == v
                      and (r.get("backend") or "pycuda") == backend),
                     key=lambda r: int(r["batch"]))
        who = v if backend == "pycuda" else f"{backend} ({v})"
        for k in intervals(sel):
            label = pipeline_rows.LABELS[k][:40]
            out[label if len(runs) == 1 else f"{who}: {label}"] = [
                (int(r["batch"]), number(r.get(f"{k}_us", ""))) for r in sel]
    return out


def _pipeline_plot(plt, path: Path, rows: Sequence[dict[str, str]],  # type: ignore[no-untyped-def]
                   dest: Path) -> Path:
    """``<stem>.png``: :func:`pipeline_series`, one panel per shape
    (:func:`pipeline_shapes`)."""
    shapes = pipeline_shapes(rows)
    fig, axes = plt.subplots(1, len(shapes), figsize=(6 * len(shapes), 4), squeeze=False)
    for ax, (of, inf) in zip(axes[0], shapes, strict=True):
        for label, pts in pipeline_series(rows, of, inf).items():
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("batch")
        ax.set_ylabel("median µs (cold L2)")
        ax.set_title(f"{path.stem}" + (f", out_f={of}" if of else "")
                     + (f", in_f={inf}" if len({i for _, i in shapes}) > 1 else ""))
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    out = dest / f"{path.stem}.png"
    _save(fig, out)
    plt.close(fig)
    return out


def _rate(rows: Sequence[dict[str, str]]) -> tuple[str, float | None, str]:
    """The right panel's column, its peak and the peak's label: ``tops`` against the
    datasheet rate for a stage that declares one (a GEMM: its rows carry
    ``datasheet_tops``), else ``gbps`` against the calibrated copy peak. A memory-bound
    stage that counts flops has ``tops`` too, but bytes are what bound it. The peak is the
    largest any row names (a peer's row names none)."""
    def peak_of(col: str) -> float | None:
        vals = [v for r in rows if (v := number(r.get(col, ""))) is not None]
        return max(vals) if vals else None

    tops_peak = peak_of("datasheet_tops")
    if tops_peak is not None:
        return "tops", tops_peak, f"datasheet peak {tops_peak:.0f} TOPS"
    peak = peak_of("peak_gbps")
    return "gbps", peak, f"copy peak {peak:.0f} GB/s" if peak else ""


def series(rows: Sequence[dict[str, str]], xa: str,
           rate: str = "gbps") -> dict[str, list[tuple[float, float, float | None]]]:
    """The plotted lines: one per backend, variant, shape and launch mode, as sorted
    (x, median µs, ``rate``) points. The shape is in_f, and out_f too where the x axis is
    the batch and the rows have more than one (a GEMM's (N, K) pairs). A point measured
    twice (two commands of one run) shows its last measurement; a row without a rate has
    None there (its time is still drawn)."""
    outs = {r.get("out_f", "") for r in rows} if xa == "batch" else set()
    by_x: dict[str, dict[float, tuple[float, float, float | None]]] = defaultdict(dict)
    for r in rows:
        key = f"{r['backend']} {r['variant']} in_f={r['in_f']}"
        key += f" out_f={r['out_f']}" if len(outs) > 1 else ""
        key += " (graph)" if r.get("launch") == "graph" else ""
        x = float(r[xa])
        by_x[key][x] = (x, float(r["median_us"]), number(r.get(rate, "")))
    return {k: sorted(v.values()) for k, v in by_x.items()}


_DASHES = ("-", "--", ":", "-.")
_MARKS = ("o", "s", "^", "D")


def _style(key: str, lines: Mapping[str, object]) -> dict[str, str]:
    """A line's look: its colour by backend and variant (the first two words of its key),
    its dash and marker by the rest (shape, launch mode): 16 distinct dash-and-marker pairs
    a colour, so lines look alike only past 10 backend-variants (the colour cycle) or 16
    shapes and launch modes."""
    def split(k: str) -> tuple[str, str]:
        w = k.split(" ", 2)
        return " ".join(w[:2]), w[2] if len(w) > 2 else ""

    who = sorted({split(k)[0] for k in lines})
    what = sorted({split(k)[1] for k in lines})
    a, b = split(key)
    i, j = who.index(a), what.index(b)
    return {"color": f"C{i % 10}", "linestyle": _DASHES[j % len(_DASHES)],
            "marker": _MARKS[(j // len(_DASHES)) % len(_MARKS)]}


def plots(folder: Path, dest: Path | None = None) -> list[Path]:
    """``<dest>/<stage>.png`` (default ``<folder>/plots/``): time, and GB/s against the
    calibrated copy peak (TOPS against the datasheet rate for a GEMM), against batch or
    out_f, a line per backend, variant, shape and launch mode (:func:`series`); and each
    pipeline's intervals, a panel per shape."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise HarnessError("harness report needs matplotlib: pip install '.[report]'") from exc
    folder = results_folder(folder)
    # Every CSV read and checked before anything is written: a bad cell draws no plot.
    staged, piped = ([(p, [r for r in read_checked(p) if r["status"] == "ok"]) for p in ps]
                     for ps in (stage_files(folder), pipeline_files(folder)))
    # The folder's own plots are never written outside the folder; --out is the user's.
    dest = files.folder(folder / "plots", root=folder) if dest is None \
        else files.folder(dest, "--out")
    written = []
    for path, rows in staged:
        if not rows:
            continue
        xa = x_axis(rows)
        rate, peak, peak_label = _rate(rows)
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
        lines = series(rows, xa, rate)
        for key, pts in sorted(lines.items()):
            xs = [p[0] for p in pts]
            look = _style(key, lines)
            a1.plot(xs, [p[1] for p in pts], label=key, **look)
            rated = [p for p in pts if p[2] is not None]
            a2.plot([p[0] for p in rated], [p[2] for p in rated], label=key, **look)
        if peak:
            a2.axhline(peak, color="k", linestyle="--", label=peak_label)
        rate_label = ("TOPS (2 M N K / median)" if rate == "tops" else
                      "GB/s (declared bytes / median)")
        for ax, lab in ((a1, "median µs (cold L2)"), (a2, rate_label)):
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
    written += [_pipeline_plot(plt, path, rows, dest) for path, rows in piped if rows]
    return written


def _save(fig, out: Path) -> None:  # type: ignore[no-untyped-def]
    """The figure as a PNG, replacing ``out`` whole (the result-file rules)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    files.replace(out, buf.getvalue())
