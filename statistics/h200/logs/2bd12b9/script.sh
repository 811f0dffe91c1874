#!/usr/bin/env bash
# The ring's A/B on an H200 only (the two H100 calls found it level there), and int_gemm's
# four groups a unit against two at M <= 16; on another GPU, nothing.
source .dev/gpu/common.sh
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 || { echo "not an H200: nothing run" >> $sum; st 8 mix-wq-square $H calibrate --kind mix --reads 4 --writes 1 --bytes 51380224
st 8 mix-wq-tall $H calibrate --kind mix --reads 4 --writes 1 --bytes 271581184
st 30 wqf $H bench weight_quant_fused --peers torch_compile --repeats 3 --budget 0.2 --sweep out_f=3584,18944 --sweep in_f=3584 --out $G/tuning/wqf-peer
cat $sum; exit 0; }
G=statistics/h200
KEEP="$G/tuning/stats-ring $G/tuning/small-m-groups statistics/ncu/activation_fused.csv $G/calibration-mix4to1-51380224.json $G/calibration-mix4to1-271581184.json $G/tuning/wqf-peer"
st 80 ab-ring $H bench activation_fused --variant unidirectional --define STATS_STAGES=0,2,3 --repeats 3 --k 4 --budget 0.2 --sweep batch=16384,65536 --no-verify --out $G/tuning/stats-ring
st 50 ab-groups $H bench int_gemm --variant int8 --define IGT_GROUPS=2,4 --repeats 3 --budget 0.2 --sweep batch=1,16 --sweep out_f=18944,3584 --sweep in_f=3584 --out $G/tuning/small-m-groups
st 30 ncu-ring $H profile activation_fused --variant unidirectional --batch 65536 --k 4
st 8 mix-wq-square $H calibrate --kind mix --reads 4 --writes 1 --bytes 51380224
st 8 mix-wq-tall $H calibrate --kind mix --reads 4 --writes 1 --bytes 271581184
st 30 wqf $H bench weight_quant_fused --peers torch_compile --repeats 3 --budget 0.2 --sweep out_f=3584,18944 --sweep in_f=3584 --out $G/tuning/wqf-peer
cat $sum
