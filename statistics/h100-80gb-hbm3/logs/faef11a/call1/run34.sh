#!/usr/bin/env bash
# Where the decoding producer waits: ncu's per-instruction stall samples of
# int_gemm_packed_wgmma at M = 1024 on 18944 x 3584, and the A/B of where its loads are
# issued (IGP_PREFETCH 1, each unit's next K tile after its decode; 0, a tile's words at its
# fill's start) at M 1024 and 8192, each build checked, three rotated repeats; the source
# with the define validated (its hash moved).
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
st 90 ncu-source python3 .dev/gpu/ncu_source.py $base/logs int_gemm_packed default batch=1024 out_f=18944 in_f=3584
st 120 prefetch-ab $H bench int_gemm_packed --variant default --define IGP_PREFETCH=1,0 --repeats 3 --budget 0.1 --sweep batch=1024,8192 --sweep out_f=18944 --sweep in_f=3584 --out $G/tuning/packed-prefetch
fi
pack
cat $sum
