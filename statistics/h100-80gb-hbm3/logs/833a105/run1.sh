#!/usr/bin/env bash
# Validation at this source (int_gemm's four groups a unit; activation_fused's comments),
# compute-sanitizer on int_gemm int8, then the ring on fewer blocks.
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP="statistics/validation_ledger.csv $G/sanitizer.csv $G/tuning/stats-blocks $G/calibration.json"
st 100 val-int_gemm $H validate --record int_gemm
st 40 val-dynamic_spikes $H validate --record dynamic_spikes
for v in unidirectional bidirectional twos_complement packed_unidirectional packed_bidirectional packed_twos_complement; do
  st 60 val-af-$v $H validate --record activation_fused --variant $v
done
st 80 val-path $H validate --record activation_path
st 100 val-linear $H validate --record spike_linear
st 80 val-sqg $H validate --record spike_quant_gemm
st 60 san-int8 $H sanitize int_gemm --variant int8 --append
[ "$G" = statistics/h200 ] && st 150 ab-blocks $H bench activation_fused --variant unidirectional --define STATS_BLOCKS=528,1056,2112,4096,8192 --repeats 3 --k 4 --budget 0.2 --sweep batch=16384,65536 --no-verify --out $G/tuning/stats-blocks
cat $sum
