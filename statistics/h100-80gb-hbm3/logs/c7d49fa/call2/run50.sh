#!/usr/bin/env bash
# Same warm machine: the plane-loop build under profile --stalls at 1024 rows (why no gain).
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
KEEP=statistics/ncu/act-grid-stalls
st 60 ncu-plane-loop $H profile activation_fused --variant unidirectional --define GRID_PLANE_LOOP=1 --batch 1024 --sweep in_f=3584 --stalls --top 25 --out statistics/ncu/act-grid-stalls
pack
cat $sum
