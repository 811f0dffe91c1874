"""The CLI's tables: the bench table whole at 80 columns, one column per value when wide."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console

from harness.front import render


def _rows() -> list[dict[str, Any]]:
    ok = {"stage": "dynamic_spikes_reverse", "backend": "pycuda",
          "variant": "default[UNROLL=4]", "batch": 16384, "in_f": 3584, "out_f": "",
          "status": "ok", "reason": "", "median_us": 1234.56, "noise_pct": 0.51,
          "gbps": 3012.3, "pct_peak": 88.1, "speedup_vs_best_peer": 2.31}
    failed = {"stage": "weight_quantize", "backend": "torch", "variant": "torch_compile",
              "batch": "", "in_f": 3584, "out_f": 18944, "status": "failed",
              "reason": "q: FAILED max abs err 3 at (12, 7)", "median_us": 12.5,
              "noise_pct": 0.5, "gbps": 7.0, "pct_peak": "", "speedup_vs_best_peer": ""}
    return [ok, failed]


def _draw(rows: list[dict[str, Any]], width: int) -> str:
    buf = io.StringIO()
    Console(file=buf, width=width, highlight=False).print(render.stage_rows(rows, width))
    return buf.getvalue()


def _words(text: str) -> str:
    """The table's text without borders or line breaks (a folded name joined again)."""
    cells: dict[int, list[str]] = {}
    for line in text.splitlines():
        for i, cell in enumerate(line.replace("┃", "│").split("│")):
            cells.setdefault(i, []).append(cell.strip())
    return " ".join("".join(c) + " " + " ".join(c) for c in cells.values())


def test_bench_table_is_whole_at_80_columns() -> None:
    text = _draw(_rows(), 80)
    lines = text.splitlines()
    assert all(len(ln) <= 80 for ln in lines), max(map(len, lines))
    assert "…" not in text  # no cell cut short
    words = _words(text)
    for value in ("dynamic_spikes_reverse", "pycuda", "default[UNROLL=4]", "16384", "3584",
                  "1234.56", "0.51%", "3012", "88.1%", "2.31x", "weight_quantize",
                  "torch_compile", "18944", "failed:", "(12,", "7)"):
        assert value in words, value


def test_bench_table_leaves_out_an_empty_peer_column_when_narrow() -> None:
    rows = [dict(r, speedup_vs_best_peer="") for r in _rows()]
    assert "peer" not in _draw(rows, 80)
    assert "peer" in _draw(_rows(), 80)


def test_bench_table_keeps_one_column_per_value_when_wide() -> None:
    text = _draw(_rows(), 200)
    header = next(ln for ln in text.splitlines() if "stage" in ln)
    for col in ("backend", "variant", "batch", "in_f", "out_f", "median µs", "± noise",
                "GB/s", "% peak", "vs best peer", "status"):
        assert col in header, col
    assert "…" not in text
    assert len(render.stage_rows(_rows()).columns) == 12  # no width: the wide table
    assert len(render.stage_rows(_rows(), 80).columns) == 6


def _pipeline_rows() -> list[dict[str, Any]]:
    return [{"stage": "spike_quant_gemm", "batch": 16384, "out_f": 18944, "planes": 6,
             "status": "ok", "reason": "", "total_us": 1233.5, "total_noise_pct": 0.5,
             "encoding_total_us": 220.0, "encoding_kernels_us": 200.0,
             "dynamic_spikes_us": 80.5, "weight_quant_us": 150.2, "encoding_share_pct": 17.8,
             "weight_quant_share_pct": 12.1},
            {"stage": "activation_path", "batch": 4, "out_f": "", "planes": "",
             "status": "failed", "reason": "q: FAILED at (1, 2)", "total_us": 33.25,
             "total_noise_pct": 0.5}]


def test_pipeline_table_is_whole_at_80_columns() -> None:
    buf = io.StringIO()
    Console(file=buf, width=80).print(render.pipeline_rows(_pipeline_rows(), 80))
    text = buf.getvalue()
    assert all(len(ln) <= 80 for ln in text.splitlines())
    assert "…" not in text
    words = _words(text)
    for value in ("spike_quant_gemm", "activation_path", "batch 16384", "out_f 18944", "T 6",
                  "1233.5", "±0.5%", "dyn 80.5", "enc kern 200.0", "enc total 220.0, 17.8%",
                  "wq 150.2, 12.1%", "failed:", "(1,"):
        assert value in words, value
    wide = render.pipeline_rows(_pipeline_rows(), 200)
    assert len(wide.columns) == 12 and len(render.pipeline_rows(_pipeline_rows()).columns) == 12


def test_a_pipeline_s_own_intervals_are_shown() -> None:
    """spike_linear's intervals have names the seed has no column for (the ``intervals``
    JSON): an "other µs" column where a row has them, and in the narrow layout's cell."""
    row = {"stage": "spike_linear", "backend": "pycuda", "batch": 1024, "out_f": 18944,
           "planes": "", "status": "ok", "reason": "", "total_us": 178.6,
           "total_noise_pct": 0.08,
           "intervals": '{"activation": {"median_us": 18.5, "noise_pct": 0.1}, '
                        '"gemm": {"median_us": 160.0, "noise_pct": 0.1}}'}
    wide = render.pipeline_rows([row], 200)
    assert len(wide.columns) == 13 and wide.columns[11].header == "other µs"
    for width in (200, 80):
        buf = io.StringIO()
        Console(file=buf, width=width).print(render.pipeline_rows([row], width))
        words = _words(buf.getvalue())
        assert "activation 18.5" in words and "gemm 160.0" in words, words
    assert len(render.pipeline_rows(_pipeline_rows(), 200).columns) == 12  # none: no column


def test_a_time_that_can_hold_host_time_is_said_in_the_status() -> None:
    """An ok row's reason is not shown, and a failed row's is cut: what it says of the time
    (host time can be inside, on its own or its best peer's) is said all the same."""
    gate = ("20 of 20 samples timed without the gate (the work synchronises inside its "
            "launch): host time can be inside")
    ok, failed = _rows()
    peer = {**ok, "backend": "torch", "reason": gate, "speedup_vs_best_peer": ""}
    ours = {**ok, "reason": "vs best peer: torch's time can hold host time (20 of 20 "
                            "samples timed without the gate)"}
    wrong = {**failed, "reason": "q: FAILED max abs err 3 at (12, 7) " + "x" * 80 + "; " + gate}
    for width in (80, 200):
        for rows, said in (([peer, failed], "host time can be inside"),
                           ([ok, wrong], "host time can be inside"),
                           ([ours, failed], "best peer's time can hold host time")):
            assert said in _words(_draw(rows, width)), (width, said)
        assert "host time" not in _words(_draw([ok, failed], width))


def test_the_stall_tables_say_where_a_kernels_warps_wait() -> None:
    """``profile --stalls``: the reasons by share of the kernel's samples, and the
    instructions that drew the most, with their own main reasons."""
    from pathlib import Path

    from harness.front import render_ncu
    from harness.tools.ncu_source import parse_source_csv

    page = Path(__file__).parents[1] / "fixtures" / "ncu" / "source_page.csv"
    first = parse_source_csv(page.read_text())[0]
    buf = io.StringIO()
    con = Console(file=buf, width=160, highlight=False)
    con.print(render_ncu.stall_reasons(first))
    con.print(render_ncu.stall_instructions(first, 2))
    text = buf.getvalue()
    # long_sb: 8219 of 14213 samples; the barrier 4501.
    assert "long_sb" in text and "8219" in text and "57.8" in text and "31.7" in text
    assert "@!P0  BRA" in text and "long_sb 8219" in text and "barrier 1832" in text
    assert "@P1   BRA 0x7fcc077ccf40" not in text  # the third instruction, past the two asked
