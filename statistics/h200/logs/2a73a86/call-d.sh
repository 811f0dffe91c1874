#!/usr/bin/env bash
# call D: validate the packed-A GEMM and everything whose hash moved; sanitize it; time it.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null || exit 9
export PYTHONPATH=/tmp/site:$PWD HARNESS_GIT_SHA=${SHA}
mkdir -p $OUT/logs
sum=$OUT/summary.txt; : > $sum
st() { local name=$1; shift; local t0=$SECONDS; "$@" > $OUT/logs/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; tar czf $OUT/statistics.tgz statistics/validation_ledger.csv statistics/h200/packed statistics/h200/sanitizer-int_gemm.csv 2>/dev/null; tar czf $OUT/logs.tgz -C $OUT logs; }
st validate python3 -m harness validate --record int_gemm int_gemm_packed spike_linear spike_quant_gemm
st ledger python3 -m harness ledger --check
st san_packed python3 -m harness sanitize int_gemm_packed --out statistics/h200/sanitizer-int_gemm.csv --append
st san_packed_llm python3 -m harness sanitize int_gemm_packed --variant wide --family llm --out statistics/h200/sanitizer-int_gemm.csv --append
st layer python3 -m harness bench spike_linear --variant default --variant packed --sweep batch=1,16,1024,8192 --sweep out_f=18944,3584 --repeats 3 --budget 0.2 --out statistics/h200/packed
st gemm_packed python3 -m harness bench int_gemm_packed --variant default --sweep batch=1,16,1024,8192 --sweep out_f=18944,3584 --budget 0.2 --out statistics/h200/packed
st gemm_q8 python3 -m harness bench int_gemm --variant int8 --sweep batch=1,16,1024,8192 --sweep out_f=18944,3584 --budget 0.2 --out statistics/h200/packed
cat $sum
