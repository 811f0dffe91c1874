#!/usr/bin/env bash
# Pass 1 on STATS_RING_BLOCKS where the ring would hold one row a block, and int_gemm's
# header and 64-bit row offsets: every changed kernel validated (activation_fused's seven
# variants, int_gemm, and the pipelines over them); then the define's A/B in one process
# (8192 is the earlier launch), the layer's operand path at the new launch, int_gemm's split
# path beside its earlier rows, and compute-sanitizer on both.
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP=statistics
ok=1
st 330 validate $H validate --record activation_fused int_gemm activation_path spike_linear spike_quant_gemm || ok=0
if [ $ok = 1 ]; then
st 90 ring-blocks $H bench activation_fused --variant unidirectional --variant operand_unidirectional --define STATS_RING_BLOCKS=8192,256 --repeats 3 --budget 0.1 --sweep batch=2048,4096,8192,12288,16384 --sweep in_f=3584 --out $G/tuning/ring-blocks
st 80 layer-operand-ring $H bench spike_linear --variant operand --peers linear_bf16 --budget 0.2 --out $G/layer-operand-ring --sweep batch=1024,2048,4096,8192 --sweep out_f=18944,3584
st 40 int-gemm-split $H bench int_gemm --variant int8 --budget 0.2 --sweep batch=64,128,256 --sweep out_f=3584 --sweep in_f=3584,18944 --out $G/int-gemm-offsets
st 40 san-af-operand $H sanitize activation_fused --variant operand_unidirectional --out $G/sanitizer-fused.csv $( [ -f $G/sanitizer-fused.csv ] && echo --append )
st 40 san-af-int8 $H sanitize activation_fused --variant unidirectional --out $G/sanitizer-fused.csv $( [ -f $G/sanitizer-fused.csv ] && echo --append )
st 40 san-int-gemm $H sanitize int_gemm --variant int8 --out $G/sanitizer-int_gemm.csv --append
fi
pack
cat $sum
