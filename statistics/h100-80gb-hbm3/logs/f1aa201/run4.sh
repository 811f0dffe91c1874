#!/usr/bin/env bash
# The A/B of IG_EPI_EARLY=0,1 again at M = 8192 with seven rotated repeats (three left it
# ambiguous); on an H200 then the layer's int_gemm rows at this source beside their peers.
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP="$G/tuning/epi-early-7 $G/int_gemm.csv $G/calibration.json"
st 60 ab-8192 $H bench int_gemm --variant int8 --define IG_EPI_EARLY=0,1 --repeats 7 --budget 0.2 --sweep batch=8192 --sweep out_f=18944 --sweep in_f=3584 --no-verify --out $G/tuning/epi-early-7
st 80 ab-8192-wide $H bench int_gemm --variant int8 --define IG_EPI_EARLY=0,1 --repeats 7 --budget 0.2 --sweep batch=8192 --sweep out_f=3584 --sweep in_f=18944 --no-verify --append --out $G/tuning/epi-early-7
if [ "$G" = statistics/h200 ]; then
  P=linear_fp32,linear_bf16,int_mm
  st 100 layer-int-gemm $H bench int_gemm --variant int8 --peers $P,torch_compile --budget 0.2 --overwrite --sweep batch=1,1024,8192 --sweep out_f=18944 --sweep in_f=3584
  st 40 layer-int-gemm-rest $H bench int_gemm --variant int8 --peers $P --budget 0.2 --append --sweep batch=16,256 --sweep out_f=18944 --sweep in_f=3584
  st 40 layer-int-gemm-square $H bench int_gemm --variant int8 --peers $P --budget 0.2 --append --sweep batch=1,16,256,1024,8192 --sweep out_f=3584 --sweep in_f=3584
  st 90 layer-int-gemm-wide $H bench int_gemm --variant int8 --peers $P --budget 0.2 --append --sweep batch=1,16,256,1024,8192 --sweep out_f=3584 --sweep in_f=18944
fi
pack
cat $sum
