#!/usr/bin/env bash
# act_rows apart from act_one: validated and sanitized at this source; the bit-identity GPU
# test; act_one of 0ff4840 against this one in one process (oldnew.py); activation_fused
# beside its peers again (the README's fused rows), as graphs at batch 1, 2, 4, 8, 64, and
# the packed layout.
set -u
export HARNESS_GIT_SHA=${SHA}
base=$OUT
OUT=$base/a STAGES="activation_fused activation_path spike_linear" \
  timeout 200 bash scripts/gpu-check.sh validate sanitize
export PYTHONPATH=/tmp/site:$PWD
mkdir -p $base/logs
sum=$base/summary.txt; : > $sum
pack() { tar czf $base/statistics.tgz statistics/h200/activation_fused.csv 2>/dev/null; tar czf $base/logs.tgz -C $base logs; }
st() { local lim=$1 name=$2; shift 2; if [ $((SECONDS + lim)) -gt 580 ]; then echo "$name skipped (time)" >> $sum; return 1; fi; local t0=$SECONDS; timeout $lim "$@" > $base/logs/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; pack; return $rc; }
H="python3 -m harness"
st 40 identity python3 -m pytest -m gpu -p no:cacheprovider -rA tests/backends/pycuda/test_runner.py -k "bit_identical or deterministic"
st 40 oldnew python3 .dev/gpu/oldnew.py 3584
st 170 fused $H bench activation_fused --variant unidirectional --peers all --k 4 --budget 0.5 --sweep batch=1,1024,16384,65536 --overwrite
st 45 fused-graph $H bench activation_fused --variant unidirectional --graph --peers all --k 4 --budget 0.5 --sweep batch=1,2,4,8,64 --append
st 45 packed $H bench activation_fused --variant packed_unidirectional --k 4 --budget 0.5 --sweep batch=1,16384,65536 --append
cat $base/a/summary.txt $sum
