#!/usr/bin/env bash
# One call: validate and sanitize the stream kernel's run-time split and the three conversion
# kernels; the split's trace; its A/B gated beside bf16; the conversion stages beside peers.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null || exit 9
export PYTHONPATH=/tmp/site:$PWD HARNESS_GIT_SHA=${SHA}
mkdir -p $OUT/logs
sum=$OUT/summary.txt; : > $sum
T=statistics/h200/tuning/stream-split
G=statistics/h200/small-gated
pack() { tar czf $OUT/statistics.tgz statistics/validation_ledger.csv statistics/h200/sanitizer-int_gemm.csv statistics/h200/sanitizer.csv $T $G 2>/dev/null; tar czf $OUT/logs.tgz -C $OUT logs; }
st() { local lim=$1 name=$2; shift 2; if [ $((SECONDS + 15)) -gt 570 ]; then echo "$name skipped (time)" >> $sum; return 1; fi; local t0=$SECONDS; timeout $lim "$@" > $OUT/logs/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; pack; return $rc; }
st 110 val_gemm python3 -m harness validate --record int_gemm
gemm_ok=$?
st 150 val_rest python3 -m harness validate --record find_min_max transform_absmax dynamic_spikes_reverse spike_linear spike_quant_gemm activation_path
st 20 ledger python3 -m harness ledger --check
if [ $gemm_ok -eq 0 ]; then
  st 70 san_gemm python3 -m harness sanitize int_gemm --variant int8 --out statistics/h200/sanitizer-int_gemm.csv --append
fi
st 50 san_conv python3 -m harness sanitize find_min_max transform_absmax dynamic_spikes_reverse --out statistics/h200/sanitizer.csv --append
if [ $gemm_ok -eq 0 ]; then
  st 60 trace python3 .dev/gpu/trace_split.py
  st 90 ab_a python3 -m harness bench int_gemm --variant int8 --define IGT_DYN=0,25 --peers linear_bf16 --sweep batch=1,16 --sweep out_f=18944 --sweep in_f=3584 --repeats 6 --budget 0.15 --out $T
fi
st 100 conv python3 -m harness bench find_min_max transform_absmax dynamic_spikes_reverse --peers torch,torch_compile --sweep batch=1,1024,16384 --budget 0.3 --out $G --append
if [ $gemm_ok -eq 0 ]; then
  st 70 ab_b python3 -m harness bench int_gemm --variant int8 --define IGT_DYN=0,25 --peers linear_bf16 --sweep batch=1,16 --sweep out_f=3584 --sweep in_f=18944,3584 --repeats 4 --budget 0.15 --out $T --append
  st 10 best python3 -m harness best $T/int_gemm.csv
fi
cat $sum
