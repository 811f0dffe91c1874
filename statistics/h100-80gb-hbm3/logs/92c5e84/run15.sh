#!/usr/bin/env bash
# The little device time left: int_gemm at the source with int_gemm_wgmma_single and its split
# of K validated (int_gemm, and the pipelines that run it); then, if time is left, the split
# A/B (IG_SPLITS_MAX=1,4) where it splits.
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP=statistics
st 90 val-int_gemm $H validate --record int_gemm &&
st 70 val-linear $H validate --record spike_linear &&
st 35 val-sqg $H validate --record spike_quant_gemm &&
st 50 splits $H bench int_gemm --variant int8 --define IG_SPLITS_MAX=1,4 --repeats 3 --budget 0.1 --sweep batch=64,256 --sweep out_f=3584 --sweep in_f=3584,18944 --out $G/tuning/splits
pack
cat $sum
