#!/usr/bin/env bash
# Validate (and record) int_gemm and the pipelines that hash it at 1cdd745 (IG_FREE_TURNS and
# IG_EPI_PREFETCH off: the default SASS unchanged); the A/B of the two knobs crossed, each
# build checked at M = 1000 first; compute-sanitizer over int_gemm.
set -u
export HARNESS_GIT_SHA=${SHA}
STAGES="int_gemm spike_linear spike_quant_gemm" BUDGET=0.3 TUNE_REPEATS=3 \
AB_STAGE=int_gemm AB_VARIANT=int8 AB_DEFINES="IG_FREE_TURNS=0,1,2 IG_EPI_PREFETCH=0,1" \
AB_CHECK="batch=1000 out_f=3584 in_f=3584,256" \
AB_POINTS="batch=8192 out_f=18944 in_f=3584;batch=8192 out_f=3584 in_f=18944;batch=1024 out_f=18944 in_f=3584" \
AB_DIR=epilogue-overlap timeout 580 bash scripts/gpu-check.sh validate ab sanitize
