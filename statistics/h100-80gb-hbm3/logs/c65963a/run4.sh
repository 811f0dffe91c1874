#!/usr/bin/env bash
# int_gemm at every consumer lane's own arrive (both kernels): validated, under
# compute-sanitizer, timed against the one-lane release in one process; then, on an H200
# only, the ring's grids, the small-M rows beside bf16, the fused stage's sweeps at the
# ring's source, and the weight_quant_fused torch.compile peer once more.
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP="statistics/validation_ledger.csv $G/sanitizer.csv $G/tuning/arrive-lanes $G/small-m-groups4 $G/ring $G/tuning/wqf-peer $G/tuning/stats-blocks $G/calibration.json"
st 100 val-int_gemm $H validate --record int_gemm
st 60 val-linear $H validate --record spike_linear
st 50 val-sqg $H validate --record spike_quant_gemm
st 40 san-int8 $H sanitize int_gemm --variant int8 --append
st 40 san-wide $H sanitize int_gemm --variant wide --append
st 90 ab-arrive-wgmma $H bench int_gemm --variant int8 --define IG_ARRIVE_LANES=0,1 --repeats 3 --budget 0.2 --no-verify --sweep batch=8192 --sweep out_f=18944 --sweep in_f=3584 --out $G/tuning/arrive-lanes
st 60 ab-arrive-wgmma-k $H bench int_gemm --variant int8 --define IG_ARRIVE_LANES=0,1 --repeats 3 --budget 0.2 --no-verify --sweep batch=8192 --sweep out_f=3584 --sweep in_f=18944 --append --out $G/tuning/arrive-lanes
st 50 ab-arrive-stream $H bench int_gemm --variant int8 --define IGT_ARRIVE_LANES=0,1 --repeats 3 --budget 0.2 --sweep batch=1,16 --sweep out_f=18944,3584 --sweep in_f=3584 --append --out $G/tuning/arrive-lanes
[ "$G" = statistics/h200 ] || { cat $sum; exit 0; }
st 120 ab-blocks $H bench activation_fused --variant unidirectional --define STATS_BLOCKS=528,1056,2112,8192 --repeats 3 --k 4 --budget 0.2 --sweep batch=16384,65536 --no-verify --out $G/tuning/stats-blocks
st 40 small-m $H bench int_gemm --variant int8 --peers linear_bf16 --budget 0.3 --sweep batch=1,16 --sweep out_f=18944,3584 --sweep in_f=3584 --out $G/small-m-groups4
st 50 fused $H bench activation_fused --variant unidirectional --peers all --k 4 --budget 0.5 --sweep batch=1,1024,16384 --out $G/ring
st 40 fused-65536 $H bench activation_fused --variant unidirectional --k 4 --budget 0.5 --sweep batch=65536 --append --out $G/ring
st 60 packed $H bench activation_fused --variant packed_unidirectional --k 4 --budget 0.5 --sweep batch=1,1024,16384,65536 --append --out $G/ring
st 30 wqf-once $H bench weight_quant_fused --peers torch_compile --budget 0.2 --sweep out_f=3584 --sweep in_f=3584 --append --out $G/tuning/wqf-peer
cat $sum
