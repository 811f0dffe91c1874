#!/usr/bin/env bash
# The goals' rows of the plane stages and dynamic_spikes_reverse at their current sources
# (their hashes moved with this session's comment mends and the FLAT round trip), beside
# their peers; then the GPU test suite whole at this commit.
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) D=statistics/h200 ;; *H100*) D=statistics/h100-80gb-hbm3 ;; *) D=statistics/other ;; esac
st 10 git-sha python3 -c "from harness.results import provenance; print(provenance.git_sha())"
st 30 calibrate $H calibrate
G=$D/layer-sweep
P="--peers all --budget 0.2 --append --out $G --sweep batch=16384 --sweep in_f=3584"
st 40 decode-goals $H bench spike_decode $P
st 40 encode-goals $H bench spike_encode --variant unidirectional $P
st 40 dsr-goals $H bench dynamic_spikes_reverse $P
st 240 pytest-gpu python3 -m pytest -m gpu -rA -p no:cacheprovider tests --ignore=tests/bench
pack
cat $sum
