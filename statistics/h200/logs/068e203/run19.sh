#!/usr/bin/env bash
# The adopted barrier measured (act_grid's batches as graphs) and spike_linear beside the
# float layer (F.linear bf16, fp32) in one process, each into a folder of its own.
source .dev/gpu/common.sh
KEEP="statistics/h200/act-grid-barrier statistics/h200/layer-peers"
st 120 grid $H bench activation_fused --variant unidirectional --graph --k 4 --budget 0.5 --sweep batch=9,16,64,256,1024,2048 --out statistics/h200/act-grid-barrier
st 240 layer $H bench spike_linear --variant default --peers linear_bf16,linear_fp32 --budget 0.2 --sweep batch=1,16,1024,8192 --sweep out_f=18944 --out statistics/h200/layer-peers
cat $sum
