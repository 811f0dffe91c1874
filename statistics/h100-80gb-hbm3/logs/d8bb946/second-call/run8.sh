#!/usr/bin/env bash
# activation_fused at batch 65536, int8 and packed layouts, at the ring's source, beside
# nothing (--no-verify after the validation of 347c33f): the packed layout's figure with the
# ring, on whichever GPU runs it.
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP="$G/ring"
st 50 fused-65536 $H bench activation_fused --variant unidirectional --k 4 --budget 0.5 --sweep batch=65536 --no-verify --out $G/ring
st 50 packed-65536 $H bench activation_fused --variant packed_unidirectional --k 4 --budget 0.5 --sweep batch=65536 --no-verify --append --out $G/ring
pack
cat $sum
