#!/usr/bin/env bash
# spike_encode and spike_decode with WARP_STEPS (kernels/NOTES.md): (1) the A/B over
# WARP_STEPS 0,1,2 at batch 16384 and 1024 of 3584, three rotated repeats, and its rule; (2)
# the committed source (WARP_STEPS 0) validated in every unit units.cuh's stages reach,
# compute-sanitizer on the two.
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) D=statistics/h200 ;; *H100*) D=statistics/h100-80gb-hbm3 ;; *) D=statistics/other ;; esac
st 10 git-sha python3 -c "from harness.results import provenance; print(provenance.git_sha())"
st 30 calibrate $H calibrate
T=$D/tuning/plane-warp-steps
st 50 ab-decode $H bench spike_decode --define WARP_STEPS=0,1,2 --repeats 3 --budget 0.1 --sweep batch=16384,1024 --sweep in_f=3584 --out $T
st 50 ab-encode $H bench spike_encode --variant unidirectional --define WARP_STEPS=0,1,2 --repeats 3 --budget 0.1 --sweep batch=16384,1024 --sweep in_f=3584 --out $T
st 10 decide python3 .dev/gpu/decide_chunks.py $T/spike_decode.csv default $T/spike_encode.csv unidirectional
export OPENBLAS_NUM_THREADS=4 OMP_NUM_THREADS=4 MKL_NUM_THREADS=4
t0=$SECONDS
V() { local n=$1; shift; ( timeout 200 $H validate --record "$@" > $base/logs/val-$n.log 2>&1; echo "val-$n rc=$? $((SECONDS-t0))s :: validate --record $*" >> $sum ) & }
V dec spike_decode
V enc spike_encode
V path activation_path
V sqg spike_quant_gemm
( timeout 120 $H sanitize spike_encode spike_decode --append > $base/logs/san.log 2>&1; echo "san rc=$? $((SECONDS-t0))s" >> $sum ) &
wait
unset OPENBLAS_NUM_THREADS OMP_NUM_THREADS MKL_NUM_THREADS
pack
st 15 ledger $H ledger --check
pack
cat $sum
