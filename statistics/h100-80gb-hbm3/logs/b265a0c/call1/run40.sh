#!/usr/bin/env bash
# Two decoding producer warpgroups: int_gemm_packed validated first under the hang watchdog,
# then int_gemm (the header moved its hash), spike_linear and spike_quant_gemm; the sanitizer;
# the A/B of IG_PRODUCER_WARPGROUPS=2,1 in one process; packed vs q8 on the three shapes;
# ncu at M 8192 and the per-instruction stall samples at M 1024; the layer last.
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
watched 90 validate-packed $H validate --record int_gemm_packed || ok=0
if [ $ok = 1 ]; then
watched 150 validate $H validate --record int_gemm spike_linear spike_quant_gemm
st 30 san-packed $H sanitize int_gemm_packed --variant default --out $G/sanitizer-int_gemm.csv --append
watched 90 warpgroups-ab $H bench int_gemm_packed --variant default --define IG_PRODUCER_WARPGROUPS=2,1 \
  --repeats 3 --budget 0.1 --sweep batch=1024,8192 --sweep out_f=18944 --sweep in_f=3584 --out $G/tuning/packed-warpgroups
st 60 packed-vs-q8 $H bench int_gemm int_gemm_packed --repeats 3 --budget 0.2 --sweep batch=16,1024,8192 --sweep out_f=18944,3584 --sweep in_f=3584 --out $G/packed-wgmma --append
st 45 packed-vs-q8-t $H bench int_gemm int_gemm_packed --repeats 3 --budget 0.2 --sweep batch=1024,8192 --sweep out_f=3584 --sweep in_f=18944 --out $G/packed-wgmma --append
st 30 ncu-packed $H profile int_gemm_packed --batch 8192 --sweep out_f=18944 --sweep in_f=3584 --out statistics/ncu/packed-wgmma
st 60 ncu-source python3 .dev/gpu/ncu_source.py $base/logs int_gemm_packed default batch=1024 out_f=18944 in_f=3584
st 110 layer-packed $H bench spike_linear --variant packed --variant default --peers linear_bf16 --repeats 3 --budget 0.2 --sweep batch=1024,8192 --sweep out_f=18944,3584 --out $G/layer-packed --append
fi
pack
cat $sum
