#!/usr/bin/env bash
# No kernel changed since 4aeaadf's validation: activation_fused beside its peers whole (the
# README's fused rows; the stream fix in), act_stats / act_encode under ncu at 65536 (both
# layouts), and activation_path's sweep (the README's pipeline rows).
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null || exit 9
export PYTHONPATH=/tmp/site:$PWD HARNESS_GIT_SHA=${SHA}
mkdir -p $OUT/logs
sum=$OUT/summary.txt; : > $sum
pack() { tar czf $OUT/statistics.tgz statistics/h200/activation_fused.csv statistics/h200/activation_path.csv statistics/ncu/activation_fused.csv 2>/dev/null; tar czf $OUT/logs.tgz -C $OUT logs; }
st() { local lim=$1 name=$2; shift 2; if [ $((SECONDS + 20)) -gt 515 ]; then echo "$name skipped (time)" >> $sum; return 1; fi; local t0=$SECONDS; timeout $lim "$@" > $OUT/logs/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; pack; return $rc; }
H="python3 -m harness"
st 320 fused $H bench activation_fused --variant unidirectional --peers all --k 4 --budget 0.5 --sweep batch=1,1024,16384,65536 --overwrite
st 60 fused-graph $H bench activation_fused --variant unidirectional --graph --peers all --k 4 --budget 0.5 --sweep batch=1,8,64 --append
st 60 packed $H bench activation_fused --variant packed_unidirectional --k 4 --budget 0.5 --sweep batch=1,16384,65536 --append
st 60 prof-int8 $H profile activation_fused --variant unidirectional --batch 65536 --k 4
st 60 prof-packed $H profile activation_fused --variant packed_unidirectional --batch 65536 --k 4
st 150 path $H bench activation_path --k 4 --budget 0.5 --sweep batch=1,8,64,1024,16384,65536 --overwrite
cat $sum
