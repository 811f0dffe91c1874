#!/usr/bin/env bash
# The GEMM stages and the seed pipeline validated under the stricter validation.
source .dev/gpu/common.sh
KEEP="statistics/validation_ledger.csv"
st 290 validate-layer $H validate --record gemm int_gemm int_gemm_packed spike_quant_gemm
cat $sum
