#!/usr/bin/env bash
# call B: the gate on the GPU first; validate and sanitize what changed; the trace of the
# final stream kernel; its A/B gated; the M <= 16 rows beside the peers in four processes.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null || exit 9
export PYTHONPATH=/tmp/site:$PWD HARNESS_GIT_SHA=${SHA}
mkdir -p $OUT/logs
sum=$OUT/summary.txt; : > $sum
st() { local name=$1; shift; local t0=$SECONDS; "$@" > $OUT/logs/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; tar czf $OUT/statistics.tgz statistics/validation_ledger.csv statistics/h200/sanitizer-int_gemm.csv statistics/h200/tuning/stream-epilogue-gated statistics/h200/small-m-gated 2>/dev/null; tar czf $OUT/logs.tgz -C $OUT logs; return $rc; }
st gate_tests python3 -m pytest -q -m gpu -p no:cacheprovider tests/backends/pycuda/test_sampling.py || { cat $sum; exit 3; }
st validate python3 -m harness validate --record int_gemm int_gemm_packed spike_linear spike_quant_gemm
st ledger python3 -m harness ledger --check
st san_stream python3 -m harness sanitize int_gemm --variant int8 --out statistics/h200/sanitizer-int_gemm.csv --append
st trace python3 .dev/gpu/trace.py
st ab_epi python3 -m harness bench int_gemm --variant int8 --define IGT_EPI_EARLY=0,1 --peers linear_bf16 --sweep batch=1,16 --sweep out_f=18944,3584 --sweep in_f=3584 --repeats 3 --budget 0.2 --out statistics/h200/tuning/stream-epilogue-gated
for i in 1 2 3 4; do
  st proc$i python3 -m harness bench int_gemm --variant int8 --peers linear_bf16,linear_fp32 --sweep batch=1,16 --sweep out_f=18944,3584 --sweep in_f=3584,18944 --budget 0.2 --out /tmp/procs-b/$i
done
mkdir -p statistics/h200/small-m-gated
st merge python3 -m harness merge /tmp/procs-b/1/int_gemm.csv /tmp/procs-b/2/int_gemm.csv /tmp/procs-b/3/int_gemm.csv /tmp/procs-b/4/int_gemm.csv --out statistics/h200/small-m-gated/int_gemm.csv
st merge_show python3 -c "import csv; [print(r['backend'], r['batch'], r['out_f'], r['in_f'], r['median_us'], r['noise_pct'], r['speedup_vs_best_peer'], r['reason'][-150:]) for r in csv.DictReader(open('statistics/h200/small-m-gated/int_gemm.csv'))]"
st best_epi python3 -m harness best statistics/h200/tuning/stream-epilogue-gated/int_gemm.csv
tar czf $OUT/procs.tgz -C /tmp procs-b
cat $sum
