#!/usr/bin/env bash
# The staged memory-bound stages beside eager torch and torch.compile on this GPU, at batch
# 16384 (weights 18944 x 3584), as far as the time goes; rows are written as they come.
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP=statistics
O=$G/staged-peers
st 10 calibrate $H calibrate
st 70 staged-act $H bench spike_encode spike_decode dynamic_spikes_reverse find_min_max transform_absmax --peers torch,torch_compile --budget 0.3 --sweep batch=16384 --out $O
st 50 staged-weights $H bench compute_scales weight_quantize --peers torch,torch_compile --budget 0.3 --sweep out_f=18944 --out $O
pack
cat $sum
