#!/usr/bin/env bash
# Pass 1 a warp a row (act_stats_warps): every variant of activation_fused validated with the
# pipelines over it, the bit-for-bit checks against act_stats and the staged kernels,
# compute-sanitizer on the two layouts that run it, then the A/B of STATS_WARPS (0 is
# act_stats on STATS_RING_BLOCKS, the earlier launch) in one process.
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP=statistics
ok=1
st 10 calibrate $H calibrate
st 300 validate $H validate --record activation_fused activation_path spike_linear spike_quant_gemm || ok=0
st 120 bits python3 -m pytest -m gpu -p no:cacheprovider -q tests/backends/pycuda/test_runner.py -k "warp_a_row or bit_identical" || ok=0
if [ $ok = 1 ]; then
st 30 san-af-operand $H sanitize activation_fused --variant operand_unidirectional --out $G/sanitizer-fused.csv --append
st 30 san-af-int8 $H sanitize activation_fused --variant unidirectional --out $G/sanitizer-fused.csv --append
st 120 warps-operand $H bench activation_fused --variant operand_unidirectional --define STATS_WARPS=0,4,8 --repeats 3 --budget 0.1 --sweep batch=1024,2048,4096,8192 --sweep in_f=3584 --out $G/tuning/stats-warps
fi
pack
cat $sum
