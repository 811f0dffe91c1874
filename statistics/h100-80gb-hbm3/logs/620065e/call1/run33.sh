#!/usr/bin/env bash
# The packed operand decoded in the wgmma kernel's producer, after the register split that
# hung the first call (96 + 200 within the CTA's 168 a thread): int_gemm_packed validated
# first under a watchdog that gives the call back if a launch hangs; then the other changed
# kernels and the pipelines over them; int_gemm_packed beside int_gemm int8 in one process
# (three rotated repeats); compute-sanitizer on int_gemm_packed's default variant.
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP=statistics
# A step that may hang on the device: polled, and the whole run ends (packed) if it outlives
# its limit, since a process stuck in the driver may not die.
watched() { local lim=$1 name=$2; shift 2; local t0=$SECONDS
  "$@" > $base/logs/$name.log 2>&1 & local p=$!
  while kill -0 $p 2>/dev/null && [ $((SECONDS - t0)) -lt $lim ]; do sleep 1; done
  if kill -0 $p 2>/dev/null; then kill -KILL $p; echo "$name HUNG after $((SECONDS-t0))s :: $*" >> $sum; pack; cat $sum; exit 3; fi
  wait $p; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; pack; return $rc; }
ok=1
watched 150 validate-packed $H validate --record int_gemm_packed || ok=0
if [ $ok = 1 ]; then
st 240 validate $H validate --record int_gemm spike_linear spike_quant_gemm || ok=0
fi
if [ $ok = 1 ]; then
st 150 packed-vs-q8 $H bench int_gemm int_gemm_packed --repeats 3 --budget 0.2 --sweep batch=16,1024,8192 --sweep out_f=18944,3584 --sweep in_f=3584 --out $G/packed-wgmma
st 60 packed-vs-q8-t $H bench int_gemm int_gemm_packed --repeats 3 --budget 0.2 --sweep batch=1024,8192 --sweep out_f=3584 --sweep in_f=18944 --out $G/packed-wgmma --append
st 60 san-packed $H sanitize int_gemm_packed --variant default --out $G/sanitizer-int_gemm.csv --append
fi
pack
cat $sum
