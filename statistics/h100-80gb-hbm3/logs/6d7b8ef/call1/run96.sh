#!/usr/bin/env bash
# dynamic_spikes_reverse (back at its validated source) and spike_quant_gemm validated at
# this commit; ncu of the four stages whose grid became the retiring blocks' (default against
# the former persistent build); the weight stages' grid/lanes A/B under its rule; the
# pytest-benchmark benchmarks compared with 0007 and saved.
source .dev/gpu/common.sh
KEEP=statistics
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1); echo "gpu: $name" >> $sum
case "$name" in *H200*) D=statistics/h200 ;; *H100*) D=statistics/h100-80gb-hbm3 ;; *) D=statistics/other ;; esac
st 10 git-sha python3 -c "from harness.results import provenance; print(provenance.git_sha())"
st 30 calibrate $H calibrate
t0=$SECONDS
( timeout 150 $H validate --record dynamic_spikes_reverse > $base/logs/val-dsr.log 2>&1; echo "val-dsr rc=$? $((SECONDS-t0))s" >> $sum ) &
( timeout 150 $H validate --record spike_quant_gemm > $base/logs/val-sqg.log 2>&1; echo "val-sqg rc=$? $((SECONDS-t0))s" >> $sum ) &
wait
st 15 ledger $H ledger --check
N=statistics/ncu/retiring-grid
W="--sweep out_f=18944 --sweep in_f=3584"
P="--sweep batch=16384 --sweep in_f=3584"
st 40 ncu-cs $H profile compute_scales --stalls --top 10 $W --out $N
st 40 ncu-cs-wave $H profile compute_scales --stalls --top 10 --define WARP_STEPS=0 --define PREFETCH=1 --define BPS=8 $W --out $N
st 40 ncu-wq $H profile weight_quantize --stalls --top 10 $W --out $N
st 40 ncu-wq-wave $H profile weight_quantize --stalls --top 10 --define WARP_STEPS=0 --define PREFETCH=1 --define BPS=8 $W --out $N
st 40 ncu-enc $H profile spike_encode --variant unidirectional --stalls --top 10 $P --out $N
st 40 ncu-enc-wave $H profile spike_encode --variant unidirectional --stalls --top 10 --define WARP_STEPS=0 $P --out $N
st 40 ncu-dec $H profile spike_decode --stalls --top 10 $P --out $N
st 40 ncu-dec-wave $H profile spike_decode --stalls --top 10 --define WARP_STEPS=0 $P --out $N
T=$D/tuning/weight-lanes
R="--define LANES=8,16 --define WARP_STEPS=1,2,4 --define PREFETCH=0,1 --define BPS=8,12,16 --repeats 3 --budget 0.1 --out $T"
X="(LANES == 8 and ((WARP_STEPS == 1 and PREFETCH == 0 and BPS == 12) or (WARP_STEPS > 1 and PREFETCH == 1 and BPS == 8))) or (LANES == 16 and WARP_STEPS == 1 and PREFETCH == 0 and BPS > 8)"
st 110 ab-wqf $H bench weight_quant_fused $R --restrict "$X" --sweep out_f=3584,18944 --sweep in_f=3584 --append
st 50 ab-wqf-wide $H bench weight_quant_fused $R --restrict "$X" --sweep out_f=3584 --sweep in_f=18944 --append
st 110 ab-wq $H bench weight_quantize $R --restrict "$X" --sweep out_f=3584,18944 --sweep in_f=3584 --append
st 50 ab-wq-wide $H bench weight_quantize $R --restrict "$X" --sweep out_f=3584 --sweep in_f=18944 --append
st 5 decide python3 .dev/gpu/decide_wgrid.py $T/weight_quant_fused.csv $T/weight_quantize.csv
pack
cat $sum
