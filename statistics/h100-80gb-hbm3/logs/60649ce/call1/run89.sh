#!/usr/bin/env bash
# weight_quant_fused at its new default (WARP_STEPS 1, PREFETCH 0, BPS 12) and the other two
# weight stages reading WARP_STEPS: (1) validated (with spike_quant_gemm), compute-sanitizer on
# the three; (2) weight_quant_fused's goal rows beside its peers on the three shapes; (3) the
# A/B of WARP_STEPS for compute_scales and weight_quantize, and its rule.
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) D=statistics/h200 ;; *H100*) D=statistics/h100-80gb-hbm3 ;; *) D=statistics/other ;; esac
st 10 git-sha python3 -c "from harness.results import provenance; print(provenance.git_sha())"
st 30 calibrate $H calibrate
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
G=$D/layer-sweep
st 60 wqf-goals $H bench weight_quant_fused --peers all --budget 0.2 --append --out $G --sweep out_f=3584,18944 --sweep in_f=3584
st 40 wqf-goals-wide $H bench weight_quant_fused --peers all --budget 0.2 --append --out $G --sweep out_f=3584 --sweep in_f=18944
T=$D/tuning/weight-warp-steps
st 120 ab-weights $H bench compute_scales weight_quantize --define WARP_STEPS=0,1 --define PREFETCH=0,1 --define BPS=8,12 --restrict "PREFETCH == 0 or BPS == 8" --repeats 3 --budget 0.1 --out $T --sweep out_f=18944,3584 --sweep in_f=3584
st 10 decide python3 .dev/gpu/decide_steps2.py $T/compute_scales.csv $T/weight_quantize.csv
pack
cat $sum
