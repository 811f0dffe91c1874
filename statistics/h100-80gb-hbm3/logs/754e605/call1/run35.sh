#!/usr/bin/env bash
# The leaner decoding producer: int_gemm_packed and spike_linear validated (watched); the new
# build beside faef11a's (IGP_PREFETCH=0 for both) in one process; int_gemm_packed beside
# int_gemm int8 on the three shapes; spike_linear packed beside default and bf16 F.linear;
# compute-sanitizer on int_gemm_packed default; ncu of int_gemm_packed at M = 8192.
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP=statistics
watched() { local lim=$1 name=$2; shift 2; local t0=$SECONDS
  "$@" > $base/logs/$name.log 2>&1 & local p=$!
  while kill -0 $p 2>/dev/null && [ $((SECONDS - t0)) -lt $lim ]; do sleep 1; done
  if kill -0 $p 2>/dev/null; then kill -KILL $p; echo "$name HUNG after $((SECONDS-t0))s :: $*" >> $sum; pack; cat $sum; exit 3; fi
  wait $p; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; pack; return $rc; }
ok=1
watched 100 validate-packed $H validate --record int_gemm_packed || ok=0
if [ $ok = 1 ]; then
st 150 validate-sl $H validate --record spike_linear || ok=0
fi
if [ $ok = 1 ]; then
st 60 decode-ab $H bench int_gemm_packed --variant default --against .dev/gpu/prev-faef11a --define IGP_PREFETCH=0 --repeats 3 --budget 0.1 --sweep batch=1024,8192 --sweep out_f=18944 --sweep in_f=3584 --out $G/tuning/packed-decode
st 90 packed-vs-q8 $H bench int_gemm int_gemm_packed --repeats 3 --budget 0.2 --sweep batch=16,1024,8192 --sweep out_f=18944,3584 --sweep in_f=3584 --out $G/packed-wgmma --append
st 60 packed-vs-q8-t $H bench int_gemm int_gemm_packed --repeats 3 --budget 0.2 --sweep batch=1024,8192 --sweep out_f=3584 --sweep in_f=18944 --out $G/packed-wgmma --append
st 20 san-packed $H sanitize int_gemm_packed --variant default --out $G/sanitizer-int_gemm.csv --append
st 120 layer-packed $H bench spike_linear --variant packed --variant default --peers linear_bf16 --repeats 3 --budget 0.2 --sweep batch=1024,8192 --sweep out_f=18944,3584 --out $G/layer-packed
st 40 ncu-packed $H profile int_gemm_packed --batch 8192 --sweep out_f=18944 --sweep in_f=3584 --out statistics/ncu/packed-wgmma
fi
pack
cat $sum
