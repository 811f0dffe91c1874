#!/usr/bin/env bash
# The operand path across M: pass 1's block count at M 1024-8192 (a define's A/B, no source
# change); spike_linear's default and operand beside bf16 F.linear at M 16-8192 on the three
# shapes (a fresh folder); act_stats under ncu at M 1024 and 8192 at two block counts. On an
# H200, the layer's int_gemm rows at the current source after that.
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP=statistics
O=$G/layer-operand-m
st 10 calibrate $H calibrate
st 100 af-blocks $H bench activation_fused --variant operand_unidirectional --define STATS_BLOCKS=8192,2048,1024,512,256 --repeats 3 --budget 0.1 --sweep batch=1024,4096,8192 --sweep in_f=3584,18944 --out $G/tuning/stats-blocks-operand
st 150 layer-operand $H bench spike_linear --variant default --variant operand --peers linear_bf16 --budget 0.2 --out $O --sweep batch=16,1024,2048,4096,8192 --sweep out_f=18944,3584 &&
st 110 layer-operand-wide $H bench spike_linear --variant default --variant operand --peers linear_bf16 --budget 0.2 --append --out $O --sweep batch=16,1024,2048,4096,8192 --sweep out_f=3584 --sweep in_f=18944
for b in 1024 8192; do for sb in 8192 512; do
st 30 ncu-act-$b-$sb $H profile activation_fused --variant operand_unidirectional --batch $b --define STATS_BLOCKS=$sb --sweep in_f=3584 --out statistics/ncu/act-stats
done; done
case "$name" in *H200*)
st 120 layer-int-gemm $H bench int_gemm --variant int8 --peers linear_bf16,int_mm --budget 0.2 --out $G/layer-current --sweep batch=1,16,1024,8192 --sweep out_f=18944,3584 &&
st 60 layer-int-gemm-wide $H bench int_gemm --variant int8 --peers linear_bf16,int_mm --budget 0.2 --append --out $G/layer-current --sweep batch=1,16,1024,8192 --sweep out_f=3584 --sweep in_f=18944 ;;
esac
pack
cat $sum
