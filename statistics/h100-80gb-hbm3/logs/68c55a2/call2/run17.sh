#!/usr/bin/env bash
# The second call on the warm machine: int_gemm_wgmma_single under ncu at M 64 and 128 (the
# fixed part, the split's reduction: --set full, split and not); compute-sanitizer on
# int_gemm; the event-timed pytest-benchmark baseline; activation_fused validated.
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP=statistics
N=statistics/ncu/single
st 45 ncu-sq-64 $H profile int_gemm --variant int8 --batch 64 --set full --sweep out_f=3584 --sweep in_f=3584 --out $N
st 45 ncu-sq-128 $H profile int_gemm --variant int8 --batch 128 --set full --sweep out_f=3584 --sweep in_f=3584 --out $N
st 45 ncu-sq-128-one $H profile int_gemm --variant int8 --batch 128 --set full --define IG_SPLITS_MAX=1 --sweep out_f=3584 --sweep in_f=3584 --out $N
st 45 ncu-wide-64 $H profile int_gemm --variant int8 --batch 64 --set full --sweep out_f=3584 --sweep in_f=18944 --out $N
st 60 san-int-gemm $H sanitize int_gemm --out $G/sanitizer-int_gemm.csv --append
st 150 bench-save python3 -m pytest -m gpu -p no:cacheprovider tests/bench --benchmark-enable --benchmark-storage=file://$G/pytest-benchmark --benchmark-save=${SHA:0:7}
case "$name" in *H200*) st 120 validate-fused $H validate --record activation_fused ;; esac
pack
cat $sum
