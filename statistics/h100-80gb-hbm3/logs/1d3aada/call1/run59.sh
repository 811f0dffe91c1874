#!/usr/bin/env bash
# A short H200 call at the current source (the device time left holds no whole layer phase):
# int_gemm beside int_mm and F.linear bf16 at the goals' M on the two large shapes, and at
# 1024 on 3584 x 3584; spike_linear's operand path beside F.linear at M 1024 and 8192 on the
# three shapes; activation_fused's int8 rows at 1024 and 65536 and the packed layout at 65536
# (act-floor/), batch 1 and 1024 as graphs (act-grid-barrier/). Every step's time guarded.
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) ;; *) echo "not an H200: nothing run" >> $sum; pack; cat $sum; exit 0 ;; esac
G=statistics/h200/layer-sweep
P="--peers linear_bf16,int_mm,linear_fp32 --budget 0.15"
st 15 calibrate $H calibrate
st 60 int-gemm $H bench int_gemm --variant int8 $P --overwrite --out $G --sweep batch=1,16,1024,8192 --sweep out_f=18944 --sweep in_f=3584
st 50 int-gemm-wide $H bench int_gemm --variant int8 $P --append --out $G --sweep batch=1,16,1024,8192 --sweep out_f=3584 --sweep in_f=18944
st 20 int-gemm-square $H bench int_gemm --variant int8 $P --append --out $G --sweep batch=1024 --sweep out_f=3584 --sweep in_f=3584
SL="--variant operand --peers linear_fp32,linear_bf16 --budget 0.15 --sweep batch=1024,8192"
st 50 spike-linear $H bench spike_linear $SL --overwrite --out $G --sweep out_f=18944,3584
st 40 spike-linear-wide $H bench spike_linear $SL --append --out $G --sweep out_f=3584 --sweep in_f=18944
A="--k 4 --budget 0.2 --sweep in_f=3584"
st 30 act-stream $H bench activation_fused --variant unidirectional $A --sweep batch=1024,16384,65536 --out $G/act-floor
st 20 act-packed $H bench activation_fused --variant packed_unidirectional $A --sweep batch=65536 --out $G/act-floor --append
st 20 act-graph $H bench activation_fused --variant unidirectional --graph $A --sweep batch=1,1024 --out $G/act-grid-barrier
pack; cat $sum
