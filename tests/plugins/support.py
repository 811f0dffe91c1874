"""What the plugins' CPU tests share: a kernel's ``#define`` default read from its source,
the grids a reduction stage's validation cases launch, and a recording launcher for the
modules built on the wgmma body."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

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


class WgmmaModule(RecordingLauncher):
    """A module built on the wgmma body (common/igemm_wgmma.cuh) as its launch reads it:
    ``<prefix>_config`` with ``threads`` a CTA, ``stages`` in its ring, clusters of 2 along M
    and ``cn`` along N, the grid by the SMs (``by_sms`` 1) or by the occupancy query (0,
    answering ``fits`` clusters), K split at most ``most`` ways; ``<prefix>_out_box`` 64 x 32;
    ``smem`` bytes. It records the constants read (``read``), the tensor maps built
    (``maps``: rows, columns, box rows, box columns, swizzle; each returned as
    ``"map:<buffer>"``) and the occupancy asked (``asked``)."""

    def __init__(self, prefix: str, *, cn: int = 1, most: int = 4, by_sms: int = 1,
                 fits: int = 132, smem: int = 200_000, threads: int = 384,
                 stages: int = 5) -> None:
        super().__init__(256)
        self.prefix, self.cn, self.most, self.by_sms = prefix, cn, most, by_sms
        self.fits, self.smem, self.threads, self.stages = fits, smem, threads, stages
        self.read: list[str] = []
        self.maps: list[tuple[int, ...]] = []
        self.asked: list[tuple[str, int, int, int]] = []

    def constant(self, name: str, count: int = 1) -> np.ndarray:
        self.read.append(name)
        if name == f"{self.prefix}_config":
            return np.array([128, 128, 128, self.stages, 2, self.threads, 0, self.cn,
                             self.by_sms, self.most], dtype=np.int32)[:count]
        if name == f"{self.prefix}_out_box":
            return np.array([64, 32], dtype=np.int32)[:count]
        return np.array([self.smem], dtype=np.int32)

    def max_active_clusters(self, name: str, cluster: int, threads: int, shared: int) -> int:
        self.asked.append((name, cluster, threads, shared))
        return self.fits

    def tensor_map(self, buf: Any, dtype: Any, rows: int, cols: int, box_rows: int,
                   box_cols: int, swizzle: int = 128) -> Any:
        self.maps.append((rows, cols, box_rows, box_cols, swizzle))
        return f"map:{buf}"
