#!/usr/bin/env bash
# int_gemm validated at its comments' mends; then, on an H200 only, its small-M rows beside
# bf16 and the fused stage's batch 65536 rows (int8 and packed) at the ring's source.
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP="statistics/validation_ledger.csv $G/small-m-groups4 $G/ring $G/calibration.json"
st 90 val-int_gemm $H validate --record int_gemm
st 60 val-linear $H validate --record spike_linear
st 40 val-sqg $H validate --record spike_quant_gemm
[ "$G" = statistics/h200 ] || { cat $sum; exit 0; }
st 40 small-m $H bench int_gemm --variant int8 --peers linear_bf16 --budget 0.3 --sweep batch=1,16 --sweep out_f=18944,3584 --sweep in_f=3584 --out $G/small-m-groups4
st 30 fused-65536 $H bench activation_fused --variant unidirectional --k 4 --budget 0.5 --sweep batch=65536 --no-verify --out $G/ring
st 30 packed-65536 $H bench activation_fused --variant packed_unidirectional --k 4 --budget 0.5 --sweep batch=65536 --no-verify --append --out $G/ring
cat $sum
