#!/usr/bin/env bash
# Diagnostics, no kernel source changed: (1) activation_fused's graph rows at batch 1 and 1024
# against bcfa318's kernels in one process (is the +0.19 us at batch 1 between the runs of
# bcfa318 and 6dbb494 the source or the machine?); (2) weight_quant_fused on the three
# shapes beside torch.compile, and its traffic's ceilings (a mix of 4 reads to 1 write) at
# the same sizes, in one process; (3) a copy of activation_fused's floor bytes at 1024 rows.
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) D=statistics/h200 ;; *H100*) D=statistics/h100-80gb-hbm3 ;; *) D=statistics/other ;; esac
st 10 git-sha python3 -c "from harness.results import provenance; print(provenance.git_sha())"
st 30 calibrate $H calibrate
T=$D/tuning/act-graph-vs-bcfa318
st 60 ab-act-graph $H bench activation_fused --variant unidirectional --graph --k 4 --sweep in_f=3584 --sweep batch=1,1024 --against .dev/gpu/kbcfa318 --repeats 3 --budget 0.2 --out $T
st 60 wqf $H bench weight_quant_fused --peers torch_compile --repeats 3 --budget 0.2 --sweep out_f=3584,18944 --sweep in_f=3584 --out $D/wqf-ceiling
st 30 wqf-wide $H bench weight_quant_fused --peers torch_compile --repeats 3 --budget 0.2 --sweep out_f=3584 --sweep in_f=18944 --out $D/wqf-ceiling --append
for b in 51380224 271581184; do st 20 mix-$b $H calibrate --kind mix --reads 4 --writes 1 --bytes $b; done
st 20 copy-act-1024 $H calibrate --bytes 18350080
st 20 copy-wqf-3584 $H calibrate --bytes 32313344
pack
cat $sum
