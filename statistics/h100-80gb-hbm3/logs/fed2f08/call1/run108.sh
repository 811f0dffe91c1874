#!/usr/bin/env bash
# The layer's GEMM as act_stats' programmatic dependent (stream-K reverted): the units it
# moves validated (activation_fused's were at 3090b59, the same text), compute-sanitizer on
# both wgmma stages; then the layer with its GEMM launched after act_stats (operand) and as
# its dependent (operand_early) in one process, by the rule in kernels/NOTES.md, and the
# goals' rows of the layer and of the GEMM at this source beside their peers.
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) D=statistics/h200 ;; *H100*) D=statistics/h100-80gb-hbm3 ;; *) D=statistics/other ;; esac
st 10 git-sha python3 -c "from harness.results import provenance; print(provenance.git_sha())"
st 30 calibrate $H calibrate
export OPENBLAS_NUM_THREADS=3 OMP_NUM_THREADS=3 MKL_NUM_THREADS=3
t0=$SECONDS
V() { local n=$1; shift; ( timeout 150 $H validate --record "$@" > $base/logs/val-$n.log 2>&1; echo "val-$n rc=$? $((SECONDS-t0))s :: validate --record $*" >> $sum ) & }
S() { local n=$1; shift; ( timeout 150 $H sanitize "$@" --append > $base/logs/san-$n.log 2>&1; echo "san-$n rc=$? $((SECONDS-t0))s :: sanitize $*" >> $sum ) & }
V gemm int_gemm
V packed int_gemm_packed
V linear spike_linear
V pipes spike_quant_gemm
S gemm int_gemm --variant int8 --out $D/sanitizer-int_gemm.csv
S packed int_gemm_packed --variant default --out $D/sanitizer-int_gemm_packed.csv
wait
unset OPENBLAS_NUM_THREADS OMP_NUM_THREADS MKL_NUM_THREADS
pack
st 15 ledger $H ledger --check
G=$D/layer-sweep
E2="--variant operand --variant operand_early"
st 70 handoff-ab $H bench spike_linear $E2 --peers linear_bf16 --repeats 3 --budget 0.1 --sweep batch=16,1024,2048,8192 --sweep out_f=3584 --sweep in_f=3584 --out $D/tuning/handoff --append
SL="$E2 --peers linear_fp32,linear_bf16 --budget 0.2 --sweep batch=1,16,256,1024,8192 --append"
st 90 spike-linear $H bench spike_linear $SL --sweep out_f=18944,3584 --out $G
IG="--variant int8 --peers linear_bf16,int_mm --budget 0.2 --append --out $G --sweep batch=1,16,1024,8192"
st 45 int-gemm-square $H bench int_gemm $IG --sweep out_f=3584 --sweep in_f=3584
st 70 spike-linear-wide $H bench spike_linear $SL --sweep out_f=3584 --sweep in_f=18944 --out $G
st 60 int-gemm-tall $H bench int_gemm $IG --sweep out_f=18944 --sweep in_f=3584
st 60 int-gemm-wide $H bench int_gemm $IG --sweep out_f=3584 --sweep in_f=18944
pack
cat $sum
