#!/usr/bin/env bash
# weight_quant_fused beside its peers by the table's own command (7144d8a's: --peers all,
# budget 0.5, both shapes), inductor's generated code in the log: is torch.compile's 3584 x
# 3584 row 19 us (the table) or 64 us (this session's and 2bd12b9's runs)?
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
W=$G/tuning/wqf-peer-check
KEEP="$W"
st 120 wqf-table-command env TORCH_LOGS=output_code $H bench weight_quant_fused --peers all --budget 0.5 --sweep out_f=3584,18944 --sweep in_f=3584 --out $W/table-command
pack
cat $sum
