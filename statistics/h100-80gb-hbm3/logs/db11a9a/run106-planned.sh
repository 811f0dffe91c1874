#!/usr/bin/env bash
# Stream-K for the clustered GEMM's last waves, only where the int8 operands fit half the
# L2 (M 1024-2048 on 3584 x 3584): the GEMM stages and the pipelines over them validated at
# this commit, compute-sanitizer on both wgmma stages (their cut shapes among the points);
# the A/B of IG_STREAM_K in one process, by the rule in kernels/NOTES.md; then the layer at
# M 1024 and 2048 on 3584 x 3584 beside both F.linear peers and the GEMM's goals' rows.
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) D=statistics/h200 ;; *H100*) D=statistics/h100-80gb-hbm3 ;; *) D=statistics/other ;; esac
st 10 git-sha python3 -c "from harness.results import provenance; print(provenance.git_sha())"
st 30 calibrate $H calibrate
export OPENBLAS_NUM_THREADS=3 OMP_NUM_THREADS=3 MKL_NUM_THREADS=3
t0=$SECONDS
V() { local n=$1; shift; ( timeout 180 $H validate --record "$@" > $base/logs/val-$n.log 2>&1; echo "val-$n rc=$? $((SECONDS-t0))s :: validate --record $*" >> $sum ) & }
S() { local n=$1; shift; ( timeout 180 $H sanitize "$@" --out $D/sanitizer-int_gemm.csv --append > $base/logs/san-$n.log 2>&1; echo "san-$n rc=$? $((SECONDS-t0))s :: sanitize $*" >> $sum ) & }
V igemm int_gemm int_gemm_packed
V linear spike_linear
V pipes spike_quant_gemm
S igemm int_gemm --variant int8
S packed int_gemm_packed --variant default
wait
unset OPENBLAS_NUM_THREADS OMP_NUM_THREADS MKL_NUM_THREADS
pack
st 15 ledger $H ledger --check
T=$D/tuning/stream-k-in-l2
R="--variant int8 --define IG_STREAM_K=0,1 --repeats 3 --budget 0.1 --out $T --append"
st 80 ab-used $H bench int_gemm $R --sweep batch=1024,2048 --sweep out_f=3584 --sweep in_f=3584
st 50 ab-square $H bench int_gemm $R --sweep batch=4096 --sweep out_f=3584 --sweep in_f=3584
st 60 ab-tall $H bench int_gemm $R --sweep batch=1024,4096 --sweep out_f=18944 --sweep in_f=3584
st 40 ab-wide $H bench int_gemm $R --sweep batch=1024 --sweep out_f=3584 --sweep in_f=18944
pack
G=$D/layer-sweep
st 50 spike-linear $H bench spike_linear --variant operand --peers linear_fp32,linear_bf16 --budget 0.2 --append --sweep batch=1024,2048 --sweep out_f=3584 --sweep in_f=3584 --out $G
st 50 int-gemm-square $H bench int_gemm --variant int8 --peers linear_fp32,linear_bf16,int_mm --budget 0.2 --append --out $G --sweep batch=1,16,1024,8192 --sweep out_f=3584 --sweep in_f=3584
pack
cat $sum
