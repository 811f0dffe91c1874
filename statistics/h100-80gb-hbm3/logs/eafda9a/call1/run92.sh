#!/usr/bin/env bash
# spike_encode and spike_decode at their new default (WARP_STEPS 1): validated in every unit
# they reach, compute-sanitizer on both; their goals' rows beside their peers at 16384 rows.
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) D=statistics/h200 ;; *H100*) D=statistics/h100-80gb-hbm3 ;; *) D=statistics/other ;; esac
st 10 git-sha python3 -c "from harness.results import provenance; print(provenance.git_sha())"
st 30 calibrate $H calibrate
export OPENBLAS_NUM_THREADS=4 OMP_NUM_THREADS=4 MKL_NUM_THREADS=4
t0=$SECONDS
V() { local n=$1; shift; ( timeout 150 $H validate --record "$@" > $base/logs/val-$n.log 2>&1; echo "val-$n rc=$? $((SECONDS-t0))s :: validate --record $*" >> $sum ) & }
V dec spike_decode
V enc spike_encode
V path activation_path
V sqg spike_quant_gemm
( timeout 100 $H sanitize spike_encode spike_decode --append > $base/logs/san.log 2>&1; echo "san rc=$? $((SECONDS-t0))s" >> $sum ) &
wait
unset OPENBLAS_NUM_THREADS OMP_NUM_THREADS MKL_NUM_THREADS
pack
st 15 ledger $H ledger --check
G=$D/layer-sweep
st 40 decode-goals $H bench spike_decode --peers all --budget 0.2 --append --out $G --sweep batch=16384 --sweep in_f=3584
st 40 encode-goals $H bench spike_encode --variant unidirectional --peers all --budget 0.2 --append --out $G --sweep batch=16384 --sweep in_f=3584
pack
cat $sum
