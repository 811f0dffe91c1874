#!/usr/bin/env bash
# spike_linear measured again at this source (act_one, act_rows): the layer phase's two
# spike_linear commands, M 1, 8, 16, 256, 1024, 8192 (the README's layer rows).
set -u
export HARNESS_GIT_SHA=${SHA}
export PYTHONPATH=/tmp/site:$PWD
base=$OUT
mkdir -p $base/logs
sum=$base/summary.txt; : > $sum
pack() { tar czf $base/statistics.tgz statistics/h200/spike_linear.csv 2>/dev/null; tar czf $base/logs.tgz -C $base logs; }
st() { local lim=$1 name=$2; shift 2; if [ $((SECONDS + lim)) -gt 290 ]; then echo "$name skipped (time)" >> $sum; return 1; fi; local t0=$SECONDS; timeout $lim "$@" > $base/logs/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; pack; return $rc; }
H="python3 -m harness"
st 150 layer-spike-linear $H bench spike_linear --budget 0.2 --overwrite --sweep batch=1,8,16,256,1024,8192 --sweep out_f=18944,3584
st 140 layer-spike-linear-wide $H bench spike_linear --budget 0.2 --append --sweep batch=1,8,16,256,1024,8192 --sweep out_f=3584 --sweep in_f=18944
cat $sum
