"""The compute peaks a GPU's datasheet states, per model and arithmetic: what a stage row's
``pct_datasheet_tops`` refers to.

A stage declares which rate its kernel's arithmetic runs at (``Stage.compute_peak``, one
of ``RATES``); a row's ``tops`` (its ``flops`` over its median) is then set against the
figure here for the row's GPU. These are the vendor's printed figures, not measured ones:
a GPU not listed here, named as its driver names it, gets no percentage at all rather
than a guess. The tensor-core figures of the datasheets are printed "with sparsity" (2:4
structured sparsity); the dense rate, the one a dense GEMM can reach, is half of it.
"""

from __future__ import annotations

#: The rates a stage may declare, each with what it means.
RATES: dict[str, str] = {
    "int8_dense": "int8 tensor-core multiply-adds, dense (no 2:4 sparsity), in tera-ops/s",
    "bf16_dense": "bf16 tensor-core multiply-adds, dense, fp32 accumulate, in TFLOPS",
    "fp32": "fp32 FMAs on the CUDA cores (no tensor cores, no TF32), in TFLOPS",
}
#: The rates of ``RATES`` that run on the tensor cores.
TENSOR_CORE_RATES = frozenset({"int8_dense", "bf16_dense"})

#: Datasheet peaks in tera-operations per second (a multiply-add counts two), by the name
#: the driver gives the GPU (``cuDeviceGetName``, a row's ``gpu``), matched exactly.
PEAKS: dict[str, dict[str, float]] = {
    # NVIDIA H200 Tensor Core GPU datasheet, the H200 SXM column: FP32 67 TFLOPS, BF16
    # Tensor Core 1,979 TFLOPS and INT8 Tensor Core 3,958 TOPS, both "with sparsity".
    "NVIDIA H200": {"int8_dense": 1979.0, "bf16_dense": 989.0, "fp32": 67.0},
    # NVIDIA H100 Tensor Core GPU datasheet, the H100 SXM column: the same three figures
    # (FP32 67, BF16 1,979 and INT8 3,958 with sparsity).
    "NVIDIA H100 80GB HBM3": {"int8_dense": 1979.0, "bf16_dense": 989.0, "fp32": 67.0},
}


def peak_tops(gpu: str, rate: str | None) -> float | None:
    """The datasheet's peak of ``rate`` on the GPU named ``gpu`` (tera-ops/s), or None
    where the stage declares no rate or the GPU is not listed."""
    if rate is None:
        return None
    return PEAKS.get(gpu, {}).get(rate)
