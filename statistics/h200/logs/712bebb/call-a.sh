#!/usr/bin/env bash
# call A: where the stream kernel's fixed time goes (globaltimer trace), the early epilogue
# A/B, spike_encode's UNITS A/B with rotated repeats, one int_gemm point in four processes merged.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null || exit 9
export PYTHONPATH=/tmp/site:$PWD HARNESS_GIT_SHA=${SHA}
mkdir -p $OUT/logs
sum=$OUT/summary.txt; : > $sum
st() { local name=$1; shift; local t0=$SECONDS; "$@" > $OUT/logs/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; tar czf $OUT/statistics.tgz statistics/h200/tuning/stream-epilogue statistics/h200/tuning/spike-encode-units statistics/h200/processes-a 2>/dev/null; tar czf $OUT/logs.tgz -C $OUT logs; }
st trace python3 .dev/gpu/trace.py
st trace_early python3 .dev/gpu/trace.py IGT_EPI_EARLY=1
st ab_epi python3 -m harness bench int_gemm --variant int8 --define IGT_EPI_EARLY=0,1 --peers linear_bf16 --sweep batch=1,16 --sweep out_f=18944,3584 --sweep in_f=3584 --repeats 3 --budget 0.2 --out statistics/h200/tuning/stream-epilogue
st ab_epi_wide python3 -m harness bench int_gemm --variant int8 --define IGT_EPI_EARLY=0,1 --peers linear_bf16 --sweep batch=1,16 --sweep out_f=3584 --sweep in_f=18944 --repeats 3 --budget 0.2 --out statistics/h200/tuning/stream-epilogue --append
st ab_units python3 -m harness bench spike_encode --define UNITS=2,4 --peers torch_compile --sweep batch=1024,16384,65536 --repeats 3 --budget 0.3 --out statistics/h200/tuning/spike-encode-units
for i in 1 2 3 4; do
  st proc$i python3 -m harness bench int_gemm --variant int8 --peers linear_bf16 --sweep batch=1 --sweep out_f=18944,3584 --sweep in_f=3584 --budget 0.2 --out /tmp/procs-a/$i
done
mkdir -p statistics/h200/processes-a
st merge python3 -m harness merge /tmp/procs-a/1/int_gemm.csv /tmp/procs-a/2/int_gemm.csv /tmp/procs-a/3/int_gemm.csv /tmp/procs-a/4/int_gemm.csv --out statistics/h200/processes-a/int_gemm.csv
st merge_show python3 -c "import csv,sys; [print(r['backend'], r['variant'], r['batch'], r['out_f'], r['in_f'], r['median_us'], r['noise_pct'], r['reason']) for r in csv.DictReader(open('statistics/h200/processes-a/int_gemm.csv'))]"
st best_epi python3 -m harness best statistics/h200/tuning/stream-epilogue/int_gemm.csv
st best_units python3 -m harness best statistics/h200/tuning/spike-encode-units/spike_encode.csv
cat $sum
