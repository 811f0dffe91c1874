"""The CSV schema of pipeline rows, and their writer.

A pipeline row holds every named interval of the run (median and noise), the planes ``T``
the host learnt, and the seed's two shares; ``<pipeline>.csv`` gets the full rows and, for
a pipeline that asks, the seed's five batch-size summaries are written beside it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from harness.results import files
from harness.results.rows import CsvWriter

#: Interval names a pipeline reports, in the seed's order, with the seed's labels.
LABELS = {
    "dynamic_spikes": "dynamic_spikes_kernel",
    "encoding_kernels": "Spike Bitwise Encoding - Kernel Only",
    "encoding_total": "Spike Bitwise Encoding - Total (host-side decision included)",
    "weight_quant": "Weight Quantization",
    "decode_reverse": "Spike Decode + Reverse",
    "gemm": "GEMM",
    "total": "End to end (both streams joined)",
}

COLUMNS = (
    "stage", "backend", "variant", "batch", "in_f", "out_f", "mode", "family", "params", "status",
    "reason", "verified", "l2", "planes", "samples",
    *(f"{k}_us" for k in LABELS), *(f"{k}_noise_pct" for k in LABELS),
    "encoding_share_pct", "weight_quant_share_pct", "gpu", "driver", "cuda", "git_sha",
    "kernel_hashes", "timestamp", "command",
    # A pipeline's intervals of other names (spike_linear's ``activation``, say), as JSON:
    # {name: {"median_us": ..., "noise_pct": ...}}.
    "intervals",
)

#: Axes with their own CSV columns; the rest go, as JSON, into ``params``.
POINT_COLUMNS = ("batch", "in_f", "out_f", "mode")

#: The seed's five batch-size summaries (benchmark/run_perf*.sh): file -> its columns.
SEED_SUMMARIES: dict[str, tuple[str, ...]] = {
    "seed_e2e": ("total_us", "total_noise_pct"),
    "seed_dynamic_spikes": ("dynamic_spikes_us", "dynamic_spikes_noise_pct"),
    "seed_spike_encoding": ("encoding_kernels_us", "encoding_kernels_noise_pct",
                            "encoding_total_us", "encoding_total_noise_pct"),
    "seed_spike_encoding_share": ("encoding_total_us", "total_us", "encoding_share_pct"),
    "seed_weight_quant_share": ("weight_quant_us", "total_us", "weight_quant_share_pct"),
}
_KEYS = ("batch", "in_f", "out_f", "mode", "family", "status", "samples")
_TAIL = ("gpu", "git_sha", "timestamp")


class PipelineCsv:
    """The full rows in ``<stage>.csv`` and the seed's five summaries beside them."""

    def __init__(self, out_dir: Path, name: str, existing: str = files.REFUSE,
                 summaries: bool = True) -> None:
        self.main = CsvWriter(Path(out_dir) / f"{name}.csv", existing, COLUMNS, root=out_dir)
        self.views: dict[str, CsvWriter] = {}
        try:
            for k, cols in SEED_SUMMARIES.items() if summaries else ():
                self.views[k] = CsvWriter(Path(out_dir) / f"{k}.csv", existing,
                                          (*_KEYS, *cols, *_TAIL), root=out_dir)
        except BaseException:
            self.close()  # all the files or none: release the locks already taken
            raise

    @property
    def repaired(self) -> str:
        """What was cut from the files before appending ('' when nothing)."""
        return "; ".join(w.repaired for w in (self.main, *self.views.values()) if w.repaired)

    @property
    def written(self) -> int:
        """Rows written to the pipeline's main file (its views repeat them)."""
        return self.main.written

    def write(self, r: dict[str, Any]) -> None:
        """Write the row, then its projection into each summary: our own rows only (the
        summaries have no backend column: they are the seed program's report, and a peer's
        row would read as ours there)."""
        self.main.write(r)
        if r.get("backend", "pycuda") != "pycuda":
            return
        for w in self.views.values():
            w.write({c: r.get(c, "") for c in w.columns})

    def close(self) -> None:
        """Close every file (each row is already on disk)."""
        self.main.close()
        for w in self.views.values():
            w.close()
