#!/usr/bin/env bash
# One call, no kernel source changed: where the small-batch conversion stages lose their time.
# Tuning sweeps by -D (spread over more blocks at batch 1; act_small's block), a profile of
# activation_fused at batch 1024 (per-kernel durations), and size-matched copies.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null || exit 9
export PYTHONPATH=/tmp/site:$PWD HARNESS_GIT_SHA=${SHA}
mkdir -p $OUT/logs
sum=$OUT/summary.txt; : > $sum
T=statistics/h200/tuning/small-spread
pack() { tar czf $OUT/statistics.tgz $T statistics/ncu 2>/dev/null; tar czf $OUT/logs.tgz -C $OUT logs; }
st() { local lim=$1 name=$2; shift 2; if [ $((SECONDS + 15)) -gt 560 ]; then echo "$name skipped (time)" >> $sum; return 1; fi; local t0=$SECONDS; timeout $lim "$@" > $OUT/logs/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; pack; return $rc; }
C=statistics/h200/calibration.json
cp $C /tmp/calib.orig
for b in 18352128 32313344; do
  st 40 calib_$b python3 -m harness calibrate --bytes $b
  cp $C $OUT/logs/calibration-$b.json
done
cp /tmp/calib.orig $C
st 120 se_b1 python3 -m harness bench spike_encode --define UNITS=1,2,4 --define BLOCK=64,128,256 --sweep batch=1 --peers torch_compile --repeats 3 --budget 0.15 --out $T
st 110 dsr_b1 python3 -m harness bench dynamic_spikes_reverse --define UNITS=1,2,4 --define BLOCK=64,128,256 --sweep batch=1 --peers torch_compile --repeats 3 --budget 0.15 --out $T
st 90 act_b1 python3 -m harness bench activation_fused --graph --define BLOCK=256,512,1024 --define CACHE_VEC=1,4 --define STATS_MINB=1 --sweep batch=1 --repeats 3 --budget 0.15 --out $T
st 60 prof_1024 python3 -m harness profile activation_fused --batch 1024 --set basic --out statistics/ncu
st 60 prof_1 python3 -m harness profile activation_fused --batch 1 --set basic --out statistics/ncu
for s in spike_encode dynamic_spikes_reverse activation_fused; do st 20 best_$s python3 -m harness best $T/$s.csv; done
cat $sum
