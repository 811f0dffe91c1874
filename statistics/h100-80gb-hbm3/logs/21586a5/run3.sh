#!/usr/bin/env bash
# int_gemm with the epilogue's operands early: validated (with what includes it), compute-
# sanitizer on int8, the A/B of IG_EPI_EARLY=0,1; on an H200 then the layer's int_gemm rows.
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP="statistics/validation_ledger.csv $G/sanitizer.csv $G/sanitizer-int_gemm.csv $G/tuning/epi-early $G/int_gemm.csv $G/calibration.json"
SAN=$G/sanitizer.csv; [ "$G" = statistics/h200 ] && SAN=$G/sanitizer-int_gemm.csv
st 100 val-int_gemm $H validate --record int_gemm || { cat $sum; exit 1; }
st 80 val-linear $H validate --record spike_linear
st 40 val-sqg $H validate --record spike_quant_gemm
st 60 san-int8 $H sanitize int_gemm --variant int8 --out $SAN --append
st 60 ab-1024 $H bench int_gemm --variant int8 --define IG_EPI_EARLY=0,1 --repeats 3 --budget 0.2 --sweep batch=1024 --sweep out_f=18944 --sweep in_f=3584 --out $G/tuning/epi-early
st 90 ab-8192 $H bench int_gemm --variant int8 --define IG_EPI_EARLY=0,1 --repeats 3 --budget 0.2 --sweep batch=8192 --sweep out_f=18944 --sweep in_f=3584 --no-verify --append --out $G/tuning/epi-early
st 90 ab-8192-wide $H bench int_gemm --variant int8 --define IG_EPI_EARLY=0,1 --repeats 3 --budget 0.2 --sweep batch=8192 --sweep out_f=3584 --sweep in_f=18944 --no-verify --append --out $G/tuning/epi-early
if [ "$G" = statistics/h200 ]; then
  P=linear_fp32,linear_bf16,int_mm
  st 100 layer-int-gemm $H bench int_gemm --variant int8 --peers $P,torch_compile --budget 0.2 --overwrite --sweep batch=1,1024,8192 --sweep out_f=18944 --sweep in_f=3584
  st 40 layer-int-gemm-rest $H bench int_gemm --variant int8 --peers $P --budget 0.2 --append --sweep batch=16,256 --sweep out_f=18944 --sweep in_f=3584
  st 40 layer-int-gemm-square $H bench int_gemm --variant int8 --peers $P --budget 0.2 --append --sweep batch=1,16,256,1024,8192 --sweep out_f=3584 --sweep in_f=3584
  st 90 layer-int-gemm-wide $H bench int_gemm --variant int8 --peers $P --budget 0.2 --append --sweep batch=1,16,256,1024,8192 --sweep out_f=3584 --sweep in_f=18944
fi
pack
cat $sum
