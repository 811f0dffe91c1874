#!/usr/bin/env bash
# One call: (1) every unit the two kernel changes left unvalidated, side by side (a process
# each: the ledger is held only while a row lands), with compute-sanitizer on both changed
# stages beside them; (2) alone on the GPU, the A/B of int_gemm_packed's small boxes as a
# compile-time choice, with its rule; (3) as time allows, the layer at the point the ring
# serves (spike_linear on 3584 x 18944 beside F.linear) and act_stats under stall samples.
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) D=statistics/h200 ;; *H100*) D=statistics/h100-80gb-hbm3 ;; *) D=statistics/other ;; esac
st 30 calibrate $H calibrate
export OPENBLAS_NUM_THREADS=2 OMP_NUM_THREADS=2 MKL_NUM_THREADS=2
t0=$SECONDS
V() { local n=$1; shift; ( timeout 330 $H validate --record "$@" > $base/logs/val-$n.log 2>&1; echo "val-$n rc=$? $((SECONDS-t0))s :: validate --record $*" >> $sum ) & }
V act-pb activation_fused --variant packed_bidirectional
V act-ptc activation_fused --variant packed_twos_complement
V act-op activation_fused --variant operand_unidirectional
V dyn dynamic_spikes
V igp-d int_gemm_packed --variant default
V igp-w int_gemm_packed --variant wide
V path activation_path
V sl-d spike_linear --variant default
V sl-a spike_linear --variant any
V sl-p spike_linear --variant packed
V sl-o spike_linear --variant operand
V sqg spike_quant_gemm
( timeout 240 $H sanitize activation_fused --append > $base/logs/san-act.log 2>&1; echo "san-act rc=$? $((SECONDS-t0))s" >> $sum
  timeout 80 $H sanitize int_gemm_packed --append > $base/logs/san-packed.log 2>&1; echo "san-packed rc=$? $((SECONDS-t0))s" >> $sum ) &
wait
unset OPENBLAS_NUM_THREADS OMP_NUM_THREADS MKL_NUM_THREADS
pack
st 15 ledger $H ledger --check
TP=$D/tuning/packed-boxes-single
st 90 ab-packed $H bench int_gemm_packed --variant default --define IGP_SMALL_BOX=0,1 --sweep batch=1,16,128,256,1024,8192 --sweep out_f=18944 --sweep in_f=3584 --repeats 3 --budget 0.1 --out $TP
st 10 decide-packed python3 .dev/gpu/decide_box.py $TP/int_gemm_packed.csv
st 70 spike-linear-wide $H bench spike_linear --variant operand --peers linear_fp32,linear_bf16 --budget 0.2 --sweep batch=1024,8192 --sweep out_f=3584 --sweep in_f=18944 --out $D/layer-sweep --append
st 40 stalls-act $H profile activation_fused --variant operand_unidirectional --batch 1024 --k 4 --sweep in_f=18944 --stalls --out statistics/ncu/act-wide
pack
cat $sum
