#!/usr/bin/env bash
# The spike linear layer measured again at the current source (scripts/gpu-check.sh layer):
# int_gemm beside its peers on the three shapes, the FP32 gemm and the compare, and spike_linear
# on the three shapes, M 1, 16, 256, 1024, 8192 (the README's layer table).
set -u
export HARNESS_GIT_SHA=${SHA}
LAYER_BATCHES=1,16,256,1024,8192 BUDGET=0.2 timeout 560 bash scripts/gpu-check.sh layer
