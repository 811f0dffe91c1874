#!/usr/bin/env bash
# spike_linear's operand path (activation_fused's operand_unidirectional: pass 1 alone), with
# the little device time left: the new variant validated, and what includes it (spike_linear,
# activation_path: their hashes cover every variant of their steps); if they pass, the
# layer's two int8 paths (default, operand) beside F.linear fp32 and bf16 in one process at
# M 1024 and 8192 on the three shapes (a folder of their own); then, while time is left,
# the activation stage's two layouts and compute-sanitizer on the new variant.
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP=statistics
O=$G/layer-operand
ok=1
st 50 val-af-operand $H validate --record activation_fused --variant operand_unidirectional || ok=0
st 70 val-linear $H validate --record spike_linear || ok=0
st 40 val-path $H validate --record activation_path || ok=0
if [ $ok = 1 ]; then
st 45 layer-operand $H bench spike_linear --variant default --variant operand --peers linear_fp32,linear_bf16 --budget 0.2 --out $O --sweep batch=1024,8192 --sweep out_f=18944,3584 &&
st 35 layer-operand-wide $H bench spike_linear --variant default --variant operand --peers linear_fp32,linear_bf16 --budget 0.2 --append --out $O --sweep batch=1024,8192 --sweep out_f=3584 --sweep in_f=18944
st 40 act-layouts $H bench activation_fused --variant unidirectional --variant operand_unidirectional --budget 0.3 --out $O --sweep batch=1024,8192 --sweep in_f=3584,18944
st 60 san-af-operand $H sanitize activation_fused --variant operand_unidirectional --out $G/sanitizer-fused.csv $( [ -f $G/sanitizer-fused.csv ] && echo --append )
fi
pack
cat $sum
