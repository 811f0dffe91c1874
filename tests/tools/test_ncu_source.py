"""ncu's source page parsed: a kernel's SASS instructions, their samples and stall reasons.

The fixture is excerpts of two real pages (int_gemm_packed's wgmma kernel in two builds,
profiled on an H100; the second renamed to tell them apart): each kernel's first four
instructions and the six that drew the most samples, ncu's columns untouched."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.errors import HarnessError
from harness.tools.ncu_source import parse_source_csv

PAGE = Path(__file__).parents[1] / "fixtures" / "ncu" / "source_page.csv"


def test_each_kernel_of_the_page_and_its_instructions() -> None:
    pages = parse_source_csv(PAGE.read_text())
    assert [p.kernel for p in pages] == ["int_gemm_packed_wgmma", "int_gemm_packed_wgmma_refill"]
    first = pages[0]
    assert len(first.instructions) == 10
    assert [i.index for i in first.instructions] == list(range(10))
    # The kernel's first instruction, as the page prints it (the text stripped).
    head = first.instructions[0]
    assert head.source == "LDC R1, c[0x0][0x28]"
    assert (head.executed, head.samples) == (2112, 19)
    # The reasons are the stall_ columns without their "(Not Issued)" twins.
    assert "long_sb" in head.stalls and not any("Not Issued" in k for k in head.stalls)


def test_where_the_samples_fall() -> None:
    first, refill = parse_source_csv(PAGE.read_text())
    assert first.samples == 14213
    totals = first.stall_totals()
    assert (totals["long_sb"], totals["barrier"]) == (8219, 4501)
    top = first.top(2)
    assert [(i.index, i.samples) for i in top] == [(6, 8238), (5, 1876)]
    assert top[1].source.startswith("@P1   BRA") and top[1].main_stalls(1) == [("barrier", 1832)]
    # The second build: the named barrier's wait gone from the top, a load's wait in its place.
    assert [(i.index, i.samples) for i in refill.top(2)] == [(6, 10072), (4, 3417)]
    assert refill.top(2)[1].main_stalls(1) == [("long_sb", 3388)]
    assert len(first.top(100)) == 10  # no more than the kernel has


def test_a_count_printed_as_a_dash_is_none_and_a_reason_with_none_is_not_listed() -> None:
    text = ('"Kernel Name","k"\n"Address","Source","# Samples","Instructions Executed",'
            '"stall_wait","stall_barrier","stall_wait (Not Issued)"\n'
            '"0x0","  NOP","-","1,024","0","-","0"\n"0x10","  EXIT","3","7","2","1","2"\n')
    (page,) = parse_source_csv(text)
    nop, exit_ = page.instructions
    assert (nop.samples, nop.executed, nop.stalls) == (0, 1024, {"wait": 0, "barrier": 0})
    assert exit_.main_stalls() == [("wait", 2), ("barrier", 1)]
    assert nop.main_stalls() == []


def test_what_is_not_a_source_page_is_a_clear_error() -> None:
    with pytest.raises(HarnessError, match="no source page"):
        parse_source_csv("==PROF== Disconnected from process 1\n")
    with pytest.raises(HarnessError, match=r"lacks the column.*# Samples"):
        parse_source_csv('"Kernel Name","k"\n"Address","Source","Instructions Executed"\n')


def test_a_page_cut_short_or_misread_is_an_error_and_ncus_own_lines_are_skipped() -> None:
    head = ('"Kernel Name","k",\n"Address","Source","# Samples","Instructions Executed",'
            '"stall_wait"\n')
    # ncu's own lines, between kernels too, are not the page's.
    (page,) = parse_source_csv(head + '==WARNING== a note\n"0x0","  NOP","1","2","1"\n')
    assert [(i.source, i.samples) for i in page.instructions] == [("NOP", 1)]
    with pytest.raises(HarnessError, match="3 fields under a header of 5"):
        parse_source_csv(head + '"0x0","  NOP","1"\n')
    for bad in ("1.2.3", "1.5", "inf"):  # a count is whole digits, or nothing
        with pytest.raises(HarnessError, match=f"'{bad}' in its column 'stall_wait'"):
            parse_source_csv(head + f'"0x0","  NOP","1","2","{bad}"\n')
