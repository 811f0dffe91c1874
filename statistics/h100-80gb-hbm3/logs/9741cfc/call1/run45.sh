#!/usr/bin/env bash
# The branch's kernels (comment mends, IGP_REFILL, unit_span) merged: int_gemm_packed validated
# first under the hang watchdog, then int_gemm, spike_linear and spike_quant_gemm; the
# sanitizer on the packed default; the refill A/B in one process; int_gemm's single kernel
# (M <= 256) beside its build at aa3b403 in one process (unit_span moved its SASS).
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP=statistics
watched() { local lim=$1 name=$2; shift 2; local t0=$SECONDS
  "$@" > $base/logs/$name.log 2>&1 & local p=$!
  while kill -0 $p 2>/dev/null && [ $((SECONDS - t0)) -lt $lim ]; do sleep 1; done
  if kill -0 $p 2>/dev/null; then kill -KILL $p; echo "$name HUNG after $((SECONDS-t0))s :: $*" >> $sum; pack; cat $sum; exit 3; fi
  wait $p; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; pack; return $rc; }
watched 100 validate-packed $H validate --record int_gemm_packed || { pack; cat $sum; exit 1; }
watched 170 validate $H validate --record int_gemm spike_linear spike_quant_gemm
st 40 san-packed $H sanitize int_gemm_packed --variant default --out $G/sanitizer-int_gemm.csv --append
st 90 refill-ab $H bench int_gemm_packed --variant default --define IGP_REFILL=1,0 --repeats 3 --budget 0.1 --sweep batch=1024,8192 --sweep out_f=18944 --sweep in_f=3584 --out $G/tuning/packed-refill
st 90 single-ab $H bench int_gemm --variant int8 --against $PWD/.dev/gpu/prev-aa3b403 --repeats 5 --budget 0.1 --sweep batch=64,128,256 --sweep out_f=3584 --sweep in_f=3584,18944 --out $G/tuning/unit-span
pack
cat $sum
