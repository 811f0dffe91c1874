#!/usr/bin/env bash
# weight_quant_fused with a third step in flight (kernels/NOTES.md): (1) the A/B over
# PREFETCH 1,2 x BPS 8,6 on the three shapes, three rotated repeats, and its rule; (2) the
# committed source (the default PREFETCH 1) validated in every unit wgroups.cuh reaches
# (compute_scales, weight_quantize, weight_quant_fused, spike_quant_gemm), compute-sanitizer
# on the three weight stages' default builds beside it (sanitize takes no --define).
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) D=statistics/h200 ;; *H100*) D=statistics/h100-80gb-hbm3 ;; *) D=statistics/other ;; esac
st 10 git-sha python3 -c "from harness.results import provenance; print(provenance.git_sha())"
st 30 calibrate $H calibrate
T=$D/tuning/wqf-prefetch
AB="--define PREFETCH=1,2 --define BPS=8,6 --repeats 3 --budget 0.1 --out $T"
st 60 ab-wqf $H bench weight_quant_fused $AB --sweep out_f=3584,18944 --sweep in_f=3584
st 40 ab-wqf-wide $H bench weight_quant_fused $AB --append --sweep out_f=3584 --sweep in_f=18944
st 10 decide python3 .dev/gpu/decide_prefetch.py $T/weight_quant_fused.csv
export OPENBLAS_NUM_THREADS=4 OMP_NUM_THREADS=4 MKL_NUM_THREADS=4
t0=$SECONDS
V() { local n=$1; shift; ( timeout 200 $H validate --record "$@" > $base/logs/val-$n.log 2>&1; echo "val-$n rc=$? $((SECONDS-t0))s :: validate --record $*" >> $sum ) & }
V cs compute_scales
V wq weight_quantize
V wqf weight_quant_fused
V sqg spike_quant_gemm
( timeout 120 $H sanitize weight_quant_fused compute_scales weight_quantize --append > $base/logs/san.log 2>&1; echo "san rc=$? $((SECONDS-t0))s" >> $sum ) &
wait
unset OPENBLAS_NUM_THREADS OMP_NUM_THREADS MKL_NUM_THREADS
pack
st 15 ledger $H ledger --check
pack
cat $sum
