#!/usr/bin/env bash
# The staged memory-bound stages and weight_quant_fused beside their torch and torch.compile
# peers at the goals' points (batch 16384; out_f 18944, and weight_quant_fused's three
# shapes), at the current source, into layer-sweep/ beside the layer's rows of the call before.
source .dev/gpu/common.sh
KEEP=statistics
G=statistics/h100-80gb-hbm3/layer-sweep
B="--peers all --budget 0.2 --overwrite --out $G"
st 60 staged-rows $H bench find_min_max transform_absmax spike_decode dynamic_spikes_reverse $B --sweep batch=16384 --sweep in_f=3584
st 60 encode $H bench spike_encode --variant unidirectional $B --sweep batch=16384 --sweep in_f=3584
st 90 weights $H bench compute_scales weight_quantize $B --sweep out_f=18944 --sweep in_f=3584
st 120 wqf $H bench weight_quant_fused $B --sweep out_f=18944,3584 --sweep in_f=3584
st 60 wqf-wide $H bench weight_quant_fused --peers all --budget 0.2 --append --out $G --sweep out_f=3584 --sweep in_f=18944
pack; cat $sum
