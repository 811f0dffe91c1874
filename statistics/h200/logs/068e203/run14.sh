#!/usr/bin/env bash
# act_grid's barrier in two round trips, adopted (kernels/activation_fused.cu at the commit
# SHA): validate --record of activation_fused and the two pipelines over it, compute-sanitizer
# on activation_fused, the bit-identity test and the driver's count of act_grid's blocks.
source .dev/gpu/common.sh
KEEP="statistics/validation_ledger.csv statistics/h200/sanitizer.csv statistics/h200/spike_quant_gemm.csv statistics/h200/seed_*.csv"
st 230 validate $H validate --record activation_fused activation_path spike_linear
st 110 sanitize env OUT=$base/a STAGES=activation_fused bash scripts/gpu-check.sh sanitize
st 60 identity python3 -m pytest -m gpu -p no:cacheprovider -rA tests/backends/pycuda/test_runner.py -k "bit_identical or launch_bounds_promise"
# The seed pipeline's intervals with the gate after the host read (its steps' kernels as
# validated before: only the harness's timing of it changed).
st 120 seed-pipeline $H bench spike_quant_gemm --budget 0.5 --sweep batch=1..65536 --sweep out_f=3584,18944 --overwrite
cat $sum
