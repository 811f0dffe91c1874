#!/usr/bin/env bash
# The conversion stages validated under the stricter validation, ledger rows recorded.
source .dev/gpu/common.sh
KEEP="statistics/validation_ledger.csv"
st 280 validate-conversion $H validate --record dynamic_spikes find_min_max transform_absmax spike_encode spike_decode spike_decode_packed dynamic_spikes_reverse compute_scales weight_quantize weight_quant_fused
cat $sum
