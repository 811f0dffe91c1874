#!/usr/bin/env bash
# Why the leaner producer missed its prediction: ncu's per-instruction stall samples of
# int_gemm_packed_wgmma at M = 1024 on 18944 x 3584, at 754e605's source.
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
KEEP=statistics
st 90 ncu-source python3 .dev/gpu/ncu_source.py $base/logs int_gemm_packed default batch=1024 out_f=18944 in_f=3584
pack
cat $sum
