#!/usr/bin/env bash
# The ring on the H200: its A/B against the register prefetch (the H100's was level, where
# act_stats runs at 89 % of DRAM peak), act_stats under ncu, the validations the H100 call
# did not reach, then the fused sweep beside its peers, int_gemm's four groups a unit, and
# the ceilings of weight_quant_fused's traffic.
source .dev/gpu/common.sh
G=statistics/h200
KEEP="statistics/validation_ledger.csv $G/tuning/stats-ring statistics/ncu/activation_fused.csv $G/tuning/small-m-groups $G/fresh $G/calibration-mix4to1-51380224.json $G/calibration-mix4to1-271581184.json"
st 80 ab-ring $H bench activation_fused --variant unidirectional --define STATS_STAGES=0,2,3 --repeats 3 --k 4 --budget 0.2 --sweep batch=16384,65536 --no-verify --out $G/tuning/stats-ring
st 40 ncu-ring $H profile activation_fused --variant unidirectional --batch 65536 --k 4
st 60 val-ptc $H validate --record activation_fused --variant packed_twos_complement
st 120 val-layer $H validate --record activation_path spike_linear
st 15 mix-wq-square $H calibrate --kind mix --reads 4 --writes 1 --bytes 51380224
st 15 mix-wq-tall $H calibrate --kind mix --reads 4 --writes 1 --bytes 271581184
st 50 ab-groups $H bench int_gemm --variant int8 --define IGT_GROUPS=2,4 --repeats 3 --budget 0.2 --sweep batch=1,16 --sweep out_f=18944,3584 --sweep in_f=3584 --out $G/tuning/small-m-groups
st 150 fused $H bench activation_fused --variant unidirectional --peers all --k 4 --budget 0.3 --sweep batch=1,1024,16384,65536 --out $G/fresh
cat $sum
