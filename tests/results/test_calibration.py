"""The stored copy bandwidth: where it lives, writing it and reading it back."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.results import calibration


def test_save_and_load(tmp_path: Path) -> None:
    assert calibration.load("h200", tmp_path) is None
    p = calibration.save({"gbps": 4260.0}, "h200", tmp_path)
    assert p == tmp_path / "h200" / "calibration.json"
    assert calibration.load("h200", tmp_path) == {"gbps": 4260.0}
    calibration.save({"gbps": 4300.0}, "h200", tmp_path)  # replaced whole
    assert calibration.load("h200", tmp_path) == {"gbps": 4300.0}


def test_a_record_beside_the_peak_leaves_the_peak(tmp_path: Path) -> None:
    calibration.save({"gbps": 4260.0}, "h200", tmp_path)
    name = calibration.beside("write", 1 << 30)
    assert name == "calibration-write-1073741824.json"
    p = calibration.save({"gbps": 3900.0}, "h200", tmp_path, name=name)
    assert p == tmp_path / "h200" / name
    assert calibration.load("h200", tmp_path) == {"gbps": 4260.0}


def test_the_records_table_sets_each_ceiling_against_the_peak(tmp_path: Path) -> None:
    """The peak first, the others by name, each described by what it timed and as % of
    the copy peak; a file that is no record is left out of the table and named."""
    def rec(**kw: object) -> dict:
        return {"median_us": 100.0, "noise_pct": 0.05, "git_sha": "abc1234", **kw}

    calibration.save(rec(kind="copy", bytes_each_way=2 << 30, gbps=4000.0), "h200", tmp_path)
    for name, r in [("read-70017024", rec(kind="read", bytes_read=70017024, reads=4,
                                          gbps=4400.0)),
                    ("mix4to1-939524096", rec(kind="mix", bytes_read=939524096, reads=4,
                                              writes=1, gbps=4200.0)),
                    ("mix6-234881024", rec(kind="mix", bytes_read=234881024, writes=6,
                                           gbps=3900.0))]:
        calibration.save(r, "h200", tmp_path, name=f"calibration-{name}.json")
    (tmp_path / "h200" / "calibration-torn-1.json").write_text("{")
    calibration.save(rec(kind="mix", bytes_read=16, reads=None, gbps=1.0), "h200", tmp_path,
                     name="calibration-null-2.json")  # a null where a number goes
    calibration.save(rec(kind="read", bytes_read=float("nan"), gbps=1.0), "h200", tmp_path,
                     name="calibration-nan-3.json")  # NaN: JSON's extension, no number
    found, bad = calibration.records(tmp_path / "h200")
    assert [n for n, _ in found] == ["calibration.json", "calibration-mix4to1-939524096.json",
                                     "calibration-mix6-234881024.json",
                                     "calibration-read-70017024.json"]
    assert bad == ["calibration-nan-3.json: not a calibration record (bytes_read is NaN; it "
                   "must be a whole number above 0)",
                   "calibration-null-2.json: not a calibration record (reads is null, not a "
                   "number)",
                   "calibration-torn-1.json: not a calibration record (not JSON: Expecting "
                   "property name enclosed in double quotes at line 1)"]
    lines = calibration.table(found).splitlines()
    assert lines[2] == "| calibration.json | copy of 2147.5 MB | 100.00 | 0.05% | 4000 | 100.0 " \
                       "| abc1234 |"
    assert "939.5 MB read as 4 plane(s), each unit written 1 times | 100.00 | 0.05% | 4200 " \
           "| 105.0 |" in lines[3]
    assert "234.9 MB read as 1 plane(s), each unit written 6 times" in lines[4]
    assert "| read of 70.0 MB, 4 plane(s) a thread | 100.00 | 0.05% | 4400 | 110.0 |" in lines[5]
    assert calibration.table(calibration.records(tmp_path / "none")[0]) == ""


def test_what_a_record_timed_in_words() -> None:
    """The copy (a record of before ``kind`` too), the fill; a record without its size is
    named by its kind alone, one without a kind ``?``."""
    assert calibration.describe({"bytes_each_way": 2_000_000}) == "copy of 2.0 MB"
    assert calibration.describe({"kind": "write", "bytes_written": 3_000_000}) == \
        "fill of 3.0 MB"
    for kind in ("copy", "write", "mix", "read", "other"):
        assert calibration.describe({"kind": kind}) == kind
    assert calibration.describe({"kind": "mix", "bytes_written": 5}) == "mix"
    assert calibration.describe({}) == "?"


def test_a_record_needs_its_numbers_and_a_bool_is_none(tmp_path: Path) -> None:
    """gbps and median_us are required, noise_pct not (shown as 0.00 %); true or false is
    no number; the % of the peak keeps its decimal."""
    calibration.save({"gbps": 4000.0, "median_us": 10.0}, "g", tmp_path)
    calibration.save({"gbps": 3900.0, "median_us": 12.0}, "g", tmp_path,
                     name="calibration-write-1.json")
    calibration.save({"median_us": 1.0}, "g", tmp_path, name="calibration-a-1.json")
    calibration.save({"gbps": 1.0}, "g", tmp_path, name="calibration-b-1.json")
    calibration.save({"gbps": True, "median_us": 1.0}, "g", tmp_path,
                     name="calibration-c-1.json")
    calibration.save({"gbps": 1.0, "median_us": 1.0, "noise_pct": False}, "g", tmp_path,
                     name="calibration-d-1.json")
    found, bad = calibration.records(tmp_path / "g")
    assert [n for n, _ in found] == ["calibration.json", "calibration-write-1.json"]
    assert bad == ["calibration-a-1.json: not a calibration record (no gbps)",
                   "calibration-b-1.json: not a calibration record (no median_us)",
                   "calibration-c-1.json: not a calibration record (gbps is true, not a number)",
                   "calibration-d-1.json: not a calibration record (noise_pct is false, not a "
                   "number)"]
    lines = calibration.table(found).splitlines()
    assert lines[2] == "| calibration.json | ? | 10.00 | 0.00% | 4000 | 100.0 |  |"
    assert lines[3] == "| calibration-write-1.json | ? | 12.00 | 0.00% | 3900 | 97.5 |  |"


def test_a_record_is_written_as_sorted_indented_json(tmp_path: Path) -> None:
    p = calibration.save({"gbps": 4260.0, "a": 1}, "g", tmp_path)
    assert p.read_text() == '{\n  "a": 1,\n  "gbps": 4260.0\n}\n'


@pytest.mark.parametrize(("text", "why"), [
    ("{", "not JSON: Expecting property name enclosed in double quotes at line 1"),
    ('{"gbps": NaN}', "gbps is NaN; it must be a finite number above 0"),
    ('{"gbps": Infinity}', "gbps is Infinity; it must be a finite number above 0"),
    ('{"gbps": "fast"}', 'gbps is "fast", not a number'),
    ('{"gbps": -5}', "gbps is -5; it must be a finite number above 0"),
    ('{"gbps": 0}', "gbps is 0; it must be a finite number above 0"),
    ('{"gbps": 4000, "bytes_each_way": -3}', "bytes_each_way is -3; it must be a whole "
                                             "number above 0"),
    ('{"gbps": 4000, "bytes_each_way": 2.5}', "bytes_each_way is 2.5; it must be a whole "
                                              "number above 0"),
    ('{"gbps": 4000, "noise_pct": -0.1}', "noise_pct is -0.1; it must be a finite number >= 0"),
    ('{"gbps": 4000, "reads": 1' + "0" * 400 + "}", "reads is 1000"),
    ("[4000]", "not a JSON object"),
    ('{"median_us": 1.0}', "no gbps"),
])
def test_a_stored_calibration_that_is_no_record_is_one_line(tmp_path: Path, text: str,
                                                            why: str) -> None:
    """The GPU's calibration is checked as it is read: a file that is not JSON, or whose
    numbers are not finite and above 0 (a size or a count of planes whole), names the file
    and what is wrong, where its rate would have become every row's peak."""
    p = tmp_path / "g" / calibration.FILE
    p.parent.mkdir()
    p.write_text(text)
    with pytest.raises(HarnessError, match="^" + re.escape(f"{p}: not a calibration record "
                                                           f"({why}")):
        calibration.load("g", tmp_path)


def test_the_records_table_leaves_out_a_record_of_a_negative_rate_or_size(
        tmp_path: Path) -> None:
    """The report's table reads records through the same check: a negative rate or size
    (it would read as a "copy of -0.0 MB") is named as no record, not shown."""
    calibration.save({"gbps": 4000.0, "median_us": 10.0, "kind": "copy",
                      "bytes_each_way": 2 << 30}, "g", tmp_path)
    calibration.save({"gbps": -5, "median_us": 10.0}, "g", tmp_path,
                     name="calibration-write-1.json")
    calibration.save({"gbps": 4000.0, "median_us": 10.0, "kind": "copy",
                      "bytes_each_way": -3}, "g", tmp_path, name="calibration-copy-2.json")
    found, bad = calibration.records(tmp_path / "g")
    assert [n for n, _ in found] == ["calibration.json"]
    assert bad == ["calibration-copy-2.json: not a calibration record (bytes_each_way is -3; it "
                   "must be a whole number above 0)",
                   "calibration-write-1.json: not a calibration record (gbps is -5; it must be a "
                   "finite number above 0)"]
    assert "-0.0 MB" not in calibration.table(found)
