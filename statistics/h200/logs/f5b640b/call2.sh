#!/usr/bin/env bash
# call 2: validate and sanitize dynamic_spikes_reverse's new kernel (and spike_quant_gemm,
# which runs it); the stage beside torch and torch.compile at four batches; the layer
# phase (gated) at the current source.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null || exit 9
export PYTHONPATH=/tmp/site:$PWD HARNESS_GIT_SHA=${SHA}
mkdir -p $OUT/logs
sum=$OUT/summary.txt; : > $sum
pack() { tar czf $OUT/statistics.tgz statistics/validation_ledger.csv statistics/h200/sanitizer.csv statistics/h200/dynamic_spikes_reverse.csv 2>/dev/null; tar czf $OUT/logs.tgz -C $OUT logs; }
st() { local lim=$1 name=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/logs/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; pack; return $rc; }
st 150 validate python3 -m harness validate --record dynamic_spikes_reverse spike_quant_gemm
st 20 ledger python3 -m harness ledger --check
st 60 sanitize python3 -m harness sanitize dynamic_spikes_reverse --out statistics/h200/sanitizer.csv --append
st 170 dsr python3 -m harness bench dynamic_spikes_reverse --peers torch,torch_compile --sweep batch=1,1024,16384,65536 --budget 0.5 --overwrite
OUT=$OUT/layer LAYER_BATCHES=1,16,256,1024,8192 BUDGET=0.2 timeout 330 bash scripts/gpu-check.sh layer > $OUT/logs/layer.log 2>&1
echo "layer rc=$?" >> $sum
pack
cat $sum
