#!/usr/bin/env bash
# IGP_REFILL=1 measured 14-17 % slower than 0 (run45): the per-instruction stall samples of both
# builds at M = 1024 on 18944 x 3584, to see where the refill's warps wait.
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
mkdir -p $base/logs/refill1 $base/logs/refill0
KEEP=statistics
NCU_DEFINES=IGP_REFILL=1 st 120 ncu-refill1 python3 .dev/gpu/ncu_source.py $base/logs/refill1 int_gemm_packed default batch=1024 out_f=18944 in_f=3584
NCU_DEFINES=IGP_REFILL=0 st 120 ncu-refill0 python3 .dev/gpu/ncu_source.py $base/logs/refill0 int_gemm_packed default batch=1024 out_f=18944 in_f=3584
gzip -f $base/logs/refill*/ncu-source.csv
pack
cat $sum
