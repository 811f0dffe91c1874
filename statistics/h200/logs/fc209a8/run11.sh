#!/usr/bin/env bash
# act_grid (int8 layout only; the packed layout back on the two passes): compute-sanitizer
# on activation_fused (cut short in the call before); ncu of act_grid at batch 64 and 1024
# and of the two passes at 1024 (GRID_ROWS=0); activation_fused beside its peers again
# (the README's fused rows), as graphs at batch 1, 2, 4, 8, 64, and the packed layout.
set -u
export HARNESS_GIT_SHA=${SHA}
base=$OUT
OUT=$base/a STAGES="activation_fused" timeout 160 bash scripts/gpu-check.sh sanitize
export PYTHONPATH=/tmp/site:$PWD
mkdir -p $base/logs
sum=$base/summary.txt; : > $sum
pack() { tar czf $base/statistics.tgz statistics/h200/activation_fused.csv statistics/h200/tuning/act-grid 2>/dev/null; tar czf $base/logs.tgz -C $base logs; }
st() { local lim=$1 name=$2; shift 2; if [ $((SECONDS + lim)) -gt 585 ]; then echo "$name skipped (time)" >> $sum; return 1; fi; local t0=$SECONDS; timeout $lim "$@" > $base/logs/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; pack; return $rc; }
H="python3 -m harness"
N=statistics/h200/tuning/act-grid/ncu
st 40 ncu-grid-1024 $H profile activation_fused --variant unidirectional --batch 1024 --k 4 --out $N
st 40 ncu-two-1024 $H profile activation_fused --variant unidirectional --batch 1024 --k 4 --define GRID_ROWS=0 --out $N
st 40 ncu-grid-64 $H profile activation_fused --variant unidirectional --batch 64 --k 4 --out $N
st 220 fused $H bench activation_fused --variant unidirectional --peers all --k 4 --budget 0.5 --sweep batch=1,1024,16384,65536 --overwrite
st 45 fused-graph $H bench activation_fused --variant unidirectional --graph --peers all --k 4 --budget 0.5 --sweep batch=1,2,4,8,64 --append
st 60 packed $H bench activation_fused --variant packed_unidirectional --k 4 --budget 0.5 --sweep batch=1,1024,16384,65536 --append
cat $base/a/summary.txt $sum
