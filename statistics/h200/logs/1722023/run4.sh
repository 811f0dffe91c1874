#!/usr/bin/env bash
# act_one's cluster on rows past the cache: ONE_CLUSTER 0 (one block to 4096 values, act_small
# past it) against 2, checked at batch 1 (in_f 3584, 4100, 18944; k 3 and 64), then timed as
# graphs at in_f 3584 and 18944; validated and sanitized at this source; the bit-identity
# GPU test; spike_linear at M 1 and 16 on 3584 x 18944; last, activation_fused beside its peers
# again (the README's fused rows).
set -u
export HARNESS_GIT_SHA=${SHA}
base=$OUT
OUT=$base/a STAGES="activation_fused activation_path spike_linear" TUNE_REPEATS=5 \
  AB_STAGE=activation_fused AB_VARIANT=unidirectional AB_DEFINES="ONE_CLUSTER=0,2" \
  AB_CHECK="batch=1 in_f=3584,4100,18944 k=3,64" AB_POINTS="batch=1 in_f=3584;batch=1 in_f=18944" \
  AB_FLAGS="--graph" AB_DIR=act-one/wide timeout 260 bash scripts/gpu-check.sh ab validate sanitize
export PYTHONPATH=/tmp/site:$PWD
mkdir -p $base/logs
sum=$base/summary.txt; : > $sum
pack() { tar czf $base/statistics.tgz statistics/h200/activation_fused.csv statistics/h200/spike_linear.csv statistics/ncu/activation_fused.csv 2>/dev/null; tar czf $base/logs.tgz -C $base logs; }
st() { local lim=$1 name=$2; shift 2; if [ $((SECONDS + 20)) -gt 470 ]; then echo "$name skipped (time)" >> $sum; return 1; fi; local t0=$SECONDS; timeout $lim "$@" > $base/logs/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; pack; return $rc; }
H="python3 -m harness"
st 40 identity python3 -m pytest -m gpu -p no:cacheprovider -rA tests/backends/pycuda/test_runner.py -k "bit_identical or deterministic"
st 40 wide-layer $H bench spike_linear --variant default --budget 0.2 --sweep batch=1,16 --sweep out_f=3584 --sweep in_f=18944 --out $base/logs/wide-layer
st 20 ncu-wide $H profile activation_fused --batch 1 --sweep in_f=18944 --set basic --out statistics/ncu
st 200 fused $H bench activation_fused --variant unidirectional --peers all --k 4 --budget 0.5 --sweep batch=1,1024,16384,65536 --overwrite
st 45 fused-graph $H bench activation_fused --variant unidirectional --graph --peers all --k 4 --budget 0.5 --sweep batch=1,8,64 --append
st 45 packed $H bench activation_fused --variant packed_unidirectional --k 4 --budget 0.5 --sweep batch=1,16384,65536 --append
cat $base/a/summary.txt $sum
