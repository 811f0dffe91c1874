"""``harness report``: the tables of a results folder (Markdown, also into a README's
block), what its CSVs hold when a table is empty, and the plots (:mod:`.plots`).

Every number shown comes from a CSV row as the harness wrote it on the GPU (read back by
:mod:`.readback`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from harness.errors import BadInput, HarnessError
from harness.results import calibration, files
from harness.results.plots import plots
from harness.results.readback import (
    TIME,
    intervals,
    number,
    own_intervals,
    pipeline_files,
    read_checked,
    results_folder,
    stage_files,
    x_axis,
)
from harness.results.rows import caveats, host_time

#: The batch of the table's rows when none is asked for.
DEFAULT_BATCHES = (16384,)
#: The out_f of the weight stages' rows when none is asked for.
DEFAULT_OUT_F = 18944


def pipeline_table(folder: Path, names: Sequence[str], batches: Sequence[int]) -> str:
    """A Markdown table of the named pipelines' rows at some batches: every measured
    interval, the total with its noise, the planes T, and each of our rows set against the
    pipeline's peers measured beside it (:func:`peer_ratios`)."""
    lines = ["| pipeline | backend | variant | point | T | total µs | noise | intervals µs "
             "| vs peers | status |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    wanted = {str(b) for b in batches}
    for path in pipeline_files(Path(folder)):
        if path.stem not in names:
            continue
        every = read_checked(path)
        ratios = peer_ratios(every)
        for i, r in enumerate(every):
            if r["batch"] not in wanted:
                continue
            parts = [f"{k} {float(r[f'{k}_us']):.1f}" for k in intervals([r]) if k != "total"]
            parts += own_intervals(r)
            total, noise = number(r.get("total_us", "")), number(r.get("total_noise_pct", ""))
            vs = ", ".join(f"{b} {x.ratio:.2f}x" + (" (its time can hold host time)"
                                                     if x.host_time else "")
                           for b, x in ratios.get(i, {}).items())
            lines.append(
                f"| {r['stage']} | {r.get('backend') or '-'} | {r.get('variant') or '-'} "
                f"| batch={r['batch']} in_f={r['in_f']}"
                f"{' out_f=' + r['out_f'] if r.get('out_f') else ''} | {r.get('planes') or '-'}"
                f" | {'-' if total is None else f'{total:.1f}'} | "
                f"{'-' if noise is None else f'{noise:.2f} %'} | {', '.join(parts) or '-'} | "
                f"{vs or '-'} | {status(r)} |")
    return "\n".join(lines)


#: What makes two pipeline rows one measurement's: the same pipeline, variant and point,
#: on the same inputs and L2 state, written by the same command at the same commit.
_SAME_RUN = ("stage", "variant", "batch", "in_f", "out_f", "mode", "params", "family", "l2",
             "git_sha", "command")


class PeerRatio(NamedTuple):
    """A peer's total over ours, and :func:`host_time` of the peer row's reason ('' unless
    its time can hold host time: then so does the ratio)."""

    ratio: float
    host_time: str


def peer_ratios(rows: Sequence[dict[str, str]]) -> dict[int, dict[str, PeerRatio]]:
    """Each ok ``pycuda`` row (by its index in the file) against the peers measured beside
    it: for every peer backend, its total over ours, from that backend's latest ok row of
    the same run (``_SAME_RUN``) written after our previous one of that run and before
    this one (a bench writes a point's peer rows just before its own, so a peer row is set
    against one row of ours only). Above 1: ours is faster. Each ratio says whether the
    peer's time can hold host time (a peer that reads back to the host in its call)."""
    latest: dict[tuple[str, ...], dict[str, tuple[float, str]]] = {}
    out: dict[int, dict[str, PeerRatio]] = {}
    for i, r in enumerate(rows):
        key = tuple(r.get(c, "") for c in _SAME_RUN)
        total = number(r.get("total_us", "")) or 0.0
        ok = r.get("status") == "ok" and total > 0
        if r.get("backend") != "pycuda":
            got = latest.setdefault(key, {})
            got.pop(r.get("backend", ""), None)  # a peer row that is not ok: none to set
            if ok:
                got[r.get("backend", "")] = (total, host_time(r.get("reason")))
            continue
        found = latest.pop(key, None)  # each peer row serves the next row of ours, ok or not
        if ok and found:
            out[i] = {b: PeerRatio(t / total, said) for b, (t, said) in found.items()}
    return out


def status(r: dict[str, str]) -> str:
    """A row's status, with what its reason says of its numbers that no column of the table
    shows (:func:`harness.results.rows.caveats`: host time can be inside)."""
    said = caveats(r.get("reason"))
    return r["status"] + (f" ({'; '.join(said)})" if said else "")


def _tops(r: dict[str, str]) -> str:
    """A row's TOPS, with its share of the datasheet peak where the row has one."""
    tops, pct = number(r.get("tops", "")), number(r.get("pct_datasheet_tops", ""))
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
    for path in stage_files(Path(folder)):
        if stages and path.stem not in stages:
            continue
        rows = [r for r in read_checked(path) if r["status"] in ("ok", "failed")
                and number(r.get("median_us", "")) is not None]
        xa = x_axis(rows) if rows else "batch"
        wanted = {str(b) for b in batches} if xa == "batch" else \
            ({str(out_f)} if out_f is not None else None)
        chosen += [{**r, "_x": xa} for r in rows if wanted is None or r[xa] in wanted]
    with_tops = any(number(r.get("tops", "")) is not None for r in chosen)
    tops_head = " TOPS (% of datasheet) |" if with_tops else ""
    lines = ["| stage | backend | variant | point | launch | median µs | noise | GB/s "
             f"| % of peak |{tops_head} vs best peer | status |",
             "|---|---|---|---|---|---|---|---|---|" + ("---|" if with_tops else "")
             + "---|---|"]
    for r in chosen:
        xa = r["_x"]
        pct, gbps, sp = number(r["pct_peak"]), number(r["gbps"]), number(r["speedup_vs_best_peer"])
        lines.append(
            f"| {r['stage']} | {r['backend']} | {r['variant']} | {xa}={r[xa]} "
            f"in_f={r['in_f']}{_also_out_f(r, xa)}{_l2(r)} | {r.get('launch') or 'stream'} | "
            f"{float(r['median_us']):.2f} | {float(r['noise_pct']):.2f} % | "
            f"{'-' if gbps is None else f'{gbps:.0f}'} | "
            f"{'-' if pct is None else f'{pct:.1f}'} | "
            + (f"{_tops(r)} | " if with_tops else "")
            + f"{'-' if sp is None else f'{sp:.2f}x'} | {status(r)} |")
    return "\n".join(lines)


def _l2(r: dict[str, str]) -> str:
    """`` l2=<word>`` for a row not timed cold (hot, drained): another point than a cold
    row's, which the table would otherwise show alike."""
    word = r.get("l2") or "cold"
    return "" if word == "cold" else f" l2={word}"


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
    if s.count(begin) > 1 or s.count(end) > 1:  # which one is meant cannot be told
        raise HarnessError(f"{readme} has the {block} block's markers more than once")
    head, rest = s.split(begin, 1)
    if end not in rest:
        raise HarnessError(f"{readme}: its {end} comes before {begin} (the block's markers "
                           "are out of order)")
    _, tail = rest.split(end, 1)
    nl = "\r\n" if "\r\n" in s else "\n"  # the README's own line endings, kept
    text = text.replace("\r\n", "\n").replace("\n", nl)
    return f"{head}{begin}{nl}{text}{nl}{end}{tail}"


def check_readme(readme: Path, block: str = "results") -> None:
    """One line when the README cannot take the table (missing, unreadable, without the
    block), said before any plot is drawn."""
    try:
        _with_block(Path(readme).read_text(encoding="utf-8"), "", block, readme)
    except FileNotFoundError:
        raise HarnessError(f"no such README: {readme}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise HarnessError(f"cannot read {readme}: {exc}") from None


def check_stages(folders: Sequence[Path], stages: Sequence[str], known: Collection[str]) -> None:
    """BadInput for a ``--stage`` that is neither a stage or pipeline the harness has
    (``known``) nor the name of a CSV in the folders (one line, said before any plot is
    drawn). A known stage without a CSV there is no error: the empty table says what the
    folders hold (:func:`why_empty`)."""
    have = {p.stem for f in folders
            for p in (*stage_files(results_folder(f)), *pipeline_files(Path(f)))}
    for name in stages:
        if name not in known and name not in have:
            raise BadInput(f"unknown stage {name!r}: no stage or pipeline of the harness, and "
                           f"no CSV in {', '.join(map(str, folders))} (known: "
                           f"{', '.join(sorted({*known, *have}))})")


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
    for kind, paths in (("stage", stage_files(folder)), ("pipeline", pipeline_files(folder))):
        for path in paths:
            if (stages and path.stem not in stages) or (kind == "pipeline" and not stages):
                continue
            rows = [r for r in read_checked(path)
                    if any(number(r.get(c, "")) is not None for c in TIME)]
            if not rows:
                out.append(f"{path.stem}: no row with a time")
                continue
            xa = "batch" if kind == "pipeline" else x_axis(rows)
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
    #: The folder's calibration records (the peak and the ceilings beside it) as a table,
    #: '' where there are none; printed and written with the table, never into a README.
    ceilings: str = ""
    #: Calibration files that could not be read as records, with why.
    unreadable: tuple[str, ...] = ()


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
    # plots() checks every CSV, then --out (a file, a read-only place), before it draws.
    written = plots(folder, out)
    batches, out_f = list(batches or DEFAULT_BATCHES), None if out_f == 0 else \
        out_f or DEFAULT_OUT_F
    text = tables(folder, batches, out_f, stages)
    empty = None if any(len(t.splitlines()) > 2 for t in text.split("\n\n")) else \
        why_empty(folder, batches, out_f, stages)
    found, unreadable = calibration.records(folder)
    ceilings = calibration.table(found)
    table_path = None
    if out is not None:
        body = text + (f"\n\n{ceilings}" if ceilings else "")
        table_path = files.replace(Path(out) / TABLE_FILE, (body + "\n").encode("utf-8"))
    if readme is not None:
        if empty is not None:  # an empty table would replace the block's rows
            raise HarnessError(f"{empty}; {readme}'s {block} block is left as it was")
        update_readme(readme, text, block)
    return Report(written, text, readme, table_path, empty, ceilings,
                  tuple(unreadable))
