#!/usr/bin/env bash
# The retiring grid under ncu: weight_quant_fused at 18944 x 3584 at its default (WARP_STEPS 1)
# beside the persistent wave (WARP_STEPS 0, PREFETCH 1, BPS 8), with the warp-state sampling.
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
st 10 git-sha python3 -c "from harness.results import provenance; print(provenance.git_sha())"
P=statistics/ncu/wqf-warp-steps
st 40 ncu-new $H profile weight_quant_fused --stalls --top 10 --sweep out_f=18944 --sweep in_f=3584 --out $P
st 40 ncu-wave $H profile weight_quant_fused --stalls --top 10 --define WARP_STEPS=0 --define PREFETCH=1 --define BPS=8 --sweep out_f=18944 --sweep in_f=3584 --out $P
pack
cat $sum
