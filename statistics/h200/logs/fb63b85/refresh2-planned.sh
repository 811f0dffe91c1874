#!/usr/bin/env bash
# The H200 at the current source, call 2 of 2 (after call 1's validation): the activation
# stage's graph, stream and packed rows, the weight, scale and plane stages beside their
# peers, ncu's stall samples of the GEMM's stream kernel at M 1 on 18944 x 3584, and the
# pytest-benchmark benchmarks saved as this GPU's next baseline.
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) D=statistics/h200 ;; *H100*) D=statistics/h100-80gb-hbm3 ;; *) D=statistics/other ;; esac
st 10 git-sha python3 -c "from harness.results import provenance; print(provenance.git_sha())"
st 30 calibrate $H calibrate
st 15 ledger $H ledger --check
G=$D/layer-sweep
A="--k 4 --budget 0.3 --sweep in_f=3584 --append"
st 25 act-graph $H bench activation_fused --variant unidirectional --graph $A --sweep batch=1,9,64,256,1024,2048 --out $G/act-grid-barrier
st 40 act-stream $H bench activation_fused --variant unidirectional $A --sweep batch=1024,16384,65536 --out $G/act-floor
st 30 act-packed $H bench activation_fused --variant packed_unidirectional $A --sweep batch=65536 --out $G/act-floor
st 50 wqf-goals $H bench weight_quant_fused --peers all --budget 0.2 --append --out $G --sweep out_f=3584,18944 --sweep in_f=3584
st 40 wqf-goals-wide $H bench weight_quant_fused --peers all --budget 0.2 --append --out $G --sweep out_f=3584 --sweep in_f=18944
st 40 wq-goals $H bench weight_quantize --peers all --budget 0.2 --append --out $G --sweep out_f=18944 --sweep in_f=3584
st 40 cs-goals $H bench compute_scales --peers all --budget 0.2 --append --out $G --sweep out_f=18944 --sweep in_f=3584
P="--peers all --budget 0.2 --append --out $G --sweep batch=16384 --sweep in_f=3584"
st 40 decode-goals $H bench spike_decode $P
st 40 encode-goals $H bench spike_encode --variant unidirectional $P
st 40 dsr-goals $H bench dynamic_spikes_reverse $P
st 40 small-m-stalls $H profile int_gemm --variant int8 --batch 1 --sweep out_f=18944 --sweep in_f=3584 --stalls --top 25 --out statistics/ncu/small-m-stalls
st 120 bench-save python3 -m pytest -m gpu -p no:cacheprovider tests/bench --benchmark-enable \
  --benchmark-storage=file://$D/pytest-benchmark \
  --benchmark-json=$base/logs/pytest-benchmark.json --benchmark-save=$SHA
pack
cat $sum
