#!/usr/bin/env bash
# (No kernel source changed since b265a0c, validated then; little device time left.) The
# pytest-benchmark benchmarks compared with the newest baseline and saved as the next (its
# int_gemm_packed entry was the general path's); the GPU tests that launch the integer GEMMs
# (the stage benchmarks and the pipeline tests).
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP=statistics
st 60 bench-save python3 -m pytest -m gpu -p no:cacheprovider tests/bench --benchmark-enable \
  --benchmark-storage=file://$G/pytest-benchmark --benchmark-compare --benchmark-compare-fail=median:10% \
  --benchmark-json=$base/logs/pytest-benchmark.json --benchmark-save=$SHA
st 120 pytest-gpu-gemm python3 -m pytest -q -m gpu -rA -p no:cacheprovider tests/backends/pycuda/test_pipeline.py
pack
cat $sum
