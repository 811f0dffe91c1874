#!/usr/bin/env bash
# act_grid: validated and sanitized at this source; the bit-identity GPU test; act_grid
# against the two passes in one process (GRID_ROWS=0,4, graphs, three rotated repeats);
# activation_fused beside its peers again (the README's fused rows), and the packed layout.
set -u
export HARNESS_GIT_SHA=${SHA}
base=$OUT
OUT=$base/a STAGES="activation_fused activation_path spike_linear" \
  timeout 230 bash scripts/gpu-check.sh validate sanitize
export PYTHONPATH=/tmp/site:$PWD
mkdir -p $base/logs
sum=$base/summary.txt; : > $sum
pack() { tar czf $base/statistics.tgz statistics/h200/activation_fused.csv statistics/h200/tuning/act-grid 2>/dev/null; tar czf $base/logs.tgz -C $base logs; }
st() { local lim=$1 name=$2; shift 2; if [ $((SECONDS + lim)) -gt 585 ]; then echo "$name skipped (time)" >> $sum; return 1; fi; local t0=$SECONDS; timeout $lim "$@" > $base/logs/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; pack; return $rc; }
H="python3 -m harness"
st 60 identity python3 -m pytest -m gpu -p no:cacheprovider -rA tests/backends/pycuda/test_runner.py -k "bit_identical or deterministic"
st 90 ab $H bench activation_fused --variant unidirectional --variant packed_unidirectional --define GRID_ROWS=0,4 --repeats 3 --graph --k 4 --budget 0.3 --sweep batch=9,16,64,256,1024,2048 --out statistics/h200/tuning/act-grid
st 20 ab-best $H best statistics/h200/tuning/act-grid/activation_fused.csv
st 150 fused $H bench activation_fused --variant unidirectional --peers all --k 4 --budget 0.5 --sweep batch=1,1024,16384,65536 --overwrite
st 45 fused-graph $H bench activation_fused --variant unidirectional --graph --peers all --k 4 --budget 0.5 --sweep batch=1,2,4,8,64 --append
st 40 packed $H bench activation_fused --variant packed_unidirectional --k 4 --budget 0.5 --sweep batch=1,1024,16384,65536 --append
cat $base/a/summary.txt $sum
