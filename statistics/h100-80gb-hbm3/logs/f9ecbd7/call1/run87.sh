#!/usr/bin/env bash
# Why a third step in flight did not help weight_quant_fused: ncu with the warp-state
# sampling on the default build and the PREFETCH 2, BPS 6 build, at 18944 x 3584 and 3584 x
# 3584.
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) D=statistics/h200 ;; *H100*) D=statistics/h100-80gb-hbm3 ;; *) D=statistics/other ;; esac
st 10 git-sha python3 -c "from harness.results import provenance; print(provenance.git_sha())"
P=statistics/ncu/wqf-prefetch
st 60 ncu-main $H profile weight_quant_fused --stalls --top 25 --sweep out_f=18944 --sweep in_f=3584 --out $P
st 60 ncu-pf2 $H profile weight_quant_fused --stalls --top 25 --define PREFETCH=2 --define BPS=6 --sweep out_f=18944 --sweep in_f=3584 --out $P
st 60 ncu-main-3584 $H profile weight_quant_fused --stalls --top 25 --sweep out_f=3584 --sweep in_f=3584 --out $P
pack
cat $sum
