#!/usr/bin/env bash
# After the review's mends: int_gemm_packed (T below 1 clamped in the decoder, a comment; the
# new cases reach T = 1, 2, 4, 5, 7 on the wgmma path) and spike_linear validated (watched);
# compute-sanitizer on int_gemm_packed default.
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
watched 60 validate-packed $H validate --record int_gemm_packed || ok=0
if [ $ok = 1 ]; then
st 80 validate-sl $H validate --record spike_linear || ok=0
st 20 san-packed $H sanitize int_gemm_packed --variant default --out $G/sanitizer-int_gemm.csv --append
fi
pack
cat $sum
