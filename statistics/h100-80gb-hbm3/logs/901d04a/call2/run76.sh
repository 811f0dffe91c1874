#!/usr/bin/env bash
# The second call on the warm machine: the packed path end to end at the small M the boxes
# changed (spike_linear packed beside F.linear bf16), int_gemm_packed's rows at the stage's
# points, then the GPU test suite in the time left.
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) D=statistics/h200 ;; *H100*) D=statistics/h100-80gb-hbm3 ;; *) D=statistics/other ;; esac
st 60 sl-packed $H bench spike_linear --variant packed --variant operand --peers linear_bf16 --budget 0.2 --sweep batch=1,16 --sweep out_f=18944 --sweep in_f=3584 --out $D/layer-sweep --append
st 60 packed-rows $H bench int_gemm_packed --variant default --budget 0.2 --sweep batch=1,16,1024,8192 --sweep out_f=18944 --sweep in_f=3584 --out $D/packed-boxes --overwrite
st 300 gpu-tests python3 -m pytest -m gpu -rP -p no:cacheprovider -q tests
pack
cat $sum
