#!/usr/bin/env bash
# int_gemm at every consumer lane's own arrive: validated, under compute-sanitizer (the
# wrapping shapes; racecheck of the two-group build too); then, on an H200 only, the
# measurements of run2.sh.
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP="statistics/validation_ledger.csv $G/sanitizer.csv $G/tuning/small-m-groups $G/small-m-groups4 $G/ring $G/tuning/wqf-peer $G/tuning/stats-blocks $G/calibration.json"
st 100 val-int_gemm $H validate --record int_gemm
st 60 val-linear $H validate --record spike_linear
st 50 val-sqg $H validate --record spike_quant_gemm
st 60 san-int8 $H sanitize int_gemm --variant int8 --append
st 60 san-wide $H sanitize int_gemm --variant wide --append
st 40 race-g2 $H sanitize int_gemm --variant int8 --tool racecheck --define IGT_GROUPS=2 --out $base/logs/race-g2.csv
[ "$G" = statistics/h200 ] || { cat $sum; exit 0; }
st 150 ab-blocks $H bench activation_fused --variant unidirectional --define STATS_BLOCKS=528,1056,2112,4096,8192 --repeats 3 --k 4 --budget 0.2 --sweep batch=16384,65536 --no-verify --out $G/tuning/stats-blocks
st 50 ab-groups $H bench int_gemm --variant int8 --define IGT_GROUPS=2,4 --repeats 3 --budget 0.2 --sweep batch=1,16 --sweep out_f=18944,3584 --sweep in_f=3584 --append --out $G/tuning/small-m-groups
st 45 small-m $H bench int_gemm --variant int8 --peers linear_bf16 --budget 0.3 --sweep batch=1,16 --sweep out_f=18944,3584 --sweep in_f=3584 --out $G/small-m-groups4
st 60 fused $H bench activation_fused --variant unidirectional --peers all --k 4 --budget 0.5 --sweep batch=1,1024,16384 --out $G/ring
st 60 fused-65536 $H bench activation_fused --variant unidirectional --k 4 --budget 0.5 --sweep batch=65536 --append --out $G/ring
st 80 packed $H bench activation_fused --variant packed_unidirectional --k 4 --budget 0.5 --sweep batch=1,1024,16384,65536 --append --out $G/ring
st 40 wqf-once $H bench weight_quant_fused --peers torch_compile --budget 0.2 --sweep out_f=3584 --sweep in_f=3584 --append --out $G/tuning/wqf-peer
cat $sum
