"""The benchmarks' commit: HARNESS_GIT_SHA's where it is set, git's otherwise."""

from __future__ import annotations

import pytest

from tests.bench import conftest


def _info() -> dict[str, object]:
    return {"id": "0000000", "time": "t", "author_time": "t", "dirty": True,
            "project": "main", "branch": "main"}


def test_the_run_names_harness_git_sha_where_it_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HARNESS_GIT_SHA", "abcdef123456")
    info = _info()
    conftest.pytest_benchmark_update_commit_info(None, info)  # type: ignore[arg-type]
    assert info == {"id": "abcdef123456", "id_from": "HARNESS_GIT_SHA", "project": "main",
                    "branch": "main"}


def test_git_s_commit_stays_where_it_is_not(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HARNESS_GIT_SHA", raising=False)
    info = _info()
    conftest.pytest_benchmark_update_commit_info(None, info)  # type: ignore[arg-type]
    assert info == _info()
