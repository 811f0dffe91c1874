"""Reading an existing CSV before appending: whole rows counted, a torn last row found,
other damage reported."""

from __future__ import annotations

import pytest

from harness.results.scan import Scan, scan

COLS = ("a", "b", "c")
WHOLE = b"a,b,c\r\n4,5,6\r\n"


def test_a_whole_file() -> None:
    assert scan(WHOLE, COLS) == Scan(1, len(WHOLE))
    assert scan(b"a,b,c\r\n1,\"two\r\nlines\",3\r\n\r\n", COLS).rows == 1  # quoted, blank
    assert not scan(WHOLE, COLS).empty and scan(b"a,b,c\r\n", COLS).empty


@pytest.mark.parametrize("tail", [
    b"1,2",                  # no line end
    b'1,"two\r\n',           # ends on a line end, inside an open quote
    b"1,2,\xe2\x82",         # a character cut in half
    b'1,"\xc3\xa9\r\nx\xe2',  # the same, on a quoted cell's second line
    b"\r",
])
def test_the_torn_last_row_is_found(tail: bytes) -> None:
    assert scan(WHOLE + tail, COLS) == Scan(1, len(WHOLE))


@pytest.mark.parametrize("data", [b"", b"a,", b"a,b"])
def test_a_header_cut_short_is_no_header(data: bytes) -> None:
    assert scan(data, COLS) == Scan(0, 0) and scan(data, COLS).empty


def test_a_whole_header_or_row_that_lost_its_line_end_is_kept() -> None:
    """The header with no line end is whole (a writer adds ``\r\n``); a line that ends on
    ``\r`` lost only the ``\n`` of the writer's ``\r\n``: its last cell ended, so it is
    whole (a writer adds ``\n``), header or row."""
    assert scan(b"a,b,c", COLS) == Scan(0, 5, line_end=b"\r\n")
    assert scan(b"a,b,c\r", COLS) == Scan(0, 6, line_end=b"\n")
    assert scan(b"a,b,c", COLS).empty and scan(b"a,b,c\r", COLS).empty
    assert scan(WHOLE + b"1,2,3\r", COLS) == Scan(2, len(WHOLE) + 6, line_end=b"\n")
    assert scan(b"a,b,cc", COLS).problem.startswith(" has other columns")


@pytest.mark.parametrize("tail", [b"1,2,3", b'1,"two\r\nlines",3', b'1,2,"3"'])
def test_a_last_row_with_every_field_and_no_line_end_is_neither_kept_nor_cut(
        tail: bytes) -> None:
    """Every field there but no line end at all: a whole row saved without one (an editor
    does that), or a write cut inside the last cell. Which, the bytes cannot say: it is
    not cut away as torn (a measurement may be lost) nor taken as whole, and the file is
    not empty (a writer that replaces empty files would lose it)."""
    s = scan(WHOLE + tail, COLS)
    assert s.problem.startswith(": its last row has every field but no line end") and \
        not s.empty, s


@pytest.mark.parametrize("data, problem", [
    (b"x,y\r\n1,2\r\n", " has other columns"),
    (b"x,", " has other columns"),
    (b"a,b,c\r\n1,2\r\n4,5,6\r\n", ": row 1 has 2 fields where the header has 3"),
    (b"a,b,c\r\n1,2,3,4\r\n", ": row 1 has 4 fields"),  # whole but wrong: not torn
    (b"a,b,c\r\n\xff\xfe,2,3\r\n4,5,6\r\n", ": row 1 cannot be read"),
    (b"a,b,c\r\n4,5,6\r\n\xff\xfe,2,3\r\n", ": row 2 cannot be read"),  # the last, whole
    (b"a,b,c\r\n4,5,6\r\n1,\"\xff\r\n", ": row 2 cannot be read"),  # not UTF-8, open quote
    (b"a,b,c\r\n4,5,6\r\n1,\"a\"b,3\r\n", ": row 2 cannot be read"),  # whole, malformed
    (b"a,b,c\r\n4,5,6\r\n1,\"a\"b", ": row 2 cannot be read"),  # unfinished, malformed
    (b"a,b,c\r\n4,5,6\r\n\xff\xfe,2", ": row 2 cannot be read"),  # not UTF-8, unfinished
    (b"a,b,c\r\n4,5,6\r\n1,\xff\r", ": row 2 cannot be read"),  # before a lone \r
    (b"\x89PNG\r\n\x1a\n\x00\x00", ": row 0 cannot be read"),
])
def test_damage_it_did_not_make_is_reported(data: bytes, problem: str) -> None:
    s = scan(data, COLS)
    assert s.problem.startswith(problem) and not s.empty, s


@pytest.mark.parametrize("tail", [b'1,"two\r\nlin', b'1,"two\r\nlines"'])
def test_a_torn_row_of_several_lines_is_found(tail: bytes) -> None:
    """A quoted cell with a line end in it (a reason of two lines) cut short: the torn last
    row starts at its first line, and what was before it is whole."""
    assert scan(WHOLE + tail, COLS) == Scan(1, len(WHOLE))
