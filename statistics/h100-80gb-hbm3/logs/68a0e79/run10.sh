#!/usr/bin/env bash
# int_gemm under compute-sanitizer at its current source (every variant, four tools); ncu of
# the main kernels at their current sources (int_gemm at M 1, 16, 8192 on both large shapes,
# int_gemm_packed at 8192, activation_fused's two layouts at batch 65536 with the ring);
# on an H200, weight_quant_fused beside torch.compile on the three shapes, three rotated
# repeats in one process, and activation_fused at batch 65536 with the ring, int8 and packed
# layouts (--no-verify: the source is validated at small points).
source .dev/gpu/common.sh
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) G=statistics/h200 ;; *) G=statistics/h100-80gb-hbm3 ;; esac
KEEP=statistics
N=statistics/ncu
st 90 san-int-gemm $H sanitize int_gemm --out $G/sanitizer-int_gemm.csv --append
st 60 ncu-ig-8192 $H profile int_gemm --variant int8 --batch 8192 --sweep out_f=18944 --sweep in_f=3584 --out $N
st 60 ncu-ig-8192-wide $H profile int_gemm --variant int8 --batch 8192 --sweep out_f=3584 --sweep in_f=18944 --out $N
st 60 ncu-ig-1 $H profile int_gemm --variant int8 --batch 1 --sweep out_f=18944 --sweep in_f=3584 --out $N
st 60 ncu-ig-16 $H profile int_gemm --variant int8 --batch 16 --sweep out_f=18944 --sweep in_f=3584 --out $N
st 60 ncu-igp-8192 $H profile int_gemm_packed --batch 8192 --sweep out_f=18944 --sweep in_f=3584 --out $N
st 60 ncu-act-65536 $H profile activation_fused --variant unidirectional --batch 65536 --k 4 --out $N
st 60 ncu-actp-65536 $H profile activation_fused --variant packed_unidirectional --batch 65536 --k 4 --out $N
case "$name" in *H200*)
st 150 wqf-peers $H bench weight_quant_fused --peers torch_compile --budget 0.5 --repeats 3 --sweep out_f=3584,18944 --sweep in_f=3584 --out $G/wqf-peers
st 90 wqf-peers-wide $H bench weight_quant_fused --peers torch_compile --budget 0.5 --repeats 3 --sweep out_f=3584 --sweep in_f=18944 --append --out $G/wqf-peers
st 60 fused-65536 $H bench activation_fused --variant unidirectional --k 4 --budget 0.5 --sweep batch=65536 --no-verify --out $G/ring
st 60 packed-65536 $H bench activation_fused --variant packed_unidirectional --k 4 --budget 0.5 --sweep batch=65536 --no-verify --append --out $G/ring ;;
esac
pack
cat $sum
