#!/usr/bin/env bash
# wgroups.cuh's PREFETCH default 0 (the weight kernels' own copies taken out) and geometry's
# renamed grids: every unit whose source or launch code moved validated, the sanitizer on
# the three weight kernels, their goals' rows at the new hashes; then the pytest-benchmark
# benchmarks compared with this GPU's last baseline and saved, and the GPU test suite whole.
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) D=statistics/h200 ;; *H100*) D=statistics/h100-80gb-hbm3 ;; *) D=statistics/other ;; esac
st 10 git-sha python3 -c "from harness.results import provenance; print(provenance.git_sha())"
st 30 calibrate $H calibrate
export OPENBLAS_NUM_THREADS=3 OMP_NUM_THREADS=3 MKL_NUM_THREADS=3
t0=$SECONDS
V() { local n=$1; shift; ( timeout 200 $H validate --record "$@" > $base/logs/val-$n.log 2>&1; echo "val-$n rc=$? $((SECONDS-t0))s :: validate --record $*" >> $sum ) & }
V stages compute_scales weight_quantize weight_quant_fused find_min_max transform_absmax
V planes spike_encode spike_decode spike_decode_packed
V pipes spike_quant_gemm activation_path
V igemm int_gemm int_gemm_packed
V linear spike_linear
( timeout 150 $H sanitize weight_quant_fused weight_quantize compute_scales --append > $base/logs/san.log 2>&1; echo "san rc=$? $((SECONDS-t0))s" >> $sum ) &
wait
unset OPENBLAS_NUM_THREADS OMP_NUM_THREADS MKL_NUM_THREADS
pack
st 15 ledger $H ledger --check
st 15 drift $H ledger --drift
G=$D/layer-sweep
st 50 wqf-goals $H bench weight_quant_fused --peers all --budget 0.2 --append --out $G --sweep out_f=3584,18944 --sweep in_f=3584
st 40 wqf-goals-wide $H bench weight_quant_fused --peers all --budget 0.2 --append --out $G --sweep out_f=3584 --sweep in_f=18944
st 40 wq-goals $H bench weight_quantize --peers all --budget 0.2 --append --out $G --sweep out_f=18944 --sweep in_f=3584
st 40 cs-goals $H bench compute_scales --peers all --budget 0.2 --append --out $G --sweep out_f=18944 --sweep in_f=3584
case "$name" in
  *H200*) CMP=() ;;
  *) CMP=(--benchmark-compare --benchmark-compare-fail=median:10%) ;;
esac
st 100 bench-save python3 -m pytest -m gpu -p no:cacheprovider tests/bench --benchmark-enable \
  --benchmark-storage=file://$D/pytest-benchmark "${CMP[@]}" \
  --benchmark-json=$base/logs/pytest-benchmark.json --benchmark-save=$SHA
st 330 pytest-gpu python3 -m pytest -m gpu -rA -p no:cacheprovider tests --ignore=tests/bench
pack
cat $sum
