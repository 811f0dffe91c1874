#!/usr/bin/env bash
# compute_scales and weight_quantize at their new defaults (the retiring blocks' grid):
# validated (with spike_quant_gemm), compute-sanitizer on both; their goals' rows beside
# their peers; then the pytest-benchmark benchmarks compared with 0006 (6dbb494's) and saved.
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
V sqg spike_quant_gemm
( timeout 120 $H sanitize compute_scales weight_quantize --append > $base/logs/san.log 2>&1; echo "san rc=$? $((SECONDS-t0))s" >> $sum ) &
wait
unset OPENBLAS_NUM_THREADS OMP_NUM_THREADS MKL_NUM_THREADS
pack
st 15 ledger $H ledger --check
st 60 weight-goals $H bench compute_scales weight_quantize --peers all --budget 0.2 --append --out $D/layer-sweep --sweep out_f=18944 --sweep in_f=3584
case "$name" in
  *H200*) CMP=() ;;
  *) CMP=(--benchmark-compare --benchmark-compare-fail=median:10%) ;;
esac
st 90 bench-save python3 -m pytest -m gpu -p no:cacheprovider tests/bench --benchmark-enable \
  --benchmark-storage=file://$D/pytest-benchmark "${CMP[@]}" \
  --benchmark-json=$base/logs/pytest-benchmark.json --benchmark-save=$SHA
pack
cat $sum
