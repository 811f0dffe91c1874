#!/usr/bin/env bash
# The refill taken out (int_gemm_packed's source moved): int_gemm_packed and spike_linear
# validated under the watchdog, and sanitized. act_grid (activation_fused at 1024 rows, the int8 layout,
# 1.61x its floor against the 1.5x target) under ncu's per-instruction samples (`profile --stalls`), and timed as
# a stream launch and as a graph at 1024 and 2048 rows. The pytest-benchmark benchmarks compared with the newest baseline
# (not saved). (The GPU test suite whole did not fit the device time left.)
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP=statistics
watched() { local lim=$1 name=$2; shift 2; local t0=$SECONDS
  "$@" > $base/logs/$name.log 2>&1 & local p=$!
  while kill -0 $p 2>/dev/null && [ $((SECONDS - t0)) -lt $lim ]; do sleep 1; done
  if kill -0 $p 2>/dev/null; then kill -KILL $p; echo "$name HUNG after $((SECONDS-t0))s :: $*" >> $sum; pack; cat $sum; exit 3; fi
  wait $p; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; pack; return $rc; }
watched 100 validate $H validate --record int_gemm_packed spike_linear || { pack; cat $sum; exit 1; }
st 40 san-packed $H sanitize int_gemm_packed --variant default --out $G/sanitizer-int_gemm.csv --append
st 60 ncu-act-grid $H profile activation_fused --variant unidirectional --batch 1024 --sweep in_f=3584 --stalls --top 30 --out statistics/ncu/act-grid-stalls
st 60 act-grid-stream $H bench activation_fused --variant unidirectional --repeats 3 --budget 0.1 --sweep batch=1024,2048 --sweep in_f=3584 --out $G/act-grid-launch
st 60 act-grid-graph $H bench activation_fused --variant unidirectional --graph --repeats 3 --budget 0.1 --sweep batch=1024,2048 --sweep in_f=3584 --out $G/act-grid-launch --append
st 70 bench-compare python3 -m pytest -m gpu -p no:cacheprovider tests/bench --benchmark-enable \
  --benchmark-storage=file://$G/pytest-benchmark --benchmark-compare --benchmark-compare-fail=median:10% \
  --benchmark-json=$base/logs/pytest-benchmark.json
pack
cat $sum
