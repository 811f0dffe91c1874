#!/usr/bin/env bash
# The first event-timed pytest-benchmark baseline (tests/bench's rounds timed by the CUDA
# events), activation_fused validated where this GPU has no row at its source, then the
# layer at the current source (gpu-check's layer phase: int_gemm beside its peers on the
# three shapes, the FP32 gemm compared, spike_linear beside F.linear fp32/bf16).
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP=statistics
st 150 bench-save python3 -m pytest -m gpu -p no:cacheprovider tests/bench --benchmark-enable --benchmark-storage=file://$G/pytest-benchmark --benchmark-save=${SHA:0:7}
case "$name" in *H200*) st 120 validate-fused $H validate --record activation_fused ;; esac
export BUDGET=0.2
LIMIT=590 st $((585 - SECONDS)) layer env OUT=$base/gc bash scripts/gpu-check.sh layer
pack
cat $sum
