"""What an existing result CSV holds, read before a writer appends to it: its whole rows,
and where a torn last row starts.

A row this harness wrote is whole: one write, ending on a line end. A write cut short (a
run killed mid-write, a full disk) can only leave the *last* row torn: without its line
end, inside an open quote, or cut in the middle of a character. That row is what
:func:`scan` finds, so that the writer can cut it away. Anything else (other columns, a
row of another field count or unreadable before the last) is damage the harness did not
make, and is reported rather than guessed at; so is a last row that is malformed in any
other way than those (a byte that is not UTF-8 before its last character, a quote closed
and then followed by more than a comma or a line end), and one with every field but no
line end at all, which may be a whole row saved without one.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Scan:
    """What an existing CSV holds."""

    #: Whole rows after the header.
    rows: int
    #: Bytes up to the end of the last whole row (less than the size: a torn last row).
    end: int
    #: Why the file must not be appended to, said after its name ('' when it may be).
    problem: str = ""
    #: What a writer must add before its first row: the line end of a last line that is
    #: whole but lost its ``\n`` (it ends on the ``\r`` of the writer's ``\r\n``).
    line_end: bytes = b""

    @property
    def empty(self) -> bool:
        """Whether the file holds nothing to lose: no row, and nothing foreign."""
        return not self.problem and self.rows == 0


def _pieces(data: bytes) -> list[bytes]:
    """``data`` cut after each newline (the last piece ends without one)."""
    out, start = [], 0
    while (i := data.find(b"\n", start)) >= 0:
        out.append(data[start:i + 1])
        start = i + 1
    if start < len(data):
        out.append(data[start:])
    return out


def _header(columns: Sequence[str]) -> bytes:
    buf = io.StringIO()
    csv.writer(buf).writerow(columns)
    return buf.getvalue().encode("utf-8").rstrip(b"\r\n")


_OTHER = " has other columns than this harness writes; write to a new file instead of appending"
#: How UTF-8 decoding names a character that the data stops inside (the codec's words).
_CUT_CHAR = "unexpected end of data"
#: How the csv module names a quoted cell still open where the data ends (its own words,
#: which happen to be the codec's).
_OPEN_QUOTE = "unexpected end of data"


def _open_at_end(exc: Exception) -> bool:
    """Whether a reader's error is a quoted cell still open where the data ends (what a
    write cut short leaves), not a malformed row."""
    return isinstance(exc, csv.Error) and _OPEN_QUOTE in str(exc)


#: Why a last row with every field but no line end is not appended after: the bytes cannot
#: tell a whole row saved without its line end from one cut inside its last cell.
_UNENDED = (": its last row has every field but no line end (a row saved without one, or a "
            "write cut inside its last cell): end that line if the row is whole, or delete "
            "it, then append")


def scan(data: bytes, columns: Sequence[str]) -> Scan:
    """Read an existing CSV's bytes: its header must be ``columns`` and every row whole,
    but for a torn last row, which ``Scan.end`` stops before. A header cut short counts as
    no header (``end`` 0). A last line that ends on ``\r`` lost only its ``\n``: it is
    whole (``line_end`` says what to add). A last row with every field but no line end at
    all is neither kept nor cut (:data:`_UNENDED`): it may be a measurement."""
    pieces = _pieces(data)
    consumed = 0
    cut_char = False  # the last piece ended in a character cut in half

    def lines() -> Iterator[str]:
        nonlocal consumed
        for i, piece in enumerate(pieces):
            consumed += len(piece)
            try:
                yield piece.decode("utf-8")
            except UnicodeDecodeError as exc:
                # Only the piece the write never finished (the last, without its line end)
                # may end in a character cut in half, and only at its very end; any other
                # byte that is not UTF-8 was written so (damage).
                cut = i == len(pieces) - 1 and not piece.endswith(b"\n")
                if not (cut and exc.end == len(piece) and exc.reason == _CUT_CHAR):
                    raise
                nonlocal cut_char
                cut_char = True
                yield piece[:exc.start].decode("utf-8")

    records: list[tuple[list[str], int]] = []
    torn = not data.endswith(b"\n")
    open_quote = False  # the reader stopped inside a quoted cell at the end of the data
    reader = csv.reader(lines(), strict=True)
    while True:
        try:
            rec = next(reader)
        except StopIteration:
            break
        except (csv.Error, UnicodeDecodeError) as exc:
            # A write cut short leaves at most an open quote at the end of the data; any
            # other error, or one before the last row, is damage.
            if consumed < len(data) or not _open_at_end(exc):
                return Scan(0, 0, f": row {len(records)} cannot be read ({exc}): not "
                                  "appending to a damaged file")
            torn = open_quote = True
            break
        records.append((rec, consumed))
    # The last record, read to the end of the data without a line end: torn, unless every
    # field is there (no quote left open, no character cut, the header's field count).
    line_end = b""
    if torn and not open_quote and not cut_char and records \
            and records[-1][1] == len(data) and len(records[-1][0]) == len(columns):
        header_alone = len(records) == 1
        if data.endswith(b"\r"):  # only the \n of the writer's \r\n is missing: whole
            torn, line_end = False, b"\n"
        elif header_alone and tuple(records[0][0]) == tuple(columns):
            torn, line_end = False, b"\r\n"  # the header, whole but for its line end
        elif not header_alone:  # a row: to keep it or to cut it is a guess either way
            head_ok = tuple(records[0][0]) == tuple(columns)
            return Scan(0, 0, _UNENDED if head_ok else _OTHER)
    if torn and records and records[-1][1] == len(data):
        records.pop()  # the last record read is the torn one
    if not records:  # nothing whole: empty, or a header cut short
        foreign = data and not _header(columns).startswith(data.rstrip(b"\r\n"))
        return Scan(0, 0, _OTHER if foreign else "")
    if tuple(records[0][0]) != tuple(columns):
        return Scan(0, 0, _OTHER)
    rows = 0
    for i, (rec, _) in enumerate(records[1:], start=1):
        if not rec:
            continue  # a blank line, as csv readers skip it
        if len(rec) != len(columns):
            return Scan(0, 0, f": row {i} has {len(rec)} fields where the header has "
                              f"{len(columns)}: not appending to a damaged file")
        rows += 1
    return Scan(rows, records[-1][1], line_end=line_end)
