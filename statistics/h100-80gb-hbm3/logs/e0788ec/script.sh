#!/usr/bin/env bash
# One call for the ring if only one comes: its A/B against the register prefetch, the
# validation at its source, compute-sanitizer on every variant, act_stats under ncu.
source .dev/gpu/common.sh
KEEP="statistics/validation_ledger.csv statistics/*/sanitizer.csv statistics/ring-ab statistics/ncu/activation_fused.csv"
st 60 check-ring $H bench activation_fused --variant unidirectional --define STATS_STAGES=0,2,3 --k 4 --budget 0.02 --sweep batch=60000 --sweep in_f=68,1024 --family normal --out $base/logs/check-ring
st 120 ab-ring $H bench activation_fused --variant unidirectional --define STATS_STAGES=0,2,3 --repeats 3 --k 4 --budget 0.2 --sweep batch=16384,65536 --no-verify --out statistics/ring-ab
st 180 validate $H validate --record activation_fused activation_path spike_linear
for v in unidirectional packed_unidirectional bidirectional twos_complement packed_bidirectional packed_twos_complement; do
  st 40 san-$v $H sanitize activation_fused --variant $v --append
done
st 40 ncu-ring $H profile activation_fused --variant unidirectional --batch 65536 --k 4
cat $sum
