"""What the plugins' CPU tests share: a kernel's ``#define`` default read from its source,
and the grids a reduction stage's validation cases launch."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness.contract.launcher import RecordingLauncher

ROOT = Path(__file__).resolve().parents[2]


def kernel_define(path: str, name: str) -> int:
    """A kernel's ``#define NAME <int>`` default, read from its source (``path`` from the
    repository's root)."""
    m = re.search(rf"#define {name} (-?\d+)\b", (ROOT / path).read_text())
    assert m, (path, name)
    return int(m.group(1))


def reduction_grids(st: Any, bufs: dict[str, str], block: int, units: int
                    ) -> Iterator[tuple[dict[str, Any], int, bool, bool]]:
    """Each validation case of a reduction stage with its launch's blocks, whether a thread
    loops past one pass of ``units`` items, and whether it takes the 16-byte path."""
    for case in st.cases:
        launch = RecordingLauncher(block)
        st.enqueue(launch, bufs, st.point(**case), st.variants[0])
        ((_, (blocks, _, _), _, _, _),) = launch.calls
        n = case["batch"] * case["in_f"]
        items = n // 4 if n % 4 == 0 else n
        yield case, blocks, -(-items // (blocks * block * units)) > 1, n % 4 == 0
