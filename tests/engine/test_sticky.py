"""engine.sticky: which failures lose the device context, and what a stopped sweep says
(the stop itself is tested with the sweep loop, tests/engine/test_bench.py)."""

from __future__ import annotations

import pytest

from harness.engine.jobs import plan
from harness.engine.sticky import context_lost, stop_if_lost, unrun
from harness.errors import ContextLost


def test_only_sticky_errors_count_as_a_lost_context() -> None:
    assert context_lost("LogicError: cuStreamSynchronize failed: an illegal memory access "
                        "was encountered")
    assert context_lost("RuntimeError: CUDA error: unspecified launch failure")
    assert not context_lost("LogicError: cuModuleLoadDataEx failed: device kernel image is "
                            "invalid")
    assert not context_lost("out of memory: cuMemAlloc failed: out of memory")


def test_the_stop_names_the_row_and_what_was_left(reg) -> None:  # type: ignore[no-untyped-def]
    (job,) = plan([reg.get("dynamic_spikes")], ["batch=4", "in_f=64"])
    lost = {"status": "failed", "reason": "LogicError: an illegal memory access was "
                                          "encountered"}
    with pytest.raises(ContextLost, match=r"lost at dynamic_spikes \[default\] batch=4, "
                                          r"in_f=64.*\); 3 job\(s\) not run \(x\): run"):
        stop_if_lost(job, lost, unrun(3, "x"))
    stop_if_lost(job, {"status": "failed", "reason": "q: FAILED"}, unrun(3))  # goes on
    stop_if_lost(job, {**lost, "status": "ok"}, unrun(3))
    assert unrun(0) == "no job was left to run"
    assert unrun(2).startswith("2 job(s) not run: run them again in a new process, without "
                               "the build that lost it")
