#!/usr/bin/env bash
# The layer at this source beside its peers (int_gemm on the three shapes, the FP32 gemm and
# the compare, spike_linear), in the folder of whichever GPU runs it; one int_gemm launch at
# M = 8192 on 18944 x 3584 under ncu with per-instruction stall samples; on an H200,
# compute-sanitizer on int_gemm int8 at this source.
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP="$G/int_gemm.csv $G/gemm.csv $G/spike_linear.csv $G/calibration.json $G/sanitizer-int_gemm.csv"
P=linear_fp32,linear_bf16,int_mm
st 20 calibrate $H calibrate
st 120 layer-int-gemm $H bench int_gemm --variant int8 --peers $P,torch_compile --budget 0.2 --overwrite --sweep batch=1,1024,8192 --sweep out_f=18944 --sweep in_f=3584
st 40 layer-int-gemm-rest $H bench int_gemm --variant int8 --peers $P --budget 0.2 --append --sweep batch=16,256 --sweep out_f=18944 --sweep in_f=3584
st 40 layer-int-gemm-square $H bench int_gemm --variant int8 --peers $P --budget 0.2 --append --sweep batch=1,16,256,1024,8192 --sweep out_f=3584 --sweep in_f=3584
st 100 layer-int-gemm-wide $H bench int_gemm --variant int8 --peers $P --budget 0.2 --append --sweep batch=1,16,256,1024,8192 --sweep out_f=3584 --sweep in_f=18944
st 25 layer-gemm $H bench gemm --budget 0.2 --overwrite --sweep batch=1,16,1024,8192 --sweep out_f=18944
st 10 layer-compare $H compare $G/gemm.csv $G/int_gemm.csv --ignore stage --ignore variant --ignore params
st 90 ncu-source python3 .dev/gpu/ncu_source.py $base/logs batch=8192 out_f=18944 in_f=3584
[ "$G" = statistics/h200 ] && st 40 san-int8 $H sanitize int_gemm --variant int8 --out $G/sanitizer-int_gemm.csv --append
st 120 layer-spike-linear $H bench spike_linear --budget 0.2 --overwrite --sweep batch=1,16,256,1024,8192 --sweep out_f=18944,3584
st 120 layer-spike-linear-wide $H bench spike_linear --budget 0.2 --append --sweep batch=1,16,256,1024,8192 --sweep out_f=3584 --sweep in_f=18944
pack
cat $sum
