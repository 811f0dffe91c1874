#!/usr/bin/env bash
# Validate (and record) act_small with q in registers, with the pipelines that hash it;
# compute-sanitizer on it; activation_fused at batch 1 (graph and stream) gated; the arena
# experiment (plain against one-allocation buffers) at batch 1; dsr at 16384 by BLOCK x UNITS;
# a size-matched copy of the small-M GEMM's weight bytes.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null || exit 9
export PYTHONPATH=/tmp/site:$PWD HARNESS_GIT_SHA=${SHA}
mkdir -p $OUT/logs
sum=$OUT/summary.txt; : > $sum
T=statistics/h200/tuning/small-spread
G=statistics/h200/small-gated
pack() { tar czf $OUT/statistics.tgz statistics/validation_ledger.csv statistics/h200/sanitizer-fused.csv $T $G 2>/dev/null; tar czf $OUT/logs.tgz -C $OUT logs; }
st() { local lim=$1 name=$2; shift 2; if [ $((SECONDS + 15)) -gt 570 ]; then echo "$name skipped (time)" >> $sum; return 1; fi; local t0=$SECONDS; timeout $lim "$@" > $OUT/logs/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; pack; return $rc; }
st 150 val python3 -m harness validate --record activation_fused activation_path spike_linear
ok=$?
st 20 ledger python3 -m harness ledger --check
if [ $ok -eq 0 ]; then
  st 80 san python3 -m harness sanitize activation_fused --out statistics/h200/sanitizer-fused.csv --append
  st 40 san_edge python3 -m harness sanitize activation_fused --variant unidirectional --family edge --tool memcheck --tool initcheck --out statistics/h200/sanitizer-fused.csv --append
  st 40 act_b1 python3 -m harness bench activation_fused --sweep batch=1 --repeats 3 --budget 0.3 --out $G --append
  st 40 act_b1_graph python3 -m harness bench activation_fused --graph --sweep batch=1,4 --repeats 3 --budget 0.3 --out $G --append
fi
st 70 plain python3 -m harness bench spike_encode find_min_max dynamic_spikes_reverse --sweep batch=1 --peers torch_compile --repeats 3 --budget 0.15 --out $T/plain
st 70 arena python3 .dev/gpu/arena.py bench spike_encode find_min_max dynamic_spikes_reverse --sweep batch=1 --peers torch_compile --repeats 3 --budget 0.15 --out $T/arena
st 90 dsr_16k python3 -m harness bench dynamic_spikes_reverse --define BLOCK=128,256,512 --define UNITS=1,2,4 --sweep batch=16384 --peers torch_compile --repeats 3 --budget 0.15 --out $T/dsr-16384
C=statistics/h200/calibration.json
cp $C /tmp/calib.orig
st 30 calib_35010560 python3 -m harness calibrate --bytes 35010560
cp $C $OUT/logs/calibration-35010560.json
cp /tmp/calib.orig $C
cat $sum
