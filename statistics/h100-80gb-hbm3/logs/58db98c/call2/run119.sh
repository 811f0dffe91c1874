#!/usr/bin/env bash
# The current source on whichever GPU comes: every unit validated (activation_fused a
# variant a process, so that each ends inside its step), compute-sanitizer on act_stats and
# both wgmma stages, then the driver's GPU test alone; then the write-back a cold time leaves
# out (scripts/drain.py), and the weight stages' goals' rows beside their peers, torch.compile
# now dividing as eager does.
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) D=statistics/h200 ;; *H100*) D=statistics/h100-80gb-hbm3 ;; *) D=statistics/other ;; esac
st 10 git-sha python3 -c "from harness.results import provenance; print(provenance.git_sha())"
st 30 calibrate $H calibrate
G=$D/layer-sweep
st 40 drain-act python3 scripts/drain.py activation_fused --variant unidirectional --point batch=1024,in_f=3584,k=4 --point batch=16384,in_f=3584,k=4 --point batch=65536,in_f=3584,k=4
st 25 drain-packed python3 scripts/drain.py activation_fused --variant packed_unidirectional --point batch=1024,in_f=3584,k=4 --point batch=65536,in_f=3584,k=4
st 25 drain-wqf python3 scripts/drain.py weight_quant_fused --point out_f=3584,in_f=3584 --point out_f=18944,in_f=3584
st 60 wqf-goals $H bench weight_quant_fused --peers all --budget 0.2 --append --out $G --sweep out_f=3584,18944 --sweep in_f=3584
st 45 wqf-goals-wide $H bench weight_quant_fused --peers all --budget 0.2 --append --out $G --sweep out_f=3584 --sweep in_f=18944
st 45 wq-goals $H bench weight_quantize --peers all --budget 0.2 --append --out $G --sweep out_f=18944 --sweep in_f=3584
st 45 cs-goals $H bench compute_scales --peers all --budget 0.2 --append --out $G --sweep out_f=18944 --sweep in_f=3584
st 45 dsr-goals $H bench dynamic_spikes_reverse --peers all --budget 0.2 --append --out $G --sweep batch=16384 --sweep in_f=3584
pack
cat $sum
