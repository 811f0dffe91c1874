#!/usr/bin/env bash
# One call, the device time short (~740 s left after failed starts): validate the two
# changes (int_gemm_packed's small-M boxes; act_stats' ring for rows past the thread
# caches, whose header change reaches every stage that includes threshold.cuh or runs
# act_stats); each A/B over a define whose other value is main's behaviour
# (STATS_RING_BYTES=49152; IGP_SMALL_BOX=0) with its rule; compute-sanitizer on both stages;
# then, as time allows, spike_linear on 3584 x 18944 (the layer point the ring is for).
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) D=statistics/h200 ;; *H100*) D=statistics/h100-80gb-hbm3 ;; *) D=statistics/other ;; esac
st 30 calibrate $H calibrate
st 260 validate $H validate --record int_gemm_packed activation_fused dynamic_spikes activation_path spike_linear spike_quant_gemm
st 10 ledger $H ledger --check
TA=$D/tuning/stats-ring-wide
st 60 ab-act $H bench activation_fused --variant operand_unidirectional --define STATS_RING_BYTES=49152,228352 --repeats 3 --budget 0.1 --sweep in_f=18944 --sweep batch=16,1024,8192 --out $TA
st 30 ab-act-3584 $H bench activation_fused --variant operand_unidirectional --define STATS_RING_BYTES=49152,228352 --repeats 3 --budget 0.1 --sweep in_f=3584 --sweep batch=1024 --out $TA --append
st 10 decide-act python3 .dev/gpu/decide_act.py $TA/activation_fused.csv
TP=$D/tuning/packed-boxes
st 60 ab-packed $H bench int_gemm_packed --variant default --define IGP_SMALL_BOX=0,1 --sweep batch=1,16,1024 --sweep out_f=18944 --sweep in_f=3584 --repeats 3 --budget 0.1 --out $TP
st 10 decide-packed python3 .dev/gpu/decide_packed.py $TP/int_gemm_packed.csv
st 60 san-act $H sanitize activation_fused --append
st 40 san-packed $H sanitize int_gemm_packed --append
st 60 spike-linear-wide $H bench spike_linear --variant operand --peers linear_fp32,linear_bf16 --budget 0.2 --sweep batch=1024,8192 --sweep out_f=3584 --sweep in_f=18944 --out $D/layer-sweep --append
pack
cat $sum
