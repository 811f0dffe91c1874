#!/usr/bin/env bash
# (1) Alone on the GPU, the A/B over ROW_TAIL_BATCH=1,4 with its rule; (2) adopted: every
# unit threshold.cuh's ROW_TAIL_BATCH moves, validated side by side (a process each),
# compute-sanitizer on activation_fused and dynamic_spikes beside them; (3) the goals' rows again at this
# source (spike_linear on the three shapes beside F.linear, activation_fused's floor and
# graph rows, its peers, the planes rows).
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) D=statistics/h200 ;; *H100*) D=statistics/h100-80gb-hbm3 ;; *) D=statistics/other ;; esac
st 30 calibrate $H calibrate
T=$D/tuning/row-tail-batch
AB="--define ROW_TAIL_BATCH=1,4 --repeats 3 --budget 0.1 --out $T"
st 60 ab-act $H bench activation_fused --variant operand_unidirectional $AB --sweep in_f=18944 --sweep batch=16,1024,8192
st 30 ab-act-3584 $H bench activation_fused --variant operand_unidirectional $AB --append --sweep in_f=3584 --sweep batch=1024
st 30 ab-dyn $H bench dynamic_spikes --variant default $AB --append --sweep in_f=18944 --sweep batch=1024
st 10 decide python3 .dev/gpu/decide_batch.py $T/activation_fused.csv $T/dynamic_spikes.csv || { pack; cat $sum; exit 0; }  # not adopted: nothing to validate
export OPENBLAS_NUM_THREADS=2 OMP_NUM_THREADS=2 MKL_NUM_THREADS=2
t0=$SECONDS
V() { local n=$1; shift; ( timeout 200 $H validate --record "$@" > $base/logs/val-$n.log 2>&1; echo "val-$n rc=$? $((SECONDS-t0))s :: validate --record $*" >> $sum ) & }
for v in unidirectional bidirectional twos_complement packed_unidirectional packed_bidirectional packed_twos_complement operand_unidirectional; do
  V act-$v activation_fused --variant $v; done
V dyn dynamic_spikes
V path activation_path
for v in default any packed operand; do V sl-$v spike_linear --variant $v; done
V sqg spike_quant_gemm
( timeout 150 $H sanitize activation_fused --append > $base/logs/san-act.log 2>&1; echo "san-act rc=$? $((SECONDS-t0))s" >> $sum
  timeout 40 $H sanitize dynamic_spikes --append > $base/logs/san-dyn.log 2>&1; echo "san-dyn rc=$? $((SECONDS-t0))s" >> $sum ) &
wait
unset OPENBLAS_NUM_THREADS OMP_NUM_THREADS MKL_NUM_THREADS
pack
st 15 ledger $H ledger --check
G=$D/layer-sweep
B="--budget 0.2"
SL="--variant operand --variant default --peers linear_fp32,linear_bf16 $B --sweep batch=1,16,256,1024,8192 --append"
st 100 spike-linear $H bench spike_linear $SL --sweep out_f=18944,3584 --out $G
st 100 spike-linear-wide $H bench spike_linear $SL --sweep out_f=3584 --sweep in_f=18944 --out $G
A="--k 4 --budget 0.3 --sweep in_f=3584 --append"
st 30 act-graph $H bench activation_fused --variant unidirectional --graph $A --sweep batch=1,9,64,256,1024,2048 --out $G/act-grid-barrier
st 40 act-stream $H bench activation_fused --variant unidirectional $A --sweep batch=1024,16384,65536 --out $G/act-floor
st 30 act-packed $H bench activation_fused --variant packed_unidirectional $A --sweep batch=65536 --out $G/act-floor
st 30 ncu-act-wide $H profile activation_fused --variant operand_unidirectional --batch 1024 --k 4 --sweep in_f=18944
st 90 act-peers $H bench activation_fused --variant unidirectional --peers all --k 4 $B --sweep in_f=3584 --sweep batch=1024,65536 --out $G/act-peers --append
st 90 planes $H bench int_gemm_planes int_gemm_packed int_gemm $B --out $D/planes --append --sweep batch=1,16,1024,8192 --sweep out_f=18944 --sweep in_f=3584
pack
cat $sum
