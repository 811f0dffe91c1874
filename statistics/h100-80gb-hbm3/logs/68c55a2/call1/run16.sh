#!/usr/bin/env bash
# int_gemm at the source whose split epilogue and body share store_rows (PTX of every entry
# but int_gemm_wgmma_single unchanged, that one only renumbered): validated (int_gemm and
# the pipelines that run it); if it validates, the layer (gpu-check's layer phase step by
# step, most needed first: spike_linear beside F.linear fp32 and bf16 in one process, then
# int_gemm beside its peers on the three shapes, the FP32 gemm compared), then the split
# A/B (IG_SPLITS_MAX=1,2,4) at M 64-256 where the single kernel splits.
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP=statistics
P=linear_fp32,linear_bf16,int_mm
B=0.2
if st 90 val-int_gemm $H validate --record int_gemm; then
st 70 val-linear $H validate --record spike_linear
st 35 val-sqg $H validate --record spike_quant_gemm
st 10 calibrate $H calibrate
st 150 layer-spike-linear $H bench spike_linear --peers linear_fp32,linear_bf16 --budget $B --overwrite --sweep batch=1,4,16,64,256,1024,4096,8192 --sweep out_f=18944,3584 &&
st 120 layer-spike-linear-wide $H bench spike_linear --peers linear_fp32,linear_bf16 --budget $B --append --sweep batch=1,4,16,64,256,1024,4096,8192 --sweep out_f=3584 --sweep in_f=18944
st 45 layer-int-gemm $H bench int_gemm --variant int8 --peers $P,torch_compile --budget $B --overwrite --sweep batch=1,1024,8192 --sweep out_f=18944 --sweep in_f=3584 &&
st 30 layer-int-gemm-rest $H bench int_gemm --variant int8 --peers $P --budget $B --append --sweep batch=4,16,64,256,4096 --sweep out_f=18944 --sweep in_f=3584 &&
st 30 layer-int-gemm-square $H bench int_gemm --variant int8 --peers $P --budget $B --append --sweep batch=1,4,16,64,256,1024,4096,8192 --sweep out_f=3584 --sweep in_f=3584 &&
st 45 layer-int-gemm-wide $H bench int_gemm --variant int8 --peers $P --budget $B --append --sweep batch=1,4,16,64,256,1024,4096,8192 --sweep out_f=3584 --sweep in_f=18944
st 30 layer-gemm $H bench gemm --budget $B --overwrite --sweep batch=1,16,1024,8192 --sweep out_f=18944
st 10 layer-compare $H compare $G/gemm.csv $G/int_gemm.csv --ignore stage --ignore variant --ignore params
st 60 splits $H bench int_gemm --variant int8 --define IG_SPLITS_MAX=1,2,4 --repeats 3 --budget 0.1 --sweep batch=64,128,256 --sweep out_f=3584 --sweep in_f=3584,18944 --out $G/tuning/splits
else
st 45 san-int-gemm $H sanitize int_gemm --out $G/sanitizer-int_gemm.csv --append
fi
pack
cat $sum
