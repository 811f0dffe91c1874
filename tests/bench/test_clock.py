"""The GPU benchmarks' clock on the CPU: pytest-benchmark, run for real on rounds whose
samples are given, records each round as its sample's event time, names the clock as its
timer, and a sample timed without the gate fails the benchmark."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness import paths
from harness.contract.timing import Sample
from tests.bench import clock

#: A benchmark of rounds whose samples take the given times (µs), each after some host
#: time the events do not see; GATED=0 makes the third sample ungated.
BENCH = '''
import os
import time

import pytest

from harness.contract.timing import Sample
from tests.bench.clock import cuda_event_clock, event_round

TIMES = iter([10.0, 40.0, 20.0, 30.0, 50.0])


def sample():
    time.sleep(0.002)  # host time: far more than any sample here, and not counted
    us = next(TIMES)
    return Sample(us, 1980.0, 1980.0, gated=os.environ["GATED"] == "1" or us != 20.0)


@pytest.mark.benchmark(timer=cuda_event_clock)
def test_rounds(benchmark):
    benchmark.pedantic(event_round(sample), rounds=5, iterations=1)
'''


def _run(tmp_path: Path, gated: bool) -> tuple[subprocess.CompletedProcess[str], Path]:
    (tmp_path / "test_fake_bench.py").write_text(BENCH)
    out = tmp_path / "bench.json"
    env = {"PYTHONPATH": str(paths.project_root()), "GATED": "1" if gated else "0",
           "PATH": "/usr/bin:/bin"}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
         "--rootdir", str(tmp_path), str(tmp_path / "test_fake_bench.py"),
         "--benchmark-enable", f"--benchmark-json={out}"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)
    return proc, out


def test_each_round_is_its_samples_event_time_and_the_timer_is_named(tmp_path: Path) -> None:
    proc, out = _run(tmp_path, gated=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (bench,) = json.loads(out.read_text())["benchmarks"]
    assert bench["options"]["timer"] == clock.EVENT_CLOCK
    stats = bench["stats"]
    assert stats["rounds"] == 5
    # The host's 2 ms a round are not in them: the sample times, to the float.
    assert stats["min"] == pytest.approx(10e-6, rel=1e-9)
    assert stats["median"] == pytest.approx(30e-6, rel=1e-9)
    assert stats["max"] == pytest.approx(50e-6, rel=1e-9)


def test_a_round_timed_without_the_gate_fails_the_benchmark(tmp_path: Path) -> None:
    proc, out = _run(tmp_path, gated=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "synchronised inside its launch" in proc.stdout
    assert not out.exists() or not json.loads(out.read_text())["benchmarks"]


def test_the_clock_moves_by_the_rounds_only() -> None:
    before = clock.cuda_event_clock()
    assert clock.cuda_event_clock() == before
    once = clock.event_round(lambda: Sample(12.5, 1980.0, 1980.0))
    once()
    once()
    assert clock.cuda_event_clock() - before == pytest.approx(25e-6, rel=1e-9)


def test_a_throttled_sample_is_taken_again_and_counted() -> None:
    """As bench discards a sample below 75 % of the nominal clock, a round takes another."""
    samples = iter([Sample(99.0, 1000.0, 1980.0), Sample(7.0, 1980.0, 1980.0)])
    counts: dict[str, int] = {}
    before = clock.cuda_event_clock()
    clock.event_round(lambda: next(samples), counts)()
    assert clock.cuda_event_clock() - before == pytest.approx(7e-6, rel=1e-9)
    assert counts == {"throttled_discarded": 1, "throttled_kept": 0}


def test_a_round_throttled_throughout_keeps_its_last_sample_and_says_so() -> None:
    n = clock.THROTTLE_RETRIES + 1
    samples = iter([Sample(float(i + 1), 1000.0, 1980.0) for i in range(n)])
    counts: dict[str, int] = {}
    before = clock.cuda_event_clock()
    clock.event_round(lambda: next(samples), counts)()
    assert clock.cuda_event_clock() - before == pytest.approx(n * 1e-6, rel=1e-9)
    assert counts == {"throttled_discarded": n - 1, "throttled_kept": 1}


def test_the_throttle_fraction_is_the_callers() -> None:
    """At 60 % of the nominal clock a sample is throttled by the 75 % rule, not by a 50 % one."""
    slow = Sample(5.0, 0.6 * 1980.0, 1980.0)
    counts: dict[str, int] = {}
    clock.event_round(lambda: slow, counts, fraction=0.5)()
    assert counts == {"throttled_discarded": 0, "throttled_kept": 0}
    clock.event_round(lambda: slow, counts)()
    assert counts == {"throttled_discarded": clock.THROTTLE_RETRIES, "throttled_kept": 1}


class _FirstUseRunner:
    """A runner whose launcher does first-use work: a sampler made before any launch has
    ended times its samples without the gate (as the gate opens by itself on the GPU)."""

    def __init__(self) -> None:
        self.launches = 0
        self.synced_after = -1  # launches done when the stream was last synchronised
        self.stream = self

    def synchronize(self) -> None:
        self.synced_after = self.launches

    @contextlib.contextmanager
    def bound(self, *_: object) -> Iterator[Callable[[], None]]:
        def launch() -> None:
            self.launches += 1
        yield launch

    def sampler(self, launch: Callable[[], None], cold: bool,
                drain: bool = False) -> Callable[[], Sample]:
        warmed = self.synced_after > 0

        def sample() -> Sample:
            launch()
            return Sample(3.0, 1980.0, 1980.0, gated=warmed)
        return sample


def test_stage_rounds_launch_once_before_the_sampler() -> None:
    runner = _FirstUseRunner()
    with clock.stage_rounds(runner, None, None, {}, None) as once:
        assert runner.launches == 1 and runner.synced_after == 1
        once()  # gated: the first use ended before the sampler was made
    assert runner.launches == 2
