"""What a stage's ``enqueue`` launches through: the :class:`Launcher` protocol a backend
implements, and a :class:`RecordingLauncher` that launches nothing (what a profiler must skip
and count, and what tests inspect)."""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np


class Launcher(Protocol):
    """What a stage's ``enqueue`` gets: launches a kernel of its compiled module on the
    run's stream.

    ``launch("name", grid, block, *args)`` launches ``extern "C"`` function ``name``;
    device buffers are passed as they come in ``bufs``, scalars as NumPy scalars
    (``np.int32(B)``, ``np.float32(k)``), whose types fix the launch signature.
    ``launch.block`` is the threads per block the module was compiled for (``-DBLOCK``):
    the block of every kernel that takes the harness's block size.
    """

    block: int
    #: Multiprocessors of the device: the grid of a persistent kernel.
    sm_count: int

    def __call__(self, name: str, grid: tuple[int, ...], block: tuple[int, ...], *args: Any,
                 shared: int = 0, waits: bool = False) -> None:
        """``waits``: the kernel reads nothing before ``griddepcontrol.wait`` that the
        kernel ahead of it on the stream writes, so a pipeline step may launch it as that
        kernel's programmatic dependent (``PipelineContext.step(..., early=True)``)."""
        ...

    def tensor_map(self, buf: Any, dtype: Any, rows: int, cols: int, box_rows: int,
                   box_cols: int, swizzle: int = 128) -> np.void:
        """A TMA descriptor (CUtensorMap) over the row-major ``rows x cols`` buffer ``buf``,
        read in ``box_rows x box_cols`` boxes (zeros out of bounds), passed to a kernel by
        value as ``const __grid_constant__ CUtensorMap``."""
        ...

    def constant(self, name: str, count: int = 1) -> np.ndarray:
        """``count`` int32 values of the module's ``__constant__`` symbol ``name``: sizes the
        kernel source decides (its dynamic shared memory, say), read instead of restated.
        Not a way to choose which kernel to launch: ``harness profile`` predicts the launched
        kernels with :class:`RecordingLauncher`, which compiles nothing; choose by the
        point and the variant's defines."""
        ...

    def max_active_clusters(self, name: str, cluster: int, threads: int, shared: int) -> int:
        """How many clusters of ``cluster`` CTAs of kernel ``name`` (its cluster size fixed
        in the source), each CTA ``threads`` threads and ``shared`` bytes of dynamic shared
        memory, the device runs at once: the grid of a persistent clustered kernel (the
        driver's occupancy query: SMs a cluster cannot span are left out)."""
        ...

    def max_active_blocks(self, name: str, threads: int, shared: int = 0) -> int:
        """How many blocks of kernel ``name``, each ``threads`` threads and ``shared`` bytes
        of dynamic shared memory, one SM of the device holds at once (the driver's occupancy
        query, for this build on this device): the grid of a kernel whose blocks must all be
        resident at once (a grid-wide barrier)."""
        ...


#: An SM's threads on the GPUs the harness is built for (sm_80, sm_90): what a
#: :class:`RecordingLauncher` assumes, where a run asks the driver.
RECORDED_SM_THREADS = 2048
#: An SM's shared memory on sm_90 (228 KiB; sm_80's is 164 KiB), and what the driver
#: reserves of it a block (1 KiB): what a :class:`RecordingLauncher` counts a block's
#: dynamic shared memory against (not the 32 blocks an SM's scheduler also caps).
RECORDED_SM_SHARED = 228 * 1024
RECORDED_BLOCK_RESERVED = 1024


class RecordingLauncher:
    """A :class:`Launcher` that launches nothing and records each launch: the kernels an
    ``enqueue`` would launch at a point, in order (what a profiler must skip and count)."""

    def __init__(self, block: int, sm_count: int = 132) -> None:
        self.block = block
        self.sm_count = sm_count
        #: ``(name, grid, block, args, shared)`` of each launch.
        self.calls: list[tuple[str, tuple[int, ...], tuple[int, ...], tuple[Any, ...], int]] = []
        #: Each launch's ``waits`` (its kernel may start under the one before it).
        self.waited: list[bool] = []

    def __call__(self, name: str, grid: tuple[int, ...], block: tuple[int, ...], *args: Any,
                 shared: int = 0, waits: bool = False) -> None:
        self.calls.append((name, tuple(grid), tuple(block), args, shared))
        self.waited.append(waits)

    def tensor_map(self, buf: Any, dtype: Any, rows: int, cols: int, box_rows: int,
                   box_cols: int, swizzle: int = 128) -> np.void:
        """A zeroed 128-byte descriptor (nothing runs)."""
        return np.zeros((), dtype=np.dtype((np.void, 128)))[()]

    def constant(self, name: str, count: int = 1) -> np.ndarray:
        """Ones (nothing is compiled): a size read from the module stays positive."""
        return np.ones(count, dtype=np.int32)

    def max_active_clusters(self, name: str, cluster: int, threads: int, shared: int) -> int:
        """Every SM in a cluster (nothing runs)."""
        return max(1, self.sm_count // cluster)

    def max_active_blocks(self, name: str, threads: int, shared: int = 0) -> int:
        """As many as an SM's threads and shared memory allow (``RECORDED_SM_THREADS``,
        ``RECORDED_SM_SHARED`` less ``RECORDED_BLOCK_RESERVED`` a block; nothing is
        compiled, so registers and the kernel's static shared memory are not counted)."""
        by_shared = RECORDED_SM_SHARED // (shared + RECORDED_BLOCK_RESERVED)
        return max(1, min(RECORDED_SM_THREADS // threads, by_shared))

    @property
    def names(self) -> list[str]:
        """The launched kernels' names, in order."""
        return [c[0] for c in self.calls]
