#!/usr/bin/env bash
# No kernel changed: activation_fused beside its peers at the current source (the README's
# fused rows), the fill bandwidth (calibrate --kind write), and ncu's warp-state and
# scheduler sections of act_stats / act_encode (batch 65536) and int_gemm_wgmma (8192 x 18944
# x 3584).
set -u
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl 2>/dev/null || exit 9
export PYTHONPATH=/tmp/site:$PWD HARNESS_GIT_SHA=${SHA}
mkdir -p $OUT/logs
sum=$OUT/summary.txt; : > $sum
pack() { tar czf $OUT/statistics.tgz statistics/h200/activation_fused.csv statistics/h200/calibration*.json 2>/dev/null; tar czf $OUT/logs.tgz -C $OUT logs; }
st() { local lim=$1 name=$2; shift 2; if [ $((SECONDS + 15)) -gt 575 ]; then echo "$name skipped (time)" >> $sum; return 1; fi; local t0=$SECONDS; timeout $lim "$@" > $OUT/logs/$name.log 2>&1; local rc=$?; echo "$name rc=$rc $((SECONDS-t0))s :: $*" >> $sum; pack; return $rc; }
H="python3 -m harness"
st 200 fused $H bench activation_fused --variant unidirectional --peers all --k 4 --budget 0.5 --sweep batch=1,1024,16384,65536 --overwrite
st 60 fused-graph $H bench activation_fused --variant unidirectional --graph --peers all --k 4 --budget 0.5 --sweep batch=1,8,64 --append
st 60 packed $H bench activation_fused --variant packed_unidirectional --k 4 --budget 0.5 --sweep batch=1,16384,65536 --append
st 30 write-2g $H calibrate --kind write
st 30 write-planes $H calibrate --kind write --bytes 1409286144
SECS="--section SpeedOfLight --section Occupancy --section SchedulerStats --section WarpStateStats --section ComputeWorkloadAnalysis --section InstructionStats --section MemoryWorkloadAnalysis"
st 120 ncu-act ncu --clock-control none $SECS -k regex:'act_stats|act_encode' -c 2 $H bench activation_fused --variant unidirectional --k 4 --sweep batch=65536 --budget 0.01 --no-verify --out /tmp/ncu-act
st 120 ncu-gemm ncu --clock-control none $SECS -k regex:int_gemm_wgmma -c 1 $H bench int_gemm --variant int8 --sweep batch=8192 --sweep out_f=18944 --sweep in_f=3584 --budget 0.01 --no-verify --out /tmp/ncu-gemm
cat $sum
