#!/usr/bin/env bash
# Branch act-grid-plane-loop (not validated; the bench verifies each build at its points): the
# A/B of GRID_PLANE_LOOP in one process, three rotated repeats, unidirectional, in_f 3584.
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP=$G/tuning/act-grid-plane-loop
st 150 plane-loop-ab $H bench activation_fused --variant unidirectional --define GRID_PLANE_LOOP=1,0 --repeats 3 --budget 0.1 --sweep batch=64,1024,2048 --sweep in_f=3584 --out $G/tuning/act-grid-plane-loop
pack
tail -12 $base/logs/plane-loop-ab.log
cat $sum
