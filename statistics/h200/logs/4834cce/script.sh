#!/usr/bin/env bash
# Second call of this session (planned as run25): compute-sanitizer on activation_fused at
# its current source (the transposed pass 2), the mix kernel checked on the device, pass 1's
# traffic ceiling and the reads of int_gemm's small-M operand, pass 1 under ncu, then
# activation_fused's int8 sweep beside its peers.
source .dev/gpu/common.sh
KEEP="statistics/h200/calibration.json statistics/h200/sanitizer.csv statistics/h200/calibration-mix4to1-939524096.json statistics/h200/calibration-read-70017024.json statistics/h200/calibration-read8-70017024.json statistics/h200/calibration-read-13246464.json statistics/ncu/activation_fused.csv statistics/h200/fresh"
F=statistics/h200/fresh
st 80 sanitize $H sanitize activation_fused --append
st 20 calibrate $H calibrate
st 40 mix-test python3 -m pytest -m gpu -p no:cacheprovider -q tests/backends/pycuda/test_bandwidth.py
st 30 mix-pass1 $H calibrate --kind mix --reads 4 --writes 1 --bytes 939524096
# int_gemm's operand at M <= 16: 18944 x 3584 int8 weights and their fp32 scales (G = 128),
# then 3584 x 3584's: what a kernel that only reads them takes, launch included.
st 20 read-weights $H calibrate --kind read --bytes 70017024
st 20 read-weights8 $H calibrate --kind read --reads 8 --bytes 70017024
st 20 read-weights-3584 $H calibrate --kind read --bytes 13246464
st 90 ncu-int8 $H profile activation_fused --variant unidirectional --batch 65536 --k 4
st 200 fused $H bench activation_fused --variant unidirectional --peers all --k 4 --budget 0.5 --sweep batch=1,1024,16384 --out $F
st 70 fused-graph $H bench activation_fused --variant unidirectional --graph --peers all --k 4 --budget 0.5 --sweep batch=1,2,4,8,9,16,64,256 --append --out $F
cat $sum
