#!/usr/bin/env bash
# int_gemm_planes at its first source: validated (the ledger's row), compute-sanitizer over
# its odd shape, then timed beside int_gemm_packed and int_gemm (q8) in one process at M 1,
# 16, 1024, 8192 on 18944 x 3584 and at 1024 on 3584 x 3584, and under ncu at M 1024.
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
G=$($H where 2>/dev/null | tail -1); echo "folder: $G" >> $sum
st 20 calibrate $H calibrate
st 150 validate $H validate --record int_gemm_planes
st 120 sanitize $H sanitize --append int_gemm_planes
B="--budget 0.2 --out $G/planes"
st 150 bench $H bench int_gemm_planes int_gemm_packed int_gemm $B --sweep batch=1,16,1024,8192 --sweep out_f=18944 --sweep in_f=3584
st 60 bench-square $H bench int_gemm_planes int_gemm_packed int_gemm $B --append --sweep batch=1024 --sweep out_f=3584 --sweep in_f=3584
st 45 ncu $H profile int_gemm_planes --batch 1024 --sweep out_f=18944 --sweep in_f=3584
pack
cat $sum
