#!/usr/bin/env bash
# After the validation (run27): the planes layouts' A/B of STATS_WARPS where they run pass 1,
# the layer's operand and default paths beside bf16 F.linear at the new pass 1, act_stats_warps
# under ncu (DRAM bytes and throughput) at 1024 and 8192 rows, and the activation layouts
# at the current source.
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP=statistics
st 10 calibrate $H calibrate
st 110 warps-planes $H bench activation_fused --variant unidirectional --variant packed_unidirectional --define STATS_WARPS=0,4,8 --repeats 3 --budget 0.1 --sweep batch=4096,8192 --sweep in_f=3584 --append --out $G/tuning/stats-warps
st 90 layer $H bench spike_linear --variant operand --variant default --peers linear_bf16 --budget 0.2 --out $G/layer-stats-warps --sweep batch=16,1024,2048,4096,8192 --sweep out_f=18944,3584
st 90 layer-wide $H bench spike_linear --variant operand --variant default --peers linear_bf16 --budget 0.2 --append --out $G/layer-stats-warps --sweep batch=16,1024,2048,4096,8192 --sweep out_f=3584 --sweep in_f=18944
for b in 1024 8192; do for w in 0 8; do
st 25 ncu-$b-$w $H profile activation_fused --variant operand_unidirectional --batch $b --define STATS_WARPS=$w --metrics lts__t_sector_hit_rate.pct,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum --sweep in_f=3584 --out statistics/ncu/act-stats-warps
done; done
st 60 act-layouts $H bench activation_fused --variant unidirectional --variant packed_unidirectional --variant operand_unidirectional --budget 0.2 --out $G/act-stats-warps --sweep batch=1024,2048,4096,8192,16384,65536 --sweep in_f=3584
pack
cat $sum
