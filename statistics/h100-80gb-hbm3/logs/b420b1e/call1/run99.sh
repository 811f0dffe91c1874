#!/usr/bin/env bash
# Every unit validated at this commit (group_grid's VEC4_BPS moved the launch code of every
# weight and plane stage and the pipelines; compute_scales' kernel text changed); the
# sanitizer on compute_scales; its goals' row beside its peers.
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) D=statistics/h200 ;; *H100*) D=statistics/h100-80gb-hbm3 ;; *) D=statistics/other ;; esac
st 10 git-sha python3 -c "from harness.results import provenance; print(provenance.git_sha())"
st 30 calibrate $H calibrate
export OPENBLAS_NUM_THREADS=3 OMP_NUM_THREADS=3 MKL_NUM_THREADS=3
t0=$SECONDS
V() { local n=$1; shift; ( timeout 150 $H validate --record "$@" > $base/logs/val-$n.log 2>&1; echo "val-$n rc=$? $((SECONDS-t0))s :: validate --record $*" >> $sum ) & }
V stages compute_scales weight_quantize weight_quant_fused spike_encode spike_decode dynamic_spikes_reverse find_min_max transform_absmax spike_decode_packed
V pipes spike_quant_gemm activation_path gemm
V igemm int_gemm int_gemm_packed int_gemm_planes
V linear spike_linear
( timeout 100 $H sanitize compute_scales --append > $base/logs/san.log 2>&1; echo "san rc=$? $((SECONDS-t0))s" >> $sum ) &
wait
unset OPENBLAS_NUM_THREADS OMP_NUM_THREADS MKL_NUM_THREADS
pack
st 15 ledger $H ledger --check
st 40 goals-scales $H bench compute_scales --peers all --budget 0.2 --append --out $D/layer-sweep --sweep out_f=18944 --sweep in_f=3584
pack
cat $sum
