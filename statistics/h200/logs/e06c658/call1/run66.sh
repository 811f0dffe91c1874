#!/usr/bin/env bash
# int_gemm_planes' five chains: validated and sanitized at the new source, then an A/B
# against the first source (.dev/gpu/9271b15/kernels) in one process, three rotated
# repeats, at the first run's points; the planes/ rows again beside int_gemm_packed and
# int_gemm at the new source; ncu at M 1024; int_gemm_packed under ncu with stall samples at
# M 1 and 16 (M 1 took 2.15x M 16's time in the run of 9271b15); weight_quant_fused's
# read-weighted ceilings on the H100; the GPU tests in the time left.
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
G=$($H where 2>/dev/null | tail -1); echo "folder: $G" >> $sum
st 60 validate $H validate --record int_gemm_planes
st 60 sanitize $H sanitize --append int_gemm_planes
AB="--against .dev/gpu/9271b15 --repeats 3 --budget 0.15 --out $G/tuning/planes-chains"
st 150 ab $H bench int_gemm_planes $AB --sweep batch=1,16,1024,8192 --sweep out_f=18944 --sweep in_f=3584
st 40 ab-square $H bench int_gemm_planes $AB --append --sweep batch=1024 --sweep out_f=3584 --sweep in_f=3584
st 40 ncu $H profile int_gemm_planes --batch 1024 --sweep out_f=18944 --sweep in_f=3584
B="--budget 0.2 --out $G/planes --append"
st 90 bench $H bench int_gemm_planes int_gemm_packed int_gemm $B --sweep batch=1,16,1024,8192 --sweep out_f=18944 --sweep in_f=3584
st 40 bench-square $H bench int_gemm_planes int_gemm_packed int_gemm $B --sweep batch=1024 --sweep out_f=3584 --sweep in_f=3584
for m in 1 16; do st 40 ncu-packed-$m $H profile int_gemm_packed --batch $m --sweep out_f=18944 --sweep in_f=3584 --stalls --out statistics/ncu/packed-small; done
# weight_quant_fused's read-weighted ceilings (x read, w_q written), as the H200's were taken
for nk in 18944x3584 3584x3584; do n=${nk%x*} k=${nk#*x}
  st 20 ceiling-wqf-$nk $H calibrate --kind mix --reads 4 --writes 1 --bytes $((4 * n * k)); done
st 240 gpu-tests python3 -m pytest -m gpu -rP -p no:cacheprovider -q tests
pack
cat $sum
