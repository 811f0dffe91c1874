#!/usr/bin/env bash
# act_one on a cluster: its three builds (ONE_CLUSTER 0, 1, 2) checked, then timed as graphs at
# batch 1 (five repeats rotated); the default (2) validated with the pipelines that launch it and
# sanitized; pass 2's grid cap (ENC_GRID) A/B'd at 65536 and 16384; act_one under ncu; the GPU
# test of bit identity with the staged kernels.
set -u
export HARNESS_GIT_SHA=${SHA}
base=$OUT
OUT=$base/a STAGES="activation_fused activation_path spike_linear" TUNE_REPEATS=5 \
  AB_STAGE=activation_fused AB_VARIANT=unidirectional AB_DEFINES="ONE_CLUSTER=0,1,2" \
  AB_CHECK="batch=1 in_f=3584,4096,100,12 k=3,64" AB_POINTS="batch=1" AB_FLAGS="--graph" \
  AB_DIR=act-one/cluster timeout 330 bash scripts/gpu-check.sh ab validate sanitize
OUT=$base/b TUNE_REPEATS=3 AB_STAGE=activation_fused AB_VARIANT=unidirectional \
  AB_DEFINES="ENC_GRID=0,1056,2112" AB_CHECK="batch=8192,40 in_f=3584 k=4,64" \
  AB_POINTS="batch=65536 k=4;batch=16384 k=4" AB_DIR=enc-grid \
  timeout 150 bash scripts/gpu-check.sh ab
export PYTHONPATH=/tmp/site:$PWD
mkdir -p $base/c
timeout 40 python3 -m harness profile activation_fused --batch 1 --set basic --out statistics/ncu \
  > $base/c/ncu-one.log 2>&1; echo "ncu-one rc=$?" >> $base/c/summary.txt
timeout 40 python3 -m harness profile activation_fused --variant packed_unidirectional --batch 1 \
  --set basic --out statistics/ncu > $base/c/ncu-one-packed.log 2>&1
echo "ncu-one-packed rc=$?" >> $base/c/summary.txt
timeout 60 python3 -m pytest -m gpu -p no:cacheprovider -rA tests/backends/pycuda/test_runner.py \
  -k "bit_identical or deterministic" > $base/c/identity.log 2>&1
echo "identity rc=$?" >> $base/c/summary.txt
cp statistics/ncu/activation_fused.csv $base/c/ncu-activation_fused.csv
tar czf $base/c.tgz -C $base c && rm -rf $base/c
cat $base/a/summary.txt $base/b/summary.txt
