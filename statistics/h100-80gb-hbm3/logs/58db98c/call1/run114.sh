#!/usr/bin/env bash
# The current source on whichever GPU comes: every unit validated (activation_fused a
# variant a process, so that each ends inside its step), compute-sanitizer on act_stats and
# both wgmma stages, then the driver's GPU test alone; then on an H200 the layer's and the GEMM's goals' rows beside their
# peers (the layer as operand_adjacent and operand_early, one process), on an H100 the
# activation stage's goals' rows (act_stats' source moved since they were timed there).
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
V stages compute_scales weight_quantize weight_quant_fused spike_encode spike_decode dynamic_spikes_reverse find_min_max transform_absmax spike_decode_packed
V pipes spike_quant_gemm activation_path gemm dynamic_spikes
V igemm int_gemm int_gemm_packed int_gemm_planes
V linear spike_linear
for v in unidirectional bidirectional twos_complement packed_unidirectional packed_bidirectional packed_twos_complement operand_unidirectional; do
  V act-$v activation_fused --variant $v
done
S gemm int_gemm --variant int8 --out $D/sanitizer-int_gemm.csv
S packed int_gemm_packed --variant default --out $D/sanitizer-int_gemm_packed.csv
S stats activation_fused --variant operand_unidirectional --out $D/sanitizer-act_stats.csv
wait
unset OPENBLAS_NUM_THREADS OMP_NUM_THREADS MKL_NUM_THREADS
pack
st 60 pytest-driver python3 -m pytest -m gpu -q -p no:cacheprovider tests/backends/pycuda/test_cudriver.py
st 15 ledger $H ledger --check
G=$D/layer-sweep
if [ "$D" != statistics/h200 ]; then
A="--k 4 --budget 0.3 --sweep in_f=3584 --append"
st 40 act-stream $H bench activation_fused --variant unidirectional $A --sweep batch=1024,16384,65536 --out $G/act-floor
st 30 act-packed $H bench activation_fused --variant packed_unidirectional $A --sweep batch=65536 --out $G/act-floor
st 25 act-graph $H bench activation_fused --variant unidirectional --graph $A --sweep batch=1,9,64,256,1024,2048 --out $G/act-grid-barrier
pack; cat $sum; exit 0
fi
SL="--variant operand_adjacent --variant operand_early --peers linear_fp32,linear_bf16 --budget 0.2 --sweep batch=1,16,256,1024,8192 --append"
st 100 spike-linear $H bench spike_linear $SL --sweep out_f=18944,3584 --out $G
st 90 spike-linear-wide $H bench spike_linear $SL --sweep out_f=3584 --sweep in_f=18944 --out $G
IG="--variant int8 --peers linear_bf16,int_mm --budget 0.2 --append --out $G --sweep batch=1,16,1024,8192"
st 45 int-gemm-square $H bench int_gemm $IG --sweep out_f=3584 --sweep in_f=3584
st 60 int-gemm-tall $H bench int_gemm $IG --sweep out_f=18944 --sweep in_f=3584
st 60 int-gemm-wide $H bench int_gemm $IG --sweep out_f=3584 --sweep in_f=18944
pack
cat $sum
