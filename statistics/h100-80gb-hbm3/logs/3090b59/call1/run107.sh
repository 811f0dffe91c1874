#!/usr/bin/env bash
# Stream-K bounded by L2 and the layer's GEMM as act_stats' programmatic dependent, at one
# commit: every unit they move validated (activation_fused a variant a process, so that it
# ends inside the step), compute-sanitizer on both wgmma stages and on act_stats; then the
# A/B of IG_STREAM_K in one process, by the rule in kernels/NOTES.md.
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) D=statistics/h200 ;; *H100*) D=statistics/h100-80gb-hbm3 ;; *) D=statistics/other ;; esac
st 10 git-sha python3 -c "from harness.results import provenance; print(provenance.git_sha())"
st 30 calibrate $H calibrate
export OPENBLAS_NUM_THREADS=2 OMP_NUM_THREADS=2 MKL_NUM_THREADS=2
t0=$SECONDS
V() { local n=$1; shift; ( timeout 240 $H validate --record "$@" > $base/logs/val-$n.log 2>&1; echo "val-$n rc=$? $((SECONDS-t0))s :: validate --record $*" >> $sum ) & }
S() { local n=$1; shift; ( timeout 240 $H sanitize "$@" --append > $base/logs/san-$n.log 2>&1; echo "san-$n rc=$? $((SECONDS-t0))s :: sanitize $*" >> $sum ) & }
V igemm int_gemm int_gemm_packed
V linear spike_linear
V pipes spike_quant_gemm activation_path
for v in unidirectional bidirectional twos_complement packed_unidirectional packed_bidirectional packed_twos_complement operand_unidirectional; do
  V act-$v activation_fused --variant $v
done
S igemm int_gemm --variant int8
S packed int_gemm_packed --variant default
S stats activation_fused --variant operand_unidirectional
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
cat $sum
