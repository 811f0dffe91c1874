#!/usr/bin/env bash
# The new sources validated (activation_fused and the pipelines that run it; dynamic_spikes_
# reverse), the packed pass 2's A/B (PACK_TRANSPOSE 0/1) and dynamic_spikes_reverse's
# (FLAT, EVICT_FIRST) beside torch.compile, pytest-benchmark's baseline saved.
source .dev/gpu/common.sh
KEEP="statistics/validation_ledger.csv statistics/h200/tuning/pack-transpose statistics/h200/tuning/dsr-flat statistics/h200/pytest-benchmark"
st 280 validate $H validate --record activation_fused activation_path spike_linear dynamic_spikes_reverse
st 70 ab-packed $H bench activation_fused --variant packed_unidirectional --define PACK_TRANSPOSE=0,1 --k 4 --repeats 3 --budget 0.3 --sweep batch=1024,16384,65536 --out statistics/h200/tuning/pack-transpose
st 40 check-flat $H bench dynamic_spikes_reverse --define FLAT=0,1 --define EVICT_FIRST=0,1 --budget 0.05 --sweep batch=5,12,600,1200 --sweep in_f=1030,2051,2052,4100 --family edge --out $base/logs/check-flat
st 90 ab-dsr $H bench dynamic_spikes_reverse --define FLAT=0,1 --define EVICT_FIRST=0,1 --peers torch_compile --repeats 4 --budget 0.3 --sweep batch=1024,16384,65536 --out statistics/h200/tuning/dsr-flat
st 90 bench-save python3 -m pytest -m gpu -p no:cacheprovider tests/bench --benchmark-enable --benchmark-storage=file://statistics/h200/pytest-benchmark --benchmark-compare --benchmark-json=$base/logs/pytest-benchmark.json --benchmark-save=$SHA
cat $sum
