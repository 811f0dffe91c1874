"""harness compare: a gate that cannot pass on garbage.

Exit 0 (no regression), 1 (a row slower, slower past --fail-unclear where the noise leaves
it ambiguous, no longer ok, or one of ours gone), 2 with one line (input that cannot be
compared). The committed H200 CSVs are the realistic inputs; they are only read,
and every variant of them is written under tmp_path.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from harness.errors import HarnessError
from harness.front.cli import app
from harness.results import compare, resultcsv

H200 = Path(__file__).parents[2] / "statistics" / "h200"
#: Committed CSVs as they were before a later schema's columns (frozen copies: the ones in
#: statistics/ are measured again).
BEFORE = Path(__file__).parents[1] / "fixtures" / "results"
runner = CliRunner()

#: Committed stage CSVs, and pipeline CSVs (one with the variant column, one from before it).
STAGE_CSVS = ["dynamic_spikes.csv", "activation_fused.csv", "weight_quant_fused.csv",
              "find_min_max.csv", "tuning/weight_quant_fused.csv"]
PIPELINE_CSVS = ["activation_path.csv", "spike_quant_gemm.csv"]


def load(name: str, folder: Path = H200) -> list[dict[str, str]]:
    with (folder / name).open(newline="") as f:
        return list(csv.DictReader(f))


def write(path: Path, rows: list[dict[str, str]], header: list[str] | None = None) -> Path:
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header or list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return path


def _before(name: str) -> list[dict[str, str]]:
    with (BEFORE / name).open(newline="") as f:
        return list(csv.DictReader(f))


def scaled(name: str, factor: float, tmp: Path) -> Path:
    """A copy of a committed CSV with every time (µs) times ``factor``: a stage's median
    and p10/p90, a pipeline's intervals and total."""
    rows = load(name)
    times = [c for c in rows[0] if c.endswith("_us")]
    for r in rows:
        for c in times:
            if r[c]:
                r[c] = repr(float(r[c]) * factor)
    return write(tmp / f"x{factor}-{name.replace('/', '-')}", rows)


def cli(*args: object) -> object:
    return runner.invoke(app, ["compare", *map(str, args)])


def one_line(res, text: str) -> None:  # type: ignore[no-untyped-def]
    """Exit 2, one line on stderr that names the problem, no traceback."""
    assert res.exit_code == 2, res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:") and text in lines[0], lines
    assert "Traceback" not in res.output and res.stdout == ""


def verdicts(old: Path, new: Path, preset: str = "default") -> dict[str, int]:
    return compare.run(old, new, preset).counts()


def ok_rows(name: str) -> int:
    return sum(r["status"] == "ok" for r in load(name))


# --- input that cannot be compared: exit 2 and one line ---------------------------------

def bad_files(tmp: Path) -> dict[str, tuple[Path, str]]:
    header = ",".join(load("dynamic_spikes.csv")[0])
    row = (H200 / "dynamic_spikes.csv").read_text().splitlines()[3]
    med = list(load("dynamic_spikes.csv")[0]).index("median_us")

    def text(name: str, body: str) -> Path:
        (tmp / name).write_text(body)
        return tmp / name

    def with_median(v: str) -> str:
        cells = next(csv.reader([row]))
        cells[med] = v
        out = io.StringIO()
        csv.writer(out).writerow(cells)
        return header + "\n" + out.getvalue()

    png = tmp / "plot.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff\xfe\x00\x01")
    nul = tmp / "nul.csv"
    nul.write_bytes(header.encode() + b"\n" + b"dynamic_spikes\x00\x00,pycuda\n")
    return {
        "missing": (tmp / "none.csv", "no such results file"),
        "folder": (tmp, "is a folder, not a results CSV"),
        "empty": (text("empty.csv", ""), "is empty: no header, no rows"),
        "blank lines": (text("blank.csv", "\n\n"), "is empty: no header, no rows"),
        "header only": (text("header.csv", header + "\n"), "has a header but no rows"),
        "garbage": (text("garbage.csv", "hello, world\nthis is not, a csv\n"),
                    "is not a stage or pipeline results CSV"),
        "binary": (png, "not UTF-8 text (binary?)"),
        "nul bytes": (nul, "it holds NUL bytes (binary?)"),
        "sanitizer CSV": (H200 / "sanitizer.csv", "is not a stage or pipeline results CSV"),
        "seed summary": (H200 / "seed_e2e.csv", "it lacks stage, backend, params, l2"),
        "nan median": (text("nan.csv", with_median("nan")), "median_us is nan; it must be "
                       "a positive number"),
        "zero median": (text("zero.csv", with_median("0")), "median_us is 0; it must be a "
                        "positive number"),
        "negative median": (text("neg.csv", with_median("-3.5")), "median_us is -3.5"),
        "infinite median": (text("inf.csv", with_median("inf")), "median_us is inf"),
        "word median": (text("word.csv", with_median("fast")), "median_us is 'fast', not a "
                        "number"),
        "empty median": (text("nomed.csv", with_median("")), "an ok row without median_us"),
        "median outside p10-p90": (text("order.csv", with_median("500")),
                                   "p10_us <= median_us <= p90_us does not hold"),
        "torn row": (text("torn.csv", header + "\n" + row + "\n" + row[:40] + "\n"),
                     "line 3: 7 fields where the header has 31 (a torn or mangled row)"),
        "glued rows": (text("glued.csv", header + "\n" + row + row + "\n"),
                       "is not a results CSV: ',' expected after '\"' (line 2: a torn or "
                       "mangled row)"),
        "bad status": (text("status.csv", header + "\n" + row.replace(",ok,", ",fine,") + "\n"),
                       "status 'fine' is not one of ok, failed, skipped, oom"),
    }


@pytest.mark.parametrize("case", [
    "missing", "folder", "empty", "blank lines", "header only", "garbage", "binary",
    "nul bytes", "sanitizer CSV", "seed summary", "nan median", "zero median",
    "negative median", "infinite median", "word median", "empty median",
    "median outside p10-p90", "torn row", "glued rows", "bad status",
])
def test_bad_new_file_is_exit_2_with_one_line(tmp_path: Path, case: str) -> None:
    path, text = bad_files(tmp_path)[case]
    one_line(cli(H200 / "dynamic_spikes.csv", path), text)
    one_line(cli(path, H200 / "dynamic_spikes.csv"), text)  # as OLD too


def test_the_line_of_a_bad_row_is_named(tmp_path: Path) -> None:
    rows = load("dynamic_spikes.csv")
    rows[4]["noise_pct"] = "-1"
    bad = write(tmp_path / "noise.csv", rows)
    one_line(cli(H200 / "dynamic_spikes.csv", bad),
             f"{bad}, line 6: noise_pct is -1; it must be a non-negative number")


def test_another_stage_matches_nothing() -> None:
    one_line(cli(H200 / "dynamic_spikes.csv", H200 / "find_min_max.csv"),
             "matches a row of")


def test_stage_and_pipeline_rows_are_not_compared() -> None:
    one_line(cli(H200 / "dynamic_spikes.csv", H200 / "activation_path.csv"),
             "holds stage rows and")
    one_line(cli(H200 / "activation_path.csv", H200 / "dynamic_spikes.csv"),
             "holds pipeline rows and")


def test_rows_never_ok_on_both_sides_compare_nothing(tmp_path: Path) -> None:
    rows = [r for r in load("dynamic_spikes.csv") if r["status"] != "ok"]
    assert rows, "the committed CSV has failed torch_compile rows"
    f = write(tmp_path / "failed.csv", rows)
    one_line(cli(f, f), "no row is ok in both")


@pytest.mark.parametrize("args, text", [
    (["--preset", "lax"], "unknown preset 'lax': one of default, strict, permissive"),
    (["--threshold", "-50"], "'--threshold': -50 is less than 0, the least it takes"),
    (["--threshold", "nan"], "'--threshold': 'nan' is not a number"),
    (["--threshold", "inf"], "--threshold must be a number >= 0, not inf"),
    (["--z", "-1"], "'--z': -1 is less than 0, the least it takes"),
    (["--z", "inf"], "--z must be a number >= 0, not inf"),
])
def test_bad_options(args: list[str], text: str) -> None:
    f = H200 / "gemm.csv"
    one_line(runner.invoke(app, ["compare", str(f), str(f), *args]), text)


def test_the_least_threshold_and_z_are_taken() -> None:
    """0 is the least --threshold and --z take (the parser's bound, inclusive)."""
    f = H200 / "gemm.csv"
    res = runner.invoke(app, ["compare", str(f), str(f), "--threshold", "0", "--z", "0"])
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("threshold, z", [(-50.0, None), (float("nan"), None),
                                          (float("inf"), None), (2.0, -1.0),
                                          (2.0, float("nan")), (2.0, float("inf"))])
def test_the_gate_takes_no_threshold_or_z_that_is_not_a_number_at_least_0(
        threshold: float, z: float | None) -> None:
    """The library refuses what the CLI's bounds would let through from another caller (a
    negative threshold would call every row slower, nan none)."""
    f = H200 / "gemm.csv"
    with pytest.raises(HarnessError, match="must be a number >= 0"):
        compare.run(f, f, threshold_pct=threshold, z=z)


def test_clock_columns_are_checked(tmp_path: Path) -> None:
    rows = load("gemm.csv")
    for r in rows:
        r.update(clock_mhz_median="1980", clock_mhz_min="0", throttled_samples="0")
    one_line(cli(H200 / "gemm.csv", write(tmp_path / "clk.csv", rows)),
             "clock_mhz_min is 0; it must be a positive number")
    rows[0].update(clock_mhz_min="1900", throttled_samples="2.5")
    one_line(cli(H200 / "gemm.csv", write(tmp_path / "clk.csv", rows)),
             "throttled_samples is 2.5, not a count")


@pytest.mark.parametrize(("column", "value", "text"), [
    ("gemm_us", "nan", "gemm_us is nan; it must be a non-negative number"),
    ("gemm_us", "inf", "gemm_us is inf; it must be a non-negative number"),
    ("gemm_us", "-5", "gemm_us is -5; it must be a non-negative number"),
    ("gemm_us", "fast", "gemm_us is 'fast', not a number"),
    ("gemm_noise_pct", "nan", "gemm_noise_pct is nan; it must be a non-negative number"),
    ("intervals", '{"activation": {"median_us": NaN, "noise_pct": 0.3}}',
     "intervals' activation median_us is NaN; it must be a non-negative number"),
    ("intervals", '{"activation": {"median_us": 4.8, "noise_pct": Infinity}}',
     "intervals' activation noise_pct is Infinity; it must be a non-negative number"),
    ("intervals", '{"activation": {"median_us": -4.8}}',
     "intervals' activation median_us is -4.8; it must be a non-negative number"),
    ("intervals", '{"activation": {"median_us": 1' + "0" * 400 + '}}',
     "intervals' activation median_us is 1000"),
    ("intervals", '{"activation": {"median_us": "4.8"}}',
     "intervals' activation median_us is \"4.8\"; it must be a non-negative number"),
    ("intervals", '{"activation": 4.8}', "intervals' activation is 4.8, not an object with "
                                         "a median_us"),
    ("intervals", "[1, 2]", "intervals is not a JSON object"),
])
def test_every_interval_of_a_pipeline_row_is_checked(tmp_path: Path, column: str, value: str,
                                                     text: str) -> None:
    """Not only the total: an interval column of a pipeline row, or one of its own names in
    the intervals JSON, that is NaN, infinite or negative names its file, line and column
    (merge's spread across the files crashed on a NaN, and a report showed a negative one);
    compare, merge and report all read rows through this check."""
    rows = load("spike_linear.csv")
    assert rows[1]["gemm_us"] and rows[1]["intervals"]
    rows[1][column] = value
    bad = write(tmp_path / "spike_linear.csv", rows)
    with pytest.raises(HarnessError, match="^" + re.escape(f"{bad}, line 3: {text}")):
        resultcsv.read(bad)
    one_line(cli(H200 / "spike_linear.csv", bad), f"{bad}, line 3: {text}")


# --- the verdicts on realistic inputs ---------------------------------------------------

@pytest.mark.parametrize("name", STAGE_CSVS + PIPELINE_CSVS)
def test_a_run_half_again_as_slow_is_slower_on_every_row(tmp_path: Path, name: str) -> None:
    """Medians (and p10/p90; a pipeline's times) × 1.5: exit 1, every ok row slower, every
    row not ok on either side reported as failed; the other way round, every row faster."""
    slow = scaled(name, 1.5, tmp_path)
    n_ok, n = ok_rows(name), len(load(name))
    res = cli(H200 / name, slow)
    assert res.exit_code == 1, res.output
    assert f"0 faster, 0 same, {n_ok} slower, 0 ambiguous, 0 new, 0 gone, {n - n_ok} failed" \
        in res.stdout
    res = cli(slow, H200 / name)
    assert res.exit_code == 0, res.output
    assert f"{n_ok} faster, 0 same, 0 slower, 0 ambiguous" in res.stdout


@pytest.mark.parametrize("name", ["activation_fused.csv", "weight_quant_fused.csv",
                                  "find_min_max.csv", "tuning/weight_quant_fused.csv",
                                  *PIPELINE_CSVS])
def test_a_csv_against_itself_is_the_same_on_every_row(name: str) -> None:
    """Every ok row is the same as itself, but one too noisy to call the same (above the
    default 2 % ceiling: a torch.compile peer at batch 1, say) is ambiguous."""
    res = cli(H200 / name, H200 / name)
    assert res.exit_code == 0, res.output
    rows = load(name)
    noise = "noise_pct" if "noise_pct" in rows[0] else "total_noise_pct"
    n_ok, n = ok_rows(name), len(rows)
    noisy = sum(r["status"] == "ok" and float(r[noise]) > 2.0 for r in rows)
    assert f"0 faster, {n_ok - noisy} same, 0 slower, {noisy} ambiguous, 0 new, 0 gone, " \
        f"{n - n_ok} failed" in res.stdout


def test_itself_is_ambiguous_only_where_too_noisy_to_tell() -> None:
    """dynamic_spikes.csv holds two torch peers with noise above the default 2 % ceiling
    (2.1 %, 5.7 %): against themselves they are ambiguous, saying why; the rest is same."""
    rep = compare.run(H200 / "dynamic_spikes.csv", H200 / "dynamic_spikes.csv")
    amb = [r for r in rep.rows if r.verdict == "ambiguous"]
    assert [(r.point["backend"], r.point["batch"]) for r in amb] == \
        [("torch", "1"), ("torch_compile", "1")]
    assert all("too noisy to call the same" in r.reason for r in amb)
    assert rep.counts()["same"] == ok_rows("dynamic_spikes.csv") - 2 and rep.exit_code == 0


def test_presets_change_the_verdicts(tmp_path: Path) -> None:
    """+3 %: strict asks for more evidence than default, permissive for less."""
    old, new = H200 / "dynamic_spikes.csv", scaled("dynamic_spikes.csv", 1.03, tmp_path)
    slower = {p: verdicts(old, new, p)["slower"] for p in ("strict", "default", "permissive")}
    assert slower["strict"] < slower["default"] < slower["permissive"], slower


def test_new_gone_and_failed_rows_are_reported_as_such(tmp_path: Path) -> None:
    rows = load("weight_quantize.csv")
    ok = [i for i, r in enumerate(rows) if r["status"] == "ok"]
    new = [dict(r) for r in rows]
    gone = new.pop(ok[0])
    added = {**gone, "in_f": "7168"}
    new.append(added)
    broke = new[ok[1] - 1]
    broke.update(status="failed", reason="q: FAILED (abs error 1)")
    rep = compare.run(H200 / "weight_quantize.csv", write(tmp_path / "n.csv", new))
    by = {(r.point["backend"], r.point["out_f"], r.point["in_f"], r.verdict): r
          for r in rep.rows}
    assert (gone["backend"], gone["out_f"], gone["in_f"], "gone") in by
    assert by[(added["backend"], added["out_f"], "7168", "new")].reason == "only in NEW"
    failed = by[(broke["backend"], broke["out_f"], broke["in_f"], "failed")]
    assert failed.reason == "ok before, failed (q: FAILED (abs error 1)) now"
    assert rep.counts()["ambiguous"] == 0 and rep.regressions() == [failed]
    res = cli(H200 / "weight_quantize.csv", tmp_path / "n.csv")
    assert res.exit_code == 1 and "1 new, 1 gone, 3 failed" in res.stdout, res.output


def test_a_row_failed_before_and_ok_now_is_no_regression(tmp_path: Path) -> None:
    old = load("gemm.csv")
    old[0].update(status="failed", reason="mismatch")
    rep = compare.run(write(tmp_path / "o.csv", old), H200 / "gemm.csv")
    assert rep.rows[0].verdict == "failed" and rep.rows[0].reason == \
        "failed (mismatch) before, ok now"
    assert rep.exit_code == 0


def test_a_row_not_ok_on_both_sides_says_why_once_or_twice(tmp_path: Path) -> None:
    """Failed before and now: the one reason where it is the same, both where they
    differ; a failed verdict either way (nothing ok to compare, so never a regression that
    passes unseen)."""
    old = load("gemm.csv")
    old[0].update(status="failed", reason="mismatch")
    old[1].update(status="oom", reason="out of memory")
    new = [dict(r) for r in old]
    new[1].update(status="failed", reason="mismatch")
    rep = compare.run(write(tmp_path / "o.csv", old), write(tmp_path / "n.csv", new))
    assert [(r.verdict, r.reason) for r in rep.rows[:2]] == [
        ("failed", "not ok in either: failed (mismatch)"),
        ("failed", "not ok in either: oom (out of memory) before, failed (mismatch) now")]


def test_gone_peer_rows_are_no_regression_and_gone_rows_of_ours_are(tmp_path: Path) -> None:
    """What the regress phase sees: the peers are not measured again, only pycuda rows; a
    run that lost rows of ours fails the gate, naming them."""
    mine = [r for r in load("dynamic_spikes.csv") if r["backend"] == "pycuda"]
    rep = compare.run(H200 / "dynamic_spikes.csv", write(tmp_path / "p.csv", mine))
    assert rep.counts()["gone"] == 8 and rep.counts()["same"] == 4 and rep.exit_code == 0
    fewer = write(tmp_path / "fewer.csv", mine[1:])
    rep = compare.run(H200 / "dynamic_spikes.csv", fewer)
    lost = rep.regressions()
    assert rep.exit_code == 1 and [(r.verdict, r.point["backend"]) for r in lost] == [
        ("gone", "pycuda")]
    r = runner.invoke(app, ["compare", str(H200 / "dynamic_spikes.csv"), str(fewer)])
    assert r.exit_code == 1 and "1 regression(s):" in r.output
    assert "dynamic_spikes pycuda default batch=" in r.output and ": gone (ok before, none " \
        "now)" in r.output


def test_a_slower_median_the_noise_cannot_clear_fails_the_gate(tmp_path: Path) -> None:
    """Every pycuda row 19 % slower at 3 % noise is ambiguous (the intervals touch), and
    the gate fails: a slowdown past --fail-unclear (10 %) is not passed because the runs
    were noisy. 5 % slower, within the spread measured between processes, and 1 % slower,
    pass."""
    base = [r for r in load("dynamic_spikes.csv") if r["backend"] == "pycuda"]
    old = write(tmp_path / "old.csv", [{**r, "noise_pct": "3"} for r in base])
    for factor, code in ((1.19, 1), (1.05, 0), (1.01, 0)):
        rows = [{**r, "noise_pct": "3", **{c: repr(float(r[c]) * factor)
                                           for c in ("median_us", "p10_us", "p90_us")}}
                for r in base]
        rep = compare.run(old, write(tmp_path / "new.csv", rows))
        assert {r.verdict for r in rep.rows} == {"ambiguous"}, rep.rows[0].reason
        assert rep.exit_code == code
        if code:
            assert len(rep.regressions()) == len(base)
            assert "but within the noise" in rep.rows[0].reason
    rows = [{**r, "noise_pct": "3", **{c: repr(float(r[c]) * 1.05)
                                       for c in ("median_us", "p10_us", "p90_us")}}
            for r in base]
    tight = compare.run(old, write(tmp_path / "new.csv", rows), unclear_pct=4.0)
    assert tight.exit_code == 1


def test_an_unclear_slowdown_the_clock_explains_passes(tmp_path: Path) -> None:
    """5 % slower at 3 % noise (ambiguous) with the SM clock 5 % lower: the same cycles,
    so no regression even past --fail-unclear; at the same clock it fails."""
    base = [r for r in load("dynamic_spikes.csv") if r["backend"] == "pycuda"]
    clk = {"noise_pct": "3", "clock_mhz_median": "1980", "clock_mhz_min": "1975",
           "throttled_samples": "0"}
    old = write(tmp_path / "old.csv", [{**r, **clk} for r in base])
    slow = [{**r, **clk, **{c: repr(float(r[c]) * 1.05)
                            for c in ("median_us", "p10_us", "p90_us")}} for r in base]
    hot = write(tmp_path / "hot.csv", [{**r, "clock_mhz_median": "1885.7"} for r in slow])
    rep = compare.run(old, hot, unclear_pct=2.0)
    assert {r.verdict for r in rep.rows} == {"ambiguous"} and rep.exit_code == 0
    assert all("which the clock explains" in r.reason for r in rep.rows)
    rep = compare.run(old, write(tmp_path / "same.csv", slow), unclear_pct=2.0)
    assert rep.exit_code == 1


def test_an_unclear_row_is_weighed_in_clock_cycles_where_both_have_the_clock(tmp_path: Path
                                                                             ) -> None:
    """12 % slower in time at a clock 8 % lower is 3 % in cycles: past the 2 % threshold
    (the clock does not explain it all), yet under --fail-unclear's 10 %, so no regression;
    the reason gives the cycles."""
    base = [r for r in load("dynamic_spikes.csv") if r["backend"] == "pycuda"]
    clk = {"noise_pct": "4", "clock_mhz_median": "1980", "clock_mhz_min": "1975",
           "throttled_samples": "0"}
    old = write(tmp_path / "old.csv", [{**r, **clk} for r in base])
    slow = [{**r, **clk, "clock_mhz_median": "1821.6",
             **{c: repr(float(r[c]) * 1.12) for c in ("median_us", "p10_us", "p90_us")}}
            for r in base]
    rep = compare.run(old, write(tmp_path / "new.csv", slow))
    assert {r.verdict for r in rep.rows} == {"ambiguous"}, rep.rows[0].reason
    assert all(r.cycles_pct == pytest.approx(3.04, abs=0.01) for r in rep.rows)
    assert rep.exit_code == 0 and "+3.0 % in clock cycles" in rep.rows[0].reason
    assert compare.run(old, write(tmp_path / "new.csv", slow), unclear_pct=2.5).exit_code == 1


def test_rows_matched_across_kernels_are_no_loss_when_one_is_gone(tmp_path: Path) -> None:
    """--ignore matches one kernel's rows with another's (gpu-check's layer-compare): a
    point only the first swept is gone, and no regression."""
    mine = [r for r in load("dynamic_spikes.csv") if r["backend"] == "pycuda"]
    other = [{**r, "stage": "other"} for r in mine[1:]]
    rep = compare.run(write(tmp_path / "a.csv", mine), write(tmp_path / "b.csv", other),
                      ignore=("stage",))
    assert rep.counts()["gone"] == 1 and rep.exit_code == 0


def test_a_key_written_twice_is_matched_by_occurrence(tmp_path: Path) -> None:
    """An activation_fused.csv holding two torch rows of one key (its --graph run's peers
    fell back to stream launches; a frozen copy, so later measurements cannot change what
    this test reads): the first is matched with the first, the second with the second, so
    slowing down only the second flags only the second."""
    frozen = BEFORE / "activation_fused_peer_twice.csv"
    rows = load(frozen.name, BEFORE)
    key = ("torch", "1", "stream")
    twice = [i for i, r in enumerate(rows) if (r["backend"], r["batch"], r["launch"]) == key]
    assert len(twice) == 2
    for c in ("median_us", "p10_us", "p90_us"):
        rows[twice[1]][c] = repr(float(rows[twice[1]][c]) * 1.5)
    rep = compare.run(frozen, write(tmp_path / "a.csv", rows))
    got = [(r.occurrence, r.verdict) for r in rep.rows
           if (r.point["backend"], r.point["batch"], r.point["launch"]) == key]
    assert got == [(1, "same"), (2, "slower")]
    assert [r.label() for r in rep.regressions()] == ["batch=1 in_f=3584 #2"]


def test_older_csvs_match_by_what_their_rows_were(tmp_path: Path) -> None:
    """A stage CSV written before the launch column holds stream launches; a pipeline CSV
    written before the variant column, the default variant."""
    rows = _before("find_min_max_before_launch.csv")  # no launch column
    assert "launch" not in rows[0]
    now = [{**r, "launch": "stream"} for r in rows] + [{**rows[-1], "launch": "graph"}]
    rep = compare.run(BEFORE / "find_min_max_before_launch.csv",
                      write(tmp_path / "l.csv", now))
    assert rep.counts()["same"] == len(rows) and rep.counts()["new"] == 1
    rows = load("spike_quant_gemm.csv")  # no variant column
    assert "variant" not in rows[0]
    now = [{**r, "variant": "default"} for r in rows]
    rep = compare.run(H200 / "spike_quant_gemm.csv", write(tmp_path / "v.csv", now))
    assert rep.schema == "pipeline" and rep.counts()["same"] == len(rows)


def test_a_throttled_slowdown_is_ambiguous(tmp_path: Path) -> None:
    """NEW 20 % slower in time at a clock 1/1.2 lower: the same cycles, so not a regression;
    at the same clock it is one. Old CSVs without clocks are decided in time alone."""
    base = _before("gemm_before_clocks.csv")
    slow = _before("gemm_before_clocks.csv")
    for c in ("median_us", "p10_us", "p90_us"):
        for r in slow:
            r[c] = repr(float(r[c]) * 1.2)
    clk = {"clock_mhz_median": "1980", "clock_mhz_min": "1975", "throttled_samples": "0"}
    old = write(tmp_path / "old.csv", [{**r, **clk} for r in base])
    hot = write(tmp_path / "hot.csv", [{**r, "clock_mhz_median": "1650", "clock_mhz_min":
                                        "1410", "throttled_samples": "37"} for r in slow])
    rep = compare.run(old, hot)
    assert {r.verdict for r in rep.rows} == {"ambiguous"} and rep.exit_code == 0
    assert all(r.reason.startswith("throttled: ") for r in rep.rows)
    same_clock = write(tmp_path / "same.csv", [{**r, **clk} for r in slow])
    rep = compare.run(old, same_clock)
    assert {r.verdict for r in rep.rows} == {"slower"} and rep.exit_code == 1
    assert all("holds in clock cycles too" in r.reason for r in rep.rows)
    # Clocks on one side only: time decides.
    rep = compare.run(BEFORE / "gemm_before_clocks.csv", hot)
    assert {r.verdict for r in rep.rows} == {"slower"} and rep.exit_code == 1
    assert all("only one row recorded the SM clock" in r.reason for r in rep.rows)


def test_explain_adds_the_reason_column(tmp_path: Path) -> None:
    slow = scaled("gemm.csv", 1.5, tmp_path)
    plain, told = cli(H200 / "gemm.csv", slow), cli(H200 / "gemm.csv", slow, "--explain")
    assert "reason" not in plain.stdout and "clear of the 0.5 % gap" not in plain.stdout
    assert "reason" in told.stdout and "clear of the 0.5 % gap" in told.stdout


def test_run_raises_one_error_for_the_library_caller(tmp_path: Path) -> None:
    with pytest.raises(HarnessError, match=r"no such results file: .*none\.csv"):
        compare.run(H200 / "gemm.csv", tmp_path / "none.csv")


def test_a_csv_without_the_compute_columns_compares_with_one_that_has_them(tmp_path: Path) -> None:
    """A sweep written before ``tops`` (a frozen copy of the earlier int_gemm sweep)
    compares with one written now, both ways."""
    rows = _before("int_gemm_before_tops.csv")
    assert "tops" not in rows[0]
    now = [{**r, "tops": "812", "pct_datasheet_tops": "41.0", "datasheet_tops": "1979"}
           for r in rows]
    rep = compare.run(BEFORE / "int_gemm_before_tops.csv", write(tmp_path / "t.csv", now))
    assert rep.counts()["same"] == sum(r["status"] == "ok" for r in rows)
    back = compare.run(tmp_path / "t.csv", BEFORE / "int_gemm_before_tops.csv")
    assert back.counts() == rep.counts()


def test_ignore_matches_one_kernel_against_another_at_the_same_shapes(tmp_path: Path) -> None:
    """``--ignore stage --ignore variant --ignore params``: the rows of one stage matched
    with another's at the same points (the FP32 GEMM against the integer one, say); without
    it nothing matches (exit 2); a column that is not a key column is one line, exit 2."""
    # The committed rows of quiet points only: a row whose own noise is ~25 % leaves a 3x
    # difference "ambiguous", which is the verdict's business, not the matching's.
    rows = [r for r in load("int_gemm.csv") if r["backend"] == "pycuda" and r["status"] == "ok"
            and float(r["noise_pct"]) < 5]
    other = [{**r, "stage": "gemm", "variant": "default", "params": "{}",
              "median_us": repr(float(r["median_us"]) * 3),
              "p10_us": repr(float(r["p10_us"]) * 3), "p90_us": repr(float(r["p90_us"]) * 3)}
             for r in rows]
    old, new = write(tmp_path / "gemm.csv", other), write(tmp_path / "int.csv", rows)
    one_line(cli(old, new), "nothing to compare")
    res = cli(old, new, "--ignore", "stage", "--ignore", "variant", "--ignore", "params")
    rep = compare.run(old, new, ignore=("stage", "variant", "params"))
    assert res.exit_code == 0, res.output
    keyed = [r for r in rep.rows if r.verdict not in (compare.NEW, compare.GONE)]
    assert keyed and all(r.verdict == compare.FASTER for r in keyed)
    one_line(cli(old, new, "--ignore", "median_us"), "not a key column")


def test_ignore_that_makes_two_rows_one_point_is_refused(tmp_path: Path) -> None:
    """``--ignore backend`` on a file with a peer's row and ours at each point: the two
    would be paired with the other file's by their order in the file (torch's time against
    ours), so it is one line, exit 2; without --ignore the same files compare."""
    rows = [r for r in load("dynamic_spikes.csv") if r["status"] == "ok"]
    assert len({r["backend"] for r in rows}) > 1
    old, new = write(tmp_path / "a.csv", rows), write(tmp_path / "b.csv", rows[::-1])
    one_line(cli(old, new, "--ignore", "backend"),
             "with --ignore backend, two rows are one point (they differ in backend only)")
    assert cli(old, new).exit_code == 0


def _one(tmp_path: Path, name: str, *rows: dict[str, str]) -> Path:
    from tests.results import stage_csv

    return stage_csv.write(tmp_path / name, list(rows))


def test_a_row_s_verdict_carries_the_larger_noise_and_the_default_threshold_is_2_pct(
        tmp_path: Path) -> None:
    """``noise_pct`` is the noisier side's (%); 1.5 % apart and clear of the noise is the
    same under the default 2 % threshold, slower under 1 %."""
    from tests.results import stage_csv

    old = _one(tmp_path, "a.csv", stage_csv.stage_row("d", 100.0, noise_pct="0.01"),
               stage_csv.stage_row("e", 100.0, noise_pct="0.1"))
    new = _one(tmp_path, "b.csv", stage_csv.stage_row("d", 101.5, noise_pct="0.02"),
               stage_csv.stage_row("e", 100.0, noise_pct="0.3"))
    d, e = compare.run(old, new).rows
    assert (d.verdict, d.noise_pct) == (compare.SAME, pytest.approx(0.02))
    assert "less than the 2 % threshold" in d.reason and d.change_pct == pytest.approx(1.5)
    assert e.noise_pct == pytest.approx(0.3)
    assert compare.run(old, new, threshold_pct=1.0).rows[0].verdict == compare.SLOWER


def test_a_failed_row_s_reason_is_cut_to_60_characters(tmp_path: Path) -> None:
    from tests.results import stage_csv

    long, fits = "x" * 61, "y" * 60
    old = _one(tmp_path, "a.csv", stage_csv.stage_row("d", 100.0),
               stage_csv.stage_row("e", 100.0))
    new = _one(tmp_path, "b.csv", stage_csv.stage_row("d", 100.0, status="failed", reason=long),
               stage_csv.stage_row("e", 100.0, status="failed", reason=fits))
    d, e = compare.run(old, new).rows
    assert d.reason == f"ok before, failed ({'x' * 57}...) now"
    assert e.reason == f"ok before, failed ({fits}) now"


def test_side_reads_a_row_s_spread_noise_and_clocks() -> None:
    from tests.results import stage_csv

    r = stage_csv.stage_row("d", 100.0, p10_us="99.0", p90_us="102.0", noise_pct="0.5",
                            clock_mhz_median="1980", clock_mhz_min="1410",
                            throttled_samples="37.0")
    s = compare.side(resultcsv.STAGE, r)
    assert (s.time_us, s.noise, s.spread) == (100.0, pytest.approx(0.005), (99.0, 102.0))
    assert (s.clock_mhz, s.clock_min_mhz, s.throttled) == (1980.0, 1410.0, 37)
    assert isinstance(s.throttled, int)
    assert compare.side(resultcsv.STAGE, {**r, "throttled_samples": ""}).throttled is None
    pipe = compare.side(resultcsv.PIPELINE, {"total_us": "10", "total_noise_pct": "1"})
    assert (pipe.time_us, pipe.noise, pipe.spread) == (10.0, 0.01, None)


def test_a_verdict_s_label_names_the_point_and_what_is_not_usual() -> None:
    def label(occurrence: int = 1, **point: str) -> str:
        return compare.RowVerdict(point, occurrence, compare.SAME, "ok", "ok", 1.0, 1.0, 0.0,
                                  0.1, "").label()

    assert label(batch="8", in_f="64", family="normal", l2="cold") == "batch=8 in_f=64"
    assert label(batch="8", family="llm", l2="hot") == "batch=8 family=llm l2=hot"
    assert label(2, batch="8") == "batch=8 #2"


def test_a_threshold_of_zero_or_under_one_per_cent_is_taken() -> None:
    assert compare.evidence("default", 0.0, 0.0).z == 0.0
    assert compare.evidence("strict", 0.5, None) is compare.PRESETS["strict"]


def test_matched_without_a_column_the_point_is_the_new_side_s(tmp_path: Path) -> None:
    from tests.results import stage_csv

    old = _one(tmp_path, "a.csv", stage_csv.stage_row("a", 100.0))
    new = _one(tmp_path, "b.csv", stage_csv.stage_row("b", 100.0))
    (row,) = compare.run(old, new, ignore=("variant",)).rows
    assert row.point["variant"] == "b" and row.verdict == compare.SAME
    assert resultcsv.run_of({"git_sha": "abc", "command": "harness bench s"}) == (
        "abc", "harness bench s")


def test_files_that_match_nothing_name_their_stages(tmp_path: Path) -> None:
    from tests.results import stage_csv

    old = _one(tmp_path, "a.csv", stage_csv.stage_row("a", 1.0, stage="t"),
               stage_csv.stage_row("a", 1.0, stage="s"))
    new = _one(tmp_path, "b.csv", stage_csv.stage_row("a", 1.0, stage="u"))
    with pytest.raises(HarnessError, match=r"\(stages: s, t vs u\): nothing to compare"):
        compare.run(old, new)


GATE = ("20 of 20 samples timed without the gate (the work synchronises inside its launch): "
        "host time can be inside")


def test_a_verdict_on_a_time_that_can_hold_host_time_says_so(tmp_path: Path) -> None:
    """A row whose reason says its samples were timed without the gate holds a time that
    can hold host time: a verdict set on it says so, before or now, ok or failed (a failed
    row keeps its time, and the note comes after a failure cut to 60 characters)."""
    from harness.engine.measure import _failed_reason
    from tests.results import stage_csv

    old = _one(tmp_path, "a.csv", stage_csv.stage_row("d", 100.0),
               stage_csv.stage_row("e", 100.0, reason=GATE),
               stage_csv.stage_row("f", 100.0))
    failed = _failed_reason("q: FAILED (abs error 1; 8/58720256 mismatches) " + "x" * 600,
                            [GATE])
    new = _one(tmp_path, "b.csv", stage_csv.stage_row("d", 130.0, reason=GATE),
               stage_csv.stage_row("e", 100.0),
               stage_csv.stage_row("f", 64.0, status="failed", reason=failed))
    d, e, f = compare.run(old, new).rows
    assert d.verdict == compare.SLOWER
    assert d.reason.endswith("; the time now can hold host time (20 of 20 samples timed "
                             "without the gate)")
    assert e.verdict == compare.SAME and e.reason.endswith(
        "; the time before can hold host time (20 of 20 samples timed without the gate)")
    assert f.verdict == compare.FAILED and f.new_us == 64.0
    assert f.reason.startswith("ok before, failed (q: FAILED (abs error 1")
    assert "its time can hold host time (20 of 20 samples timed without the gate)" in f.reason
    assert (d.host_time, e.host_time, f.host_time) == (("now",), ("before",), ("now",))
    # Rows with no such note: the reasons as they were.
    plain = _one(tmp_path, "c.csv", stage_csv.stage_row("d", 100.0),
                 stage_csv.stage_row("e", 100.0), stage_csv.stage_row("f", 100.0))
    plain2 = _one(tmp_path, "c2.csv", stage_csv.stage_row("d", 100.0),
                  stage_csv.stage_row("e", 100.0), stage_csv.stage_row("f", 100.0))
    assert all("host time" not in v.reason and not v.host_time
               for v in compare.run(plain2, plain).rows)


def test_a_speedup_over_a_host_time_peer_is_not_our_time_holding_host_time(
        tmp_path: Path) -> None:
    """Our row's note that its best peer's time can hold host time is about the speedup,
    not our time: its verdict's cell is not marked (the mark is the rows' own notes, read
    as such, not words found in a reason)."""
    from harness.results.rows import peer_host_time
    from tests.results import stage_csv

    note = peer_host_time("torch", "20 of 20 samples timed without the gate")
    old = _one(tmp_path, "a.csv", stage_csv.stage_row("d", 100.0, reason=note))
    new = _one(tmp_path, "b.csv", stage_csv.stage_row("d", 130.0, reason=note))
    (d,) = compare.run(old, new).rows
    assert d.verdict == compare.SLOWER and d.host_time == ()
    line = next(ln for ln in cli(old, new).stdout.splitlines() if "│ d " in ln)
    assert "slower" in line and "host time" not in line


def test_the_verdict_table_says_a_time_can_hold_host_time_without_explain(
        tmp_path: Path) -> None:
    """The regress gate prints compare's table without --explain: a verdict set on a time
    that can hold host time says so in its own cell, not only in the reason column."""
    from tests.results import stage_csv

    old = _one(tmp_path, "a.csv", stage_csv.stage_row("d", 100.0),
               stage_csv.stage_row("e", 100.0))
    new = _one(tmp_path, "b.csv", stage_csv.stage_row("d", 130.0, reason=GATE),
               stage_csv.stage_row("e", 130.0))
    out = cli(old, new).stdout
    line_d = next(ln for ln in out.splitlines() if "│ d " in ln)
    line_e = next(ln for ln in out.splitlines() if "│ e " in ln)
    assert "slower" in line_d and "host time" in line_d
    assert "slower" in line_e and "host time" not in line_e
