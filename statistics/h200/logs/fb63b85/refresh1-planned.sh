#!/usr/bin/env bash
# The current source on whichever GPU comes, after every unit was validated on an H100 at
# 58db98c: the units whose torch peers changed validated again (spike_quant_gemm over
# compute_scales), the weight stages'
# goals' rows beside their peers (torch.compile dividing as eager does, 127 a graph input);
# on an H200 also the write-back a cold time leaves out, the layer and the GEMM beside their
# peers and the activation stage's goals' rows, as the time allows, most wanted first; on
# either, the activation stage's goals' points timed drained (bench --drain).
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) D=statistics/h200 ;; *H100*) D=statistics/h100-80gb-hbm3 ;; *) D=statistics/other ;; esac
st 10 git-sha python3 -c "from harness.results import provenance; print(provenance.git_sha())"
st 30 calibrate $H calibrate
st 120 val-weights $H validate --record compute_scales weight_quant_fused spike_quant_gemm
st 15 ledger $H ledger --check
G=$D/layer-sweep
st 60 wqf-goals $H bench weight_quant_fused --peers all --budget 0.2 --append --out $G --sweep out_f=3584,18944 --sweep in_f=3584
st 45 cs-goals $H bench compute_scales --peers all --budget 0.2 --append --out $G --sweep out_f=18944 --sweep in_f=3584
st 40 act-drained $H bench activation_fused --variant unidirectional --variant packed_unidirectional --drain --k 4 --budget 0.3 --sweep in_f=3584 --sweep batch=1024,65536 --append --out $G/act-drained
if [ "$D" = statistics/h200 ]; then
st 30 drain-act python3 scripts/drain.py activation_fused --variant unidirectional --point batch=1024,in_f=3584,k=4 --point batch=65536,in_f=3584,k=4
SL="--variant operand_adjacent --variant operand_early --peers linear_fp32,linear_bf16 --budget 0.2 --sweep batch=1,16,256,1024,8192 --append"
st 100 spike-linear $H bench spike_linear $SL --sweep out_f=18944,3584 --out $G
st 90 spike-linear-wide $H bench spike_linear $SL --sweep out_f=3584 --sweep in_f=18944 --out $G
IG="--variant int8 --peers linear_bf16,int_mm --budget 0.2 --append --out $G --sweep batch=1,16,1024,8192"
st 60 int-gemm-tall $H bench int_gemm $IG --sweep out_f=18944 --sweep in_f=3584
st 60 int-gemm-wide $H bench int_gemm $IG --sweep out_f=3584 --sweep in_f=18944
st 45 int-gemm-square $H bench int_gemm $IG --sweep out_f=3584 --sweep in_f=3584
A="--k 4 --budget 0.3 --sweep in_f=3584 --append"
st 40 act-stream $H bench activation_fused --variant unidirectional $A --sweep batch=1024,16384,65536 --out $G/act-floor
st 30 act-packed $H bench activation_fused --variant packed_unidirectional $A --sweep batch=65536 --out $G/act-floor
fi
st 45 wqf-goals-wide $H bench weight_quant_fused --peers all --budget 0.2 --append --out $G --sweep out_f=3584 --sweep in_f=18944
st 30 drain-dsr python3 scripts/drain.py dynamic_spikes_reverse --point batch=16384,in_f=3584
pack
cat $sum
