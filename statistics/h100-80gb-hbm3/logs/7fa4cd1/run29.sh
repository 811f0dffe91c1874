#!/usr/bin/env bash
# The GPU tests at the current source (every test marked gpu, the benchmarks' included), and
# activation_fused at batch 1-64 as CUDA-graph replays on this GPU (the batch-1 target).
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP=statistics
st 10 calibrate $H calibrate
st 60 act-graph $H bench activation_fused --variant unidirectional --variant packed_unidirectional --graph --repeats 3 --budget 0.2 --sweep batch=1,2,4,8,64 --sweep in_f=3584 --out $G/act-graph
st 420 pytest-gpu python3 -m pytest -m gpu -p no:cacheprovider -rA tests
pack
cat $sum
