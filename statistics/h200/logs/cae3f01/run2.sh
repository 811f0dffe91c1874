#!/usr/bin/env bash
# One call, no kernel source changed: why spike_encode at batch 1 is 0.9 us behind torch.compile.
# ncu's warp-state stall reasons of our kernel and of torch.compile's Triton kernel in the
# same process (ncu flushes the caches before each profiled launch), and the same two timed
# with a warm L2 beside the cold rows.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null || exit 9
export PYTHONPATH=/tmp/site:$PWD HARNESS_GIT_SHA=${SHA}
mkdir -p $OUT/logs
sum=$OUT/summary.txt; : > $sum
T=statistics/h200/tuning/small-spread
pack() { tar czf $OUT/statistics.tgz $T 2>/dev/null; tar czf $OUT/logs.tgz -C $OUT logs; }
st() { local lim=$1 name=$2; shift 2; if [ $((SECONDS + 15)) -gt 560 ]; then echo "$name skipped (time)" >> $sum; return 1; fi; local t0=$SECONDS; timeout $lim "$@" > $OUT/logs/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; pack; return $rc; }
N="ncu --clock-control none --section WarpStateStats --section SpeedOfLight --section LaunchStats --metrics smsp__inst_executed.sum,sm__cycles_elapsed.max,smsp__warps_issue_stalled_no_instruction.sum,smsp__warps_active.sum"
B="python3 -m harness bench spike_encode --sweep batch=1 --budget 0.02 --out /tmp/x"
st 90 ncu_ours $N -k regex:spike_encode -c 2 $B
st 120 ncu_peer $N -k regex:triton -c 2 $B --peers torch_compile
st 90 ncu_small $N -k regex:act_small -c 2 python3 -m harness bench activation_fused --sweep batch=1 --budget 0.02 --out /tmp/x
st 90 hot python3 -m harness bench spike_encode dynamic_spikes_reverse --sweep batch=1 --hot --peers torch_compile --repeats 3 --budget 0.15 --out $T/hot
cat $sum
