#!/usr/bin/env bash
# call C: validate the persistent exact path; its cost again; fixed costs of the cold method.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null || exit 9
export PYTHONPATH=/tmp/site:$PWD HARNESS_GIT_SHA=${SHA}
mkdir -p $OUT/logs
sum=$OUT/summary.txt; : > $sum
st() { local name=$1; shift; local t0=$SECONDS; "$@" > $OUT/logs/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; tar czf $OUT/statistics.tgz statistics/validation_ledger.csv statistics/h200/exact-path statistics/h200/sanitizer-fused.csv; tar czf $OUT/logs.tgz -C $OUT logs; }
st validate python3 -m harness validate --record activation_fused int_gemm activation_path spike_linear spike_quant_gemm
st ledger python3 -m harness ledger --check
st san_fused python3 -m harness sanitize activation_fused --variant unidirectional --family edge --out statistics/h200/sanitizer-fused.csv --append
st san_pipe timeout 300 compute-sanitizer --tool memcheck --error-exitcode 3 python3 -m harness validate spike_linear --variant any --seeds 1 --family normal --family edge --family llm
st probe python3 .dev/gpu/probe.py
st layer python3 -m harness bench spike_linear --variant default --variant any --sweep batch=1,16,1024,8192 --sweep out_f=18944,3584 --repeats 3 --budget 0.2 --out statistics/h200/exact-path --append
st llm python3 -m harness bench spike_linear --variant any --family llm --k 64 --sweep batch=1,1024,8192 --sweep out_f=18944 --budget 0.2 --out statistics/h200/exact-path --append
cat $sum
