#!/usr/bin/env bash
# The goals' rows at the current source (spike_linear beside both F.linear peers on the three
# shapes; activation_fused's graph, stream and packed rows), then the pytest-benchmark
# benchmarks saved as this GPU's next baseline (H100: compared first with 0005_f496c0e;
# H200: saved alone, its first event-timed baseline), then act-peers and the planes rows.
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) D=statistics/h200 ;; *H100*) D=statistics/h100-80gb-hbm3 ;; *) D=statistics/other ;; esac
st 10 git-sha python3 -c "from harness.results import provenance; print(provenance.git_sha())"
st 30 calibrate $H calibrate
G=$D/layer-sweep
SL="--variant operand --peers linear_fp32,linear_bf16 --budget 0.2 --sweep batch=1,16,256,1024,8192 --append"
st 80 spike-linear $H bench spike_linear $SL --sweep out_f=18944,3584 --out $G
st 60 spike-linear-wide $H bench spike_linear $SL --sweep out_f=3584 --sweep in_f=18944 --out $G
A="--k 4 --budget 0.3 --sweep in_f=3584 --append"
st 20 act-graph $H bench activation_fused --variant unidirectional --graph $A --sweep batch=1,9,64,256,1024,2048 --out $G/act-grid-barrier
st 35 act-stream $H bench activation_fused --variant unidirectional $A --sweep batch=1024,16384,65536 --out $G/act-floor
st 25 act-packed $H bench activation_fused --variant packed_unidirectional $A --sweep batch=65536 --out $G/act-floor
case "$name" in
  *H200*) CMP=() ;;
  *) CMP=(--benchmark-compare --benchmark-compare-fail=median:10%) ;;
esac
st 90 bench-save python3 -m pytest -m gpu -p no:cacheprovider tests/bench --benchmark-enable \
  --benchmark-storage=file://$D/pytest-benchmark "${CMP[@]}" \
  --benchmark-json=$base/logs/pytest-benchmark.json --benchmark-save=$SHA
st 90 act-peers $H bench activation_fused --variant unidirectional --peers all --k 4 --budget 0.2 --sweep in_f=3584 --sweep batch=1024,65536 --out $G/act-peers --append
st 90 planes $H bench int_gemm_planes int_gemm_packed int_gemm --budget 0.2 --out $D/planes --append --sweep batch=1,16,1024,8192 --sweep out_f=18944 --sweep in_f=3584
pack
cat $sum
