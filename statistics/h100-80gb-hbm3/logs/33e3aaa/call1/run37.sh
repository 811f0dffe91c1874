#!/usr/bin/env bash
# The GPU tests that launch the integer GEMMs through the shared wgmma launch (the stage
# benchmarks of int_gemm and int_gemm_packed at batch 16384, the pipeline tests), at 33e3aaa.
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
KEEP=statistics
st 120 pytest-gpu-bench python3 -m pytest -q -m gpu -rA tests/bench/test_stages.py -k "int_gemm" --benchmark-enable
st 120 pytest-gpu-pipeline python3 -m pytest -q -m gpu -rA tests/backends/pycuda/test_pipeline.py
pack
cat $sum
