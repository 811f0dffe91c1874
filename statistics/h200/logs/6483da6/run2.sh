#!/usr/bin/env bash
# act_one's st.async cluster with the mbarriers' arrivals after the block barrier: validated and
# sanitized at this source, the bit-identity GPU test, then activation_fused beside its peers
# (the README's fused rows, batch 1 as graphs too), the packed rows, act_one under ncu, and
# activation_path's sweep (the README's pipeline rows).
set -u
export HARNESS_GIT_SHA=${SHA}
base=$OUT
OUT=$base/a STAGES="activation_fused activation_path spike_linear" \
  timeout 200 bash scripts/gpu-check.sh validate sanitize
export PYTHONPATH=/tmp/site:$PWD
mkdir -p $base/logs
sum=$base/summary.txt; : > $sum
pack() { tar czf $base/statistics.tgz statistics/h200/activation_fused.csv statistics/h200/activation_path.csv statistics/ncu/activation_fused.csv 2>/dev/null; tar czf $base/logs.tgz -C $base logs; }
st() { local lim=$1 name=$2; shift 2; if [ $((SECONDS + 20)) -gt 560 ]; then echo "$name skipped (time)" >> $sum; return 1; fi; local t0=$SECONDS; timeout $lim "$@" > $base/logs/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; pack; return $rc; }
H="python3 -m harness"
st 60 identity python3 -m pytest -m gpu -p no:cacheprovider -rA tests/backends/pycuda/test_runner.py -k "bit_identical or deterministic"
st 200 fused $H bench activation_fused --variant unidirectional --peers all --k 4 --budget 0.5 --sweep batch=1,1024,16384,65536 --overwrite
st 60 fused-graph $H bench activation_fused --variant unidirectional --graph --peers all --k 4 --budget 0.5 --sweep batch=1,8,64 --append
st 60 packed $H bench activation_fused --variant packed_unidirectional --k 4 --budget 0.5 --sweep batch=1,16384,65536 --append
st 30 ncu-one $H profile activation_fused --batch 1 --set basic --out statistics/ncu
st 30 ncu-one-packed $H profile activation_fused --variant packed_unidirectional --batch 1 --set basic --out statistics/ncu
st 100 path $H bench activation_path --k 4 --budget 0.5 --sweep batch=1,8,64,1024,16384,65536 --overwrite
cat $base/a/summary.txt $sum
