#!/usr/bin/env bash
# The layer's handoff taken apart: the pipelines validated (operand_adjacent is new, and the
# checked run now runs its steps back to back), the three
# handoffs in one process (after with an event between, adjacent, early as the dependent
# launch), by the rule in kernels/NOTES.md; the goals' rows of the two without an event
# beside both F.linear peers; ncu of int_gemm at M 1024 on 3584 x 3584 (act_stats's there are
# in statistics/ncu/act-stats*).
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) D=statistics/h200 ;; *H100*) D=statistics/h100-80gb-hbm3 ;; *) D=statistics/other ;; esac
st 10 git-sha python3 -c "from harness.results import provenance; print(provenance.git_sha())"
st 30 calibrate $H calibrate
t0=$SECONDS
V() { local n=$1; shift; ( timeout 100 $H validate --record "$@" > $base/logs/val-$n.log 2>&1; echo "val-$n rc=$? $((SECONDS-t0))s :: validate --record $*" >> $sum ) & }
V linear spike_linear
V pipes spike_quant_gemm activation_path
wait
pack
st 15 ledger $H ledger --check
E3="--variant operand --variant operand_adjacent --variant operand_early"
st 80 handoff-ab $H bench spike_linear $E3 --peers linear_bf16 --repeats 3 --budget 0.1 --sweep batch=16,1024,2048,8192 --sweep out_f=3584 --sweep in_f=3584 --out $D/tuning/handoff --append
G=$D/layer-sweep
SL="--variant operand_adjacent --variant operand_early --peers linear_fp32,linear_bf16 --budget 0.2 --sweep batch=1,16,256,1024,8192 --append"
st 100 spike-linear $H bench spike_linear $SL --sweep out_f=18944,3584 --out $G
st 90 spike-linear-wide $H bench spike_linear $SL --sweep out_f=3584 --sweep in_f=18944 --out $G
st 60 ncu-gemm $H profile int_gemm --variant int8 --batch 1024 --sweep in_f=3584 --sweep out_f=3584 --out statistics/ncu/layer-m1024
pack
cat $sum
