#!/usr/bin/env bash
# weight_quant_fused's torch.compile peer on 3584 x 3584, once as the table measured it (one
# process, no repeats) and twice with repeats (the run of 2bd12b9 had it at 64.10 us with
# repeats against the table's 19.39), inductor's generated code in the logs; on an H200 then
# the layer's int_gemm rows at this source on 18944 x 3584 (a folder of their own).
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
W=$G/tuning/wqf-peer-check
KEEP="$W $G/layer-current"
st 60 wqf-plain env TORCH_LOGS=output_code $H bench weight_quant_fused --peers torch_compile --budget 0.5 --sweep out_f=3584 --sweep in_f=3584 --out $W/plain
st 60 wqf-repeats env TORCH_LOGS=output_code $H bench weight_quant_fused --peers torch_compile --repeats 3 --budget 0.2 --sweep out_f=3584 --sweep in_f=3584 --out $W/repeats
st 60 wqf-all $H bench weight_quant_fused --peers all --repeats 3 --budget 0.2 --sweep out_f=3584 --sweep in_f=3584 --out $W/all-repeats
if [ "$G" = statistics/h200 ]; then
  P=linear_fp32,linear_bf16,int_mm
  st 100 layer-int-gemm $H bench int_gemm --variant int8 --peers $P,torch_compile --budget 0.2 --sweep batch=1,1024,8192 --sweep out_f=18944 --sweep in_f=3584 --out $G/layer-current
fi
pack
cat $sum
