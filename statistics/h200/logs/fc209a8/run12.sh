#!/usr/bin/env bash
# spike_linear measured again at this source (act_grid takes M = 16, 256 and 1024 at in_f
# 3584); bench --against as an A/A (dynamic_spikes beside its build from 0ff4840's kernels,
# the same SASS); calibrate --kind mix at pass 2's traffic at batch 65536.
set -u
export HARNESS_GIT_SHA=${SHA}
export PYTHONPATH=/tmp/site:$PWD
base=$OUT
mkdir -p $base/logs
sum=$base/summary.txt; : > $sum
pack() { tar czf $base/statistics.tgz statistics/h200/spike_linear.csv statistics/h200/tuning/against-aa statistics/h200/calibration*.json 2>/dev/null; tar czf $base/logs.tgz -C $base logs; }
st() { local lim=$1 name=$2; shift 2; if [ $((SECONDS + lim)) -gt 560 ]; then echo "$name skipped (time)" >> $sum; return 1; fi; local t0=$SECONDS; timeout $lim "$@" > $base/logs/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; pack; return $rc; }
H="python3 -m harness"
st 30 mix $H calibrate --kind mix --bytes 234881024 --writes 6
st 60 against $H bench dynamic_spikes --against .dev/gpu/k0ff4840 --repeats 3 --budget 0.3 --sweep batch=1,1024,16384 --out statistics/h200/tuning/against-aa
st 15 against-best $H best statistics/h200/tuning/against-aa/dynamic_spikes.csv
st 160 layer-spike-linear $H bench spike_linear --budget 0.2 --overwrite --sweep batch=1,8,16,256,1024,8192 --sweep out_f=18944,3584
st 150 layer-spike-linear-wide $H bench spike_linear --budget 0.2 --append --sweep batch=1,8,16,256,1024,8192 --sweep out_f=3584 --sweep in_f=18944
cat $sum
