#!/usr/bin/env bash
# call A: validate --record every variant whose source changed; sanitizer on the new paths.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 9
export PYTHONPATH=/tmp/site:$PWD HARNESS_GIT_SHA=${SHA}
mkdir -p $OUT/logs
sum=$OUT/summary.txt; : > $sum
st() { local name=$1; shift; local t0=$SECONDS; "$@" > $OUT/logs/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; tar czf $OUT/statistics.tgz statistics; }
st validate python3 -m harness validate --record activation_fused int_gemm activation_path spike_linear spike_quant_gemm
st ledger python3 -m harness ledger --check
st san_fused python3 -m harness sanitize activation_fused --variant unidirectional --family edge --out statistics/h200/sanitizer-fused.csv --append
st san_pipe timeout 300 compute-sanitizer --tool memcheck --error-exitcode 3 python3 -m harness validate spike_linear --variant any --seeds 1 --family normal --family edge --family llm
cat $sum
