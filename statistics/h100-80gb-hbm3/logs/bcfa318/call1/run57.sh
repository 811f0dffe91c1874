#!/usr/bin/env bash
# One call, the H200's rows at the current source, most valuable first (a later call may not
# come). (1) The spike linear layer, as scripts/gpu-check.sh's layer phase measures it, at M
# 1, 16, 256, 1024, 8192: int_gemm beside linear_fp32, linear_bf16 and int_mm on the three
# shapes (torch.compile of the W8ASpike reference at M 1, 1024, 8192 on 18944 x 3584), the
# FP32 gemm and the compare, and spike_linear's operand and default paths beside F.linear on
# the three shapes (the packed and any paths left out for the time). (2) activation_fused's
# int8-planes rows the byte-floor goals judge: graphs at batch 1-2048 beside the earlier
# barrier's rows (act-grid-barrier/), stream launches at 1024, 16384, 65536 and the packed
# layout at 65536 (act-floor/). (3) ncu of the main kernels.
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3/layer-sweep ;; esac
P=linear_fp32,linear_bf16,int_mm
B="--budget 0.2"
st 30 calibrate $H calibrate
st 120 int-gemm $H bench int_gemm --variant int8 --peers $P,torch_compile $B --overwrite --sweep batch=1,1024,8192 --sweep out_f=18944 --sweep in_f=3584 --out $G
st 50 int-gemm-rest $H bench int_gemm --variant int8 --peers $P $B --append --sweep batch=16,256 --sweep out_f=18944 --sweep in_f=3584 --out $G
st 50 int-gemm-square $H bench int_gemm --variant int8 --peers $P $B --append --sweep batch=1,16,256,1024,8192 --sweep out_f=3584 --sweep in_f=3584 --out $G
st 90 int-gemm-wide $H bench int_gemm --variant int8 --peers $P $B --append --sweep batch=1,16,256,1024,8192 --sweep out_f=3584 --sweep in_f=18944 --out $G
st 40 gemm $H bench gemm $B --overwrite --sweep batch=1,16,1024,8192 --sweep out_f=18944 --out $G
st 10 compare $H compare $G/gemm.csv $G/int_gemm.csv --ignore stage --ignore variant --ignore params
SL="--variant operand --variant default --peers linear_fp32,linear_bf16 $B --sweep batch=1,16,256,1024,8192"
st 150 spike-linear $H bench spike_linear $SL --overwrite --sweep out_f=18944,3584 --out $G
st 150 spike-linear-wide $H bench spike_linear $SL --append --sweep out_f=3584 --sweep in_f=18944 --out $G
A="--k 4 --budget 0.3 --sweep in_f=3584"
st 40 act-graph $H bench activation_fused --variant unidirectional --graph $A --sweep batch=1,9,64,256,1024,2048 --out $G/act-grid-barrier --append
st 40 act-stream $H bench activation_fused --variant unidirectional $A --sweep batch=1024,16384,65536 --out $G/act-floor
st 25 act-packed $H bench activation_fused --variant packed_unidirectional $A --sweep batch=65536 --out $G/act-floor --append
st 40 ncu-gemm-8192 $H profile int_gemm --variant int8 --batch 8192 --sweep out_f=18944 --sweep in_f=3584
st 40 ncu-gemm-8192-wide $H profile int_gemm --variant int8 --batch 8192 --sweep out_f=3584 --sweep in_f=18944
st 30 ncu-gemm-16 $H profile int_gemm --variant int8 --batch 16 --sweep out_f=18944 --sweep in_f=3584
st 30 ncu-act-1024 $H profile activation_fused --variant unidirectional --batch 1024 --k 4 --sweep in_f=3584
st 30 ncu-act-65536 $H profile activation_fused --variant unidirectional --batch 65536 --k 4 --sweep in_f=3584
pack
cat $sum
