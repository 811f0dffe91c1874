#!/usr/bin/env bash
# Every unit validated at this commit (the mended kernels' new hashes, and the launch code
# that changed since each unit's last validation); compute-sanitizer on the changed kernels;
# dynamic_spikes_reverse's FLAT A/B under its rule; the goals' rows of the two stages whose
# build changed (compute_scales, and dynamic_spikes_reverse as the A/B leaves it).
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) D=statistics/h200 ;; *H100*) D=statistics/h100-80gb-hbm3 ;; *) D=statistics/other ;; esac
st 10 git-sha python3 -c "from harness.results import provenance; print(provenance.git_sha())"
st 30 calibrate $H calibrate
export OPENBLAS_NUM_THREADS=3 OMP_NUM_THREADS=3 MKL_NUM_THREADS=3
t0=$SECONDS
V() { local n=$1; shift; ( timeout 330 $H validate --record "$@" > $base/logs/val-$n.log 2>&1; echo "val-$n rc=$? $((SECONDS-t0))s :: validate --record $*" >> $sum ) & }
V stages compute_scales weight_quantize weight_quant_fused spike_encode spike_decode dynamic_spikes_reverse find_min_max transform_absmax spike_decode_packed
V pipes spike_quant_gemm activation_path gemm
V igemm int_gemm int_gemm_packed int_gemm_planes
V linear spike_linear
( timeout 200 $H sanitize compute_scales weight_quantize weight_quant_fused spike_encode spike_decode dynamic_spikes_reverse --append > $base/logs/san.log 2>&1; echo "san rc=$? $((SECONDS-t0))s" >> $sum ) &
wait
unset OPENBLAS_NUM_THREADS OMP_NUM_THREADS MKL_NUM_THREADS
pack
st 15 ledger $H ledger --check
st 15 drift $H ledger --drift
T=$D/tuning/dsr-flat
st 70 ab-flat $H bench dynamic_spikes_reverse --define FLAT=0,1 --repeats 3 --budget 0.1 --out $T --sweep batch=1024,16384,65536 --sweep in_f=3584
st 5 decide python3 .dev/gpu/decide_flat.py $T/dynamic_spikes_reverse.csv
G=$D/layer-sweep
st 40 goals-scales $H bench compute_scales --peers all --budget 0.2 --append --out $G --sweep out_f=18944 --sweep in_f=3584
st 40 goals-dsr $H bench dynamic_spikes_reverse --peers all --budget 0.2 --append --out $G --sweep batch=16384 --sweep in_f=3584
pack
cat $sum
