#!/usr/bin/env bash
# weight_quant_fused's torch.compile peer on 3584 x 3584 at the source whose failed rows keep
# the notes on their time (is any sample ungated?), then as one CUDA-graph replay (no host
# time can be inside), beside ours.
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
W=$G/tuning/wqf-peer-check
KEEP="$W"
st 60 wqf-notes $H bench weight_quant_fused --peers torch_compile --budget 0.5 --sweep out_f=3584,18944 --sweep in_f=3584 --out $W/notes
st 60 wqf-graph $H bench weight_quant_fused --peers torch_compile --graph --budget 0.5 --sweep out_f=3584,18944 --sweep in_f=3584 --out $W/graph
pack
cat $sum
