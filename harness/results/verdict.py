"""One point measured twice: is the new run the same, faster or slower, or can it not tell?

The rule is nvbench-compare-robust's summary rule (NVIDIA/nvbench,
``python/scripts/nvbench_compare_robust.py``), fitted to what a result row records:

* Each side is an **interval**: the median ± ``z`` standard errors (the row's noise).
  nvbench takes [min, q3] of the samples; a row keeps no samples, and what a comparison of
  medians rests on is how well each median is known, which its standard error says.
* A **change** (faster, slower) needs a clear gap between the two intervals, at least
  ``gap`` of the nearer bound (nvbench's ``clear_gap_relative``), and medians at least
  ``threshold`` apart: a change that holds but is smaller counts as the same. Where both
  rows recorded the SM clock, the change must hold in clock cycles (time × clock) too, or
  the row is ambiguous, "throttled" (nvbench's cycle confirmation).
* The **same**, without a clear gap, needs medians within ``center`` of each other, spreads
  that overlap by at least ``overlap`` of the narrower one (the samples' p10-p90; rows that
  record none, the intervals) and neither side's noise above ``ceiling``. nvbench puts that
  ceiling on the samples' dispersion; here it is on the median's noise, which is what the
  verdict rests on (a sweep's fastest points would never be "same" otherwise).
* Anything else is **ambiguous**, and the reason says which test it failed.
"""

from __future__ import annotations

from dataclasses import dataclass

SAME, FASTER, SLOWER, AMBIGUOUS = "same", "faster", "slower", "ambiguous"


@dataclass(frozen=True)
class Preset:
    """How much evidence a verdict needs (fractions: 0.005 is 0.5 %)."""

    name: str
    z: float  #: standard errors on each side of a median: its interval
    gap: float  #: least clear gap between two intervals that is a change
    center: float  #: medians at most this far apart can be the same
    overlap: float  #: least overlap of the two spreads, over the narrower one, for the same
    ceiling: float  #: most noise (either side) with which a row can be called the same


# gap, center, overlap and ceiling are nvbench-compare-robust's presets
# (COMPARISON_THRESHOLD_PRESET_VALUES: clear_gap_relative, same_center_relative,
# same_overlap_fraction, same_relative_dispersion_ceiling). z is the harness's own: the
# 3 standard errors compare always used, one more when strict and one fewer when permissive,
# so that, as with nvbench's, every threshold of "strict" asks for more evidence.
PRESETS: dict[str, Preset] = {
    "default": Preset("default", z=3.0, gap=0.005, center=0.005, overlap=0.5, ceiling=0.02),
    "strict": Preset("strict", z=4.0, gap=0.01, center=0.0025, overlap=0.75, ceiling=0.01),
    "permissive": Preset("permissive", z=2.0, gap=0.0025, center=0.01, overlap=0.25,
                         ceiling=0.05),
}


@dataclass(frozen=True)
class Side:
    """What one row says about its point's time."""

    time_us: float  #: the median (a pipeline: the end-to-end total)
    noise: float  #: the standard error of ``time_us``, relative (0.01 is 1 %)
    spread: tuple[float, float] | None = None  #: p10 and p90 of the samples, µs
    clock_mhz: float | None = None  #: median SM clock over the samples
    clock_min_mhz: float | None = None  #: lowest SM clock over the samples
    throttled: int | None = None  #: samples taken below the throttle fraction of the clock


@dataclass(frozen=True)
class Decision:
    """A verdict, the change of the medians (%) and why."""

    verdict: str
    change_pct: float
    reason: str
    #: A change in time the clock explains (the same cycles at a lower clock): ambiguous,
    #: and no regression of the kernel's.
    throttled: bool = False
    #: Of an ambiguous row whose two sides recorded the SM clock: the change in clock
    #: cycles (time x clock, %), what a gate weighs instead of the change in time.
    cycles_pct: float | None = None


@dataclass(frozen=True)
class _Interval:
    lo: float
    hi: float


def _interval(s: Side, z: float, scale: float = 1.0) -> _Interval:
    half = z * s.noise * s.time_us
    return _Interval((s.time_us - half) * scale, (s.time_us + half) * scale)


def _clear_gap(a: _Interval, b: _Interval, gap: float) -> tuple[str, float] | None:
    """FASTER or SLOWER with the gap, when ``b`` (new) lies clear of ``a`` (old) by at least
    ``gap`` of the nearer bound (nvbench's symmetric relative difference)."""
    if b.hi < a.lo and (g := (a.lo - b.hi) / b.hi) >= gap:
        return FASTER, g
    if b.lo > a.hi and (g := (b.lo - a.hi) / a.hi) >= gap:
        return SLOWER, g
    return None


def _overlap(a: tuple[float, float], b: tuple[float, float]) -> float:
    """How much of the narrower range the other one covers (0 to 1); a range of width 0 is
    covered or not."""
    inter = min(a[1], b[1]) - max(a[0], b[0])
    if inter < 0:
        return 0.0
    narrow = min(a[1] - a[0], b[1] - b[0])
    return inter / narrow if narrow > 0 else 1.0


def _apart(x: float, y: float) -> float:
    """How far apart two times are, over the smaller (nvbench's symmetric relative
    difference): the same whichever run is called old."""
    return (max(x, y) - min(x, y)) / min(x, y)


def _pct(x: float) -> str:
    return f"{100 * x:.2g} %" if abs(x) < 0.1 else f"{100 * x:.0f} %"


def decide(old: Side, new: Side, preset: Preset, threshold: float) -> Decision:
    """The verdict on ``new`` against ``old``; ``threshold`` is the least change that counts,
    over the faster median (0.02 is 2 %)."""
    change = new.time_us / old.time_us - 1
    apart = _apart(old.time_us, new.time_us)
    a, b = _interval(old, preset.z), _interval(new, preset.z)
    clear = _clear_gap(a, b, preset.gap)
    within = f"±{preset.z:g} standard errors"
    if clear is not None:
        verdict, g = clear
        if apart < threshold:
            return Decision(SAME, 100 * change, f"changed by {100 * change:+.2f} %, clearly "
                            f"(intervals {_pct(g)} apart), but less than the "
                            f"{_pct(threshold)} threshold")
        said = (f"{verdict} by {abs(100 * change):.1f} %: the intervals ({within}) are "
                f"{_pct(g)} apart, clear of the {_pct(preset.gap)} gap")
        return _in_cycles(old, new, verdict, change, said, preset, threshold)
    noise = max(old.noise, new.noise)
    if apart > preset.center:
        side = f"{abs(100 * change):.1f} % {'slower' if change > 0 else 'faster'}"
        if apart >= threshold:
            said = (f"{side}, but within the noise: the intervals ({within}) are not "
                    f"{_pct(preset.gap)} apart")
            if old.clock_mhz is None or new.clock_mhz is None:
                return Decision(AMBIGUOUS, 100 * change, said)
            cycles = (new.time_us * new.clock_mhz) / (old.time_us * old.clock_mhz) - 1
            clocks = (f"; the SM clock was {old.clock_mhz:.0f} MHz before, "
                      f"{new.clock_mhz:.0f} MHz now: {100 * cycles:+.1f} % in clock cycles")
            explained = _apart(old.time_us * old.clock_mhz,
                               new.time_us * new.clock_mhz) < threshold
            return Decision(AMBIGUOUS, 100 * change,
                            f"{said}{clocks}{', which the clock explains' if explained else ''}",
                            throttled=explained, cycles_pct=100 * cycles)
        return Decision(AMBIGUOUS, 100 * change, f"{side}: more than the "
                        f"{_pct(preset.center)} that is the same, not clear of the noise")
    if old.spread is not None and new.spread is not None:
        ov, what = _overlap(old.spread, new.spread), "p10-p90 spreads"
    else:
        ov, what = _overlap((a.lo, a.hi), (b.lo, b.hi)), "intervals"
    if ov < preset.overlap:
        return Decision(AMBIGUOUS, 100 * change, f"the {what} overlap by {_pct(ov)} of the "
                        f"narrower, less than {_pct(preset.overlap)}")
    if noise > preset.ceiling:
        return Decision(AMBIGUOUS, 100 * change, f"too noisy to call the same: noise "
                        f"{_pct(noise)}, above the {_pct(preset.ceiling)} ceiling")
    return Decision(SAME, 100 * change, f"medians {100 * change:+.2f} % apart, within "
                    f"{_pct(preset.center)}; {what} overlap by {_pct(ov)}; noise {_pct(noise)}")


def _in_cycles(old: Side, new: Side, verdict: str, change: float, said: str,
               preset: Preset, threshold: float) -> Decision:
    """A change in time, kept only if it holds in clock cycles where both rows have clocks."""
    if old.clock_mhz is None or new.clock_mhz is None:
        which = "neither row" if old.clock_mhz is None and new.clock_mhz is None else \
            "only one row"
        return Decision(verdict, 100 * change, f"{said}; in time only ({which} recorded "
                        "the SM clock)")
    cycles = (new.time_us * new.clock_mhz) / (old.time_us * old.clock_mhz) - 1
    held = _clear_gap(_interval(old, preset.z, old.clock_mhz),
                      _interval(new, preset.z, new.clock_mhz), preset.gap)
    in_cycles = _apart(old.time_us * old.clock_mhz, new.time_us * new.clock_mhz)
    if held is not None and held[0] == verdict and in_cycles >= threshold:
        return Decision(verdict, 100 * change, f"{said}; it holds in clock cycles too "
                        f"({100 * cycles:+.1f} %)")
    return Decision(AMBIGUOUS, 100 * change, throttled=True, reason=f"throttled: the SM clock was "
                    f"{old.clock_mhz:.0f} MHz before, {new.clock_mhz:.0f} MHz now"
                    f"{_throttle_note(old, 'before')}{_throttle_note(new, 'now')}; "
                    f"{verdict} by {abs(100 * change):.1f} % in time but {100 * cycles:+.1f} % "
                    "in cycles, which is not a change that holds")


def _throttle_note(s: Side, when: str) -> str:
    if not s.throttled:
        return ""
    low = f", lowest {s.clock_min_mhz:.0f} MHz" if s.clock_min_mhz is not None else ""
    return f" ({s.throttled} samples throttled {when}{low})"
