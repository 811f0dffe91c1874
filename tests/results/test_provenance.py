"""Provenance: the commit, the time, the command, and the columns every row carries."""

from __future__ import annotations

import re

from harness.results import provenance


def test_git_sha_can_be_given(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HARNESS_GIT_SHA", "0123456789ab")
    assert provenance.git_sha() == "0123456789ab"


def test_run_meta_columns() -> None:
    m = provenance.RunMeta(gpu="G", driver="d", cuda="c", git_sha="s", command="harness x",
                           peak_gbps=1.0)
    cols = m.columns()
    assert {k: cols[k] for k in ("gpu", "driver", "cuda", "git_sha", "command")} == {
        "gpu": "G", "driver": "d", "cuda": "c", "git_sha": "s", "command": "harness x"}
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", cols["timestamp"])
    assert "peak_gbps" not in cols  # a stage row's own column, not provenance
