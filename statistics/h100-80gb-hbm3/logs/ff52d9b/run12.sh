#!/usr/bin/env bash
# The event-timed pytest-benchmark baseline with every stage, saved; int_gemm_wgmma with and
# without its M cluster at M 64-256 (IG_CLUSTER_M, a tuning -D); a second pytest-benchmark
# process compared against the first (the gate's spread); on an H200, spike_linear beside
# F.linear fp32/bf16 in one process on the three shapes (gpu-check's layer commands).
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP=statistics
B=(python3 -m pytest -m gpu -p no:cacheprovider tests/bench --benchmark-enable --benchmark-storage=file://$G/pytest-benchmark)
st 80 bench-save "${B[@]}" --benchmark-save=${SHA:0:7}
st 120 cluster-m $H bench int_gemm --variant int8 --define IG_CLUSTER_M=1,2 --repeats 3 --budget 0.2 --sweep batch=64,128,256 --sweep out_f=18944,3584 --sweep in_f=3584 --out $G/tuning/cluster-m
st 70 bench-compare "${B[@]}" --benchmark-compare --benchmark-compare-fail=median:10% --benchmark-json=$base/logs/bench-compare.json
case "$name" in *H200*)
st 10 calibrate $H calibrate
st 150 spike-linear $H bench spike_linear --peers linear_fp32,linear_bf16 --budget 0.2 --overwrite --sweep batch=1,4,16,64,256,1024,4096,8192 --sweep out_f=18944,3584
st 130 spike-linear-wide $H bench spike_linear --peers linear_fp32,linear_bf16 --budget 0.2 --append --sweep batch=1,4,16,64,256,1024,4096,8192 --sweep out_f=3584 --sweep in_f=18944 ;;
esac
pack
cat $sum
