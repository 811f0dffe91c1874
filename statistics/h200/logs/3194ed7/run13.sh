#!/usr/bin/env bash
# act_grid's barrier in two round trips, as a twin (bench --against the folder holding the
# rewritten kernels/), beside the committed act_grid, graphs, three rotated repeats; the
# activation_path pipeline measured again at this source (act_grid takes its batch 64, 1024);
# compute-sanitizer with four rows a block; the bit-identity test with four rows a block.
set -u
export HARNESS_GIT_SHA=${SHA}
export PYTHONPATH=/tmp/site:$PWD
base=$OUT
mkdir -p $base/logs
sum=$base/summary.txt; : > $sum
pack() { tar czf $base/statistics.tgz statistics/h200/tuning/act-grid-barrier statistics/h200/activation_path.csv statistics/h200/sanitizer.csv 2>/dev/null; tar czf $base/logs.tgz -C $base logs; }
st() { local lim=$1 name=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $base/logs/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; pack; return $rc; }
H="python3 -m harness"
st 120 barrier $H bench activation_fused --variant unidirectional --against .dev/gpu/kgrid --repeats 3 --graph --k 4 --budget 0.3 --sweep batch=9,16,64,256,1024,2048 --out statistics/h200/tuning/act-grid-barrier
st 60 identity python3 -m pytest -m gpu -p no:cacheprovider -rA tests/backends/pycuda/test_runner.py -k "bit_identical"
st 15 barrier-best $H best statistics/h200/tuning/act-grid-barrier/activation_fused.csv
st 130 sanitize env OUT=$base/a STAGES=activation_fused bash scripts/gpu-check.sh sanitize
st 150 activation-path $H bench activation_path --k 4 --budget 0.5 --sweep batch=1,8,64,1024,16384,65536 --overwrite
cat $sum
