#!/usr/bin/env bash
# activation_fused validated at its header's mend (and what includes it); on an H200 then
# the layer's int_gemm rows at this source beside their peers, compute-sanitizer on int_gemm
# int8, the fused stage at batch 65536 (int8 and packed) with the ring, and the ring on
# fewer blocks. On another GPU: the validation and the ring on fewer blocks.
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP="statistics/validation_ledger.csv $G/int_gemm.csv $G/gemm.csv $G/calibration.json $G/sanitizer-int_gemm.csv $G/ring $G/tuning/stats-blocks"
st 240 val-af $H validate --record activation_fused
st 40 val-path $H validate --record activation_path
st 90 val-linear $H validate --record spike_linear
if [ "$G" = statistics/h200 ]; then
  P=linear_fp32,linear_bf16,int_mm
  st 20 calibrate $H calibrate
  st 100 layer-int-gemm $H bench int_gemm --variant int8 --peers $P,torch_compile --budget 0.2 --overwrite --sweep batch=1,1024,8192 --sweep out_f=18944 --sweep in_f=3584
  st 40 layer-int-gemm-rest $H bench int_gemm --variant int8 --peers $P --budget 0.2 --append --sweep batch=16,256 --sweep out_f=18944 --sweep in_f=3584
  st 40 layer-int-gemm-square $H bench int_gemm --variant int8 --peers $P --budget 0.2 --append --sweep batch=1,16,256,1024,8192 --sweep out_f=3584 --sweep in_f=3584
  st 90 layer-int-gemm-wide $H bench int_gemm --variant int8 --peers $P --budget 0.2 --append --sweep batch=1,16,256,1024,8192 --sweep out_f=3584 --sweep in_f=18944
  st 25 layer-gemm $H bench gemm --budget 0.2 --overwrite --sweep batch=1,16,1024,8192 --sweep out_f=18944
  st 10 layer-compare $H compare $G/gemm.csv $G/int_gemm.csv --ignore stage --ignore variant --ignore params
  st 40 san-int8 $H sanitize int_gemm --variant int8 --out $G/sanitizer-int_gemm.csv --append
  st 35 fused-65536 $H bench activation_fused --variant unidirectional --k 4 --budget 0.5 --sweep batch=65536 --no-verify --out $G/ring
  st 35 packed-65536 $H bench activation_fused --variant packed_unidirectional --k 4 --budget 0.5 --sweep batch=65536 --no-verify --append --out $G/ring
fi
st 150 ab-blocks $H bench activation_fused --variant unidirectional --define STATS_BLOCKS=528,1056,2112,8192 --repeats 3 --k 4 --budget 0.2 --sweep batch=16384,65536 --no-verify --out $G/tuning/stats-blocks
cat $sum
