#!/usr/bin/env bash
# call 3: spike_linear's wide shape appended to the layer sweep (the layer phase of f5b640b
# ran out of time before it); whether the weights' placement sets int_gemm's mode at M <= 16;
# dynamic_spikes_reverse's UNITS beside torch.compile; the staged conversion stages at small
# sizes, gated, beside their peers.
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null || exit 9
export PYTHONPATH=/tmp/site:$PWD HARNESS_GIT_SHA=${SHA}
mkdir -p $OUT/logs
sum=$OUT/summary.txt; : > $sum
pack() { tar czf $OUT/statistics.tgz statistics/h200/spike_linear.csv statistics/h200/tuning/dsr-units statistics/h200/small-gated 2>/dev/null; tar czf $OUT/logs.tgz -C $OUT logs; }
st() { local lim=$1 name=$2; shift 2; local t0=$SECONDS; timeout $lim "$@" > $OUT/logs/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; pack; return $rc; }
st 120 spike_linear_wide python3 -m harness bench spike_linear --budget 0.2 --append --sweep batch=1,16,256,1024,8192 --sweep out_f=3584 --sweep in_f=18944
st 60 placement1 python3 .dev/gpu/placement.py 1 18944 3584
st 60 placement16 python3 .dev/gpu/placement.py 16 18944 3584
st 150 dsr_units python3 -m harness bench dynamic_spikes_reverse --define UNITS=1,2,4 --peers torch_compile --sweep batch=1,1024,16384,65536 --repeats 3 --budget 0.3 --out statistics/h200/tuning/dsr-units
st 20 dsr_best python3 -m harness best statistics/h200/tuning/dsr-units/dynamic_spikes_reverse.csv
G=statistics/h200/small-gated
st 150 staged python3 -m harness bench find_min_max transform_absmax spike_encode spike_decode --peers torch,torch_compile --sweep batch=1,1024 --budget 0.3 --out $G
st 90 weights python3 -m harness bench compute_scales weight_quantize --peers torch,torch_compile --sweep out_f=3584 --sweep in_f=3584 --budget 0.3 --out $G
cat $sum
