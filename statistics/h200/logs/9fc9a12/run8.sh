#!/usr/bin/env bash
# Validate (and record) activation_fused with SMALL_B 1, with the pipelines that hash it; the
# GPU bit-identity test; compute-sanitizer (the default SASS is unchanged: no new timing).
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null || exit 9
export PYTHONPATH=/tmp/site:$PWD HARNESS_GIT_SHA=${SHA}
mkdir -p $OUT/logs
sum=$OUT/summary.txt; : > $sum
G=statistics/h200/small-gated
pack() { tar czf $OUT/statistics.tgz statistics/validation_ledger.csv statistics/h200/sanitizer-fused.csv $G 2>/dev/null; tar czf $OUT/logs.tgz -C $OUT logs; }
st() { local lim=$1 name=$2; shift 2; if [ $((SECONDS + 15)) -gt 570 ]; then echo "$name skipped (time)" >> $sum; return 1; fi; local t0=$SECONDS; timeout $lim "$@" > $OUT/logs/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; pack; return $rc; }
st 150 val python3 -m harness validate --record activation_fused activation_path spike_linear
ok=$?
st 20 ledger python3 -m harness ledger --check
st 120 bits python3 -m pytest -q -m gpu tests/backends/pycuda/test_runner.py -k "bit_identical or graph_mode" -p no:cacheprovider
if [ $ok -eq 0 ]; then
  st 120 san python3 -m harness sanitize activation_fused --out statistics/h200/sanitizer-fused.csv --append
  st 30 san_edge python3 -m harness sanitize activation_fused --variant unidirectional --family edge --tool memcheck --tool initcheck --out statistics/h200/sanitizer-fused.csv --append
  st 30 san_edge_p python3 -m harness sanitize activation_fused --variant packed_bidirectional --family edge --tool memcheck --tool initcheck --out statistics/h200/sanitizer-fused.csv --append


fi
cat $sum
