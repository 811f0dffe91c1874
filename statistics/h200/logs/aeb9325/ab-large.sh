#!/usr/bin/env bash
# The A/Bs the previous call's limits cut short, at the points they did not reach: the
# flat split past one wave, the packed pass 2 at batch 65536; the packed layout's sweep.
source .dev/gpu/common.sh
KEEP="statistics/h200/tuning/pack-transpose statistics/h200/tuning/dsr-flat statistics/h200/fresh"
st 100 ab-dsr-large $H bench dynamic_spikes_reverse --define FLAT=0,1 --peers torch_compile --repeats 3 --budget 0.3 --sweep batch=16384,65536 --out statistics/h200/tuning/dsr-flat/large
st 70 ab-packed-65536 $H bench activation_fused --variant packed_unidirectional --define PACK_TRANSPOSE=0,1 --k 4 --repeats 3 --budget 0.3 --sweep batch=65536 --out statistics/h200/tuning/pack-transpose/large
st 60 packed $H bench activation_fused --variant packed_unidirectional --k 4 --budget 0.5 --sweep batch=1,1024,16384,65536 --out statistics/h200/fresh
cat $sum
