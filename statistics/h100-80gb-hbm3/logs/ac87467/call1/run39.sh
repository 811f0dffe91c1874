#!/usr/bin/env bash
# The staged decoder's first run (merge of packed-tma-staging): int_gemm_packed validated first
# under the hang watchdog, then int_gemm (its hash moved with the header), spike_linear and
# spike_quant_gemm; the sanitizer on the staged path; the A/B of IGP_STAGED=1,0 and of the
# 56 + 224 split in one process; packed vs q8 on the three shapes; the layer; ncu at M 8192.
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
watched 90 staged-ab $H bench int_gemm_packed --variant default --define IGP_STAGED=1,0 \
  --define IGP_PRODUCER_REGS=96,56 --define IGP_CONSUMER_REGS=200,224 \
  --restrict "(IGP_PRODUCER_REGS == 96 and IGP_CONSUMER_REGS == 200) or (IGP_PRODUCER_REGS == 56 and IGP_CONSUMER_REGS == 224)" \
  --restrict "IGP_STAGED == 1 or IGP_PRODUCER_REGS == 96" \
  --repeats 3 --budget 0.1 --sweep batch=1024,8192 --sweep out_f=18944 --sweep in_f=3584 --out $G/tuning/packed-staged
st 60 packed-vs-q8 $H bench int_gemm int_gemm_packed --repeats 3 --budget 0.2 --sweep batch=16,1024,8192 --sweep out_f=18944,3584 --sweep in_f=3584 --out $G/packed-wgmma --append
st 45 packed-vs-q8-t $H bench int_gemm int_gemm_packed --repeats 3 --budget 0.2 --sweep batch=1024,8192 --sweep out_f=3584 --sweep in_f=18944 --out $G/packed-wgmma --append
st 110 layer-packed $H bench spike_linear --variant packed --variant default --peers linear_bf16 --repeats 3 --budget 0.2 --sweep batch=1024,8192 --sweep out_f=18944,3584 --out $G/layer-packed --append
st 30 ncu-packed $H profile int_gemm_packed --batch 8192 --sweep out_f=18944 --sweep in_f=3584 --out statistics/ncu/packed-wgmma
fi
pack
cat $sum
