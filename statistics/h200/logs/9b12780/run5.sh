#!/usr/bin/env bash
# Validate (and record) act_one with the pipelines that hash activation_fused; sanitize it;
# its batch-1 rows gated; the act_small threshold (SMALL_B 1 or 4) at batches 2-4; batches 1 and 2 beside the cae3f01 kernel (a copy of the tree
# with that kernel's source), processes alternating; ncu of act_one.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null || exit 9
export PYTHONPATH=/tmp/site:$PWD HARNESS_GIT_SHA=${SHA}
R=$PWD
mkdir -p $OUT/logs
sum=$OUT/summary.txt; : > $sum
T=statistics/h200/tuning/small-spread
A=statistics/h200/tuning/act-one
G=statistics/h200/small-gated
pack() { tar czf $OUT/statistics.tgz -C $R statistics/validation_ledger.csv statistics/h200/sanitizer-fused.csv statistics/ncu/activation_fused.csv $T $G $A 2>/dev/null; tar czf $OUT/logs.tgz -C $OUT logs; }
st() { local lim=$1 name=$2; shift 2; if [ $((SECONDS + 15)) -gt 570 ]; then echo "$name skipped (time)" >> $sum; return 1; fi; local t0=$SECONDS; timeout $lim "$@" > $OUT/logs/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; pack; return $rc; }
st 150 val python3 -m harness validate --record activation_fused activation_path spike_linear
ok=$?
st 20 ledger python3 -m harness ledger --check
st 120 bits python3 -m pytest -q -m gpu tests/backends/pycuda/test_runner.py -k "bit_identical or graph_mode" -p no:cacheprovider
if [ $ok -eq 0 ]; then
  st 80 san python3 -m harness sanitize activation_fused --out statistics/h200/sanitizer-fused.csv --append
  st 30 san_edge python3 -m harness sanitize activation_fused --variant unidirectional --family edge --tool memcheck --tool initcheck --out statistics/h200/sanitizer-fused.csv --append
  st 30 san_edge_p python3 -m harness sanitize activation_fused --variant packed_bidirectional --family edge --tool memcheck --tool initcheck --out statistics/h200/sanitizer-fused.csv --append
  st 40 act_b1 python3 -m harness bench activation_fused --sweep batch=1 --repeats 3 --budget 0.3 --out $G --append
  st 40 act_b1_graph python3 -m harness bench activation_fused --graph --sweep batch=1 --repeats 3 --budget 0.3 --out $G --append
  st 40 act_b1_packed python3 -m harness bench activation_fused --variant packed_unidirectional --sweep batch=1 --repeats 3 --budget 0.3 --out $G --append
  st 40 prof_one python3 -m harness profile activation_fused --batch 1 --set basic --out statistics/ncu
  st 40 prof_one_p python3 -m harness profile activation_fused --variant packed_unidirectional --batch 1 --set basic --out statistics/ncu
  st 60 small_b python3 -m harness bench activation_fused --graph --define SMALL_B=1,4 --sweep batch=2,3,4 --repeats 3 --budget 0.2 --out $A/small-b
  st 10 small_b_best python3 -m harness best $A/small-b/activation_fused.csv
  # The cae3f01 kernel beside this one, processes alternating.
  mkdir -p /tmp/oldtree && tar cf - --exclude=./.whl . | tar xf - -C /tmp/oldtree && cp .dev/gpu/old/activation_fused.cu /tmp/oldtree/kernels/ && cp .dev/gpu/old/activation_fused.py /tmp/oldtree/plugins/
  ab() { st 40 $1 bash -c "cd $2 && HARNESS_GIT_SHA=$3 PYTHONPATH=/tmp/site:$2 python3 -m harness bench activation_fused --graph --sweep batch=1,2 --repeats 3 --budget 0.2 --out $R/$A/$4 $5"; }
  ab ab_old1 /tmp/oldtree cae3f01 old ""
  ab ab_new1 $R $SHA new ""
  ab ab_old2 /tmp/oldtree cae3f01 old --append
  ab ab_new2 $R $SHA new --append
fi
cat $sum
