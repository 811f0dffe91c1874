#!/usr/bin/env bash
# Planned for the next device time, not run: on an H200 (none came this session), the
# retiring blocks' grid measured there against the persistent wave (WARP_STEPS 1 against 0,
# each stage's old PREFETCH and BPS beside it) and weight_quant_fused's PREFETCH 2 at BPS 6,
# three rotated repeats; then the goals' rows at the current source (spike_linear on the
# three shapes beside both F.linear peers, the activation stage's graph, stream and packed
# rows, the weight and plane stages beside their peers), then the pytest-benchmark
# benchmarks saved as the H200's first event-timed baseline. (Run from .dev/gpu/ with its
# common.sh, after `harness stamp`.)
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) D=statistics/h200 ;; *H100*) D=statistics/h100-80gb-hbm3 ;; *) D=statistics/other ;; esac
st 10 git-sha python3 -c "from harness.results import provenance; print(provenance.git_sha())"
st 30 calibrate $H calibrate
T=$D/tuning/warp-steps
R="--repeats 3 --budget 0.1 --out $T --append"
st 60 ab-wqf $H bench weight_quant_fused --define WARP_STEPS=0,1 --define PREFETCH=0,1,2 --define BPS=6,8,12 --restrict "(WARP_STEPS == 1 and PREFETCH == 0 and BPS == 12) or (WARP_STEPS == 0 and PREFETCH == 1 and BPS == 8) or (WARP_STEPS == 0 and PREFETCH == 2 and BPS == 6)" $R --sweep out_f=3584,18944 --sweep in_f=3584
st 40 ab-scales $H bench compute_scales --define WARP_STEPS=0,1 $R --sweep out_f=18944,3584 --sweep in_f=3584
st 40 ab-wquant $H bench weight_quantize --define WARP_STEPS=0,1 --define PREFETCH=0,1 --define BPS=8,12 --restrict "(WARP_STEPS == 1 and PREFETCH == 0 and BPS == 12) or (WARP_STEPS == 0 and PREFETCH == 1 and BPS == 8)" $R --sweep out_f=18944,3584 --sweep in_f=3584
st 60 ab-planes $H bench spike_decode --define WARP_STEPS=0,1 $R --sweep batch=16384,1024 --sweep in_f=3584
st 60 ab-encode $H bench spike_encode --variant unidirectional --define WARP_STEPS=0,1 $R --sweep batch=16384,1024 --sweep in_f=3584
G=$D/layer-sweep
SL="--variant operand --peers linear_fp32,linear_bf16 --budget 0.2 --sweep batch=1,16,256,1024,8192 --append"
st 80 spike-linear $H bench spike_linear $SL --sweep out_f=18944,3584 --out $G
st 60 spike-linear-wide $H bench spike_linear $SL --sweep out_f=3584 --sweep in_f=18944 --out $G
A="--k 4 --budget 0.3 --sweep in_f=3584 --append"
st 20 act-graph $H bench activation_fused --variant unidirectional --graph $A --sweep batch=1,9,64,256,1024,2048 --out $G/act-grid-barrier
st 35 act-stream $H bench activation_fused --variant unidirectional $A --sweep batch=1024,16384,65536 --out $G/act-floor
st 25 act-packed $H bench activation_fused --variant packed_unidirectional $A --sweep batch=65536 --out $G/act-floor
st 60 wqf-goals $H bench weight_quant_fused --peers all --budget 0.2 --append --out $G --sweep out_f=3584,18944 --sweep in_f=3584
st 60 weight-goals $H bench compute_scales weight_quantize --peers all --budget 0.2 --append --out $G --sweep out_f=18944 --sweep in_f=3584
st 60 plane-goals $H bench spike_decode --peers all --budget 0.2 --append --out $G --sweep batch=16384 --sweep in_f=3584
st 90 bench-save python3 -m pytest -m gpu -p no:cacheprovider tests/bench --benchmark-enable \
  --benchmark-storage=file://$D/pytest-benchmark \
  --benchmark-json=$base/logs/pytest-benchmark.json --benchmark-save=$SHA
pack
cat $sum
