#!/usr/bin/env bash
# At QUANT4=1 (the default): validate (and record) what threshold.cuh moved, the A/B of QUANT4
# 0/1 (each build checked first), compute-sanitizer over activation_fused and
# dynamic_spikes; then the GPU bit-identity test, and activation_fused beside its peers with
# the stream fix (its three commands, as the README's fused rows were measured).
set -u
export HARNESS_GIT_SHA=${SHA}
STAGES="activation_fused activation_path spike_linear dynamic_spikes spike_quant_gemm" BUDGET=0.3 TUNE_REPEATS=3 \
AB_STAGE=activation_fused AB_VARIANT=unidirectional AB_DEFINES="QUANT4=0,1" \
AB_CHECK="batch=1,3,1024 in_f=3584,130 k=4" \
AB_POINTS="batch=65536 k=4;batch=16384 k=4;batch=1024 k=4" \
AB_DIR=quant4 timeout 330 bash scripts/gpu-check.sh validate ab sanitize
mkdir -p $OUT/x
sum=$OUT/x/summary.txt; : > $sum
st() { local lim=$1 name=$2; shift 2; if [ $((SECONDS + 15)) -gt 575 ]; then echo "$name skipped (time)" >> $sum; return 1; fi; local t0=$SECONDS; timeout $lim "$@" > $OUT/x/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; tar czf $OUT/extra.tgz -C $OUT x statistics-extra 2>/dev/null; return $rc; }
export PYTHONPATH=/tmp/site:$PWD
H="python3 -m harness"
st 60 bits python3 -m pytest -q -m gpu tests/backends/pycuda/test_runner.py -k "bit_identical or graph_mode" -p no:cacheprovider
st 40 ab-packed $H bench activation_fused --variant packed_unidirectional --define QUANT4=0,1 --no-verify --repeats 3 --budget 0.3 --k 4 --sweep batch=65536 --out statistics/h200/tuning/quant4 --append
st 200 fused $H bench activation_fused --variant unidirectional --peers all --k 4 --budget 0.5 --sweep batch=1,1024,16384,65536 --overwrite
st 60 fused-graph $H bench activation_fused --variant unidirectional --graph --peers all --k 4 --budget 0.5 --sweep batch=1,8,64 --append
st 60 packed $H bench activation_fused --variant packed_unidirectional --k 4 --budget 0.5 --sweep batch=1,16384,65536 --append
mkdir -p $OUT/statistics-extra && cp statistics/h200/activation_fused.csv statistics/h200/tuning/quant4/*.csv $OUT/statistics-extra/ 2>/dev/null
tar czf $OUT/extra.tgz -C $OUT x statistics-extra
cat $sum
