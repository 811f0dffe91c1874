#!/usr/bin/env bash
# Validate (and record) the kernel text after the review (the same SASS as 4aeaadf's).
set -u
export HARNESS_GIT_SHA=${SHA}
STAGES="activation_fused activation_path spike_linear dynamic_spikes spike_quant_gemm" \
timeout 170 bash scripts/gpu-check.sh validate
