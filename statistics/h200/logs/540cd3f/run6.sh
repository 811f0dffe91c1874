#!/usr/bin/env bash
# The SMALL_B sweep again, now that the plugin launches what the build holds; spike_linear at
# batch 1 with act_one.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null || exit 9
export PYTHONPATH=/tmp/site:$PWD HARNESS_GIT_SHA=${SHA}
mkdir -p $OUT/logs
sum=$OUT/summary.txt; : > $sum
A=statistics/h200/tuning/act-one
pack() { tar czf $OUT/statistics.tgz $A statistics/h200/spike_linear.csv 2>/dev/null; tar czf $OUT/logs.tgz -C $OUT logs; }
st() { local lim=$1 name=$2; shift 2; if [ $((SECONDS + 15)) -gt 570 ]; then echo "$name skipped (time)" >> $sum; return 1; fi; local t0=$SECONDS; timeout $lim "$@" > $OUT/logs/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; pack; return $rc; }
st 90 small_b python3 -m harness bench activation_fused --graph --define SMALL_B=1,2,4 --sweep batch=2,3,4 --repeats 3 --budget 0.2 --out $A/small-b2
st 10 small_b_best python3 -m harness best $A/small-b2/activation_fused.csv
st 120 layer python3 -m harness bench spike_linear --variant default --variant packed --sweep batch=1 --sweep out_f=18944,3584 --repeats 3 --budget 0.2 --append
cat $sum
