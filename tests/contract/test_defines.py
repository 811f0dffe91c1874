"""``--restrict``: the conditions a tuning sweep's builds must meet, parsed to what they may
hold and evaluated over a build's ``-D`` values, nothing else."""

from __future__ import annotations

import pytest

from harness.contract.defines import parse_restrictions
from harness.errors import BadInput


def _holds(text: str, **defines: str) -> bool:
    (r,) = parse_restrictions([text])
    return r.holds("b", defines)


@pytest.mark.parametrize(("text", "values", "want"), [
    ("BLOCK*UNITS <= 1024", {"BLOCK": "256", "UNITS": "4"}, True),
    ("BLOCK*UNITS <= 1024", {"BLOCK": "512", "UNITS": "4"}, False),
    ("BLOCK % 32 == 0 and not LANES > 8", {"BLOCK": "96", "LANES": "8"}, True),
    ("BLOCK % 32 == 0 and not LANES > 8", {"BLOCK": "100", "LANES": "8"}, False),
    ("32 <= BLOCK < 2**10", {"BLOCK": "1024"}, False),  # a chain: every link must hold
    ("32 <= BLOCK < 2**10", {"BLOCK": "0x100"}, True),  # hex reads as a number
    ("LAYOUT == 'int8' or T / 2 >= 3.5", {"LAYOUT": "packed", "T": "7"}, True),
    ("-A + 1 == 0", {"A": "1.0"}, True),
    ("A == 8 and B == 256 and C == 1.5 and D == 5", {"A": "010", "B": "256u", "C": "1.5f",
                                                     "D": "0b101"}, True),  # as C reads them
    ("A == 'nan'", {"A": "nan"}, True),  # not a C number: text
    ("A != 1", {"A": "9" * 5000}, True),  # past int()'s digit limit: text, no traceback
])
def test_a_restriction_is_evaluated_over_the_builds_values(text: str, values: dict,
                                                           want: bool) -> None:
    assert _holds(text, **values) is want


@pytest.mark.parametrize(("text", "why"), [
    ("BLOCK <=", "not an expression"),
    ("__import__('os').system('x')", "only -D names, numbers, text"),
    ("BLOCK.bit_length() < 10", "only -D names, numbers, text"),
    ("[BLOCK][0] > 1", "only -D names, numbers, text"),
    ("(lambda: 1)()", "only -D names, numbers, text"),
    ("BLOCK if 1 else 2", "only -D names, numbers, text"),
    ("1 < 2", "names no -D value"),
    ("BLOCK == b'1'", "only -D names, numbers, text"),
])
def test_anything_else_is_refused_before_a_build_is_read(text: str, why: str) -> None:
    with pytest.raises(BadInput, match=why):
        parse_restrictions([text])


def test_a_build_that_cannot_answer_is_bad_input_naming_it() -> None:
    (r,) = parse_restrictions(["BLOCK / UNITS > 1"])
    with pytest.raises(BadInput, match=r"build default\[UNITS=0\]: division by zero"):
        r.holds("default[UNITS=0]", {"BLOCK": "64", "UNITS": "0"})
    with pytest.raises(BadInput, match="build d has no -D value BLOCK"):
        r.holds("d", {"UNITS": "2"})
    (r,) = parse_restrictions(["MODE * 1000000000 > 1"])
    with pytest.raises(BadInput, match="arithmetic on text"):
        r.holds("d", {"MODE": "fast"})
    (r,) = parse_restrictions(["2 ** (BLOCK * 100) > 1"])
    with pytest.raises(BadInput, match=r"a power past \(2\^64\) \*\* 64, which no -D value needs"):
        r.holds("d", {"BLOCK": "64"})
    (r,) = parse_restrictions(["((BLOCK ** 64) ** 64) ** 64 > 1"])  # no base past 2^64
    with pytest.raises(BadInput, match="a power past"):
        r.holds("d", {"BLOCK": "9"})


@pytest.mark.parametrize(("text", "why"), [
    ("not " * 1200 + "BLOCK", "nested too deep|terms, at most 200"),
    (" + ".join(["BLOCK"] * 3000) + " > 1", "nested too deep|terms, at most 200"),
    ("(" * 300 + "BLOCK" + ")" * 300, "nested too deep|not an expression"),
])
def test_a_restriction_too_large_to_read_is_one_line(text: str, why: str) -> None:
    """Nothing a command line can hold makes the evaluator recurse past Python's limit or
    compute without end: too many terms or too deep a nesting is bad input, said."""
    with pytest.raises(BadInput, match=why):
        parse_restrictions([text])


def test_a_negative_value_reads_negative() -> None:
    """A ``-D`` value with a sign reads as the signed number C reads (``-4`` < 0)."""
    assert _holds("X < 0", X="-4") and _holds("X == -8", X="-010")


def test_define_specs_are_read_around_their_spaces() -> None:
    """``--define`` specs: spaces around the spec and its values are dropped, repeated
    values kept once; a value with a space inside is BadInput."""
    from harness.contract.defines import parse_defines

    assert parse_defines([" LANES=2, 4 ,2 "]) == {"LANES": ["2", "4"]}
    with pytest.raises(BadInput, match="bad --define 'LANES=2 4'"):
        parse_defines(["LANES=2 4"])


def test_a_define_is_checked_against_the_kernel_code_and_declared_defines(reg) -> None:  # type: ignore[no-untyped-def]
    """A ``--define`` name passes where the kernel code mentions it as a whole word or a
    variant declares it; a name found only inside a longer word (``LOCK`` in ``BLOCK``) is
    BadInput."""
    import dataclasses

    from harness.contract.defines import check_defines
    from harness.contract.stage import Variant

    st = reg.get("dynamic_spikes")
    check_defines(st, ["BLOCK"])
    with pytest.raises(BadInput, match="--define LOCK: stage dynamic_spikes's kernel never"):
        check_defines(st, ["LOCK"])
    declared = dataclasses.replace(st, variants=(Variant("x", (("ONLY_DECLARED", "1"),)),))
    check_defines(declared, ["ONLY_DECLARED"])


@pytest.mark.parametrize("spec, value", [
    ("LANES=4,04", "04"), ("LANES=16,0x10", "0x10"), ("N=8,010", "010"), ("N=-1,-01", "-01"),
    ("N=4,4u", "4u"), ("IGG_BM=0x80", "0x80")])
def test_an_integer_not_in_plain_decimal_is_refused(spec: str, value: str) -> None:
    """A plugin reads a -D value back as Python's int() does, where C reads 010 as 8 (a
    launch planned for 10 on a build of 8); and 4 and 04 would be one build under two
    names (rows default[LANES=4] and default[LANES=04])."""
    from harness.contract.defines import parse_defines

    with pytest.raises(BadInput, match=rf"write {value} as a plain decimal integer"):
        parse_defines([spec])


def test_values_that_differ_to_c_are_kept() -> None:
    from harness.contract.defines import parse_defines

    assert parse_defines(["N=10,0,-3,4,4"]) == {"N": ["10", "0", "-3", "4"]}
    assert parse_defines(["M=1.5,1.50,fast"]) == {"M": ["1.5", "1.50", "fast"]}


def test_a_define_that_tells_pinned_variants_apart_is_refused(reg) -> None:  # type: ignore[no-untyped-def]
    """LAYOUT on activation_fused, MODE on spike_encode, PACKED_WIDE on int_gemm_packed:
    the buffers a build is given follow its variant, so --define may not turn one variant
    into another; ROUNDING_AWAY (variants that pin nothing) changes only the answer, and
    stays a build the check judges. A stage's declared selectors stand as given."""
    import dataclasses

    from harness.contract.defines import check_defines, selectors

    assert selectors(reg.get("activation_fused")) == {"LAYOUT", "MODE"}
    assert selectors(reg.get("spike_encode")) == {"MODE"}
    assert selectors(reg.get("int_gemm_packed")) == {"PACKED_WIDE"}
    assert selectors(reg.get("dynamic_spikes")) == set()
    with pytest.raises(BadInput, match=r"--define LAYOUT: stage activation_fused's variants "
                                       r"are told apart by it .*choose --variant instead"):
        check_defines(reg.get("activation_fused"), ["STATS_RING_BLOCKS", "LAYOUT"])
    check_defines(reg.get("activation_fused"), ["STATS_RING_BLOCKS"])
    check_defines(reg.get("dynamic_spikes"), ["ROUNDING_AWAY"])
    packed = reg.get("int_gemm_packed")
    tiled = dataclasses.replace(packed, variants=(
        packed.variants[0].tuned({"IGG_BM": "128"}), packed.variants[1]))
    assert selectors(tiled) == {"PACKED_WIDE", "IGG_BM"}  # inferred: a tile taken as one
    declared = dataclasses.replace(tiled, selectors=("PACKED_WIDE",))
    assert selectors(declared) == {"PACKED_WIDE"}
    check_defines(declared, ["IGG_BM"])


def test_declared_selectors_are_a_tuple_of_declared_defines(reg) -> None:  # type: ignore[no-untyped-def]
    """A string (a set of its letters), or a name no variant declares (a typo), would lift
    the refusal silently: the stage does not load."""
    import dataclasses

    packed = reg.get("int_gemm_packed")
    for bad in ("PACKED_WIDE", ("PACKED_WIDEE",), ["PACKED_WIDE"]):
        with pytest.raises(ValueError, match=r"stage int_gemm_packed: selectors .* must be a "
                                             r"tuple of defines its variants declare"):
            dataclasses.replace(packed, selectors=bad)
    assert dataclasses.replace(packed, selectors=("PACKED_WIDE",)).selectors == ("PACKED_WIDE",)
