#!/usr/bin/env bash
# One call, the H200's rows at the current source into a folder of their own (layer-sweep/,
# as on the H100), most valuable first: (1) the spike linear layer (int_gemm beside
# linear_fp32, linear_bf16, int_mm and torch.compile; the FP32 gemm and the compare;
# spike_linear's operand and default paths beside F.linear) on the three shapes; (2)
# activation_fused's int8-planes rows the byte-floor goals judge; (3) ncu of the main kernels;
# (4) the staged memory-bound stages and weight_quant_fused beside their peers, if time is left.
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200/layer-sweep ;; *) echo "not an H200: the H100 rows of this source are committed; nothing run" >> $sum; cat $sum; exit 0 ;; esac
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
st 40 act-graph $H bench activation_fused --variant unidirectional --graph $A --sweep batch=1,9,64,256,1024,2048 --out $G/act-grid-barrier --overwrite
st 40 act-stream $H bench activation_fused --variant unidirectional $A --sweep batch=1024,16384,65536 --out $G/act-floor --overwrite
st 25 act-packed $H bench activation_fused --variant packed_unidirectional $A --sweep batch=65536 --out $G/act-floor --append
st 40 ncu-gemm-8192 $H profile int_gemm --variant int8 --batch 8192 --sweep out_f=18944 --sweep in_f=3584
st 40 ncu-gemm-8192-wide $H profile int_gemm --variant int8 --batch 8192 --sweep out_f=3584 --sweep in_f=18944
st 30 ncu-gemm-16 $H profile int_gemm --variant int8 --batch 16 --sweep out_f=18944 --sweep in_f=3584
st 30 ncu-act-1024 $H profile activation_fused --variant unidirectional --batch 1024 --k 4 --sweep in_f=3584
st 30 ncu-act-65536 $H profile activation_fused --variant unidirectional --batch 65536 --k 4 --sweep in_f=3584
S="--peers all --budget 0.2 --overwrite --out $G"
st 60 staged-rows $H bench find_min_max transform_absmax spike_decode dynamic_spikes_reverse $S --sweep batch=16384 --sweep in_f=3584
st 45 encode $H bench spike_encode --variant unidirectional $S --sweep batch=16384 --sweep in_f=3584
st 50 weights $H bench compute_scales weight_quantize $S --sweep out_f=18944 --sweep in_f=3584
st 50 wqf $H bench weight_quant_fused $S --sweep out_f=18944,3584 --sweep in_f=3584
st 45 wqf-wide $H bench weight_quant_fused --peers all --budget 0.2 --append --out $G --sweep out_f=3584 --sweep in_f=18944
st 90 act-peers $H bench activation_fused --variant unidirectional --peers all --k 4 --budget 0.2 --sweep in_f=3584 --sweep batch=1024,65536 --out $G/act-peers --overwrite
pack
cat $sum
