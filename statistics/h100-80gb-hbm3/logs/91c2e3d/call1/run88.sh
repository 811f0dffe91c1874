#!/usr/bin/env bash
# weight_quant_fused's grid past one wave (kernels/NOTES.md): (1) the A/B over WARP_STEPS
# 0,1 x PREFETCH 0,1 x BPS 8,12 (restricted to PREFETCH 0 or BPS 8) on the three shapes,
# three rotated repeats, and its rule; (2) the committed source (WARP_STEPS 0) validated,
# compute-sanitizer on it.
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) D=statistics/h200 ;; *H100*) D=statistics/h100-80gb-hbm3 ;; *) D=statistics/other ;; esac
st 10 git-sha python3 -c "from harness.results import provenance; print(provenance.git_sha())"
st 30 calibrate $H calibrate
T=$D/tuning/wqf-warp-steps
st 90 ab-wqf $H bench weight_quant_fused --define WARP_STEPS=0,1 --define PREFETCH=0,1 --define BPS=8,12 --restrict "PREFETCH == 0 or BPS == 8" --repeats 3 --budget 0.1 --out $T --sweep out_f=3584,18944 --sweep in_f=3584
st 60 ab-wqf-wide $H bench weight_quant_fused --define WARP_STEPS=0,1 --define PREFETCH=0,1 --define BPS=8,12 --restrict "PREFETCH == 0 or BPS == 8" --repeats 3 --budget 0.1 --out $T --append --sweep out_f=3584 --sweep in_f=18944
st 10 decide python3 .dev/gpu/decide_steps.py $T/weight_quant_fused.csv
st 60 val-wqf $H validate --record weight_quant_fused
st 60 san-wqf $H sanitize weight_quant_fused --append
st 15 ledger $H ledger --check
pack
cat $sum
