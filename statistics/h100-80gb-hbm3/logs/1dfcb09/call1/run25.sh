#!/usr/bin/env bash
# int_gemm's 64-bit row offsets against the earlier source in one process (an out-of-tree
# plugin of the earlier kernel, .dev/ab), and the packed layout's pass 1 under
# STATS_RING_BLOCKS (8192 is the earlier launch).
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP=statistics
export HARNESS_PLUGIN_PATH=$PWD/.dev/ab
st 150 offsets-ab $H bench int_gemm int_gemm_prev --variant int8 --repeats 5 --budget 0.1 --sweep batch=64,128 --sweep out_f=3584 --sweep in_f=3584,18944 --out $G/tuning/offsets-ab
st 10 offsets-compare $H compare $G/tuning/offsets-ab/int_gemm_prev.csv $G/tuning/offsets-ab/int_gemm.csv --ignore stage --explain
unset HARNESS_PLUGIN_PATH
st 80 packed-ring $H bench activation_fused --variant packed_unidirectional --define STATS_RING_BLOCKS=8192,256 --repeats 3 --budget 0.1 --sweep batch=1024,4096,8192 --sweep in_f=3584 --out $G/tuning/ring-blocks-packed
pack
cat $sum
