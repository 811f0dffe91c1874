#!/usr/bin/env bash
# act_one with six barriers (the kernel and plugin of d1a461c, from a copy of the tree) beside
# this tree's three, batch 1 as graphs, processes alternating.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null || exit 9
R=$PWD
mkdir -p $OUT/logs
sum=$OUT/summary.txt; : > $sum
A=statistics/h200/tuning/act-one/barriers
pack() { tar czf $OUT/statistics.tgz -C $R $A 2>/dev/null; tar czf $OUT/logs.tgz -C $OUT logs; }
st() { local lim=$1 name=$2; shift 2; if [ $((SECONDS + 15)) -gt 300 ]; then echo "$name skipped (time)" >> $sum; return 1; fi; local t0=$SECONDS; timeout $lim "$@" > $OUT/logs/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; pack; return $rc; }
mkdir -p /tmp/six && tar cf - --exclude=./.whl . | tar xf - -C /tmp/six && cp .dev/gpu/six/activation_fused.cu /tmp/six/kernels/ && cp .dev/gpu/six/activation_fused.py /tmp/six/plugins/
ab() { st 40 $1 bash -c "cd $2 && HARNESS_GIT_SHA=$3 PYTHONPATH=/tmp/site:$2 python3 -m harness bench activation_fused --graph --sweep batch=1 --repeats 3 --budget 0.3 --out $R/$A/$4 $5"; }
ab six1 /tmp/six d1a461c six ""
ab three1 $R $SHA three ""
ab six2 /tmp/six d1a461c six --append
ab three2 $R $SHA three --append
ab six3 /tmp/six d1a461c six --append
ab three3 $R $SHA three --append
cat $sum
