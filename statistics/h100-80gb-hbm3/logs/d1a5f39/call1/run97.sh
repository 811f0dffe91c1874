#!/usr/bin/env bash
# weight_quant_fused and weight_quantize at their new defaults (LANES 16, BPS 16, VEC4_BPS
# 12): validated with spike_quant_gemm, compute-sanitizer on both, their goals' rows beside
# their peers, ncu at 3584 x 3584 beside the former build; compute_scales' LANES A/B under its
# rule; the pytest-benchmark benchmarks compared with 0007 and saved.
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) D=statistics/h200 ;; *H100*) D=statistics/h100-80gb-hbm3 ;; *) D=statistics/other ;; esac
st 10 git-sha python3 -c "from harness.results import provenance; print(provenance.git_sha())"
st 30 calibrate $H calibrate
t0=$SECONDS
V() { local n=$1; shift; ( timeout 150 $H validate --record "$@" > $base/logs/val-$n.log 2>&1; echo "val-$n rc=$? $((SECONDS-t0))s :: validate --record $*" >> $sum ) & }
V wqf weight_quant_fused
V wq weight_quantize
V sqg spike_quant_gemm
( timeout 120 $H sanitize weight_quant_fused weight_quantize --append > $base/logs/san.log 2>&1; echo "san rc=$? $((SECONDS-t0))s" >> $sum ) &
wait
pack
st 15 ledger $H ledger --check
G=$D/layer-sweep
st 50 wqf-goals $H bench weight_quant_fused --peers all --budget 0.2 --append --out $G --sweep out_f=3584,18944 --sweep in_f=3584
st 40 wqf-goals-wide $H bench weight_quant_fused --peers all --budget 0.2 --append --out $G --sweep out_f=3584 --sweep in_f=18944
st 40 wq-goals $H bench weight_quantize --peers all --budget 0.2 --append --out $G --sweep out_f=18944 --sweep in_f=3584
N=statistics/ncu/weight-lanes
S="--sweep out_f=3584 --sweep in_f=3584"
st 30 ncu-wqf $H profile weight_quant_fused --stalls --top 10 $S --out $N
st 30 ncu-wqf-8 $H profile weight_quant_fused --stalls --top 10 --define LANES=8 --define BPS=12 $S --out $N
st 30 ncu-wq $H profile weight_quantize --stalls --top 10 $S --out $N
st 30 ncu-wq-8 $H profile weight_quantize --stalls --top 10 --define LANES=8 --define BPS=12 $S --out $N
T=$D/tuning/weight-lanes
st 50 ab-cs $H bench compute_scales --define LANES=8,16 --define BPS=8,16 --restrict "(LANES == 8 and BPS == 8) or (LANES == 16 and BPS == 16)" --repeats 3 --budget 0.1 --out $T --sweep out_f=18944,3584 --sweep in_f=3584 --append
st 5 decide python3 .dev/gpu/decide_cs_lanes.py $T/compute_scales.csv
case "$name" in
  *H200*) CMP=() ;;
  *) CMP=(--benchmark-compare --benchmark-compare-fail=median:10%) ;;
esac
st 100 bench-save python3 -m pytest -m gpu -p no:cacheprovider tests/bench --benchmark-enable \
  --benchmark-storage=file://$D/pytest-benchmark "${CMP[@]}" \
  --benchmark-json=$base/logs/pytest-benchmark.json --benchmark-save=$SHA
pack
cat $sum
