#!/usr/bin/env bash
# The third call: the split A/B (added to the earlier rows of tuning/splits), spike_linear on
# 3584 x 18944 (cut off at 120 s in the first call), weight_quant_fused beside torch.compile.
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP=statistics
st 90 splits $H bench int_gemm --variant int8 --define IG_SPLITS_MAX=1,2,4 --repeats 3 --budget 0.1 --sweep batch=64,128,256 --sweep out_f=3584 --sweep in_f=3584,18944 --append --out $G/tuning/splits
st 240 layer-spike-linear-wide $H bench spike_linear --peers linear_fp32,linear_bf16 --budget 0.2 --append --sweep batch=1,4,16,64,256,1024,4096,8192 --sweep out_f=3584 --sweep in_f=18944
st 10 calibrate $H calibrate
st 150 wqf-peers $H bench weight_quant_fused --peers torch_compile --budget 0.5 --repeats 3 --sweep out_f=3584,18944 --sweep in_f=3584 --out $G/wqf-peers
pack
cat $sum
