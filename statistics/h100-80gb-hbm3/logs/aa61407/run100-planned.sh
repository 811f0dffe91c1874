#!/usr/bin/env bash
# The clustered GEMM's last waves stream-K: every unit validated at this commit (the wgmma
# header, the weight kernels' PREFETCH default and the grids' renamed launch code moved
# every weight, plane and GEMM stage and the pipelines) with compute-sanitizer on the two
# wgmma stages beside it (their stream-K shapes among the points); the A/B of IG_STREAM_K
# in one process; then, as time allows, the goals' rows at this commit and pytest-benchmark.
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) D=statistics/h200 ;; *H100*) D=statistics/h100-80gb-hbm3 ;; *) D=statistics/other ;; esac
st 10 git-sha python3 -c "from harness.results import provenance; print(provenance.git_sha())"
st 30 calibrate $H calibrate
export OPENBLAS_NUM_THREADS=2 OMP_NUM_THREADS=2 MKL_NUM_THREADS=2
t0=$SECONDS
V() { local n=$1; shift; ( timeout 180 $H validate --record "$@" > $base/logs/val-$n.log 2>&1; echo "val-$n rc=$? $((SECONDS-t0))s :: validate --record $*" >> $sum ) & }
S() { local n=$1; shift; ( timeout 180 $H sanitize "$@" --out $D/sanitizer-int_gemm.csv --append > $base/logs/san-$n.log 2>&1; echo "san-$n rc=$? $((SECONDS-t0))s :: sanitize $*" >> $sum ) & }
V stages compute_scales weight_quantize weight_quant_fused spike_encode spike_decode dynamic_spikes_reverse find_min_max transform_absmax spike_decode_packed
V pipes spike_quant_gemm activation_path gemm
V igemm int_gemm int_gemm_packed int_gemm_planes
V linear spike_linear
S igemm int_gemm --variant int8
S packed int_gemm_packed --variant default
wait
unset OPENBLAS_NUM_THREADS OMP_NUM_THREADS MKL_NUM_THREADS
pack
st 15 ledger $H ledger --check
T=$D/tuning/stream-k
R="--variant int8 --define IG_STREAM_K=0,1 --repeats 3 --budget 0.1 --out $T --append"
st 50 ab-1024 $H bench int_gemm $R --sweep batch=1024 --sweep out_f=3584 --sweep in_f=3584,18944
st 30 ab-18944 $H bench int_gemm $R --sweep batch=1024 --sweep out_f=18944 --sweep in_f=3584
st 70 ab-more $H bench int_gemm $R --sweep batch=2048,4096,8192 --sweep out_f=3584 --sweep in_f=3584,18944
pack
G=$D/layer-sweep
SL="--variant operand --peers linear_fp32,linear_bf16 --budget 0.2 --sweep batch=1,16,256,1024,8192 --append"
st 70 spike-linear $H bench spike_linear $SL --sweep out_f=18944,3584 --out $G
st 50 spike-linear-wide $H bench spike_linear $SL --sweep out_f=3584 --sweep in_f=18944 --out $G
P=linear_fp32,linear_bf16,int_mm
B="--budget 0.2 --append --out $G"
st 50 int-gemm-square $H bench int_gemm --variant int8 --peers $P $B --sweep batch=1,16,1024,8192 --sweep out_f=3584 --sweep in_f=3584
st 70 int-gemm-wide $H bench int_gemm --variant int8 --peers $P $B --sweep batch=1,16,1024,8192 --sweep out_f=3584 --sweep in_f=18944
st 70 int-gemm $H bench int_gemm --variant int8 --peers $P $B --sweep batch=1,16,1024,8192 --sweep out_f=18944 --sweep in_f=3584
pack
cat $sum
