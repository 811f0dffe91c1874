#!/usr/bin/env bash
# call 4: revalidate int_gemm and the pipelines running it (the trace build's %smid stamp moved
# the source hash; the default PTX is unchanged); the per-SM trace; spike_linear packed at
# M = 8192 on 3584 x 18944, the last layer row the earlier calls' limits cut.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null || exit 9
export PYTHONPATH=/tmp/site:$PWD HARNESS_GIT_SHA=${SHA}
mkdir -p $OUT/logs
sum=$OUT/summary.txt; : > $sum
pack() { tar czf $OUT/statistics.tgz statistics/validation_ledger.csv statistics/h200/spike_linear.csv 2>/dev/null; tar czf $OUT/logs.tgz -C $OUT logs; }
st() { local lim=$1 name=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/logs/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; pack; return $rc; }
st 130 validate python3 -m harness validate --record int_gemm spike_linear spike_quant_gemm
st 20 ledger python3 -m harness ledger --check
st 70 trace_sm python3 .dev/gpu/trace_sm.py
st 170 spike_linear_packed python3 -m harness bench spike_linear --variant packed --budget 0.2 --append --sweep batch=8192 --sweep out_f=3584 --sweep in_f=18944
cat $sum
