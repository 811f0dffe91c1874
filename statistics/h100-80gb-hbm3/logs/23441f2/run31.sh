#!/usr/bin/env bash
# int_gemm_packed's general-path tile: four builds of 32 x 32 a warp, M 1024 and 8192 on
# 18944 x 3584, each build checked against the reference, three rotated repeats.
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP=statistics
st 240 packed-tiles $H bench int_gemm_packed --variant default --define IGG_BM=64,128 --define IGG_BN=64,128 --define IGG_WM=2,4 --define IGG_WN=2,4 --restrict "IGG_BM == 32 * IGG_WM and IGG_BN == 32 * IGG_WN" --repeats 3 --budget 0.1 --sweep batch=1024,8192 --sweep out_f=18944 --sweep in_f=3584 --out $G/tuning/packed-tiles
pack
cat $sum
