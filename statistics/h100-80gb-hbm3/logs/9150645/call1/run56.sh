#!/usr/bin/env bash
# Branch act-grid-barrier-poll, the A/B alone (the device time left does not hold the
# validation): act_grid's barrier by polling (this checkout's kernels) against main's (bench
# --against .dev/gpu/kmain, main's kernels/ tree), three rotated repeats, in_f 3584, each
# build checked against the reference at its points: the int8 layout at 64/1024/2048 rows as
# stream launches and at 16/256/1024 as graphs, the operand and packed layouts at 1024; the
# rule set before the run (.dev/gpu/decide.py); where it does not adopt, the polling build's
# stall samples at 1024 rows.
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP=statistics
T=$G/tuning/act-grid-barrier-poll
AB="--against .dev/gpu/kmain --repeats 3 --budget 0.1 --sweep in_f=3584"
st 60 ab-int8 $H bench activation_fused --variant unidirectional $AB --sweep batch=64,1024,2048 --out $T
st 60 ab-graph $H bench activation_fused --variant unidirectional --graph $AB --sweep batch=16,256,1024 --out $T --append
st 40 ab-operand $H bench activation_fused --variant operand_unidirectional $AB --sweep batch=1024 --out $T --append
st 40 ab-packed $H bench activation_fused --variant packed_unidirectional $AB --sweep batch=1024 --out $T --append
python3 .dev/gpu/decide.py $T/activation_fused.csv > $base/logs/decide.log 2>&1; rc=$?
cat $base/logs/decide.log >> $sum
# Not adopted: why, by the warps' stall samples of the polling build at 1024 rows.
if [ $rc -ne 0 ]; then
  st 60 ncu-poll $H profile activation_fused --variant unidirectional --batch 1024 --sweep in_f=3584 --stalls --top 25 --out statistics/ncu/act-grid-barrier-poll
fi
pack
for f in ab-int8 ab-graph ab-operand ab-packed; do tail -12 $base/logs/$f.log; done
cat $sum
