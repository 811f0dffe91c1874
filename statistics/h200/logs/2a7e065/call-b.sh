#!/usr/bin/env bash
# call B: the exact path's cost beside the int8 path; the small-M kernel's time against N.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl || exit 9
export PYTHONPATH=/tmp/site:$PWD HARNESS_GIT_SHA=${SHA}
mkdir -p $OUT/logs
sum=$OUT/summary.txt; : > $sum
st() { local name=$1; shift; local t0=$SECONDS; "$@" > $OUT/logs/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; tar czf $OUT/statistics.tgz statistics/h200/exact-path statistics/h200/small-m-fit 2>/dev/null; tar czf $OUT/logs.tgz -C $OUT logs; }
st layer python3 -m harness bench spike_linear --variant default --variant any --sweep batch=1,16,1024,8192 --sweep out_f=18944,3584 --repeats 3 --budget 0.2 --out statistics/h200/exact-path
st llm python3 -m harness bench spike_linear --variant any --family llm --k 64 --sweep batch=1,1024,8192 --sweep out_f=18944 --budget 0.2 --out statistics/h200/exact-path --append
st fit python3 -m harness bench int_gemm --variant int8 --peers linear_bf16 --sweep batch=1,16 --sweep out_f=4736,9472,18944,37888,75776 --repeats 3 --budget 0.3 --out statistics/h200/small-m-fit
cp statistics/h200/calibration.json /tmp/cal.json
st calib python3 -m harness calibrate --bytes 32313344
cp statistics/h200/calibration.json $OUT/calibration-32313344.json; cp /tmp/cal.json statistics/h200/calibration.json
cat $sum
