#!/usr/bin/env bash
# act_stats at 1024 rows (twice its floor, 37 % of DRAM peak) under ncu's full set: where its
# time goes when bandwidth does not bind (stall reasons, issue activity); 8192 rows beside it.
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
KEEP=statistics/ncu
for b in 1024 8192; do
st 40 ncu-full-$b $H profile activation_fused --variant operand_unidirectional --batch $b --set full --sweep in_f=3584 --out statistics/ncu/act-stats-full
done
pack
cat $sum
